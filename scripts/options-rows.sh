#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The rows of options.def, one a line, fields separated by \037 (unit separator), for the scripts that render them
# (options-table.sh for the README, man-options.sh for libhwtag(7)):
#   NAME  TYPE  WORDS  DEFAULT  MIN  FLAGS  HELP
# TYPE is enum, uint or string; WORDS the enum words, space-separated; DEFAULT the
# default word or number ("" for strings); FLAGS "names_file" for a row that names a file
# or a program (ignored in a secure-execution process), else "".
# Usage: options-rows.sh [OPTIONS.DEF]   (default: src/base/options.def)
set -euo pipefail
def=${1:-$(dirname "$0")/../src/base/options.def}
[ -f "$def" ] || { echo "options-rows.sh: no $def" >&2; exit 1; }
# join each HWT_OPTION(...) row onto one line, then split its fields
awk '/^HWT_OPTION\(/ {row=$0; while (row !~ /"\)$/ && (getline line) > 0) row = row " " line; print row}' "$def" |
while IFS= read -r row; do
    name=$(sed -E 's/^HWT_OPTION\(([A-Z_]+),.*/\1/' <<<"$row")
    type=$(sed -E 's/^HWT_OPTION\([A-Z_]+, *[a-z_]+, *HWT_OPT_([A-Z_]+),.*/\1/' <<<"$row" | tr 'A-Z' 'a-z')
    help=$(sed -E 's/.*"([^"]*)"\)$/\1/' <<<"$row")
    def_val=$(sed -E 's/^HWT_OPTION\([A-Z_]+, *[a-z_]+, *[A-Z_]+, *[^,]+, *([^,]+),.*/\1/' <<<"$row")
    min=$(sed -E 's/^HWT_OPTION\([A-Z_]+, *[a-z_]+, *[A-Z_]+, *[^,]+, *[^,]+, *([^,]+),.*/\1/' <<<"$row")
    words="" flags=""
    [[ $row == *HWT_OPT_NAMES_FILE* ]] && flags=names_file
    case $type in
    enum)
        words=$(sed -E 's/.*\{([^}]*)\}.*/\1/' <<<"$row" | tr -d '"' | sed -E 's/, *0 *$//; s/, */ /g')
        def_val=$(sed -E 's/^HWT_(MODE|FAULT|LEAK_TAGS)_//; s/^HWT_//' <<<"$def_val" | tr 'A-Z' 'a-z')
        ;;
    string) def_val="" ;;
    esac
    printf '%s\037%s\037%s\037%s\037%s\037%s\037%s\n' "$name" "$type" "$words" "$def_val" "$min" \
        "$flags" "$help"
done
