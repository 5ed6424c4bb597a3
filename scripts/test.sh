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
    # also in the presets; said here too so a red CI log always shows what failed
    ctest --preset "$preset" --output-on-failure || status=1
done
# A bounded libFuzzer run of each fuzz target (clang, ASan+UBSan, tagging compiled out):
# random option strings, size classes, and malloc/free/realloc/memalign sequences checked
# against a model of the heap's contents. Optimised (-O2, as libFuzzer advises), with the
# core's own branches guiding the mutations (tests/CMakeLists.txt).
# the sanitized trees below: clang, tagging compiled out, no LTO, no bench programs
clang_tree=(-DCMAKE_C_COMPILER=clang -DHWTAG_MTE=OFF -DHWTAG_WERROR=OFF -DHWTAG_LTO=OFF
    -DHWTAG_BUILD_BENCH=OFF)
echo "== libFuzzer, ${HWTAG_FUZZ_SECONDS:-20} s a target"
cmake -S . -B build/fuzz "${clang_tree[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWTAG_SANITIZE=ON \
    >/dev/null
cmake --build build/fuzz -j2 --target fuzz_heap fuzz_options fuzz_size_class >/dev/null 2>&1
for target in heap options size_class; do
    work=$(mktemp -d)
    cp tests/fuzz/corpus/"$target"/* "$work"/
    # crash and slow-input files go to build/fuzz/, not into the checkout
    if build/fuzz/tests/fuzz_"$target" -max_total_time="${HWTAG_FUZZ_SECONDS:-20}" \
        -artifact_prefix="$PWD/build/fuzz/" "$work" >"$work.log" 2>&1; then
        echo "fuzz_$target: $(grep -Eo 'Done [0-9]+ runs' "$work.log" | tail -1), no crash"
    else
        tail -30 "$work.log"
        echo "fuzz_$target: FAILED"
        status=1
    fi
    rm -rf "$work" "$work.log"
done
# ThreadSanitizer on the core's objects (clang, tagging compiled out): threads freeing each
# other's objects, threads exiting with full caches, forks while others allocate.
echo "== ThreadSanitizer stress, ${HWTAG_TSAN_SECONDS:-10} s"
cmake -S . -B build/tsan "${clang_tree[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWTAG_TSAN=ON >/dev/null
cmake --build build/tsan -j2 --target tsan_heap >/dev/null 2>&1
# (the script's own HWTAG_*_SECONDS are not the library's options: kept from its parser)
if ! env -u HWTAG_FUZZ_SECONDS -u HWTAG_TSAN_SECONDS TSAN_OPTIONS=halt_on_error=1 \
    build/tsan/tests/tsan_heap "${HWTAG_TSAN_SECONDS:-10}" 2>&1; then
    echo "tsan_heap: FAILED"
    status=1
fi
# The Debian packages, built from this tree and tested from a staging root (about a minute).
echo "== Debian packages"
bash tests/package/run.sh build/package || status=1
exit $status
