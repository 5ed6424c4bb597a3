#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tests the tools/hwtag launcher: option parsing and errors, the library
# search order, and that LD_PRELOAD and the HWTAG_* variables reach an
# aarch64 guest program (under qemu on a non-aarch64 host).
#
# Usage: test_launcher.sh [--lib PATH]
#
#   --lib PATH   a real libhwtag.so to preload in the end-to-end checks;
#                without it the test builds a do-nothing arm64 shim library
#                (the launcher does not care what it preloads)
#   -h, --help   this text
#
# Needs an aarch64 C compiler (aarch64-linux-gnu-gcc, or cc on an aarch64
# host; override with $CC_AARCH64) and, on other hosts, qemu-aarch64 with
# Debian's arm64 libc (scripts/setup.sh). Prints one PASS/FAIL line per check
# and a closing `N passed, N failed` line; exit 0 when all passed, 1 otherwise,
# 2 on a usage error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
launcher=$repo/tools/hwtag

lib=""
while [ $# -gt 0 ]; do
    case "$1" in
    --lib) [ $# -ge 2 ] || { echo "test_launcher.sh: --lib needs a path" >&2; exit 2; }
        lib=$2; shift 2 ;;
    --lib=*) lib=${1#*=}; shift ;;
    -h | --help) sed -n '/^# Usage:/,/^# 2 on a usage/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test_launcher.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

# The launcher must see neither the caller's HWTAG_* nor a preload.
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)
unset LD_PRELOAD QEMU_SET_ENV QEMU_UNSET_ENV QEMU

work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-launcher.XXXXXX")
trap 'rm -rf "$work"' EXIT

passed=0 failed=0
pass() { echo "PASS: launcher: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: launcher: $1"; failed=$((failed + 1)); }
# check NAME CONDITION...: runs the condition (a command), PASS or FAIL.
check() {
    local name=$1
    shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}

# --- an arm64 probe program and a shim library -------------------------------
if [ "$(uname -m)" = aarch64 ]; then cc=${CC_AARCH64:-cc}; else cc=${CC_AARCH64:-aarch64-linux-gnu-gcc}; fi
if ! command -v "$cc" >/dev/null; then
    echo "FAIL: launcher: no aarch64 compiler '$cc' (scripts/setup.sh installs it)"
    exit 1
fi

# probe [CODE]: prints LD_PRELOAD, every HWTAG_* variable, and the file of
# the first mapping named libhwtag*, then exits with CODE.
cat >"$work/probe.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern char **environ;
int main(int argc, char **argv)
{
    const char *pre = getenv("LD_PRELOAD");
    printf("LD_PRELOAD=%s\n", pre ? pre : "(unset)");
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "HWTAG_", 6) == 0)
            printf("%s\n", *e);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (path && strstr(path, "/libhwtag")) {
            printf("mapped %s", path);
            break;
        }
    }
    if (argc > 1 && strcmp(argv[1], "abort") == 0)
        abort();
    return argc > 1 ? atoi(argv[1]) : 0;
}
EOF
"$cc" -O1 -o "$work/probe" "$work/probe.c"
if [ -z "$lib" ]; then
    echo 'void hwtag_test_shim(void) {}' >"$work/shim.c"
    "$cc" -shared -fPIC -o "$work/libhwtag-shim.so" "$work/shim.c"
    lib=$work/libhwtag-shim.so
fi
[ -f "$lib" ] || { echo "FAIL: launcher: library '$lib' not found"; exit 1; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
real_lib=$(readlink -f "$lib")

# --- help and usage errors -----------------------------------------------------
out=$("$launcher" --help) && rc=0 || rc=$?
check "--help exits 0 and shows the usage" test "$rc" = 0 -a -n "$(grep -m1 'Usage: hwtag' <<<"$out")"

# bad ARGS...: exit status 2, exactly one line on stderr, nothing on stdout.
bad() {
    local rc=0
    "$launcher" --lib "$lib" "$@" >"$work/bad.out" 2>"$work/bad.err" </dev/null || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$work/bad.err")" = 1 ] && [ ! -s "$work/bad.out" ] &&
        grep -q '^hwtag: .*usage: hwtag' "$work/bad.err"
}
check "unknown option -> usage error 2" bad --frobnicate -- "$work/probe"
check "--mode bogus -> usage error 2" bad --mode bogus -- "$work/probe"
check "--mode without value -> usage error 2" bad --mode
check "--sample 0 -> usage error 2" bad --sample 0 -- "$work/probe"
check "--sample x -> usage error 2" bad --sample=x -- "$work/probe"
check "--sample-order -1 -> usage error 2" bad --sample-order -1 -- "$work/probe"
check "--fault bogus -> usage error 2" bad --fault crash -- "$work/probe"
check "--stacktrace maybe -> usage error 2" bad --stacktrace maybe -- "$work/probe"
check "no program -> usage error 2" bad --mode sync
check "--dry-run=1 -> usage error 2" bad --dry-run=1 "$work/probe"
check "--options '' -> usage error 2" bad --options '' -- "$work/probe"

