#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Integration test: runs real arm64 programs with glibc's malloc and again
# with libhwtag preloaded, under several option sets, and requires the same
# behaviour: the same stdout, the same stderr (less the library's own
# `hwtag: ` lines), the same exit status, and no KASAN report.
#
# Usage:
#   run_program.sh CASE... --lib PATH --programs DIR [options]
#
#   CASE             python | sqlite | iperf | tools | gawk | interp |
#                    compress | text | shell, or a group: programs (gawk
#                    interp compress text shell), all (every case)
#   --lib PATH       libhwtag.so to preload in the second run; `none` runs
#                    glibc twice (develops the test itself, without a library)
#   --programs DIR   tree made by scripts/fetch-arm64-programs.sh DIR
#   --full           the full set: every program under every option set, on
#                    larger inputs (`all --full` is the complete check; the
#                    quick default runs every program under sync and only the
#                    quick subset under the other sets)
#   --sets LIST      run every program under exactly these option sets
#                    (comma-separated), e.g. --sets async
#   --skip-missing   exit 77 (ctest SKIP_RETURN_CODE) when DIR lacks the
#                    programs; without it a missing DIR is a failure
#   --timeout SECS   limit for each program run (default 120)
#   --scale F        python workload size factor (default 0.25: ~3 s under
#                    qemu with glibc, 10-20x that with tagging on)
#   --keep           keep the work directory (outputs, stderr) even on success
#   -h, --help       this text
#
# Option sets (the library's environment in a preloaded run):
#   sync      HWTAG_MODE=sync (the default; a caller's HWTAG_MODE wins)
#   sample10  HWTAG_SAMPLE=10: only 1 in 10 allocations >= 32 KiB tagged
#   nostack   HWTAG_STACKTRACE=off: no allocation/free stacks recorded
#   async     HWTAG_MODE=async
# Quick subset (every set without --full): gawk, perl, xz, xz-d, zstd,
# sort-par, bash.
#
# Cases (each prints one `PASS: ...` or `FAIL: ...` line, the program cases
# a timing line per program before it):
#   tools   Debian's arm64 sort, uniq, grep, sed, gawk, find, tac, sha256sum on
#           inputs made by the test; each compared as for python.
#   python  DIR/usr/bin/python3 tests/integration/workload.py with
#           PYTHONMALLOC=malloc and PYTHONHASHSEED=0: stdout, stderr and exit
#           status must be identical between the glibc run and the preloaded
#           run, and the preloaded run must print no KASAN report (a false
#           positive fails the test). It also checks, via /proc/self/maps,
#           that the library really was mapped into the guest.
#   sqlite  DIR/usr/bin/sqlite3 -batch -bail on a fresh database file, fed
#           tests/integration/workload.sql; compared as for python.
#   iperf   iperf3 server (--one-off) and client, both in the guest, both
#           preloaded, over 127.0.0.1 on a random free high port, -n 64M,
#           -P 2, -J. The output differs run to run, so it checks exit status,
#           that the JSON has no error, that the client sent all bytes and
#           both ends received some, and that the JSON's key structure
#           (top level and "end") matches the glibc run's.
#   gawk    gawk -f workload.awk on generated words (words.awk: 1500
#           lines, 10000 with --full): big associative arrays, asort/asorti,
#           split, long strings. (Before 62a0aea calloc returned dirty
#           page-backed memory and gawk crashed here.)
#   interp  perl (workload.pl), lua5.4 (workload.lua), tclsh8.6
#           (workload.tcl) on the words, jq -s (workload.jq) on their first
#           400 (2000) lines as JSON objects.
#   compress  gzip -9, bzip2 -9, xz -3 -T2 (-6 with --full; 256 KiB blocks:
#           two threads), zstd -12 -T2 (512 KiB jobs), pigz -p 2 on the
#           words plus arm64 machine code (0.8 MB, 5 MB with --full): the
#           compressed bytes must equal the glibc run's, and each
#           decompresses (xz -T2 too) back to the input, under the library
#           as well.
#   text    sed with a hold space of the whole input, grep -E with back
#           references and grep -w -i, sort --parallel=2 on 140000 (400000)
#           lines (two threads) and sort with a 64 KiB buffer (temporary
#           files), diff -u and diff --minimal -y (exit status 1 both runs).
#   shell   bash (workload.bash) and dash (workload.dash) on 400 (2000) lines,
#           6 (40) rounds of forks: command substitutions, pipelines of
#           shell functions, background jobs; associative arrays, long
#           strings; builtins only (the guest cannot exec host programs).
#
# Environment: the guest gets only PATH, HOME, TMPDIR, LC_ALL=C.UTF-8 and the
# variables of its run (python's, perl's hash seed, ...). Every HWTAG_*
# variable of the caller is passed to the guest in the preloaded runs, then
# the option set's (which win). The preload itself
# goes through qemu's -E, never through the host's LD_PRELOAD. On an aarch64
# host the programs run natively (no qemu). QEMU overrides the emulator
# command (default "qemu-aarch64 -cpu max,sve=off -L /").
#
# Exit status: 0 all passed, 1 a failure, 2 usage error, 77 skipped.
#
# Example (ctest registers the quick cases the same way):
#   scripts/fetch-arm64-programs.sh build/arm64-programs
#   bash tests/integration/run_program.sh python \
#       --lib build/aarch64/lib/libhwtag.so --programs build/arm64-programs
# The full set (about 25 minutes on 2 cores; the quick cases take about 2):
#   bash tests/integration/run_program.sh all --full \
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

