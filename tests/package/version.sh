#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lint: debian/changelog's upstream version is CMakeLists.txt's project(hwtag VERSION), and
# scripts/deb-version.sh notices a difference (and --update repairs it) in a scratch copy.
# Usage: version.sh [SOURCE_DIR]
set -uo pipefail
root=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)
script=$root/scripts/deb-version.sh
passed=0 failed=0
check() {
    if eval "$2" >/tmp/hwtag-version.$$ 2>&1; then passed=$((passed + 1)); echo "PASS: version: $1"
    else failed=$((failed + 1)); echo "FAIL: version: $1"; sed 's/^/    /' /tmp/hwtag-version.$$; fi
}
check "debian/changelog agrees with CMakeLists.txt" 'bash "$script" --root "$root" --check'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp" /tmp/hwtag-version.$$' EXIT
mkdir -p "$tmp/debian"
cp "$root/debian/changelog" "$tmp/debian/"
v=$(bash "$script" --root "$root" --cmake)
IFS=. read -r major minor patch _ <<<"$v"
bumped=$major.$minor.$((${patch:-0} + 1))
sed -E "s/^(project\(hwtag VERSION )[0-9.]+/\1$bumped/" "$root/CMakeLists.txt" >"$tmp/CMakeLists.txt"
check "the scratch copy has CMake version $bumped" '[ "$(bash "$script" --root "$tmp" --cmake)" = "$bumped" ]'
check "--check fails when they differ" '! bash "$script" --root "$tmp" --check'
check "--update adds a $bumped-1 entry" 'DEBEMAIL= bash "$script" --root "$tmp" --update &&
    head -n 1 "$tmp/debian/changelog" | grep -q "($bumped-1)" &&
    bash "$script" --root "$tmp" --check'
if command -v dpkg-parsechangelog >/dev/null; then
    check "dpkg-parsechangelog reads the updated changelog" \
        '[ "$(dpkg-parsechangelog -l "$tmp/debian/changelog" -S Version)" = "$bumped-1" ]'
fi
echo "version: $passed passed, $failed failed"
[ $failed -eq 0 ]
