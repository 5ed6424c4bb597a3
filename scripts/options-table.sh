#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints the README's option table from src/base/options.def, the single table of options:
# `scripts/options-table.sh` to regenerate, and the lint test compares it with README.md.
set -euo pipefail
def=${1:-$(dirname "$0")/../src/base/options.def}
echo "| variable | values | default | meaning |"
echo "|---|---|---|---|"
# join each HWT_OPTION(...) row onto one line, then split its fields
awk '/^HWT_OPTION\(/ {row=$0; while (row !~ /"\)$/ && (getline line) > 0) row = row " " line; print row}' "$def" |
while IFS= read -r row; do
    name=$(sed -E 's/^HWT_OPTION\(([A-Z_]+),.*/\1/' <<<"$row")
    type=$(sed -E 's/^HWT_OPTION\([A-Z_]+, *[a-z_]+, *([A-Z_]+),.*/\1/' <<<"$row")
    help=$(sed -E 's/.*"([^"]*)"\)$/\1/' <<<"$row")
    def_val=$(sed -E 's/^HWT_OPTION\([A-Z_]+, *[a-z_]+, *[A-Z_]+, *[^,]+, *([^,]+),.*/\1/' <<<"$row")
    min=$(sed -E 's/^HWT_OPTION\([A-Z_]+, *[a-z_]+, *[A-Z_]+, *[^,]+, *[^,]+, *([^,]+),.*/\1/' <<<"$row")
    case $type in
    HWT_OPT_ENUM)
        words=$(sed -E 's/.*\{([^}]*)\}.*/\1/' <<<"$row" | tr -d '"' | sed -E 's/, *0 *$//; s/, */, /g')
        idx=$(sed -E 's/^HWT_(MODE|FAULT)_//; s/^HWT_//' <<<"$def_val" | tr 'A-Z' 'a-z')
        values=$words
        default=$idx
        ;;
    HWT_OPT_UINT)
        values="integer >= $min"
        default=$def_val
        ;;
    *)
        case $name in
        LOG_PATH) values="file path (%p = pid)" default=stderr ;;
        *) values="program path" default="found on PATH" ;;
        esac
        ;;
    esac
    echo "| HWTAG_$name | $values | $default | $help |"
done
