#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A real secure-execution process, AT_SECURE set by the kernel: a set-user-ID root binary
# run as nobody. Natively that binary is the test program itself; under an emulator it is
# a copy of the emulator, since qemu-user ignores a guest's set-user-ID bit but hands the
# guest its own AT_SECURE. The environment names a log file (as HWTAG_LOG_PATH and in
# HWTAG_OPTIONS) and a fake symbolizer (as HWTAG_SYMBOLIZER, in HWTAG_OPTIONS and first on
# PATH); run plainly as nobody it uses all of them, which shows they would take effect.
# Set-user-ID it must use none: no file in the log directory, the symbolizer never run,
# the report and the one verbose line on stderr, the safe options kept.
#
# Usage: secure_exec.sh --prog PATH [--emulator "CMD ARGS"]
# Exit status 77 (skip) without root, setpriv or the nobody user, or where the kernel
# does not honour the set-user-ID bit (a nosuid mount, no_new_privs).
set -uo pipefail
name=secure_exec
prog="" emulator=""
while [ $# -gt 0 ]; do
    case $1 in
    --prog) prog=$2; shift 2 ;;
    --emulator) emulator=$2; shift 2 ;;
    *) echo "$name: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
skip() { echo "SKIP: $name: $1"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root to make a set-user-ID root binary"
command -v setpriv >/dev/null || skip "no setpriv"
uid=$(id -u nobody 2>/dev/null) && gid=$(id -g nobody) || skip "no user nobody"
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)

work=$(mktemp -d "/tmp/hwtag-secure.XXXXXX")
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -m 1777 "$work/out"
mkdir "$work/bin"
cat >"$work/bin/fake-symbolizer" <<EOF
#!/bin/sh
echo "\$0" >>"$work/out/symbolizer-ran"
EOF
chmod 755 "$work/bin/fake-symbolizer"
ln -s fake-symbolizer "$work/bin/llvm-symbolizer"
cp "$prog" "$work/prog"
chmod 755 "$work/prog"
if [ -n "$emulator" ]; then
    read -r -a emu <<<"$emulator"
    emu_path=$(command -v "${emu[0]}") || skip "no ${emu[0]}"
    cp "$emu_path" "$work/emu"
    suid=$work/emu
    plain_cmd=("${emu[@]}" "$work/prog")
    secure_cmd=("$work/emu" "${emu[@]:1}" "$work/prog")
else
    cp "$work/prog" "$work/prog-suid"
    suid=$work/prog-suid
    plain_cmd=("$work/prog")
    secure_cmd=("$work/prog-suid")
fi
chown 0:0 "$suid"
chmod 4755 "$suid"

fake=$work/bin/fake-symbolizer
vars=(HWTAG_VERBOSE=on HWTAG_FAULT=report "HWTAG_LOG_PATH=$work/out/log.%p"
    "HWTAG_SYMBOLIZER=$fake" "PATH=$work/bin:$PATH"
    "HWTAG_OPTIONS=log_path=$work/out/list.%p:symbolizer=$fake:sample=3:max_reports=7")
as_nobody() {
    setpriv --reuid="$uid" --regid="$gid" --clear-groups env "${vars[@]}" "$@" \
        >"$work/stdout" 2>"$work/stderr"
    status=$?
}
passed=0 failed=0
check() {
    local what=$1
    shift
    if "$@"; then echo "PASS: $name: $what"; passed=$((passed + 1))
    else
        echo "FAIL: $name: $what"; failed=$((failed + 1))
        echo "--- stdout:"; cat "$work/stdout"; echo "--- stderr:"; cat "$work/stderr"
        echo "--- $work/out:"; ls -la "$work/out"
    fi
}
has() { grep -qE -- "$1" "$2"; }
hasnt() { ! grep -qE -- "$1" "$2"; }
count() { test "$(grep -cE -- "$1" "$2")" = "$3"; }
out_empty() { [ -z "$(ls -A "$work/out")" ]; }

# Not set-user-ID: the same environment takes effect.
as_nobody "${plain_cmd[@]}"
check "plain: status 0" test "$status" = 0
check "plain: not secure" has "^secure=0 uid=$uid euid=$uid$" "$work/stdout"
check "plain: takes the log path" has "^log_path=$work/out/log.%p symbolizer=$fake " "$work/stdout"
check "plain: report in the log file" has '^BUG: KASAN: double-free in ' "$work"/out/log.*
check "plain: symbolizer started" test -s "$work/out/symbolizer-ran"
check "plain: no secure line" hasnt 'secure execution' "$work/stderr"
rm -f "$work"/out/*

as_nobody "${secure_cmd[@]}"
grep -q '^secure=1 ' "$work/stdout" ||
    skip "the kernel set no AT_SECURE for a set-user-ID binary (nosuid mount, no_new_privs?): $(cat "$work/stdout")"
check "secure: status 0" test "$status" = 0
check "secure: real AT_SECURE, euid 0" has "^secure=1 uid=$uid euid=0$" "$work/stdout"
check "secure: file and program options ignored, safe ones kept" \
    has '^log_path=\(none\) symbolizer=\(none\) fault=2 sample=3 max_reports=7$' "$work/stdout"
check "secure: one verbose line naming them" count \
    '^hwtag: secure execution \(AT_SECURE\): ignored HWTAG_LOG_PATH HWTAG_SYMBOLIZER; reports go to stderr, no external symbolizer$' \
    "$work/stderr" 1
check "secure: report on stderr" has '^BUG: KASAN: double-free in ' "$work/stderr"
check "secure: no file created, no symbolizer run" out_empty
check "secure: nothing about the ignored values" hasnt "$work/out|fake-symbolizer" "$work/stderr"

echo "$name: $passed passed, $failed failed"
[ "$failed" = 0 ]
