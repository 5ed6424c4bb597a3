#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's second command, and what CI runs: sets everything up on a fresh Debian 12
# machine, builds both presets and runs every test (unit, api, detect, fuzz replay, lint,
# and the real programs of the integration label under qemu-aarch64), then builds the
# Debian packages and tests them installed into a staging root.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
if [ -f scripts/fetch-arm64-programs.sh ]; then
    bash scripts/fetch-arm64-programs.sh .programs
fi

status=0
for preset in native aarch64; do
    echo "== preset $preset"
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset"
    ctest --preset "$preset" || status=1
done
# The Debian packages, built from this tree and tested from a staging root (about a minute).
echo "== Debian packages"
bash tests/package/run.sh build/package || status=1
exit $status
