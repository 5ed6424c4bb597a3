#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Integration test: runs a real arm64 program with glibc's malloc and again
# with libhwtag preloaded, and requires the same behaviour.
#
# Usage:
#   run_program.sh CASE --lib PATH --programs DIR [options]
#
#   CASE             python | sqlite | iperf | tools | all
#   --lib PATH       libhwtag.so to preload in the second run; `none` runs
#                    glibc twice (develops the test itself, without a library)
#   --programs DIR   tree made by scripts/fetch-arm64-programs.sh DIR
#   --skip-missing   exit 77 (ctest SKIP_RETURN_CODE) when DIR lacks the
#                    programs; without it a missing DIR is a failure
#   --timeout SECS   limit for each program run (default 120)
#   --scale F        python workload size factor (default 0.25: ~3 s under
#                    qemu with glibc, 10-20x that with tagging on)
#   --keep           keep the work directory (outputs, stderr) even on success
#   -h, --help       this text
#
# Cases (all print one `PASS: ...` or `FAIL: ...` line per case):
#   tools   Debian's arm64 sort, uniq, grep, sed, gawk, find, tac, sha256sum on
#           inputs made by the test; each compared as for python.
#   python  DIR/usr/bin/python3 tests/integration/workload.py with
#           PYTHONMALLOC=malloc and PYTHONHASHSEED=0: stdout, stderr and exit
#           status must be identical between the glibc run and the preloaded
#           run (tagging on: HWTAG_MODE defaults to sync), and the preloaded
#           run must print no KASAN report (a false positive fails the test).
#           It also checks, via /proc/self/maps, that the library really was
#           mapped into the guest.
#   sqlite  DIR/usr/bin/sqlite3 -batch -bail on a fresh database file, fed
#           tests/integration/workload.sql; compared as for python.
#   iperf   iperf3 server (--one-off) and client, both in the guest, both
#           preloaded, over 127.0.0.1 on a random free high port, -n 64M,
#           -P 2, -J. The output differs run to run, so it checks exit status,
#           that the JSON has no error, that the client sent all bytes and
#           both ends received some, and that the JSON's key structure
#           (top level and "end") matches the glibc run's.
#
# Environment: every HWTAG_* variable of the caller is passed to the guest in
# the preloaded runs (HWTAG_MODE defaults to sync). The preload itself goes
# through qemu's -E, never through the host's LD_PRELOAD. On an aarch64 host
# the programs run natively (no qemu). QEMU overrides the emulator command
# (default "qemu-aarch64 -cpu max,sve=off -L /").
#
# Exit status: 0 all passed, 1 a failure, 2 usage error, 77 skipped.
#
# Example (ctest registers the same):
#   scripts/fetch-arm64-programs.sh build/arm64-programs
#   bash tests/integration/run_program.sh python \
#       --lib build/aarch64/lib/libhwtag.so --programs build/arm64-programs
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() { # the comment block at the top of this file, from "Usage:" on
    awk '/^# Usage:/ { on = 1 } on && !/^#/ { exit } on' "${BASH_SOURCE[0]}" |
        sed 's/^# \{0,1\}//'
}
die_usage() {
    echo "run_program.sh: $1 (see --help)" >&2
    exit 2
}

