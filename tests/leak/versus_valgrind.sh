#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No false leak on real programs: each host program runs once under the native library with
# HWTAG_DETECT_LEAKS=on and once under valgrind's memcheck; the allocations libhwtag reports
# leaked must be exactly valgrind's definitely + indirectly lost blocks (an object reached
# only through an interior pointer is valgrind's "possibly lost" and reachable for both
# LeakSanitizer and libhwtag).
# Usage: versus_valgrind.sh LIBRARY
set -uo pipefail
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seq 1 20000 | awk '{print ($1 * 7919) % 20011, "w" $1}' >"$work/in.txt"
cd "$work"
cat >prog.py <<'PY'
import json, re
print(len(json.dumps([re.sub("1", "x", str(i)) for i in range(20000)])))
PY
# each case: the command line, run as "$RUN PROGRAM ARGS" by bash (RUN is the wrapper)
cases=(
    'sort -n in.txt'
    'sort -k2 --parallel=2 -S 1M in.txt'
    'sed -e s/1/x/g -e s/w/W/ in.txt'
    'grep -c -E "1[0-9]+7" in.txt'
    'uniq -c in.txt'
    'tr a-z A-Z <in.txt'
    '/usr/bin/python3 prog.py'
    'perl -e "my %h; \$h{\$_} = \$_ * 2 for (1..20000); print scalar(keys %h)"'
)
passed=0 failed=0
for cmd in "${cases[@]}"; do
    name=${cmd%% *}
    command -v "$name" >/dev/null || { echo "SKIP: $name is not installed"; continue; }
    RUN="env HWTAG_DETECT_LEAKS=on HWTAG_LOG_PATH=$work/ours.log LD_PRELOAD=$lib" \
        bash -c "\$RUN $cmd" >/dev/null 2>&1
    ours=$(sed -nE 's/^SUMMARY: LeakSanitizer: [0-9]+ byte\(s\) leaked in ([0-9]+) allocation\(s\)\.$/\1/p' \
        ours.log 2>/dev/null | tail -1)
    ours=${ours:-0}
    rm -f ours.log
    RUN="valgrind --leak-check=full --log-file=$work/vg.log" bash -c "\$RUN $cmd" >/dev/null 2>&1
    def=$(sed -nE 's/.*definitely lost: [0-9,]+ bytes in ([0-9,]+) blocks.*/\1/p' vg.log | tr -d ,)
    ind=$(sed -nE 's/.*indirectly lost: [0-9,]+ bytes in ([0-9,]+) blocks.*/\1/p' vg.log | tr -d ,)
    want=$((${def:-0} + ${ind:-0}))
    if [ "$ours" = "$want" ]; then
        passed=$((passed + 1)); echo "PASS: $name: $ours leaked allocation(s), valgrind $want"
    else
        failed=$((failed + 1)); echo "FAIL: $cmd: libhwtag $ours leaked allocation(s), valgrind $want"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
