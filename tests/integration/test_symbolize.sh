#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Source lines in reports of real programs under tools/hwtag, in the compact
# frame form " sym+0xoff/0xsize [name] file:line:col (module+0xoff)": a
# demangled C++ method, a frame in a dlopen'd library with its line, a
# stripped binary (frames "module+0xoff", title too, build id present, report
# whole), and `hwtag symbolize` on reports saved with HWTAG_SYMBOLIZE=off,
# which must print the live reports' frame text, starting one symbolizer
# process for the whole report (one per module with addr2line).
#
# Usage: test_symbolize.sh --lib PATH
#
# Needs aarch64-linux-gnu-gcc/g++ (or cc/c++ on an aarch64 host), qemu-aarch64
# elsewhere, and llvm-symbolizer or aarch64-linux-gnu-addr2line (exit 77, skip,
# without). Prints one PASS/FAIL line per check; exit 0 when all passed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
launcher=$repo/tools/hwtag
lib=""
while [ $# -gt 0 ]; do
    case "$1" in
    --lib) lib=$2; shift 2 ;;
    --lib=*) lib=${1#*=}; shift ;;
    *) echo "test_symbolize.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -f "$lib" ] || { echo "test_symbolize.sh: --lib PATH needed" >&2; exit 2; }
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^HWTAG_' || true)
unset LD_PRELOAD QEMU_SET_ENV QEMU_UNSET_ENV
command -v llvm-symbolizer >/dev/null || command -v aarch64-linux-gnu-addr2line >/dev/null ||
    { echo "SKIP: no symbolizer"; exit 77; }
if [ "$(uname -m)" = aarch64 ]; then cc=cc cxx=c++ strip=strip
else cc=aarch64-linux-gnu-gcc cxx=aarch64-linux-gnu-g++ strip=aarch64-linux-gnu-strip; fi