# --- arguments --------------------------------------------------------------
case_name="" lib="" programs="" skip_missing=0 timeout_s=120 scale=0.25 keep=0
while [ $# -gt 0 ]; do
    case "$1" in
    --lib) [ $# -ge 2 ] || die_usage "--lib needs a path"; lib=$2; shift 2 ;;
    --lib=*) lib=${1#*=}; shift ;;
    --programs) [ $# -ge 2 ] || die_usage "--programs needs a directory"; programs=$2; shift 2 ;;
    --programs=*) programs=${1#*=}; shift ;;
    --skip-missing) skip_missing=1; shift ;;
    --timeout) [ $# -ge 2 ] || die_usage "--timeout needs seconds"; timeout_s=$2; shift 2 ;;
    --scale) [ $# -ge 2 ] || die_usage "--scale needs a factor"; scale=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    python | sqlite | iperf | tools | all)
        [ -z "$case_name" ] || die_usage "more than one CASE"
        case_name=$1; shift ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
done
[ -n "$case_name" ] || die_usage "missing CASE (python|sqlite|iperf|tools|all)"
[ -n "$lib" ] || die_usage "missing --lib PATH (or --lib none)"
[ -n "$programs" ] || die_usage "missing --programs DIR"
[[ $timeout_s =~ ^[0-9]+$ ]] || die_usage "--timeout wants whole seconds"
[[ $scale =~ ^[0-9]*\.?[0-9]+$ ]] || die_usage "--scale wants a positive number"

fail() { # the one FAIL line for a setup problem, then exit
    echo "FAIL: integration $case_name: $*"
    exit 1
}

if [ ! -x "$programs/usr/bin/python3.11" ] || [ ! -x "$programs/usr/bin/sqlite3" ] ||
    [ ! -x "$programs/usr/bin/iperf3" ]; then
    msg="arm64 programs missing in '$programs' (run scripts/fetch-arm64-programs.sh '$programs')"
    if [ "$skip_missing" = 1 ]; then
        echo "SKIP: integration $case_name: $msg"
        exit 77
    fi
    fail "$msg"
fi
programs=$(cd "$programs" && pwd)

preload=()  # VAR=VAL words for the preloaded runs
lib_label="glibc (no library: --lib none)"
if [ "$lib" != none ]; then
    [ -f "$lib" ] || fail "library '$lib' not found"
    lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
    lib_label=$lib
    preload+=("LD_PRELOAD=$lib")
    # Tagging on unless the caller chose otherwise; then every HWTAG_* of
    # the caller's environment.
    [ -n "${HWTAG_MODE:-}" ] || preload+=("HWTAG_MODE=sync")
    # (HWTAG_LIB names a library for tools/hwtag; it is no library option.)
    while IFS= read -r var; do
        preload+=("$var=${!var}")
    done < <(compgen -e | grep '^HWTAG_' | grep -vx HWTAG_LIB || true)
fi

# --- the guest ----------------------------------------------------------------
# Nothing of the host's own preload or python setup may leak into the guest
# (qemu hands the guest its own environment), and a ctest ENVIRONMENT of
# QEMU_SET_ENV=LD_PRELOAD=... would otherwise preload into the glibc runs too.
unset LD_PRELOAD QEMU_SET_ENV QEMU_UNSET_ENV HWTAG_LIB
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^PYTHON' || true)
export LC_ALL=C.UTF-8

if [ "$(uname -m)" = aarch64 ]; then
    emulator=()
else
    read -r -a emulator <<<"${QEMU:-qemu-aarch64 -cpu max,sve=off -L /}"
    command -v "${emulator[0]}" >/dev/null || fail "${emulator[0]} not found (scripts/setup.sh)"
fi

# guest VAR=VAL... -- PROGRAM ARGS...: runs PROGRAM in the guest with the
# given variables, under the time limit.
guest() {
    local vars=() args=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    if [ ${#emulator[@]} -eq 0 ]; then
        timeout -k 5 "$timeout_s" env "${vars[@]}" "$@"
    else
        local v
        for v in "${vars[@]}"; do args+=(-E "$v"); done
        timeout -k 5 "$timeout_s" "${emulator[@]}" "${args[@]}" "$@"
    fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-integration.XXXXXX")
status=0
cleanup() {
    if [ "$keep" = 1 ] || [ "$status" != 0 ]; then
        echo "run_program.sh: outputs kept in $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# describe_status N: "exit N" or "signal S" for the shell's 128+S convention;
# 124 is timeout(1)'s.
describe_status() {
    if [ "$1" = 124 ]; then echo "timed out after ${timeout_s}s"
    elif [ "$1" -gt 128 ]; then echo "killed by signal $(($1 - 128)) ($(kill -l "$1" 2>/dev/null || echo ?))"
    else echo "exit $1"; fi
}

# KASAN report lines (or the library's own check failures) in FILE?
has_report() { grep -qE 'BUG: KASAN|SUMMARY: KASAN|^hwtag: .*(CHECK|check failed)' "$1"; }

# The library's own informational lines ("hwtag: ...") are not the program's
# output; everything else of stderr must match.
program_stderr() { grep -v '^hwtag: ' "$1" || true; }

# compare_runs NAME DIR_A DIR_B: each DIR has out, err, rc; prints the verdict.
compare_runs() {
    local name=$1 a=$2 b=$3 why=""
    if has_report "$b/err"; then
        why="the preloaded run printed a KASAN report (false positive?)"
    elif [ "$(cat "$a/rc")" != 0 ]; then
        why="the glibc run failed: $(describe_status "$(cat "$a/rc")")"
    elif [ "$(cat "$b/rc")" != 0 ]; then
        why="the preloaded run failed: $(describe_status "$(cat "$b/rc")")"
    elif ! cmp -s "$a/out" "$b/out"; then
        why="stdout differs"
    elif ! cmp -s <(program_stderr "$a/err") <(program_stderr "$b/err"); then
        why="stderr differs"
    fi
    if [ -n "$why" ]; then
        echo "FAIL: integration $name: $why"
        {
            echo "--- stdout diff (glibc vs preloaded), first lines:"
            diff "$a/out" "$b/out" | head -20 || true
            echo "--- stderr of the preloaded run, first lines:"
            head -40 "$b/err"
        } >&2
        return 1
    fi
    grep '^hwtag: ' "$b/err" | sed 's/^/note: /' >&2 || true
    return 0
}

# --- cases ----------------------------------------------------------------------
python_env=(PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONIOENCODING=utf-8)

# run_to DIR VAR=VAL... -- PROGRAM ARGS... [< input]: captures out, err, rc.
run_to() {
    local dir=$1 rc=0
    shift
    mkdir -p "$dir"
    guest "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    echo "$rc" >"$dir/rc"
}

case_python() {
    local t0 t1 t2 rc=0
    t0=$(now)
    run_to "$work/python/glibc" "${python_env[@]}" -- \
        "$programs/usr/bin/python3" -s "$here/workload.py" "$scale"
    t1=$(elapsed "$t0"); t0=$(now)
    run_to "$work/python/preload" "${python_env[@]}" "${preload[@]}" -- \
        "$programs/usr/bin/python3" -s "$here/workload.py" "$scale"
    t2=$(elapsed "$t0")
    compare_runs python "$work/python/glibc" "$work/python/preload" || return 1
    if [ "$lib" != none ]; then
        # Proof that the preload took effect: the guest's own mappings
        # (which name the file behind any libhwtag.so -> .so.0 symlinks).
        guest "${preload[@]}" -- "$programs/usr/bin/python3" -s -c '
import sys
lib = sys.argv[1]
sys.exit(0 if any(l.rstrip().endswith(lib) for l in open("/proc/self/maps")) else 1)' \
            "$(readlink -f "$lib")" 2>"$work/python/maps.err" || rc=$?
        if [ "$rc" != 0 ]; then
            echo "FAIL: integration python: $lib is not mapped in the guest ($(describe_status "$rc"))"
            return 1
        fi
    fi
    echo "PASS: integration python: glibc ${t1}s, $lib_label ${t2}s, $(wc -l <"$work/python/glibc/out") lines identical"
}

case_sqlite() {
    local t0 t1 t2
    t0=$(now)
    run_to "$work/sqlite/glibc" -- "$programs/usr/bin/sqlite3" -batch -bail \
        "$work/glibc.db" <"$here/workload.sql"
    t1=$(elapsed "$t0"); t0=$(now)
    run_to "$work/sqlite/preload" "${preload[@]}" -- "$programs/usr/bin/sqlite3" -batch -bail \
        "$work/preload.db" <"$here/workload.sql"
    t2=$(elapsed "$t0")
    compare_runs sqlite "$work/sqlite/glibc" "$work/sqlite/preload" || return 1
    echo "PASS: integration sqlite: glibc ${t1}s, $lib_label ${t2}s, $(wc -l <"$work/sqlite/glibc/out") lines identical"
}

# port_in_use PORT: a TCP socket (any state) bound to PORT on this host?
port_in_use() {
    local hex
    hex=$(printf '%04X' "$1")
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" { f = 1 } END { exit !f }'
}
# port_listening PORT: a listening socket on 127.0.0.1:PORT?
port_listening() {
    local hex
    hex=$(printf '0100007F:%04X' "$1")
    awk -v a="$hex" '$2 == a && $4 == "0A" { f = 1 } END { exit !f }' /proc/net/tcp
}

iperf_bytes=$((64 * 1024 * 1024))
# Checks one iperf3 client/server pair of JSON files; prints the received
# byte count, or an error on stderr and exits 1. Run by the guest python.
iperf_check='
import json, sys
client, server, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
for who, d in (("client", client), ("server", server)):
    if "error" in d:
        err = d["error"]
        sys.exit(f"{who} reports an error: {err}")
    for k in ("start", "intervals", "end"):
        if k not in d:
            sys.exit(f"{who} JSON lacks {k!r}")
sent = client["end"]["sum_sent"]["bytes"]
got_c = client["end"]["sum_received"]["bytes"]
got_s = server["end"]["sum_received"]["bytes"]
if sent < want or got_c <= 0 or got_s <= 0:
    sys.exit(f"bad transfer: client sent {sent} of {want}, client saw {got_c} received, server {got_s}")
shape = lambda d: [sorted(d), sorted(d["end"]), len(d["end"]["streams"])]
print(got_s, json.dumps([shape(client), shape(server)]))
'

# iperf_pair DIR VAR=VAL...: one server + client run; DIR gets the JSON,
# stderr, exit codes and the checker's verdict.
iperf_pair() {
    local dir=$1 port srv_pid="" rc_s=0 rc_c=0
    shift
    mkdir -p "$dir"
    for _ in 1 2 3; do
        port=$((20000 + RANDOM % 40000))
        port_in_use "$port" && continue
        guest "$@" -- "$programs/usr/bin/iperf3" -s --one-off -B 127.0.0.1 -p "$port" -J \
            >"$dir/server.json" 2>"$dir/server.err" &
        srv_pid=$!
        # Wait for the listening socket (qemu start-up takes a moment).
        for _ in $(seq 1 300); do
            port_listening "$port" && break
            kill -0 "$srv_pid" 2>/dev/null || break
            sleep 0.1
        done
        if port_listening "$port"; then break; fi
        wait "$srv_pid" || true
        srv_pid=""
    done
    [ -n "$srv_pid" ] || { echo "the iperf3 server never listened" >"$dir/why"; return 1; }
    guest "$@" -- "$programs/usr/bin/iperf3" -c 127.0.0.1 -p "$port" -n "$iperf_bytes" -P 2 -J \
        >"$dir/client.json" 2>"$dir/client.err" || rc_c=$?
    # The server must end by itself (--one-off); the guest's timeout bounds it.
    wait "$srv_pid" || rc_s=$?
    if [ "$rc_c" != 0 ] || [ "$rc_s" != 0 ]; then
        echo "client $(describe_status "$rc_c"), server $(describe_status "$rc_s")" >"$dir/why"
        return 1
    fi
    if has_report "$dir/client.err" || has_report "$dir/server.err"; then
        echo "a KASAN report was printed (false positive?)" >"$dir/why"
        return 1
    fi
    if ! guest -- "$programs/usr/bin/python3" -s -c "$iperf_check" "$dir/client.json" \
        "$dir/server.json" "$iperf_bytes" >"$dir/check" 2>"$dir/why"; then
        return 1
    fi
}

case_iperf() {
    local t0 t1 t2 d
    t0=$(now)
    if ! iperf_pair "$work/iperf/glibc"; then
        echo "FAIL: integration iperf: glibc run: $(tail -1 "$work/iperf/glibc/why")"
        return 1
    fi
    t1=$(elapsed "$t0"); t0=$(now)
    if ! iperf_pair "$work/iperf/preload" "${preload[@]}"; then
        echo "FAIL: integration iperf: preloaded run: $(tail -1 "$work/iperf/preload/why")"
        for d in server client; do
            echo "--- $d stderr:"; head -40 "$work/iperf/preload/$d.err"
        done >&2
        return 1
    fi
    t2=$(elapsed "$t0")
    # The same JSON shape (keys, stream count) as the glibc run.
    if [ "$(cut -d' ' -f2- "$work/iperf/glibc/check")" != \
        "$(cut -d' ' -f2- "$work/iperf/preload/check")" ]; then
        echo "FAIL: integration iperf: JSON structure differs from the glibc run's"
        return 1
    fi
    echo "PASS: integration iperf: glibc ${t1}s, $lib_label ${t2}s," \
        "server received $(cut -d' ' -f1 "$work/iperf/preload/check") bytes"
}

# tool NAME PROGRAM ARGS...: one text tool, glibc run against preloaded run.
tool() {
    local name=$1 prog=$2
    shift 2
    run_to "$work/tools/$name/glibc" -- "$programs/$prog" "$@"
    run_to "$work/tools/$name/preload" "${preload[@]}" -- "$programs/$prog" "$@"
    compare_runs "tools ($name)" "$work/tools/$name/glibc" "$work/tools/$name/preload"
}

# Debian's arm64 text tools (coreutils, grep, sed, gawk, findutils) on inputs made here.
case_tools() {
    local d=$work/tools-data
    mkdir -p "$d"
    seq 1 200000 | awk '{ print ($1 * 7919) % 100003, $1 }' >"$d/nums"
    cat "$here"/*.py "$here"/*.sql "$here"/*.sh >"$d/text"
    tool sort-n usr/bin/sort -n -k1,1 -k2,2 "$d/nums" &&
        tool sort-text usr/bin/sort -f "$d/text" &&
        tool uniq usr/bin/uniq -c "$d/text" &&
        tool grep bin/grep -n -E '(malloc|free|alloc)[a-z_]*' "$d/text" &&
        tool sed bin/sed -e 's/[0-9][0-9]*/N/g' -e 's/^N/X/' "$d/nums" &&
        tool gawk usr/bin/gawk '{ s += $1; c[$1 % 97]++ } END { for (k in c) m += c[k] * k; print s, m, length(c) }' "$d/nums" &&
        tool find usr/bin/find "$here" -type f &&
        tool tac usr/bin/tac "$d/text" &&
        tool sha256 usr/bin/sha256sum "$d/nums" "$d/text" || return 1
    echo "PASS: integration tools: sort, uniq, grep, sed, gawk, find, tac, sha256sum: output identical to glibc's"
}

if [ "$case_name" = all ]; then cases=(python sqlite iperf tools); else cases=("$case_name"); fi
for c in "${cases[@]}"; do
    "case_$c" || status=1
done
exit "$status"
