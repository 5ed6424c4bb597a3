#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the Debian packages libhwtag0, libhwtag-dev and hwtag (debian/) into OUTDIR:
# installs what the build needs (debhelper, cmake, the arm64 cross compiler on a host that
# is not arm64, libunwind-dev:arm64, lintian), builds a copy of the source tree (so the
# tree itself gets no obj-*/ or debian/tmp/, and the results do not land in its parent
# directory), and runs lintian on the result.
#
# Usage: build-deb.sh [--no-install] [--no-lintian] OUTDIR
#
#   --no-install   do not install missing packages (fail instead)
#   --no-lintian   skip lintian
#
# On x86_64 (any non-arm64 host) this is a cross build, `dpkg-buildpackage -aarm64
# -Pcross,nocheck -b -us -uc`; on arm64 a native `dpkg-buildpackage -b -us -uc`.
# OUTDIR gets the .deb files, the .changes and .buildinfo, build.log and lintian.txt.
# Exit status: 0; 1 when the build fails or lintian reports an error; 2 on a usage error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
install=1 lintian=1 out=""
while [ $# -gt 0 ]; do
    case $1 in
    --no-install) install=0; shift ;;
    --no-lintian) lintian=0; shift ;;
    -h | --help) sed -n '/^# Usage:/,/^# Exit status:/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "build-deb.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "build-deb.sh: one OUTDIR only" >&2; exit 2; }
        out=$1; shift ;;
    esac
done
[ -n "$out" ] || { echo "build-deb.sh: no OUTDIR given (see --help)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

host_arch=$(dpkg --print-architecture)
pkgs=(debhelper dpkg-dev cmake fakeroot)
if [ "$host_arch" = arm64 ]; then
    pkgs+=(build-essential libunwind-dev)
    build_args=(-b -us -uc)
else
    pkgs+=(crossbuild-essential-arm64 libunwind-dev:arm64 libc6-dev:arm64)
    build_args=(-aarm64 -Pcross,nocheck -b -us -uc)
fi
[ $lintian = 0 ] || pkgs+=(lintian)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ $install = 0 ]; then
        echo "build-deb.sh: missing packages: ${missing[*]}" >&2
        exit 1
    fi
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    echo "build-deb.sh: installing ${missing[*]}"
    if [ "$host_arch" != arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
        $SUDO dpkg --add-architecture arm64
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A copy of the tree: the files git knows of (committed or not, minus ignored ones), or
# everything but build/ when this is not a git checkout.
work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # (minus an in-tree dpkg-buildpackage's obj-*/ directory, which .gitignore lacks)
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
        grep -zv '^obj-[^/]*/' |
        tar --null -T - -cf -) | tar -C "$work/src" -xf -
else
    tar -C "$root" --exclude=./build --exclude='./obj-*' -cf - . | tar -C "$work/src" -xf -
fi

echo "build-deb.sh: dpkg-buildpackage ${build_args[*]} (log: $out/build.log)"
if ! (cd "$work/src" && DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage "${build_args[@]}") >"$out/build.log" 2>&1; then
    tail -n 30 "$out/build.log" >&2
    echo "build-deb.sh: dpkg-buildpackage failed (see $out/build.log)" >&2
    exit 1
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
changes=$(ls "$out"/*.changes)
echo "build-deb.sh: built $(cd "$out" && ls -- *.deb | tr '\n' ' ')"

if [ $lintian = 1 ]; then
    status=0
    lintian --info --display-info --pedantic --fail-on error "$changes" >"$out/lintian.txt" 2>&1 || status=$?
    echo "build-deb.sh: lintian: $(grep -c '^E:' "$out/lintian.txt" || true) error(s)," \
        "$(grep -c '^W:' "$out/lintian.txt" || true) warning(s) (see $out/lintian.txt)"
    if [ $status != 0 ]; then
        grep -E '^E:' "$out/lintian.txt" >&2 || cat "$out/lintian.txt" >&2
        exit 1
    fi
fi