work=$(mktemp -d "${TMPDIR:-/tmp}/hwtag-sym.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
check() {
    local name=$1 file=$2 pattern=$3
    if grep -qE -- "$pattern" "$file"; then echo "PASS: symbolize: $name"; passed=$((passed + 1))
    else echo "FAIL: symbolize: $name: no /$pattern/ in:"; cat "$file"; failed=$((failed + 1)); fi
}
check_no() {
    local name=$1 file=$2 pattern=$3
    if ! grep -qE -- "$pattern" "$file"; then echo "PASS: symbolize: $name"; passed=$((passed + 1))
    else echo "FAIL: symbolize: $name: /$pattern/ in:"; cat "$file"; failed=$((failed + 1)); fi
}
run() { "$launcher" --lib "$lib" "$@" || true; }

# --- C++: a method and its demangled name ------------------------------------
cat >"$work/parser.cpp" <<'CPP'
#include <cstddef>
namespace app {
struct Parser {
    unsigned char *buf;
    __attribute__((noinline)) void store(std::size_t i) { ((volatile unsigned char *)buf)[i] = 1; }
};
}
int main() {
    app::Parser p{new unsigned char[24]};
    p.store(32);
    return 0;
}
CPP
$cxx -g -O1 "$work/parser.cpp" -o "$work/parser"
run "$work/parser" 2>"$work/parser.txt"
check "header keeps the mangled token" "$work/parser.txt" \
    '^BUG: KASAN: slab-out-of-bounds in _ZN3app6Parser5storeEm\+0x[0-9a-f]+/0x[0-9a-f]+$'
check "frame has the demangled method and its line" "$work/parser.txt" \
    '^ _ZN3app6Parser5storeEm\+0x[0-9a-f]+/0x[0-9a-f]+ app::Parser::store\(unsigned long\) [^ ]*parser\.cpp:5:[0-9]+ \(parser\+0x[0-9a-f]+\)$'
check "SUMMARY has the demangled method and its line" "$work/parser.txt" \
    '^SUMMARY: KASAN: slab-out-of-bounds in _ZN3app6Parser5storeEm\+0x[0-9a-f]+/0x[0-9a-f]+ app::Parser::store\(unsigned long\) [^ ]*parser\.cpp:5:[0-9]+ \(parser\+0x[0-9a-f]+\)$'
check "allocation frame has main's line, once" "$work/parser.txt" \
    '^ main\+0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*parser\.cpp:9:[0-9]+ \(parser\+0x[0-9a-f]+\)$'
check "the module's path is printed once, in Modules" "$work/parser.txt" '^ /.*/parser \(BuildId: [0-9a-f]+\)$'
check_no "no frame carries a module path" "$work/parser.txt" '^ .*\(/'
check_no "no report line is longer than 160 characters" "$work/parser.txt" '^([^h]|h[^w]|hw[^t]).{158}'

# --- a dlopen'd plugin --------------------------------------------------------
cat >"$work/plugin.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) void plugin_overflow(void)
{
    volatile char *p = malloc(40);
    p[48] = 1;
}
C
cat >"$work/host.c" <<'C'
#include <dlfcn.h>
int main(int argc, char **argv)
{
    void *h = dlopen(argv[1], RTLD_NOW);
    void (*f)(void) = h ? (void (*)(void))dlsym(h, "plugin_overflow") : 0;
    if (f)
        f();
    return 3;
}
C
$cc -g -O1 -fPIC -shared "$work/plugin.c" -o "$work/plugin.so"
$cc -g -O1 "$work/host.c" -o "$work/host" -ldl
run "$work/host" "$work/plugin.so" 2>"$work/plugin.txt"
check "dlopen'd frame has its line" "$work/plugin.txt" \
    '^ plugin_overflow\+0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*plugin\.c:5:[0-9]+ \(plugin\.so\+0x[0-9a-f]+\)$'
check "dlopen'd module has a build id" "$work/plugin.txt" '^ /.*/plugin\.so \(BuildId: [0-9a-f]+\)$'

# --- a stripped binary ----------------------------------------------------------
$cc -g -O1 "$work/plugin.c" -x c - -o "$work/stripped" <<'C'
void plugin_overflow(void);
int main(void) { plugin_overflow(); return 3; }
C
$strip "$work/stripped"
run "$work/stripped" 2>"$work/stripped.txt"
check "stripped: report is whole" "$work/stripped.txt" '^SUMMARY: KASAN: slab-out-of-bounds in '
check "stripped: title is module+offset" "$work/stripped.txt" \
    '^BUG: KASAN: slab-out-of-bounds in stripped\+0x[0-9a-f]+$'
check "stripped: SUMMARY is module+offset" "$work/stripped.txt" \
    '^SUMMARY: KASAN: slab-out-of-bounds in stripped\+0x[0-9a-f]+$'
check_no "stripped: no foreign symbol in the title" "$work/stripped.txt" '^(BUG|SUMMARY): KASAN: .*__libc'
check "stripped: frames are module+offset" "$work/stripped.txt" '^ stripped\+0x[0-9a-f]+$'
check "stripped: build id present" "$work/stripped.txt" '^ /.*/stripped \(BuildId: [0-9a-f]{40}\)$'
check_no "stripped: no lines" "$work/stripped.txt" 'plugin\.c:'

# --- hwtag symbolize on saved reports ------------------------------------------
# The frame lines (inlined ones too), "called from" and SUMMARY of the filtered
# report must be the live report's text, from one symbolizer process for the
# whole report (addr2line: one per module). The symbolizer runs through a
# wrapper of the same name that counts its starts.
frames_of() { grep -E '^ [^ ]+\+0x|^   [^ ].* \[inline\]$|^The access is inside|^SUMMARY' "$1" || true; }
real_symbolizer=""
for c in llvm-symbolizer llvm-symbolizer-{19,18,17,16,15,14} aarch64-linux-gnu-addr2line; do
    real_symbolizer=$(command -v "$c") && break
done
mkdir "$work/counting"
counting=$work/counting/$(basename "$real_symbolizer")
printf '#!/bin/sh\necho started >>"%s"\nexec "%s" "$@"\n' "$work/starts" "$real_symbolizer" >"$counting"
chmod +x "$counting"
filter_check() {
    local name=$1 live=$2 saved=$3 out=$4 starts modules limit
    rm -f "$work/starts"
    "$launcher" symbolize --symbolizer "$counting" <"$saved" >"$out"
    if diff <(frames_of "$live") <(frames_of "$out") >"$work/diff.txt"; then
        echo "PASS: symbolize: filter equals the live report's frames: $name"; passed=$((passed + 1))
    else
        echo "FAIL: symbolize: filter differs from the live report ($name):"; cat "$work/diff.txt"
        failed=$((failed + 1))
    fi
    starts=$(cat "$work/starts" 2>/dev/null | wc -l)
    modules=$(grep -oE '\([^ ()]+\+0x[0-9a-f]+\)$' "$saved" | sed 's/+0x.*//' | sort -u | wc -l)
    limit=1
    [[ $counting == *addr2line* ]] && limit=$modules
    if [ "$starts" -ge 1 ] && [ "$starts" -le "$limit" ]; then
        echo "PASS: symbolize: $starts symbolizer process(es), $modules module(s): $name"; passed=$((passed + 1))
    else
        echo "FAIL: symbolize: $starts symbolizer processes for $modules modules (at most $limit): $name"
        failed=$((failed + 1))
    fi
}
HWTAG_SYMBOLIZE=off run "$work/host" "$work/plugin.so" 2>"$work/saved.txt"
check_no "saved report has no lines" "$work/saved.txt" 'plugin\.c:'
filter_check plugin "$work/plugin.txt" "$work/saved.txt" "$work/filtered.txt"
check "filter adds the frame's line" "$work/filtered.txt" \
    '^ plugin_overflow\+0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*plugin\.c:5:[0-9]+ \(plugin\.so\+0x[0-9a-f]+\)$'
check "filter adds SUMMARY's line" "$work/filtered.txt" \
    '^SUMMARY: KASAN: slab-out-of-bounds in plugin_overflow\+0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*plugin\.c:5:[0-9]+ \(plugin\.so\+0x[0-9a-f]+\)$'
check "filter leaves a frame without lines as it was" "$work/filtered.txt" \
    '^ _start\+0x[0-9a-f]+/0x[0-9a-f]+ \(host\+0x[0-9a-f]+\)$'
HWTAG_SYMBOLIZE=off run "$work/parser" 2>"$work/parser-saved.txt"
filter_check "C++" "$work/parser.txt" "$work/parser-saved.txt" "$work/parser-filtered.txt"
HWTAG_SYMBOLIZE=off run "$work/stripped" 2>"$work/stripped-saved.txt"
filter_check stripped "$work/stripped.txt" "$work/stripped-saved.txt" "$work/stripped-filtered.txt"
# glibc's local names offline: a report from a machine without libc6-dbg
# (its libc frames "libc.so.6+0xOFF") gets them from the debug file here
if grep -q '^ __libc_start_call_main+0x' "$work/plugin.txt"; then
    sed 's/^ __libc_start_call_main+0x[0-9a-f]*\/0x[0-9a-f]* (libc\.so\.6+0x\([0-9a-f]*\))$/ libc.so.6+0x\1/' \
        "$work/saved.txt" >"$work/nodebug.txt"
    check "a report without libc's local names" "$work/nodebug.txt" '^ libc\.so\.6\+0x[0-9a-f]+$'
    "$launcher" symbolize <"$work/nodebug.txt" >"$work/nodebug-filtered.txt"
    check "filter names glibc's local function from its debug file" "$work/nodebug-filtered.txt" \
        '^ libc\.so\.6\+0x[0-9a-f]+ __libc_start_call_main [^ ]*libc_start_call_main\.h:[0-9]+'
fi
# addr2line: one process per module, the text of the library using it
if command -v aarch64-linux-gnu-addr2line >/dev/null; then
    HWTAG_SYMBOLIZER=aarch64-linux-gnu-addr2line run "$work/host" "$work/plugin.so" 2>"$work/a2l.txt"
    "$launcher" symbolize --symbolizer aarch64-linux-gnu-addr2line <"$work/saved.txt" >"$work/a2l-filtered.txt"
    if diff <(frames_of "$work/a2l.txt") <(frames_of "$work/a2l-filtered.txt") >"$work/diff.txt"; then
        echo "PASS: symbolize: addr2line filter equals the live report's frames"
        passed=$((passed + 1))
    else
        echo "FAIL: symbolize: addr2line filter differs from the live report:"; cat "$work/diff.txt"
        failed=$((failed + 1))
    fi
fi
# three reports in one run: a fault (its first frame is the pc), then an
# overflow found at free and a double free (calls: every frame is a return
# address, and only the double free says "Free of addr")
cat >"$work/twice.c" <<'C'
#include <stdlib.h>
__attribute__((noinline)) void overflow(volatile char *p) { p[48] = 1; }
__attribute__((noinline)) void release(char *p) { free(p); }
int main(void)
{
    char *p = malloc(40), *q = malloc(40);
    overflow(p);
    ((volatile char *)q)[44] = 1;
    release(q);
    release(p);
    release(p);
    return 0;
}
C
$cc -g -O1 "$work/twice.c" -o "$work/twice"
run --fault report "$work/twice" 2>"$work/twice.txt"
HWTAG_SYMBOLIZE=off run --fault report "$work/twice" 2>"$work/twice-saved.txt"
check "three reports: a fault" "$work/twice.txt" '^BUG: KASAN: slab-out-of-bounds in overflow\+0x'
check "three reports: a double free" "$work/twice.txt" '^BUG: KASAN: double-free in release\+0x'
check "three reports: an overflow found at free" "$work/twice.txt" '^BUG: KASAN: slab-out-of-bounds in release\+0x'
filter_check "three reports" "$work/twice.txt" "$work/twice-saved.txt" "$work/twice-filtered.txt"
# with a sysroot: the report names /opt/app/..., which exists only under DIR
mkdir -p "$work/root/opt/app"
cp "$work/host" "$work/plugin.so" "$work/root/opt/app/"
sed "s|$work/|/opt/app/|g" "$work/saved.txt" >"$work/moved.txt"
"$launcher" symbolize --sysroot "$work/root" <"$work/moved.txt" >"$work/sysroot.txt"
check "filter with --sysroot" "$work/sysroot.txt" \
    '^ plugin_overflow\+0x[0-9a-f]+/0x[0-9a-f]+ [^ ]*plugin\.c:5:[0-9]+ \(plugin\.so\+0x[0-9a-f]+\)$'

echo "$passed passed, $failed failed"
[ $failed = 0 ]
