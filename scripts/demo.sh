#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's first command: sets everything up on a fresh Debian 12 machine, builds
# libhwtag for aarch64, and runs a program with a real heap overflow under it (through
# qemu-aarch64 on x86_64). Succeeds when libhwtag caught the bug and printed its report.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset aarch64 >/dev/null
cmake --build --preset aarch64 --target hwtag_shared demo >/dev/null

echo "== examples/demo.c under glibc's malloc: the off-by-one overflow goes unnoticed"
qemu-aarch64 -cpu max,sve=off -L / build/aarch64/examples/demo
echo
echo "== the same program under libhwtag: build/aarch64/bin/hwtag -- build/aarch64/examples/demo"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
build/aarch64/bin/hwtag -- build/aarch64/examples/demo 2>"$log" || status=$?
cat "$log"
if grep -q '^BUG: KASAN: slab-out-of-bounds in ' "$log"; then
    echo "demo: libhwtag caught the overflow (program stopped with status $status)"
else
    echo "demo: FAILED, no report was printed (status $status)" >&2
    exit 1
fi