all_sets=(sync sample10 nostack async)
quick_subset=(gawk perl xz xz-d zstd sort-par bash)
program_cases=(gawk interp compress text shell)

# --- arguments --------------------------------------------------------------
cases=() lib="" programs="" skip_missing=0 timeout_s=120 scale=0.25 keep=0 full=0 sets=""
while [ $# -gt 0 ]; do
    case "$1" in
    --lib) [ $# -ge 2 ] || die_usage "--lib needs a path"; lib=$2; shift 2 ;;
    --lib=*) lib=${1#*=}; shift ;;
    --programs) [ $# -ge 2 ] || die_usage "--programs needs a directory"; programs=$2; shift 2 ;;
    --programs=*) programs=${1#*=}; shift ;;
    --full) full=1; shift ;;
    --sets) [ $# -ge 2 ] || die_usage "--sets needs a list"; sets=$2; shift 2 ;;
    --sets=*) sets=${1#*=}; shift ;;
    --skip-missing) skip_missing=1; shift ;;
    --timeout) [ $# -ge 2 ] || die_usage "--timeout needs seconds"; timeout_s=$2; shift 2 ;;
    --scale) [ $# -ge 2 ] || die_usage "--scale needs a factor"; scale=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    python | sqlite | iperf | tools | gawk | interp | compress | text | shell) cases+=("$1"); shift ;;
    programs) cases+=("${program_cases[@]}"); shift ;;
    all) cases+=(python sqlite iperf tools "${program_cases[@]}"); shift ;;
    *) die_usage "unknown argument '$1'" ;;
    esac