missing_lib() {
    local rc=0
    "$launcher" --lib "$work/nonexistent.so" -- "$work/probe" >/dev/null 2>"$work/err" || rc=$?
    [ "$rc" = 1 ] && grep -q 'nonexistent.so' "$work/err"
}
check "missing --lib -> exit 1 naming it" missing_lib

# --- the library search order (dry runs) ------------------------------------------
# dry LAUNCHER ARGS...: the LD_PRELOAD value of the command the launcher would run.
dry() {
    local l=$1
    shift
    "$l" --dry-run "$@" | tr ' ' '\n' | sed -n 's/^\(-E\)\{0,1\}LD_PRELOAD=\([^:]*\).*/\2/p' | head -1
}
mkdir -p "$work/prefix/bin" "$work/prefix/lib" "$work/tree/tools" \
    "$work/tree/build/aarch64/lib" "$work/other" "$work/links"
cp "$launcher" "$work/prefix/bin/hwtag"
cp "$launcher" "$work/tree/tools/hwtag"
ln -s "$work/prefix/bin/hwtag" "$work/links/hwtag"
for d in prefix/lib tree/build/aarch64/lib other; do cp "$lib" "$work/$d/libhwtag.so"; done

check "installed layout: PREFIX/bin/hwtag finds PREFIX/lib/libhwtag.so" \
    test "$(dry "$work/prefix/bin/hwtag" "$work/probe")" = "$work/prefix/lib/libhwtag.so"
check "installed layout through a symlink to the script" \
    test "$(dry "$work/links/hwtag" "$work/probe")" = "$work/prefix/lib/libhwtag.so"
check "build tree: REPO/tools/hwtag finds REPO/build/aarch64/lib/libhwtag.so" \
    test "$(dry "$work/tree/tools/hwtag" "$work/probe")" = "$work/tree/build/aarch64/lib/libhwtag.so"
check "\$HWTAG_LIB beats the installed layout" \
    test "$(HWTAG_LIB=$work/other/libhwtag.so dry "$work/prefix/bin/hwtag" "$work/probe")" = \
    "$work/other/libhwtag.so"
check "--lib beats \$HWTAG_LIB" \
    test "$(HWTAG_LIB=$work/prefix/lib/libhwtag.so dry "$work/prefix/bin/hwtag" \
        --lib "$work/other/libhwtag.so" "$work/probe")" = "$work/other/libhwtag.so"
check "relative --lib is made absolute" \
    test "$(cd "$work" && dry "$launcher" --lib other/libhwtag.so "$work/probe")" = \
    "$work/other/libhwtag.so"
no_lib_found() {
    local rc=0
    rm -f "$work/tree/build/aarch64/lib/libhwtag.so"
    "$work/tree/tools/hwtag" "$work/probe" >/dev/null 2>"$work/err" || rc=$?
    [ "$rc" = 1 ] && grep -q 'cannot find libhwtag.so' "$work/err"
}
check "no library anywhere -> exit 1" no_lib_found

# --- end to end: the guest sees the preload and the options ------------------------
# run_probe ARGS...: runs the launcher, output sorted into $work/probe.out.
run_probe() {
    local rc=0
    "$launcher" "$@" >"$work/probe.raw" 2>"$work/probe.err" || rc=$?
    sort "$work/probe.raw" >"$work/probe.out"
    return "$rc"
}
# has LINE: $work/probe.out contains exactly LINE.
has() { grep -qxF -- "$1" "$work/probe.out"; }
lacks() { ! grep -q -- "$1" "$work/probe.out"; }

