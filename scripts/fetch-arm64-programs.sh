#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes Debian's arm64 python3.11, sqlite3, iperf3 and the other programs of
# the integration tests (perl, lua, tcl, compressors, text tools, shells, jq)
# runnable under qemu-aarch64 on an x86_64 host, without touching the host's
# amd64 packages.
#
# Usage: scripts/fetch-arm64-programs.sh DESTDIR
#
# Afterwards:
#   DESTDIR/usr/bin/python3.11  (and python3 -> python3.11)
#   DESTDIR/usr/bin/sqlite3
#   DESTDIR/usr/bin/iperf3
#   DESTDIR/usr/bin/{perl,lua5.4,tclsh8.6,xz,zstd,pigz,diff,jq,gawk,sort,...}
#   DESTDIR/bin/{bash,dash,gzip,bzip2,grep,sed}
# run as `qemu-aarch64 -cpu max,sve=off -L / DESTDIR/usr/bin/python3 ...`.
#
# How the packages are chosen (apt-cache show PKG:arm64 | grep Multi-Arch):
# - Shared libraries marked "Multi-Arch: same" (libssl3, libsqlite3-0,
#   libiperf0, libsctp1, libffi8, ...) install side by side with their amd64
#   twins, so they are apt-installed as PKG:arm64 into the system, where the
#   guest's ld.so finds them (/usr/lib/aarch64-linux-gnu).
# - python3.11-minimal ("allowed"), sqlite3, lua5.4, tcl8.6, xz-utils, bzip2,
#   zstd, bash, dash, jq, gawk, coreutils ("foreign"), iperf3, perl-base, gzip,
#   pigz, diffutils (none) ship executables that would replace the host's
#   amd64 ones, so they are fetched with `apt-get download` and unpacked with
#   `dpkg -x` into DESTDIR. (lua5.4 and zstd carry their library inside.)
# - perl-base's modules land in DESTDIR/usr/lib/aarch64-linux-gnu/perl-base,
#   which is not on the arm64 perl's compiled-in @INC here: the test passes
#   it with -I.
# - libpython3.11-minimal and libpython3.11-stdlib are "Multi-Arch: same" too,
#   but "same" forces the amd64 and arm64 copies to one version: installing
#   the arm64 ones would upgrade (or, with a pinned host, fail on) the host's
#   own python3.11. They are unpacked into DESTDIR instead. Python then finds
#   its standard library without PYTHONHOME: it looks for
#   <dir of executable>/../lib/python3.11/os.py, which is
#   DESTDIR/usr/lib/python3.11 (sys.prefix = DESTDIR/usr). The same layout
#   keeps the host's dist-packages off sys.path.
# - libjq1 is "Multi-Arch: same" as well, and Debian 12's security updates
#   have moved it past the host's libjq1:amd64 (which the host's jq pins to
#   its own version), so it too is unpacked into DESTDIR: the test runs jq
#   with LD_LIBRARY_PATH=DESTDIR/usr/lib/aarch64-linux-gnu.
#
# Idempotent: a stamp file (DESTDIR/.fetched) records what was unpacked;
# a second run with everything in place prints nothing and exits 0.
set -euo pipefail

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    echo "usage: $0 DESTDIR" >&2
    exit 2
fi
mkdir -p "$1"
dest=$(cd "$1" && pwd)

# Unpacked into DESTDIR; they must come from one Debian version set.
extract_pkgs=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib
    sqlite3 iperf3 coreutils grep sed gawk findutils perl-base lua5.4 tcl8.6
    gzip xz-utils bzip2 zstd pigz bash dash diffutils jq libjq1)
# Installed as :arm64 (all "Multi-Arch: same"): the run-time libraries of the
# programs above and of the python extension modules the tests import.
arm64_libs=(libc6 libgcc-s1 libexpat1 zlib1g libssl3 libffi8 libsqlite3-0
    libreadline8 libtinfo6 libncursesw6 libbz2-1.0 liblzma5 libuuid1 libcrypt1
    libnsl2 libtirpc3 libiperf0 libsctp1 libpcre2-8-0 libsigsegv2 libselinux1 libacl1
    libattr1 libgmp10 libmpfr6 libtcl8.6 liblz4-1 libonig5)
host_pkgs=(qemu-user)
# Smoke-tested under qemu below (each with its --version or the like).
tools=(usr/bin/sort bin/grep bin/sed usr/bin/gawk usr/bin/find usr/bin/perl
    usr/bin/lua5.4 usr/bin/tclsh8.6 bin/gzip usr/bin/xz bin/bzip2 usr/bin/zstd
    usr/bin/pigz bin/bash bin/dash usr/bin/diff usr/bin/jq)
