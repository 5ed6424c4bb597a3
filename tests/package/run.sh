#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Package test: builds the Debian packages (scripts/build-deb.sh) or takes a directory of
# them, unpacks them with dpkg-deb -x into a staging root and checks what they hold: a
# buggy program with the staged libhwtag.so.0 preloaded gets a KASAN report, a clean one
# none, the staged hwtag launcher finds the staged library, and consumers built against
# the staged libhwtag-dev with pkg-config and with find_package(hwtag) run. On a host
# that is not aarch64 everything aarch64 runs under qemu-aarch64 -cpu max,sve=off -L /.
#
# Usage: run.sh [--debs DIR] [--no-lintian] OUTDIR
#
#   OUTDIR        the packages are built into OUTDIR (unless --debs); the staging root and
#                 the test programs go to OUTDIR/stage and OUTDIR/work (both recreated)
#   --debs DIR    test the .deb files in DIR instead of building them
#   --no-lintian  skip the lintian check
#
# Prints one PASS/FAIL line per check and `package: N passed, N failed`; exit 0 when all
# passed, 1 otherwise, 2 on a usage error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
debs="" out="" lintian=1
while [ $# -gt 0 ]; do
    case $1 in
    --debs) [ $# -ge 2 ] || { echo "run.sh: --debs needs a directory" >&2; exit 2; }
        debs=$2; shift 2 ;;
    --no-lintian) lintian=0; shift ;;
    -h | --help) sed -n '/^# Usage:/,/^# passed, 1 otherwise/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "run.sh: one OUTDIR only" >&2; exit 2; }
        out=$1; shift ;;
    esac
done
[ -n "$out" ] || { echo "run.sh: no OUTDIR given (see --help)" >&2; exit 2; }
mkdir -p "$out" && out=$(cd "$out" && pwd)

# Only the staged packages may provide libhwtag: nothing inherited.
unset LD_PRELOAD LD_LIBRARY_PATH QEMU_SET_ENV QEMU_UNSET_ENV PKG_CONFIG_PATH \
    PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR HWTAG_LIB CMAKE_PREFIX_PATH
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)

passed=0 failed=0
log=$out/check.log
pass() { echo "PASS: package: $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL: package: $1"
    failed=$((failed + 1))
    [ -s "$log" ] && sed 's/^/    /' "$log" | tail -n 40
    return 0
}
# step NAME COMMAND...: runs COMMAND with its output in $log
step() {
    local name=$1
    shift
    if "$@" >"$log" 2>&1; then pass "$name"; else fail "$name"; return 1; fi
}
finish() {
    echo "package: $passed passed, $failed failed"
    [ $failed -eq 0 ] && exit 0
    exit 1
}

# --- the packages -------------------------------------------------------------------
if [ -z "$debs" ]; then
    build_args=()
    [ $lintian = 1 ] || build_args+=(--no-lintian)
    step "scripts/build-deb.sh builds the packages" \
        bash "$root/scripts/build-deb.sh" "${build_args[@]}" "$out" || finish
    debs=$out
fi
debs=$(cd "$debs" && pwd)
version=$(bash "$root/scripts/deb-version.sh" --cmake)
lib_deb=$(ls "$debs"/libhwtag0_*_arm64.deb 2>/dev/null | head -n 1)
dev_deb=$(ls "$debs"/libhwtag-dev_*_arm64.deb 2>/dev/null | head -n 1)
tool_deb=$(ls "$debs"/hwtag_*_all.deb 2>/dev/null | head -n 1)
: >"$log"
if [ -n "$lib_deb" ] && [ -n "$dev_deb" ] && [ -n "$tool_deb" ]; then
    pass "libhwtag0, libhwtag-dev and hwtag .debs are in $debs"
else
    ls -l "$debs" >"$log" 2>&1
    fail "libhwtag0, libhwtag-dev and hwtag .debs are in $debs"
    finish
fi