done
[ ${#cases[@]} -gt 0 ] || die_usage "missing CASE (python|sqlite|iperf|tools|gawk|interp|compress|text|shell|programs|all)"
[ -n "$lib" ] || die_usage "missing --lib PATH (or --lib none)"
[ -n "$programs" ] || die_usage "missing --programs DIR"
[[ $timeout_s =~ ^[0-9]+$ ]] || die_usage "--timeout wants whole seconds"
[[ $scale =~ ^[0-9]*\.?[0-9]+$ ]] || die_usage "--scale wants a positive number"
for s in ${sets//,/ }; do
    [[ " ${all_sets[*]} " == *" $s "* ]] || die_usage "unknown option set '$s' (${all_sets[*]})"
done
case_name=${cases[*]}

fail() { # the one FAIL line for a setup problem, then exit
    echo "FAIL: integration $case_name: $*"
    exit 1
}

# Every program a case runs, as the fetch script leaves them.
needed=(usr/bin/python3.11 usr/bin/sqlite3 usr/bin/iperf3 usr/bin/gawk usr/bin/perl
    usr/bin/lua5.4 usr/bin/tclsh8.6 usr/bin/jq bin/gzip bin/bzip2 usr/bin/xz usr/bin/zstd
    usr/bin/pigz bin/sed bin/grep usr/bin/sort usr/bin/diff bin/bash bin/dash)
for p in "${needed[@]}"; do
    [ -x "$programs/$p" ] && continue
    msg="arm64 $p missing in '$programs' (run scripts/fetch-arm64-programs.sh '$programs')"
    if [ "$skip_missing" = 1 ]; then
        echo "SKIP: integration $case_name: $msg"
        exit 77
    fi
    fail "$msg"
done
programs=$(cd "$programs" && pwd)

base_preload=() # VAR=VAL words of every preloaded run, before the option set's
lib_label="glibc (no library: --lib none)"
if [ "$lib" != none ]; then
    [ -f "$lib" ] || fail "library '$lib' not found"
    lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
    lib_label=$lib
    base_preload+=("LD_PRELOAD=$lib")
    # Every HWTAG_* of the caller's environment (the option set may override).
    # (HWTAG_LIB names a library for tools/hwtag; it is no library option.)
    while IFS= read -r var; do
        base_preload+=("$var=${!var}")
    done < <(compgen -e | grep '^HWTAG_' | grep -vx HWTAG_LIB || true)
fi
caller_mode=${HWTAG_MODE:-}

# preload_for SET: sets `preload` to the VAR=VAL words of a run under SET
# (`none`: no library).
preload_for() {
    preload=()
    [ "$1" = none ] && return
    preload=("${base_preload[@]}")
    case "$1" in
    sync) [ -n "$caller_mode" ] || preload+=(HWTAG_MODE=sync) ;;
    sample10) preload+=(HWTAG_SAMPLE=10) ;;
    nostack) preload+=(HWTAG_STACKTRACE=off) ;;
    async) preload+=(HWTAG_MODE=async) ;;
    esac
}
preload_for sync

# sets_for NAME: the option sets program NAME runs under, one a line.
sets_for() {
    if [ "$lib" = none ]; then
        echo none
    elif [ -n "$sets" ]; then
        tr ',' '\n' <<<"$sets"
    elif [ "$full" = 1 ] || [[ " ${quick_subset[*]} " == *" $1 "* ]]; then
        printf '%s\n' "${all_sets[@]}"
    else
        echo sync
    fi
}

# --- the guest ----------------------------------------------------------------
# The guest sees only the variables named here and in each run: nothing of the
# host's own preload, python, perl, shell or compressor settings (qemu hands
# the guest its own environment, and a ctest ENVIRONMENT of
# QEMU_SET_ENV=LD_PRELOAD=... would otherwise preload into the glibc runs too).
work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-integration.XXXXXX")
clean_env=(PATH=/usr/bin:/bin HOME="$work" TMPDIR="$work" LC_ALL=C.UTF-8)

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
        timeout -k 5 "$timeout_s" env -i "${clean_env[@]}" "${vars[@]}" "$@"
    else
        local v
        for v in "${vars[@]}"; do args+=(-E "$v"); done
        timeout -k 5 "$timeout_s" env -i "${clean_env[@]}" "${emulator[@]}" "${args[@]}" "$@"
    fi
}

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

