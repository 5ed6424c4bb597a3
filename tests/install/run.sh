#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install test: stages `cmake --install` of a libhwtag build tree in a temporary prefix,
# checks the installed tree is complete, then builds tests/install/main.c against it four
# ways (find_package with hwtag::hwtag and hwtag::hwtag_static; pkg-config, shared and
# --static) and runs each program. Never touches the build tree's own outputs.
#
# Usage: run.sh --build DIR [options]
#
#   --build DIR        the libhwtag build tree to install (required)
#   --config NAME      build configuration to install (multi-config generators)
#   --libdir DIR       CMAKE_INSTALL_LIBDIR of that tree (default lib)
#   --version X.Y.Z    version the install must report (required)
#   --cc PATH          C compiler for the pkg-config builds (default cc)
#   --generator NAME   CMake generator for the consumer project
#   --toolchain FILE   CMAKE_TOOLCHAIN_FILE for the consumer (cross builds)
#   --emulator CMD     runs the programs, e.g. "qemu-aarch64 -cpu max,sve=off -L /"
#                      (word-split; CMAKE_CROSSCOMPILING_EMULATOR with spaces for ';')
#   --keep             keep the staging directory and print its path
#   -h, --help         this text
#
# Prints one PASS/FAIL line per check and a closing `install: N passed, N failed`
# line; exit 0 when all passed, 1 otherwise, 2 on a usage error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build="" config="" libdir=lib version="" cc=cc generator="" toolchain="" emulator="" keep=0
usage_error() {
    echo "run.sh: $1 (see --help)" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
    --build | --config | --libdir | --version | --cc | --generator | --toolchain | --emulator)
        [ $# -ge 2 ] || usage_error "$1 needs a value"
        v=$2
        case "$1" in
        --build) build=$v ;; --config) config=$v ;; --libdir) libdir=$v ;;
        --version) version=$v ;; --cc) cc=$v ;; --generator) generator=$v ;;
        --toolchain) toolchain=$v ;; --emulator) emulator=$v ;;
        esac
        shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) sed -n '/^# Usage:/,/^# line; exit/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
    esac
done
[ -n "$build" ] || usage_error "--build is required"
[ -n "$version" ] || usage_error "--version is required"
[ -f "$build/cmake_install.cmake" ] || usage_error "'$build' is not a configured build tree"
read -r -a run_prefix <<<"$emulator"

# The programs must find libhwtag through the install only: no preload, no inherited paths.
unset LD_PRELOAD LD_LIBRARY_PATH QEMU_SET_ENV QEMU_UNSET_ENV PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)

stage=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-install.XXXXXX")
if [ $keep -eq 1 ]; then
    echo "staging directory: $stage"
else
    trap 'rm -rf "$stage"' EXIT
fi
prefix=$stage/prefix
log=$stage/log

passed=0 failed=0
pass() { echo "PASS: install: $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL: install: $1"
    failed=$((failed + 1))
    if [ -s "$log" ]; then sed 's/^/    /' "$log" | tail -n 40; fi
}
# step NAME COMMAND...: runs the command with its output in $log, PASS or FAIL.
step() {
    local name=$1
    shift
    if "$@" >"$log" 2>&1; then pass "$name"; else fail "$name"; return 1; fi
}
finish() {
    echo "install: $passed passed, $failed failed"
    if [ $failed -eq 0 ]; then exit 0; fi
    exit 1
}

# --- stage the install ----------------------------------------------------------
install_args=(--install "$build" --prefix "$prefix")
[ -z "$config" ] || install_args+=(--config "$config")
step "cmake --install --prefix <stage>" cmake "${install_args[@]}" || finish

# --- the installed tree -----------------------------------------------------------
L=$prefix/$libdir
missing=""
for f in "$L/libhwtag.so" "$L/libhwtag.a" "$prefix/include/hwtag.h" "$prefix/bin/hwtag" \
    "$L/pkgconfig/hwtag.pc" "$L/cmake/hwtag/hwtagConfig.cmake" \
    "$L/cmake/hwtag/hwtagConfigVersion.cmake" "$L/cmake/hwtag/hwtagTargets.cmake"; do
    [ -f "$f" ] || missing="$missing ${f#"$prefix"/}"
done
compgen -G "$L/cmake/hwtag/hwtagTargets-*.cmake" >/dev/null || missing="$missing $libdir/cmake/hwtag/hwtagTargets-<config>.cmake"
[ -x "$prefix/bin/hwtag" ] || missing="$missing bin/hwtag(executable)"
if [ -z "$missing" ]; then pass "installed tree is complete"; else
    : >"$log"
    fail "installed tree lacks:$missing"
fi

# libhwtag.so -> libhwtag.so.MAJOR -> libhwtag.so.X.Y.Z, and the SONAME is libhwtag.so.MAJOR
major=${version%%.*}
: >"$log"
if [ -L "$L/libhwtag.so" ] && [ "$(readlink "$L/libhwtag.so")" = "libhwtag.so.$major" ] &&
    [ -L "$L/libhwtag.so.$major" ] && [ "$(readlink "$L/libhwtag.so.$major")" = "libhwtag.so.$version" ] &&
    [ -f "$L/libhwtag.so.$version" ] && [ ! -L "$L/libhwtag.so.$version" ]; then
    pass "SONAME symlinks libhwtag.so -> .so.$major -> .so.$version"
else
    ls -l "$L" >"$log" 2>&1 || true
    fail "SONAME symlinks libhwtag.so -> .so.$major -> .so.$version"