programs=(usr/bin/python3.11 usr/bin/sqlite3 usr/bin/iperf3 "${tools[@]}")
stamp="$dest/.fetched"
# shellcheck disable=SC2054 # the comma is part of the -cpu argument
qemu=(qemu-aarch64 -cpu max,sve=off -L /)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive

installed() { # PKG... -> prints the ones not installed
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            echo "$p"
    done
}

all_in_place() {
    [ -f "$stamp" ] || return 1
    local p
    for p in "${programs[@]}"; do [ -x "$dest/$p" ] || return 1; done
    [ -z "$(installed "${host_pkgs[@]}" "${arm64_libs[@]/%/:arm64}")" ]
}

if all_in_place; then
    exit 0
fi

echo "fetch-arm64-programs: setting up arm64 python3.11, sqlite3, iperf3 and ${#tools[@]} tools in $dest"

# 1. System side: arm64 multiarch and the Multi-Arch: same libraries.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
fi
mapfile -t missing < <(installed "${host_pkgs[@]}" "${arm64_libs[@]/%/:arm64}")
if [ ${#missing[@]} -gt 0 ]; then
    # A first try without `apt-get update` keeps reruns offline; a stale or
    # empty package list gets one update and a second try.
    if ! $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" \
        >/dev/null 2>&1; then
        $SUDO apt-get update -qq
        $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
fi

# 2. Executables (and python's library tree): download and unpack.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt drops privileges to _apt for downloads; let it write here (avoids the
# "unsandboxed as root" warning).
chmod 0777 "$work"
download() {
    (cd "$work" && apt-get download -qq "${extract_pkgs[@]/%/:arm64}" >/dev/null 2>&1)
}
if ! download; then
    $SUDO apt-get update -qq
    (cd "$work" && apt-get download -qq "${extract_pkgs[@]/%/:arm64}" >/dev/null)
fi
rm -f "$stamp"
for deb in "$work"/*.deb; do
    dpkg -x "$deb" "$dest"
    # shellcheck disable=SC2016 # dpkg-deb expands ${Package}, not the shell
    dpkg-deb -W --showformat='${Package}=${Version}\n' "$deb" >>"$work/stamp"
done
# python3.11-minimal has no `python3` name (that is python3-minimal's job).
ln -sfn python3.11 "$dest/usr/bin/python3"

# 3. Smoke test under qemu before declaring success.
"${qemu[@]}" "$dest/usr/bin/python3.11" -c \
    'import json, sqlite3, decimal, ssl, zlib, hashlib, re' ||
    { echo "fetch-arm64-programs: arm64 python3.11 does not start" >&2; exit 1; }
# Byte-compile the stdlib once (quietly) so that later test runs do not pay
# for it under emulation; failures here are harmless (python then compiles
# on import).
"${qemu[@]}" "$dest/usr/bin/python3.11" -m compileall -q -j 0 \
    -x '(lib2to3/tests|test/|idlelib|tkinter|turtledemo)' \
    "$dest/usr/lib/python3.11" >/dev/null 2>&1 || true
"${qemu[@]}" "$dest/usr/bin/sqlite3" -version >/dev/null ||
    { echo "fetch-arm64-programs: arm64 sqlite3 does not start" >&2; exit 1; }
"${qemu[@]}" "$dest/usr/bin/iperf3" --version >/dev/null ||
    { echo "fetch-arm64-programs: arm64 iperf3 does not start" >&2; exit 1; }

# version_cmd TOOL: the words that make TOOL print its version and exit 0
version_cmd() {
    case "$1" in
    */lua5.4) echo -v ;;
    */tclsh8.6) echo /dev/null ;; # reads the (empty) script and exits 0
    */dash) echo -c true ;;
    */bzip2) echo --help ;;
    *) echo --version ;;
    esac
}
for tool in "${tools[@]}"; do
    read -r -a args <<<"$(version_cmd "$tool")"
    "${qemu[@]}" -E "LD_LIBRARY_PATH=$dest/usr/lib/aarch64-linux-gnu" "$dest/$tool" \
        "${args[@]}" </dev/null >/dev/null 2>&1 ||
        { echo "fetch-arm64-programs: arm64 $tool does not start" >&2; exit 1; }
done

sort "$work/stamp" >"$stamp"
echo "fetch-arm64-programs: done ($(paste -sd' ' "$stamp"))"