# compare_runs NAME DIR_A DIR_B [RC]: each DIR has out, err, rc; the glibc run
# A must exit with RC (default 0) and B the same way; prints the verdict.
compare_runs() {
    local name=$1 a=$2 b=$3 want=${4:-0} why=""
    if has_report "$b/err"; then
        why="the preloaded run printed a KASAN report (false positive?)"
    elif [ "$(cat "$a/rc")" != "$want" ]; then
        why="the glibc run failed: $(describe_status "$(cat "$a/rc")")"
    elif [ "$(cat "$b/rc")" != "$want" ]; then
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

# run_to DIR VAR=VAL... -- PROGRAM ARGS... [< input]: captures out, err, rc.
run_to() {
    local dir=$1 rc=0
    shift
    mkdir -p "$dir"
    guest "$@" >"$dir/out" 2>"$dir/err" || rc=$?
    echo "$rc" >"$dir/rc"
}

# tool NAME [-i FILE] [-s RC] [VAR=VAL...] PROGRAM ARGS...: PROGRAM (a path
# in DIR) with glibc's malloc, then preloaded once for each option set of
# NAME (sets_for), each run compared with the glibc one (compare_runs, exit
# status RC). -i FILE is the standard input; `@RUN@` in an argument becomes
# the run's own directory (for a database or temporary files). The outputs
# stay in $work/CASE/NAME/{glibc,SET}; prints a timing line.
tool() {
    local name=$1 input=/dev/null want=0 vars=() set times=""
    shift
    while :; do
        case "$1" in
        -i) input=$2; shift 2 ;;
        -s) want=$2; shift 2 ;;
        [A-Z]*=*) vars+=("$1"); shift ;;
        *) break ;;
        esac
    done
    local dir=$work/$cur/$name
    preload=()
    tool_run glibc "$@"
    for set in $(sets_for "$name"); do
        preload_for "$set"
        tool_run "$set" "$@"
        compare_runs "$cur ($name, $set)" "$dir/glibc" "$dir/$set" "$want" || return 1
    done
    echo "  $name:$times"
}
# tool_run LABEL PROGRAM ARGS...: one run of tool's into $dir/LABEL (reads
# tool's locals dir, input, vars and times, and the current preload).
tool_run() {
    local label=$1 prog=$2 args=() a t0
    shift 2
    for a in "$@"; do args+=("${a//@RUN@/$dir/$label}"); done
    mkdir -p "$dir/$label"
    t0=$(now)
    run_to "$dir/$label" "${vars[@]}" "${preload[@]}" -- "$programs/$prog" "${args[@]}" <"$input"
    times+=" $label $(elapsed "$t0")s"
}

# tool_out NAME [SET]: where tool NAME left the stdout of its glibc run (or SET's)
tool_out() { echo "$work/$cur/$1/${2:-glibc}/out"; }

# sizes: quick or full (--full)
# (sort --parallel uses threads from 128Ki lines on.)
if [ "$full" = 1 ]; then
    n_words=10000 n_json=2000 n_shell=2000 n_nums=400000 shell_rounds=40 xz_level=-6
else
    n_words=1500 n_json=400 n_shell=400 n_nums=140000 shell_rounds=6 xz_level=-3
fi
# make_inputs: the generated inputs, once, in $work/data
make_inputs() {
    local d=$work/data
    [ -d "$d" ] && return
    mkdir -p "$d"
    awk -v lines="$n_words" -v vocab=8000 -f "$here/words.awk" >"$d/words"
    head -n "$n_shell" "$d/words" >"$d/words.shell"
    head -n "$n_json" "$d/words" |
        awk '{ printf "{\"n\":%d,\"text\":\"%s\"}\n", NR, $0 }' >"$d/words.json"
    # every 5th line changed, every 11th dropped, a line added after each 13th
    awk 'NR % 5 == 0 { print $0 " extra"; next } NR % 11 == 0 { next }
        { print } NR % 13 == 0 { print "inserted", NR }' "$d/words" >"$d/words.edited"
    seq 1 "$n_nums" | awk '{ print ($1 * 7919) % 100003, $1 }' >"$d/nums"
    # Text, then machine code: arm64 binaries of the tree (fixed by its versions).
    if [ "$full" = 1 ]; then
        cat "$d/words" "$programs/usr/bin/perl" "$programs/usr/bin/gawk" >"$d/mixed"
    else
        cat "$d/words" "$programs/usr/bin/gawk" >"$d/mixed"
    fi
}

# --- cases ----------------------------------------------------------------------
python_env=(PYTHONMALLOC=malloc PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 PYTHONIOENCODING=utf-8)