fi
if command -v readelf >/dev/null; then
    if readelf -d "$L/libhwtag.so.$version" 2>"$log" | grep -q "SONAME.*\[libhwtag\.so\.$major\]"; then
        pass "SONAME is libhwtag.so.$major"
    else
        fail "SONAME is libhwtag.so.$major"
    fi
fi

# pkg-config file: the staged prefix, not the configured one
pc=$L/pkgconfig/hwtag.pc
if grep -qx "prefix=$prefix" "$pc" 2>"$log" && grep -qx "libdir=$L" "$pc" &&
    grep -q '^Libs.private:' "$pc"; then
    pass "hwtag.pc names the staged prefix and has Libs.private"
else
    cat "$pc" >>"$log" 2>&1 || true
    fail "hwtag.pc names the staged prefix and has Libs.private"
fi
# The exported static target names libraries, never this machine's absolute paths.
targets=$L/cmake/hwtag/hwtagTargets.cmake
if ! grep 'INTERFACE_LINK_LIBRARIES' "$targets" | grep -qE '"([^"]*;)?/' 2>/dev/null; then
    pass "exported link interface has no absolute library paths"
else
    grep 'INTERFACE_LINK_LIBRARIES' "$targets" >"$log"
    fail "exported link interface has no absolute library paths"
fi

# run NAME PROGRAM: runs it (under the emulator when cross), wants `1 passed, 0 failed`.
run() {
    local name=$1 prog=$2
    if "${run_prefix[@]}" "$prog" >"$log" 2>&1 && grep -q ': 1 passed, 0 failed$' "$log"; then
        sed 's/^/    /' "$log"
        pass "$name runs"
    else
        fail "$name runs"
    fi
}

# --- find_package(hwtag CONFIG) ------------------------------------------------------
cmake_args=(-S "$here" -B "$stage/consumer" -DCMAKE_PREFIX_PATH="$prefix"
    -DHWTAG_EXPECT_VERSION="$version" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
[ -z "$generator" ] || cmake_args+=(-G "$generator")
if [ -n "$toolchain" ]; then
    cmake_args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")
else
    cmake_args+=(-DCMAKE_C_COMPILER="$cc")
fi
if step "find_package(hwtag $version CONFIG) configures" cmake "${cmake_args[@]}" &&
    step "consumer project builds" cmake --build "$stage/consumer"; then
    run "hwtag::hwtag consumer" "$stage/consumer/consumer_shared"
    run "hwtag::hwtag_static consumer" "$stage/consumer/consumer_static"
    # the shared consumer must really need libhwtag.so, the static one must not
    : >"$log"
    if readelf -d "$stage/consumer/consumer_shared" 2>>"$log" | grep -q 'NEEDED.*libhwtag\.so' &&
        ! readelf -d "$stage/consumer/consumer_static" 2>>"$log" | grep -q 'NEEDED.*libhwtag'; then
        pass "hwtag::hwtag links libhwtag.so, hwtag::hwtag_static links libhwtag.a"
    else
        fail "hwtag::hwtag links libhwtag.so, hwtag::hwtag_static links libhwtag.a"
    fi
fi

# --- pkg-config ---------------------------------------------------------------------
if command -v pkg-config >/dev/null; then
    # only the staged install: PKG_CONFIG_LIBDIR replaces the default (host) search path
    export PKG_CONFIG_LIBDIR=$L/pkgconfig
    defs=(-DHWTAG_EXPECT_VERSION="\"$version\"")
    if step "pkg-config --modversion hwtag is $version" \
        test "$(pkg-config --modversion hwtag 2>&1)" = "$version"; then
        read -r -a cflags <<<"$(pkg-config --cflags hwtag)"
        read -r -a libs <<<"$(pkg-config --libs hwtag)"
        if step "pkg-config shared build" "$cc" -O2 "${cflags[@]}" "${defs[@]}" \
            -DHWTAG_VARIANT='"pkg-config-shared"' "$here/main.c" -o "$stage/pc_shared" \
            "${libs[@]}" -Wl,-rpath,"$L"; then
            run "pkg-config shared consumer" "$stage/pc_shared"
        fi
        # --static: -lhwtag must pick libhwtag.a, the rest (Libs.private) stays dynamic
        read -r -a slibs <<<"$(pkg-config --static --libs hwtag)"
        static_libs=()
        for a in "${slibs[@]}"; do
            if [ "$a" = -lhwtag ]; then static_libs+=(-Wl,-Bstatic -lhwtag -Wl,-Bdynamic); else
                static_libs+=("$a")
            fi
        done
        if step "pkg-config --static build ($(pkg-config --static --libs hwtag))" "$cc" -O2 \
            "${cflags[@]}" "${defs[@]}" -DHWTAG_VARIANT='"pkg-config-static"' "$here/main.c" \
            -o "$stage/pc_static" "${static_libs[@]}"; then
            run "pkg-config static consumer" "$stage/pc_static"
        fi
        # GCC: libhwtag.a must hold real code (fat LTO objects), or clang and other
        # compilers' consumers cannot link it; -fno-use-linker-plugin links as they do
        if "$cc" -v 2>&1 | grep -q '^gcc version'; then
            if step "libhwtag.a links without the LTO plugin" "$cc" -O2 -fno-use-linker-plugin \
                "${cflags[@]}" "${defs[@]}" -DHWTAG_VARIANT='"no-lto-plugin-static"' \
                "$here/main.c" -o "$stage/nolto_static" "${static_libs[@]}"; then
                run "consumer linked without the LTO plugin" "$stage/nolto_static"
            fi
        fi
    fi
else
    echo "SKIP: install: pkg-config builds (no pkg-config)"
fi

finish
