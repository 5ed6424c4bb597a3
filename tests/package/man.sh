#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Lint of docs/man: libhwtag.7's OPTIONS section equals scripts/man-options.sh's output
# from options.def; both pages render with man(1) without a warning; hwtag.1 names every
# option of tools/hwtag; libhwtag.7 names every function of include/hwtag.h.
# Usage: man.sh [SOURCE_DIR]
set -uo pipefail
root=$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/../..}" && pwd)
cd "$root"
passed=0 failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
check() {
    if eval "$2" >"$log" 2>&1; then passed=$((passed + 1)); echo "PASS: man: $1"
    else failed=$((failed + 1)); echo "FAIL: man: $1"; sed 's/^/    /' "$log" | tail -n 30; fi
}
check "libhwtag.7 OPTIONS are generated from options.def" \
    'bash scripts/man-options.sh --check docs/man/libhwtag.7'
# man --warnings prints groff's warnings on stderr; the page itself goes to /dev/null
render() {
    local err
    err=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null) || return 1
    [ -z "$err" ] || { echo "$err"; return 1; }
}
if command -v man >/dev/null && command -v groff >/dev/null; then
    for page in docs/man/hwtag.1 docs/man/libhwtag.7; do
        check "$page renders without warnings" "render $page"
    done
else
    echo "SKIP: man: rendering (no man or groff)"
fi
missing_opts() {
    local o m=""
    for o in $(grep -o -- '--[a-z][a-z-]*' <<<"$(grep '^usage_line=' tools/hwtag)" | sort -u); do
        grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" docs/man/hwtag.1 || m="$m $o"
    done
    [ -z "$m" ] || { echo "not in hwtag.1:$m"; return 1; }
}
check "hwtag.1 names every option of tools/hwtag" missing_opts
missing_api() {
    local f m=""
    for f in $(grep -oE '\bhwtag_[a-z_]+\(' include/hwtag.h | tr -d '(' | sort -u); do
        grep -q "$f" docs/man/libhwtag.7 || m="$m $f"
    done
    [ -z "$m" ] || { echo "not in libhwtag.7:$m"; return 1; }
}
check "libhwtag.7 names every function of hwtag.h" missing_api
echo "man: $passed passed, $failed failed"
[ $failed -eq 0 ]