case_python() {
    local rc=0
    tool python "${python_env[@]}" usr/bin/python3 -s "$here/workload.py" "$scale" || return 1
    if [ "$lib" != none ]; then
        # Proof that the preload took effect: the guest's own mappings
        # (which name the file behind any libhwtag.so -> .so.0 symlinks).
        preload_for sync
        guest "${preload[@]}" -- "$programs/usr/bin/python3" -s -c '
import sys
lib = sys.argv[1]
sys.exit(0 if any(l.rstrip().endswith(lib) for l in open("/proc/self/maps")) else 1)' \
            "$(readlink -f "$lib")" 2>"$work/python-maps.err" || rc=$?
        if [ "$rc" != 0 ]; then
            echo "FAIL: integration python: $lib is not mapped in the guest ($(describe_status "$rc"))"
            return 1
        fi
    fi
    echo "PASS: integration python: $(wc -l <"$(tool_out python)") lines identical ($lib_label)"
}

case_sqlite() {
    tool sqlite -i "$here/workload.sql" usr/bin/sqlite3 -batch -bail @RUN@/test.db || return 1
    echo "PASS: integration sqlite: $(wc -l <"$(tool_out sqlite)") lines identical ($lib_label)"
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
    local t0 times set d
    t0=$(now)
    if ! iperf_pair "$work/iperf/glibc"; then
        echo "FAIL: integration iperf: glibc run: $(tail -1 "$work/iperf/glibc/why")"
        return 1
    fi
    times=" glibc $(elapsed "$t0")s"
    for set in $(sets_for iperf); do
        preload_for "$set"
        t0=$(now)
        if ! iperf_pair "$work/iperf/$set" "${preload[@]}"; then
            echo "FAIL: integration iperf ($set): preloaded run: $(tail -1 "$work/iperf/$set/why")"
            for d in server client; do
                echo "--- $d stderr:"; head -40 "$work/iperf/$set/$d.err"
            done >&2
            return 1
        fi
        times+=" $set $(elapsed "$t0")s"
        # The same JSON shape (keys, stream count) as the glibc run.
        if [ "$(cut -d' ' -f2- "$work/iperf/glibc/check")" != \
            "$(cut -d' ' -f2- "$work/iperf/$set/check")" ]; then
            echo "FAIL: integration iperf ($set): JSON structure differs from the glibc run's"
            return 1
        fi
    done
    echo "  iperf:$times"
    echo "PASS: integration iperf: server received $(cut -d' ' -f1 "$work/iperf/$set/check")" \
        "bytes ($lib_label)"
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
        tool gawk-sum usr/bin/gawk '{ s += $1; c[$1 % 97]++ } END { for (k in c) m += c[k] * k; print s, m, length(c) }' "$d/nums" &&
        tool find usr/bin/find "$here" -type f &&
        tool tac usr/bin/tac "$d/text" &&
        tool sha256 usr/bin/sha256sum "$d/nums" "$d/text" || return 1
    echo "PASS: integration tools: sort, uniq, grep, sed, gawk, find, tac, sha256sum: output identical to glibc's"
}

# sets_summary NAME...: which option sets the named programs ran under
sets_summary() {
    local n all_n=0
    for n in "$@"; do
        [ "$(sets_for "$n" | wc -l)" -gt 1 ] && all_n=$((all_n + 1))
    done
    if [ "$lib" = none ]; then echo "glibc twice"
    elif [ -n "$sets" ]; then echo "sets $sets"
    else echo "sync, $all_n of $# also under ${all_sets[*]:1}"; fi
}

case_gawk() {
    make_inputs
    tool gawk usr/bin/gawk -f "$here/workload.awk" "$work/data/words" || return 1
    echo "PASS: integration gawk: $n_words lines of words, output identical ($(sets_summary gawk))"
}

