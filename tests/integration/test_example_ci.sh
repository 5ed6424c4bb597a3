#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Follows docs/ci.md on examples/ci, so the recipe cannot rot: builds the example with an
# aarch64 C compiler and runs its tests through tools/hwtag, with ctest (the HWTAG cache
# variable, and CMAKE_CROSSCOMPILING_EMULATOR without editing anything) and with
# `make check`. The clean suite must pass; with HEAP_BUG the buggy test must fail with a
# KASAN report and the launcher's line, and the clean tests must still pass.
#
# Usage: test_example_ci.sh --lib PATH [--cc COMPILER]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
launcher=$repo/tools/hwtag
lib="" cc=""
while [ $# -gt 0 ]; do
    case $1 in
    --lib) lib=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    *) echo "test_example_ci.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -f "$lib" ] || { echo "FAIL: example: library '$lib' not found"; exit 1; }
if [ -z "$cc" ]; then
    if [ "$(uname -m)" = aarch64 ]; then cc=cc; else cc=aarch64-linux-gnu-gcc; fi
fi
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)
unset LD_PRELOAD QEMU_SET_ENV QEMU_UNSET_ENV
work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-example.XXXXXX")
trap 'rm -rf "$work"' EXIT

passed=0 failed=0
check() {
    local name=$1
    shift
    if "$@"; then echo "PASS: example: $name"; passed=$((passed + 1));
    else echo "FAIL: example: $name"; failed=$((failed + 1)); echo "--- output:"; tail -40 "$out"; fi
}
has() { grep -qE -- "$1" "$out"; }
hasnt() { ! grep -qE -- "$1" "$out"; }

cross=()
if [ "$(uname -m)" != aarch64 ]; then
    cross=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64)
fi

# ctest_run NAME CMAKE-ARGS...: configures and builds examples/ci in $work/NAME, runs ctest.
ctest_run() {
    local dir=$work/$1
    shift
    out=$dir.out
    cmake -S "$repo/examples/ci" -B "$dir" -DCMAKE_C_COMPILER="$cc" "${cross[@]}" "$@" \
        >"$out" 2>&1 && cmake --build "$dir" >>"$out" 2>&1 || { status=99; return; }
    ctest --test-dir "$dir" --output-on-failure >>"$out" 2>&1
    status=$?
}

ctest_run clean "-DHWTAG=$launcher;--lib;$lib"
check "ctest, clean suite: passes" test "$status" = 0
check "ctest, clean suite: 3 tests" has '100% tests passed, 0 tests failed out of 3'

ctest_run bug "-DHWTAG=$launcher;--lib;$lib" -DHEAP_BUG=ON
check "ctest, HEAP_BUG: fails" test "$status" = 8
check "ctest, HEAP_BUG: the clean tests pass" has 'Test +#1: append \.+ +Passed'
check "ctest, HEAP_BUG: ... both" has 'Test +#2: split \.+ +Passed'
check "ctest, HEAP_BUG: copy fails" has 'Test +#3: copy \.+\*\*\*Failed'
check "ctest, HEAP_BUG: the report" has '^BUG: KASAN: slab-out-of-bounds'
check "ctest, HEAP_BUG: the launcher's line" has '^hwtag: test failed with a KASAN report: .*test_copy aborted \(SIGABRT, exit status 134\)'
check "ctest, HEAP_BUG: one failure" has '67% tests passed, 1 tests failed out of 3'

# HWTAG_FAULT=report: the program goes on and exits 0, the report still fails the test.
ctest_run report "-DHWTAG=$launcher;--lib;$lib;--options;fault=report" -DHEAP_BUG=ON
check "ctest, HWTAG_FAULT=report: the report fails the test" has 'copy \.+\*\*\*Failed +Error regular expression found'
check "ctest, HWTAG_FAULT=report: no abort" hasnt 'exit status 134'

# No edit of the project at all: the emulator variable runs every test through hwtag.
ctest_run emulator "-DCMAKE_CROSSCOMPILING_EMULATOR=$launcher;--lib;$lib" -DHEAP_BUG=ON
check "ctest, CMAKE_CROSSCOMPILING_EMULATOR: copy fails with the report" has '^BUG: KASAN: slab-out-of-bounds'
check "ctest, CMAKE_CROSSCOMPILING_EMULATOR: one failure" has '67% tests passed, 1 tests failed out of 3'

# make check, in a copy of the sources (make builds in place).
make_run() {
    local dir=$work/$1
    shift
    out=$dir.out
    cp -r "$repo/examples/ci" "$dir"
    rm -rf "$dir/build"
    make -C "$dir" check CC="$cc" HWTAG="$launcher --lib $lib" "$@" >"$out" 2>&1
    status=$?
}
make_run make-clean
check "make check, clean suite: passes" test "$status" = 0
check "make check, clean suite: 3 PASS lines" test "$(grep -c '^PASS: test_' "$out")" = 3
make_run make-bug HEAP_BUG=1
check "make check, HEAP_BUG: fails" test "$status" != 0
check "make check, HEAP_BUG: the clean tests pass" has '^PASS: test_split$'
check "make check, HEAP_BUG: copy fails with status 134" has '^FAIL: test_copy \(exit status 134\)$'
check "make check, HEAP_BUG: the report" has '^BUG: KASAN: slab-out-of-bounds'
check "make check, HEAP_BUG: 1 of 3 failed" has '^1 of 3 tests failed$'

echo "example: $passed passed, $failed failed"
[ "$failed" = 0 ]
