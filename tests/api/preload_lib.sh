# SPDX-License-Identifier: MIT
# Sourced by the api scripts that run a program with libhwtag preloaded, natively or under
# an emulator: their arguments, run and the checks. The sourcing script sets name first.
#
# Arguments: --prog PATH --lib PATH [--emulator "CMD ARGS"] [--mte 0|1]
prog="" lib="" emulator="" mte=0
while [ $# -gt 0 ]; do
    case $1 in
    --prog) prog=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    --emulator) emulator=$2; shift 2 ;;
    --mte) mte=$2; shift 2 ;;
    *) echo "$name: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)
work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-api.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() {
    local what=$1
    shift
    if "$@"; then echo "PASS: $name: $what"; passed=$((passed + 1));
    else echo "FAIL: $name: $what"; failed=$((failed + 1)); echo "--- stderr:"; cat "$work/err"; fi
}

# run_with EMULATOR HOW VAR=VALUE...: the program preloaded with the variables under the
# emulator command (empty: natively); its status in $status, stderr in $work/err.
run_with() {
    local emu=$1 how=$2
    shift 2
    local cmd=()
    if [ -n "$emu" ]; then
        read -r -a cmd <<<"$emu"
        cmd+=(-E "LD_PRELOAD=$lib")
        for a in "$@"; do cmd+=(-E "$a"); done
        cmd+=("$prog" "$how")
    else
        cmd=(env "LD_PRELOAD=$lib" "$@" "$prog" "$how")
    fi
    "${cmd[@]}" >"$work/out" 2>"$work/err"
    status=$?
}
run() { run_with "$emulator" "$@"; }
has() { grep -qE -- "$1" "${2:-$work/err}"; }
hasnt() { ! grep -qE -- "$1" "${2:-$work/err}"; }
finish() {
    echo "$name: $passed passed, $failed failed"
    [ "$failed" = 0 ]
}