fields_ok() {
    local deb=$1 ma=$2 v
    v=$(dpkg-deb -f "$deb" Version)
    [ "$(dpkg-deb -f "$deb" Multi-Arch)" = "$ma" ] || { echo "$deb: Multi-Arch is not $ma"; return 1; }
    v=${v#*:}
    [ "${v%-*}" = "$version" ] || { echo "$deb: version $v, CMake project version $version"; return 1; }
}
step "package versions are the CMake project version $version, Multi-Arch fields right" \
    eval 'fields_ok "$lib_deb" same && fields_ok "$dev_deb" same && fields_ok "$tool_deb" foreign'

if [ $lintian = 1 ] && command -v lintian >/dev/null; then
    changes=$(ls "$debs"/*.changes 2>/dev/null | head -n 1)
    step "lintian reports no errors" lintian --fail-on error ${changes:-"$lib_deb" "$dev_deb" "$tool_deb"}
fi

# --- the staging root ---------------------------------------------------------------
stage=$out/stage work=$out/work
rm -rf "$stage" "$work"
mkdir -p "$stage" "$work"
step "dpkg-deb -x the three packages into the staging root" \
    eval 'for d in "$lib_deb" "$dev_deb" "$tool_deb"; do dpkg-deb -x "$d" "$stage" || exit 1; done' || finish
L=$stage/usr/lib/aarch64-linux-gnu
lib=$L/libhwtag.so.0
have_files() {
    local f m=""
    for f in "$L/libhwtag.so.$version" "$lib" "$L/libhwtag.so" "$L/libhwtag.a" \
        "$stage/usr/include/hwtag.h" "$L/pkgconfig/hwtag.pc" "$L/cmake/hwtag/hwtagConfig.cmake" \
        "$L/cmake/hwtag/hwtagConfigVersion.cmake" "$L/cmake/hwtag/hwtagTargets.cmake" \
        "$stage/usr/bin/hwtag" "$stage/usr/libexec/hwtag/hwtag" \
        "$stage/usr/share/man/man1/hwtag.1.gz" "$stage/usr/share/man/man7/libhwtag.7.gz"; do
        [ -e "$f" ] || m="$m ${f#"$stage"}"
    done
    [ -z "$m" ] || { echo "missing:$m"; return 1; }
    [ "$(readlink "$lib")" = "libhwtag.so.$version" ] || { echo "libhwtag.so.0 -> $(readlink "$lib")"; return 1; }
    [ -x "$stage/usr/bin/hwtag" ] && [ -x "$stage/usr/libexec/hwtag/hwtag" ]
}
step "the packages hold the library, the -dev files, the launcher and the man pages" have_files

if command -v man >/dev/null && command -v groff >/dev/null; then
    for page in man1/hwtag.1.gz man7/libhwtag.7.gz; do
        step "man -l $page renders without warnings" eval \
            'err=$(LC_ALL=C.UTF-8 MANROFFSEQ="" MANWIDTH=80 man --warnings -l "$stage/usr/share/man/$page" 2>&1 >/dev/null) && [ -z "$err" ] || { echo "$err"; false; }'
    done
fi

# --- running aarch64 programs ---------------------------------------------------------
if [ "$(uname -m)" = aarch64 ]; then
    cc=${CC:-cc} emulator=()
    cross_cmake=()
else
    cc=aarch64-linux-gnu-gcc emulator=(qemu-aarch64 -cpu max,sve=off -L /)
    cross_cmake=(-DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64
        -DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc)
fi
# run_aarch64 [VAR=VALUE...] -- PROGRAM [ARGS...]: the variables go to the program only
run_aarch64() {
    local vars=() e=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    if [ ${#emulator[@]} -eq 0 ]; then
        env "${vars[@]}" "$@"
    else
        for v in "${vars[@]}"; do e+=(-E "$v"); done
        "${emulator[@]}" "${e[@]}" "$@"
    fi
}

for prog in buggy clean; do
    step "$prog.c builds with $cc" "$cc" -O0 -g -fno-builtin "$here/$prog.c" -o "$work/$prog" || finish
done

# the buggy program, the packaged library preloaded: a report, and the program stopped
status=0
run_aarch64 "LD_PRELOAD=$lib" -- "$work/buggy" >"$work/buggy.out" 2>&1 || status=$?
cp "$work/buggy.out" "$log"
if grep -q '^BUG: KASAN: slab-out-of-bounds in ' "$work/buggy.out" && [ $status -ne 0 ] &&
    ! grep -q 'not caught' "$work/buggy.out"; then
    pass "buggy program under LD_PRELOAD=.../libhwtag.so.0: BUG: KASAN: report, status $status"
else
    fail "buggy program under LD_PRELOAD=.../libhwtag.so.0: BUG: KASAN: report (status $status)"
fi
# and without the library the bug goes unnoticed: the report was libhwtag's
status=0
run_aarch64 -- "$work/buggy" >"$log" 2>&1 || status=$?
if [ $status -eq 0 ] && grep -q 'not caught' "$log" && ! grep -q 'BUG: KASAN' "$log"; then
    pass "the same program without libhwtag: no report"
else
    fail "the same program without libhwtag: no report (status $status)"
fi

status=0
run_aarch64 "LD_PRELOAD=$lib" -- "$work/clean" >"$log" 2>&1 || status=$?
if [ $status -eq 0 ] && grep -q '^clean: ok' "$log" && ! grep -q 'KASAN' "$log"; then
    pass "clean program under LD_PRELOAD=.../libhwtag.so.0: no report, status 0"
else
    fail "clean program under LD_PRELOAD=.../libhwtag.so.0: no report, status 0 (status $status)"
fi

# the staged launcher (Debian's wrapper) picks the staged runtime library by itself
step "staged usr/bin/hwtag --dry-run preloads the staged libhwtag.so.0" eval \
    '"$stage/usr/bin/hwtag" --dry-run -- "$work/buggy" | tee /dev/stderr | grep -qF "LD_PRELOAD=$L/libhwtag.so.0"'
status=0
"$stage/usr/bin/hwtag" --fault=report -- "$work/buggy" >"$log" 2>&1 || status=$?
if grep -q '^BUG: KASAN: slab-out-of-bounds in ' "$log" && [ $status -eq 0 ] &&
    grep -q 'not caught' "$log"; then
    pass "staged hwtag --fault=report -- buggy: a report, and the program went on"
else
    fail "staged hwtag --fault=report -- buggy: a report, and the program went on (status $status)"
fi
step "staged hwtag --help" eval '"$stage/usr/bin/hwtag" --help | grep -q "^Usage: hwtag"'

# --- consumers of libhwtag-dev ----------------------------------------------------------
run_consumer() { # NAME PROGRAM
    local name=$1 prog=$2
    if run_aarch64 "LD_LIBRARY_PATH=$L" -- "$prog" >"$log" 2>&1 && grep -q ": 1 passed, 0 failed$" "$log"; then
        sed 's/^/    /' "$log"
        pass "$name runs against the staged library"
    else
        fail "$name runs against the staged library"
    fi
}
defs=(-DHWTAG_EXPECT_VERSION="\"$version\"")
if command -v pkg-config >/dev/null; then
    export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$L/pkgconfig
    if step "pkg-config --modversion hwtag is $version (sysroot: the staging root)" \
        test "$(pkg-config --modversion hwtag 2>&1)" = "$version"; then
        read -r -a cflags <<<"$(pkg-config --cflags hwtag)"
        read -r -a libs <<<"$(pkg-config --libs hwtag)"
        read -r -a slibs <<<"$(pkg-config --static --libs hwtag)"
        step "pkg-config paths are in the staging root ($(pkg-config --cflags --libs hwtag))" eval \
            '[ "${cflags[*]}" = "-I$stage/usr/include" ] && [[ " ${libs[*]} " == *" -L$L "* ]]'
        if step "pkg-config shared consumer builds" "$cc" -O2 "${cflags[@]}" "${defs[@]}" \
            -DHWTAG_VARIANT='"pkg-config-shared"' "$here/../install/main.c" -o "$work/pc_shared" "${libs[@]}"; then
            run_consumer "pkg-config shared consumer" "$work/pc_shared"
        fi
        static=()
        for a in "${slibs[@]}"; do
            if [ "$a" = -lhwtag ]; then static+=(-Wl,-Bstatic -lhwtag -Wl,-Bdynamic); else static+=("$a"); fi
        done
        if step "pkg-config --static consumer builds (${slibs[*]})" "$cc" -O2 "${cflags[@]}" \
            "${defs[@]}" -DHWTAG_VARIANT='"pkg-config-static"' "$here/../install/main.c" \
            -o "$work/pc_static" "${static[@]}"; then
            run_consumer "pkg-config static consumer" "$work/pc_static"
        fi
    fi
    unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
else
    echo "SKIP: package: pkg-config consumers (no pkg-config)"
fi

if step "find_package(hwtag $version) configures (CMAKE_PREFIX_PATH=<stage>/usr)" \
    cmake -S "$here/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$stage/usr" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DHWTAG_EXPECT_VERSION="$version" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cross_cmake[@]}"; then
    cp "$log" "$work/cmake-configure.log"
    step "the hwtag package found is the staged one" \
        grep -qF "hwtag $version from $L/cmake/hwtag" "$work/cmake-configure.log"
    if step "CMake consumer builds" cmake --build "$work/cmake"; then
        run_consumer "hwtag::hwtag consumer" "$work/cmake/consumer_shared"
        run_consumer "hwtag::hwtag_static consumer" "$work/cmake/consumer_static"
        step "hwtag::hwtag links libhwtag.so.0, hwtag::hwtag_static does not" eval \
            'readelf -d "$work/cmake/consumer_shared" | grep -q "NEEDED.*\[libhwtag\.so\.0\]" &&
             ! readelf -d "$work/cmake/consumer_static" | grep -q "NEEDED.*libhwtag"'
    fi
fi

finish
