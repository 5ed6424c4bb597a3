#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HWTAG_PRINT_STATS=on (or print_stats=on in HWTAG_OPTIONS): the statistics are printed to
# the report log at exit, after exit() and after a return from main, not after _exit, not
# by default; they count the allocations sampling left unchecked and the reports printed.
#
# Usage: stats_at_exit.sh --prog PATH --lib PATH [--emulator "CMD ARGS"] [--mte 0|1]
set -uo pipefail
name=stats
. "$(dirname "${BASH_SOURCE[0]}")/preload_lib.sh"

run return HWTAG_PRINT_STATS=on
check "return from main: status 0" test "$status" = 0
check "return from main: header" has '^hwtag: stats at exit of task .+/[0-9]+$'
check "return from main: stats" has '^hwtag stats: mte=(on|off)$'
check "return from main: large allocations" has '^  large: 20 allocs'
check "return from main: reports" has 'reports: 0$'

run exit HWTAG_PRINT_STATS=on
check "exit(): status 0" test "$status" = 0
check "exit(): stats" has '^hwtag stats: mte='
check "exit(): after the program's output" has 'stats_exit: exit' "$work/out"

run _exit HWTAG_PRINT_STATS=on
check "_exit: no stats" hasnt 'hwtag stats'

run return
check "default: no stats" hasnt 'hwtag stats'
run return HWTAG_PRINT_STATS=off
check "off: no stats" hasnt 'hwtag stats'

run return "HWTAG_OPTIONS=print_stats=on:sample=2"
check "HWTAG_OPTIONS=print_stats=on: stats" has '^hwtag stats: mte='
check "HWTAG_OPTIONS: no diagnostic" hasnt '^hwtag: HWTAG'
check "sampling: unchecked allocations counted" has '^  unchecked by sampling: [0-9]+ of [0-9]+ allocations'
if [ "$mte" = 1 ]; then
    check "sampling: 10 of 20 large ones left untagged" has '^  large: 20 allocs \(10 tagged, 10 left untagged by sampling\)'
fi

run return HWTAG_PRINT_STATS=on "HWTAG_LOG_PATH=$work/log.%p"
log=$(ls "$work"/log.* 2>/dev/null | head -1)
check "HWTAG_LOG_PATH: stats in the log" has '^hwtag stats: mte=' "${log:-/dev/null}"
check "HWTAG_LOG_PATH: not on stderr" hasnt 'hwtag stats'

if [ "$mte" = 1 ]; then
    run bug HWTAG_PRINT_STATS=on HWTAG_FAULT=report
    check "bug, HWTAG_FAULT=report: status 0" test "$status" = 0
    check "bug: the report" has '^BUG: KASAN: slab-use-after-free'
    check "bug: one report counted" has 'reports: 1$'
fi

finish