if run_probe --lib "$lib" --mode async --sample 4 --sample-order 2 --fault report \
    --stacktrace off --log "$work/report.log" -- "$work/probe"; then
    check "guest sees LD_PRELOAD" has "LD_PRELOAD=$lib"
    check "guest has the library mapped" has "mapped $real_lib"
    check "--mode -> HWTAG_MODE" has "HWTAG_MODE=async"
    check "--sample -> HWTAG_SAMPLE" has "HWTAG_SAMPLE=4"
    check "--sample-order -> HWTAG_SAMPLE_ORDER" has "HWTAG_SAMPLE_ORDER=2"
    check "--fault -> HWTAG_FAULT" has "HWTAG_FAULT=report"
    check "--stacktrace -> HWTAG_STACKTRACE" has "HWTAG_STACKTRACE=off"
    check "--log -> HWTAG_LOG_PATH" has "HWTAG_LOG_PATH=$work/report.log"
else
    fail "probe under the launcher failed: $(head -3 "$work/probe.err")"
fi

if HWTAG_MODE=async HWTAG_STACKTRACE=off HWTAG_LIB=$lib \
    run_probe --mode=sync --fault=panic_on_write -- "$work/probe"; then
    check "an option overrides the inherited variable" has "HWTAG_MODE=sync"
    check "inherited HWTAG_* variables reach the guest" has "HWTAG_STACKTRACE=off"
    check "--opt=value form" has "HWTAG_FAULT=panic_on_write"
    check "HWTAG_LIB is found but not passed on" lacks "HWTAG_LIB="
    check "the launcher adds no defaults of its own" lacks "HWTAG_SAMPLE"
else
    fail "probe with inherited variables failed: $(head -3 "$work/probe.err")"
fi

if HWTAG_OPTIONS=sample=3 run_probe --lib "$lib" --options "mode=async:log_path=/tmp/r.%p" \
    -- "$work/probe"; then
    check "--options -> HWTAG_OPTIONS, overriding the inherited one" \
        has "HWTAG_OPTIONS=mode=async:log_path=/tmp/r.%p"
else
    fail "probe with --options failed: $(head -3 "$work/probe.err")"
fi
if HWTAG_OPTIONS=sample=3:fault=report run_probe --lib "$lib" -- "$work/probe"; then
    check "an inherited HWTAG_OPTIONS reaches the guest" has "HWTAG_OPTIONS=sample=3:fault=report"
else
    fail "probe with HWTAG_OPTIONS failed: $(head -3 "$work/probe.err")"
fi

# The program aborts (as libhwtag's panic does): status 134 and one line that says so.
aborted() {
    local rc=0
    "$launcher" --lib "$lib" "$work/probe" abort >/dev/null 2>"$work/abort.err" || rc=$?
    [ "$rc" = 134 ] && grep -q '^hwtag: test failed with a KASAN report: .*probe aborted (SIGABRT, exit status 134)' "$work/abort.err" &&
        ! grep -q 'line [0-9]*: *[0-9]* Aborted' "$work/abort.err"
}
check "an abort: status 134 and the launcher says what it means" aborted
no_abort_line() {
    "$launcher" --lib "$lib" "$work/probe" 7 >/dev/null 2>"$work/err"
    [ $? = 7 ] && ! grep -q 'KASAN' "$work/err"
}
check "another status: no such line" no_abort_line

exit_status() {
    local rc=0
    "$launcher" --lib "$lib" "$work/probe" 7 >/dev/null 2>&1 || rc=$?
    [ "$rc" = 7 ]
}
check "the program's exit status comes back" exit_status

path_lookup() {
    mkdir -p "$work/bin"
    cp "$work/probe" "$work/bin/hwtag-probe"
    PATH=$work/bin:$PATH run_probe --lib "$lib" hwtag-probe && has "LD_PRELOAD=$lib"
}
check "a program name is looked up in PATH" path_lookup

args_passed() {
    # Arguments after the program, even option-like ones, are the program's.
    "$launcher" --lib "$lib" -- "$work/probe" 3 --mode off >/dev/null 2>&1 && return 1
    [ $? = 3 ]
}
check "arguments after PROGRAM are left alone" args_passed

echo "launcher: $passed passed, $failed failed"
[ "$failed" = 0 ]