case_interp() {
    local d=$work/data
    make_inputs
    tool perl PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 usr/bin/perl \
        -I"$programs/usr/lib/aarch64-linux-gnu/perl-base" "$here/workload.pl" "$d/words" &&
        tool lua usr/bin/lua5.4 "$here/workload.lua" "$d/words" &&
        tool tcl usr/bin/tclsh8.6 "$here/workload.tcl" "$d/words" &&
        tool jq LD_LIBRARY_PATH="$programs/usr/lib/aarch64-linux-gnu" usr/bin/jq -s \
            -f "$here/workload.jq" "$d/words.json" || return 1
    echo "PASS: integration interp: perl, lua5.4, tclsh8.6, jq: output identical" \
        "($(sets_summary perl lua tcl jq))"
}

# roundtrip NAME PROGRAM ARGS... -- DECOMPRESS-ARGS...: PROGRAM ARGS -c on
# the mixed input, compressed bytes compared with the glibc run's; then
# PROGRAM DECOMPRESS-ARGS -c on the glibc run's output (as NAME-d), which
# must give back the input.
roundtrip() {
    local name=$1 prog=$2 cargs=() in=$work/data/mixed
    shift 2
    while [ "$1" != -- ]; do cargs+=("$1"); shift; done
    shift
    tool "$name" "$prog" "${cargs[@]}" -c "$in" &&
        tool "$name-d" -i "$(tool_out "$name")" "$prog" "$@" -c || return 1
    if ! cmp -s "$in" "$(tool_out "$name-d")"; then
        echo "FAIL: integration $cur ($name): decompressing gives other bytes than the input"
        return 1
    fi
}

case_compress() {
    make_inputs
    roundtrip gzip bin/gzip -9 -- -d &&
        roundtrip bzip2 bin/bzip2 -9 -- -d &&
        roundtrip xz usr/bin/xz "$xz_level" -T2 --block-size=256KiB -- -d -T2 &&
        roundtrip zstd usr/bin/zstd -12 -T2 -B512KiB -- -d &&
        roundtrip pigz usr/bin/pigz -9 -p 2 -- -d -p 2 || return 1
    echo "PASS: integration compress: gzip, bzip2, xz -T2, zstd -T2, pigz -p 2:" \
        "$(wc -c <"$work/data/mixed") bytes, the same compressed bytes and back" \
        "($(sets_summary gzip gzip-d bzip2 bzip2-d xz xz-d zstd zstd-d pigz pigz-d))"
}

case_text() {
    local d=$work/data
    make_inputs
    tool sed bin/sed -n -e H -e '${x;s/\n/,/g;s/\([a-z]\)\1/<\1>/g;p}' "$d/words" &&
        tool grep-E bin/grep -E -n -o '\b([a-z]{2})\1[a-z]*\b' "$d/words" &&
        tool grep-w bin/grep -n -w -i -E -e sa -e xe -e 'motu[0-9]+' "$d/words" &&
        tool sort-par usr/bin/sort --parallel=2 -k2,2 -k1,1n "$d/nums" &&
        tool sort-merge usr/bin/sort -S 64K --batch-size=4 -T @RUN@ -k3,3 -k1,1 "$d/words" &&
        tool diff -s 1 usr/bin/diff -u "$d/words" "$d/words.edited" &&
        tool diff-y -s 1 usr/bin/diff --minimal -y -W 120 "$d/words" "$d/words.edited" || return 1
    echo "PASS: integration text: sed, grep, sort --parallel=2, sort with temporary files, diff:" \
        "output identical ($(sets_summary sed grep-E grep-w sort-par sort-merge diff diff-y))"
}

case_shell() {
    local d=$work/data
    make_inputs
    tool bash bin/bash --norc --noprofile "$here/workload.bash" "$d/words.shell" "$shell_rounds" &&
        tool dash bin/dash "$here/workload.dash" "$d/words.shell" "$shell_rounds" || return 1
    echo "PASS: integration shell: bash, dash, $shell_rounds rounds of forks: output identical" \
        "($(sets_summary bash dash))"
}

for cur in "${cases[@]}"; do
    "case_$cur" || status=1
done
exit "$status"
