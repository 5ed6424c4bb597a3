#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The OPTIONS section of docs/man/libhwtag.7, generated from options.def (the single
# table of options, as scripts/options-table.sh does for the README). The page keeps the
# generated roff between the lines
#   .\" BEGIN GENERATED OPTIONS ...   and   .\" END GENERATED OPTIONS
# The lint test tests/package/man.sh runs --check.
#
# Usage: man-options.sh [--def FILE] [--check PAGE | --update PAGE]
#
#   (no action)    print the generated roff
#   --check PAGE   exit 1 when PAGE's generated block differs (prints the diff)
#   --update PAGE  rewrite PAGE's generated block
#   --def FILE     options.def to read (default: src/base/options.def, else src/options.def)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
def="" action=print page=""
while [ $# -gt 0 ]; do
    case $1 in
    --def) def=$2; shift 2 ;;
    --check | --update) action=${1#--}; [ $# -ge 2 ] || { echo "man-options.sh: $1 needs a page" >&2; exit 2; }
        page=$2; shift 2 ;;
    -h | --help) sed -n '/^# Usage:/,/^#   --def/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "man-options.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$def" ]; then
    for def in "$root/src/base/options.def" "$root/src/options.def"; do
        [ -f "$def" ] && break
    done
fi
[ -f "$def" ] || { echo "man-options.sh: no options.def (src/base/ or src/)" >&2; exit 1; }

begin='.\" BEGIN GENERATED OPTIONS: scripts/man-options.sh --update docs/man/libhwtag.7'
end='.\" END GENERATED OPTIONS'

# roff-safe text: backslashes escaped, no line starting with a control character
roff() { sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\\&&/"; }

generate() {
    echo "$begin"
    bash "$root/scripts/options-rows.sh" "$def" |
    while IFS=$'\037' read -r name type words def_val min flags help; do
        case $type in
        enum)
            values=""
            for w in $words; do values="${values:+$values | }\\fB$w\\fP"; done
            synopsis="\\fBHWTAG_$name=\\fP$values"
            default="\\fB$def_val\\fP"
            ;;
        uint)
            synopsis="\\fBHWTAG_$name=\\fP\\fIN\\fP"
            values="an integer, at least $min"
            default="\\fB$def_val\\fP"
            ;;
        *)
            case $name in
            LOG_PATH)
                synopsis="\\fBHWTAG_$name=\\fP\\fIfile\\fP"
                values="a file path; %p in it is replaced by the process id"
                default="standard error"
                ;;
            SUPPRESSIONS)
                synopsis="\\fBHWTAG_$name=\\fP\\fIfile\\fP"
                values="a file path"
                default="none"
                ;;
            *)
                synopsis="\\fBHWTAG_$name=\\fP\\fIpath\\fP"
                values="the path of a program"
                default="the first one found on PATH"
                ;;
            esac
            ;;
        esac
        text=$(roff <<<"$help")
        echo ".TP"
        echo "$synopsis"
        echo "${text^}."
        [ "$type" = enum ] || echo "Value: $values."
        echo "Default: $default."
        if [ "$flags" = names_file ]; then
            echo "Ignored in a secure\\-execution process (see \\fBSECURITY\\fP)."
        fi
    done
    echo "$end"
}

current() { sed -n "\\|^\\.\\\\\" BEGIN GENERATED OPTIONS|,\\|^\\.\\\\\" END GENERATED OPTIONS|p" "$page"; }

case $action in
print) generate ;;
check)
    if ! diff -u <(current) <(generate); then
        echo "man-options.sh: $page: OPTIONS differ from $def; run scripts/man-options.sh --update $page" >&2
        exit 1
    fi
    echo "man-options.sh: $page: OPTIONS match $def"
    ;;
update)
    grep -q '^\.\\" BEGIN GENERATED OPTIONS' "$page" && grep -q '^\.\\" END GENERATED OPTIONS' "$page" ||
        { echo "man-options.sh: $page has no generated-options block" >&2; exit 1; }
    gen=$(mktemp)
    trap 'rm -f "$gen"' EXIT
    generate >"$gen"
    awk -v gen="$gen" '
        /^\.\\" BEGIN GENERATED OPTIONS/ {while ((getline l < gen) > 0) print l; skip=1; next}
        /^\.\\" END GENERATED OPTIONS/ {skip=0; next}
        !skip {print}' "$page" >"$page.tmp"
    mv "$page.tmp" "$page"
    echo "man-options.sh: $page: OPTIONS regenerated from $def"
    ;;
esac
