#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The check at exit of a real process, run as users run it: with HWTAG_DETECT_LEAKS=on the
# leak of tests/leak/leaky.c is reported and the status is HWTAG_LEAK_EXITCODE; the same
# under strace -f (ptrace from outside: a checker that needs ptrace itself fails there);
# without the option, status 0 and no report.
# Usage: run_leaky.sh LIBRARY PROGRAM [EMULATOR ARGS...]
set -uo pipefail
lib=$1 prog=$2
shift 2
emu=("$@")
passed=0 failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() { # env assignments..., then the command runs under "${prefix[@]}"
    local vars=("$@")
    if [ ${#emu[@]} -gt 0 ]; then
        local e=()
        for v in "LD_PRELOAD=$lib" "${vars[@]}"; do e+=(-E "$v"); done
        "${prefix[@]}" "${emu[@]}" "${e[@]}" "$prog" >"$out" 2>&1
    else
        env "LD_PRELOAD=$lib" "${vars[@]}" "${prefix[@]}" "$prog" >"$out" 2>&1
    fi
}
expect() { # name status grep-pattern [absent-pattern]
    local name=$1 want=$2 pat=$3 absent=${4:-}
    if [ "$status" = "$want" ] && grep -q -- "$pat" "$out" && { [ -z "$absent" ] || ! grep -q -- "$absent" "$out"; }; then
        passed=$((passed + 1)); echo "PASS: $name"
    else
        failed=$((failed + 1)); echo "FAIL: $name (status $status, want $want)"; sed 's/^/    /' "$out" | tail -40
    fi
}
prefix=()
run HWTAG_DETECT_LEAKS=on; status=$?
expect "leak at exit reported, status 23" 23 "Direct leak of 4242 byte(s) in 1 object(s)" "100 byte(s)"
run HWTAG_DETECT_LEAKS=on HWTAG_LEAK_EXITCODE=7; status=$?
expect "HWTAG_LEAK_EXITCODE=7" 7 "SUMMARY: LeakSanitizer: 4242 byte(s) leaked in 1 allocation(s)."
run; status=$?
expect "off by default: status 0, no report" 0 "leaky: done" "LeakSanitizer"
if command -v strace >/dev/null; then
    prefix=(strace -f -qq -o /dev/null)
    run HWTAG_DETECT_LEAKS=on; status=$?
    expect "under strace -f" 23 "Direct leak of 4242 byte(s) in 1 object(s)"
else
    echo "SKIP: strace is not installed"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
