#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package's upstream version is project(hwtag VERSION x.y.z) in CMakeLists.txt,
# the project's single version (hwtag_version() returns it too); debian/changelog must
# agree. debian/rules runs --check before every package build, and the lint test
# tests/package/version.sh runs it in ctest.
#
# Usage: deb-version.sh [--root DIR] [--check | --update | --cmake | --changelog]
#
#   (no action), --cmake  print the CMake project version
#   --changelog           print the upstream part of debian/changelog's top version
#   --check               exit 1, with a message, when the two differ
#   --update              when they differ, add a debian/changelog entry X.Y.Z-1 for the
#                         CMake version (maintainer: $DEBFULLNAME <$DEBEMAIL>, else the
#                         top entry's), so that --check passes
#   --root DIR            the source tree (default: this script's ../)
#
# Exit status: 0; 1 when --check finds a difference or a version cannot be read;
# 2 for a usage error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
action=cmake
while [ $# -gt 0 ]; do
    case $1 in
    --root) [ $# -ge 2 ] || { echo "deb-version.sh: --root needs a directory" >&2; exit 2; }
        root=$2; shift 2 ;;
    --check | --update | --cmake | --changelog) action=${1#--}; shift ;;
    -h | --help) sed -n '/^# Usage:/,/^# 2 for a usage/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0 ;;
    *) echo "deb-version.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

# project(hwtag VERSION x.y.z ...), possibly with the arguments on the following lines
cmake_version() {
    local v
    v=$(awk '/^[ \t]*project[ \t]*\([ \t]*hwtag([ \t]|$)/ {p=1} p {print} p && /\)/ {exit}' \
        "$root/CMakeLists.txt" | tr '\n' ' ' |
        sed -nE 's/.*[( \t]VERSION[ \t]+([0-9]+(\.[0-9]+){0,3}).*/\1/p')
    [ -n "$v" ] || { echo "deb-version.sh: no project(hwtag VERSION ...) in $root/CMakeLists.txt" >&2; return 1; }
    echo "$v"
}

# "hwtag (EPOCH:UPSTREAM-REVISION) dist; urgency=..." -> UPSTREAM
changelog_full() {
    local v
    v=$(sed -nE '1s/^[a-z0-9][a-z0-9.+-]* \(([^)]+)\).*/\1/p' "$root/debian/changelog" 2>/dev/null || true)
    [ -n "$v" ] || { echo "deb-version.sh: cannot read the version of $root/debian/changelog" >&2; return 1; }
    echo "$v"
}
changelog_version() {
    local v
    v=$(changelog_full) || return 1
    v=${v#*:}
    echo "${v%-*}"
}

case $action in
cmake) cmake_version ;;
changelog) changelog_version ;;
check)
    c=$(cmake_version) || exit 1
    d=$(changelog_version) || exit 1
    if [ "$c" != "$d" ]; then
        echo "deb-version.sh: debian/changelog has upstream version $d, CMakeLists.txt project(hwtag VERSION $c);" \
            "run scripts/deb-version.sh --update" >&2
        exit 1
    fi
    echo "deb-version.sh: debian/changelog and CMakeLists.txt agree on $c"
    ;;
update)
    c=$(cmake_version) || exit 1
    d=$(changelog_version) || exit 1
    if [ "$c" = "$d" ]; then
        echo "deb-version.sh: debian/changelog already has $c"
        exit 0
    fi
    top=$(head -n 1 "$root/debian/changelog")
    source_name=${top%% *}
    dist=$(sed -nE '1s/^[^)]*\) ([^;]+);.*/\1/p' "$root/debian/changelog")
    who=$(sed -nE '0,/^ -- /s/^ -- (.*>)  .*/\1/p' "$root/debian/changelog")
    if [ -n "${DEBEMAIL:-}" ]; then who="${DEBFULLNAME:-${DEBEMAIL%@*}} <$DEBEMAIL>"; fi
    tmp=$(mktemp)
    {
        echo "$source_name ($c-1) ${dist:-unstable}; urgency=medium"
        echo
        echo "  * New upstream version $c."
        echo
        echo " -- $who  $(LC_ALL=C date -R)"
        echo
        cat "$root/debian/changelog"
    } >"$tmp"
    cat "$tmp" >"$root/debian/changelog"
    rm -f "$tmp"
    echo "deb-version.sh: debian/changelog: new entry $c-1 (was $d)"
    ;;
esac
