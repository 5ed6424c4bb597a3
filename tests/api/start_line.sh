#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What libhwtag says at start-up: nothing by default, where tag checks run and where the
# build has no MTE (native); one line where an MTE build meets a CPU without MTE (under
# QEMU: -cpu cortex-a72), whose double frees are still reported. HWTAG_VERBOSE=on says
# the mode and whether tag checks are on.
#
# Usage: start_line.sh --prog PATH --lib PATH [--emulator "CMD ARGS"] [--mte 0|1]
set -uo pipefail
name=start
. "$(dirname "${BASH_SOURCE[0]}")/preload_lib.sh"
still='no tag checks \(double-free, invalid-free and tail checks still run\)$'

run return
check "default: status 0" test "$status" = 0
check "default: no line" hasnt '^hwtag'
run return HWTAG_VERBOSE=on
if [ "$mte" = 1 ]; then
    check "verbose: mode and tags" has '^hwtag: initialized \(mode=sync, tag checks=on, stacktrace=on\)$'
else
    check "verbose, built without MTE: why" has "^hwtag: built without MTE: $still"
    check "verbose: mode and tags" has '^hwtag: initialized \(mode=sync, tag checks=off, stacktrace=on\)$'
fi
run double HWTAG_FAULT=report
check "double free: reported" has '^BUG: KASAN: double-free in '
check "double free: status 0" test "$status" = 0

# An MTE build on a CPU without MTE: the same program under QEMU's Cortex-A72.
if [ "$mte" = 1 ] && [[ "$emulator" == *"-cpu max"* ]]; then
    nomte=$(sed -E 's/-cpu max[^ ]*/-cpu cortex-a72/' <<<"$emulator")
    run_with "$nomte" return
    check "no MTE: status 0" test "$status" = 0
    check "no MTE: one line" test "$(grep -c '^hwtag' "$work/err")" = 1
    check "no MTE: why" has "^hwtag: MTE is not available on this CPU or kernel: $still"
    run_with "$nomte" double HWTAG_FAULT=report
    check "no MTE: double free reported" has '^BUG: KASAN: double-free in '
    run_with "$nomte" return HWTAG_MODE=off
    check "no MTE, HWTAG_MODE=off: no line" hasnt '^hwtag'
fi
finish
