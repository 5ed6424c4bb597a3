#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what a fresh Debian 12 x86_64 machine lacks to build, test and run
# libhwtag: the aarch64 cross compiler, qemu-user, and the arm64 multiarch
# libraries the guest runs against. Idempotent and quiet when all is there.
set -euo pipefail

host_pkgs=(cmake gcc g++ make pkg-config qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
    libcmocka-dev clang-format gnuplot-nox lld clang llvm binutils-aarch64-linux-gnu file strace
    valgrind)
arm64_pkgs=(libc6:arm64 libc6-dev:arm64 libc6-dbg:arm64 libcmocka0:arm64 libcmocka-dev:arm64
    libunwind8:arm64 libunwind-dev:arm64 libgcc-s1:arm64 libstdc++6:arm64
    libexpat1:arm64 zlib1g:arm64 libffi8:arm64 libssl3:arm64 libsqlite3-0:arm64
    libreadline8:arm64 libncursesw6:arm64 libtinfo6:arm64 libbz2-1.0:arm64
    liblzma5:arm64 libuuid1:arm64 libsctp1:arm64
    libclang-rt-14-dev:arm64 libasan8:arm64)

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

missing=()
for p in "${host_pkgs[@]}" "${arm64_pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        $SUDO dpkg --add-architecture arm64
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
