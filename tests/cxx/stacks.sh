#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Allocation and free stacks (issue 36, item 6), libhwtag preloaded into a C++ program:
# operator new and operator delete are treated alike (neither is shown: the stacks start at
# the program's call, as operator delete, a tail call of free, leaves no frame), no frame of
# libhwtag is in any stack, and a stack cut at HWTAG_STACK_DEPTH ends with
# " ... N more frames not recorded" (N exact: a depth 7 frames less leaves 7 more out). The
# depth counts the frames captured: a C++ allocation stack shows one fewer, operator new.
#
# Usage: stacks.sh --prog PATH --lib PATH [--emulator "CMD ARGS"] [--mte 0|1]
set -uo pipefail
name=cxx_stacks
. "$(dirname "${BASH_SOURCE[0]}")/../api/preload_lib.sh"

# the frame lines of the first section whose header starts with $1 (up to an empty line)
section() { awk -v h="$1" 'index($0, h) == 1 {on = 1; next} on && /^$/ {exit} on' "$work/err"; }
first_frame() { section "$1" | head -n 1; }
starts() { case $(first_frame "$1") in " $2+0x"*) return 0 ;; *) return 1 ;; esac; }
frames() { section "$1" | grep -cv '^ \.\.\. '; }
more() { section "$1" | sed -n 's/^ \.\.\. \([0-9]*\) more frames\{0,1\} not recorded$/\1/p'; }

# x86_64's libstdc++ keeps no frame records: a frame-record walk from operator new finds the
# record of its caller's caller, so make_one itself is only expected where it keeps them.
records=0
if [ -n "$emulator" ] || [ "$(uname -m)" = aarch64 ]; then records=1; fi
starts_new() { [ "$records" = 0 ] || starts "$@"; }

run delete HWTAG_SYMBOLIZE=off
check "delete: a report" has '^BUG: KASAN: double-free'
check "delete: allocated from the program's call, not operator new" starts_new "Allocated by task" make_one
check "delete: freed from the program's call" starts "Freed by task" drop_one
check "delete: the bad free from the program's call" starts "Call trace:" drop_one
check "delete: no operator in any stack" hasnt '^ _Z(nw|na|dl|da)'
check "delete: no frame of libhwtag" hasnt 'libhwtag[^ ]*\+0x'
check "delete: no marker for a short stack" hasnt 'more frames? not recorded'

run realloc HWTAG_SYMBOLIZE=off
check "realloc: a report" has '^BUG: KASAN: double-free'
check "realloc(NULL, n): allocated from the program's call" starts "Allocated by task" realloc_one
check "realloc: freed from the program's call" starts "Freed by task" free_one
check "realloc: no frame of libhwtag" hasnt 'libhwtag[^ ]*\+0x'

run deep HWTAG_SYMBOLIZE=off
check "deep: a report" has '^BUG: KASAN: double-free'
check "deep: 12 frames kept by default" test "$(frames "Freed by task")" = 12
check "deep: 11 of them shown with operator new" test "$(frames "Allocated by task")" = 11
a12=$(more "Allocated by task") f12=$(more "Freed by task")
check "deep: the allocation stack says what it left out" test -n "$a12"
check "deep: the free stack says what it left out" test -n "$f12"
run deep HWTAG_SYMBOLIZE=off HWTAG_STACK_DEPTH=5
check "depth 5: 5 frames kept" test "$(frames "Freed by task")" = 5
check "depth 5: allocated from the program's call" starts_new "Allocated by task" make_one
check "depth 5: 7 more frames left out" test "$(more "Allocated by task")" = "$((a12 + 7))"
check "depth 5: 7 more frames left out of the free stack" test "$(more "Freed by task")" = "$((f12 + 7))"
run shallow HWTAG_SYMBOLIZE=off HWTAG_STACK_DEPTH=32
check "depth 32: the whole stack kept" hasnt 'more frames? not recorded'
check "depth 32: more than 12 frames" test "$(frames "Freed by task")" -gt 12
run deep HWTAG_SYMBOLIZE=off HWTAG_STACK_DEPTH=33
check "depth 33: refused" has 'HWTAG_STACK_DEPTH'
finish
