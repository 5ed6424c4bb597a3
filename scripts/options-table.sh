#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prints the README's option table from src/base/options.def, the single table of options:
# `scripts/options-table.sh` to regenerate, and the lint test compares it with README.md.
set -euo pipefail
def=${1:-$(dirname "$0")/../src/base/options.def}
echo "| variable | values | default | meaning |"
echo "|---|---|---|---|"
bash "$(dirname "$0")/options-rows.sh" "$def" |
while IFS=$'\037' read -r name type words default min flags help; do
    case $type in
    enum) values=${words// /, } ;;
    uint) values="integer >= $min" ;;
    *)
        case $name in
        LOG_PATH) values="file path (%p = pid)" default=stderr ;;
        SUPPRESSIONS) values="file path" default="none" ;;
        *) values="program path" default="found on PATH" ;;
        esac
        ;;
    esac
    if [ "$flags" = names_file ]; then help="$help; ignored in set-user-ID programs (AT_SECURE)"; fi
    echo "| HWTAG_$name | $values | $default | $help |"
done
