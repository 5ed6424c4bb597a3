#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Guest instructions by function (and source line) of one module, under qemu-aarch64.

Runs one command under qemu with bench/insncount/insncount.c's "pcs=" counting, then
attributes every executed instruction of the module to the function around it (its symbol
table, or its dynamic one for a stripped library) and, with --lines FUNC, to the source
lines inside FUNC (addr2line; a line of an inlined function is its own). Counts are exact
and do not move with the host's load, so two builds compare with one run each.

  bench/insnprof.py -- prog args                      # libhwtag's functions, default options
  bench/insnprof.py -E HWTAG_STACKTRACE=off -- prog args
  bench/insnprof.py --lines malloc --calls 198450 -- prog args < input
  bench/insnprof.py --module libc.so.6 --no-preload -E GLIBC_TUNABLES=glibc.mem.tagging=3 -- prog

stdin is passed through to the program. --calls N divides the counts by N (a call's cost,
when N is how often the function ran: HWTAG_PRINT_STATS=on gives the allocations).
Needs qemu-user, gcc and binutils-aarch64-linux-gnu. Host python3 stdlib only.
"""
import argparse
import bisect
import collections
import os
import subprocess
import sys
import tempfile

import run  # bench/run.py: the plugin's build and the qemu command line, shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN = os.path.join(ROOT, "build", "insnprof", "insncount.so")


def read_counts(paths):
    """(path of the module, its load base, {address offset: count}) over every process."""
    counts = collections.Counter()
    module = None
    for path in paths:
        maps, pcs = [], []
        for line in open(path):
            f = line.split()
            if f[0] == "map":
                maps.append((int(f[1], 16), f[3]))
            elif f[0] == "pc":
                pcs.append((int(f[1], 16), int(f[2])))
        if not maps:
            continue
        base = min(lo for lo, _ in maps)
        module = maps[0][1]
        for addr, n in pcs:
            counts[addr - base] += n
    return module, counts


def symbols(module):
    """Sorted (start, size, name) of the module's functions."""
    for extra in ([], ["-D"]):
        out = subprocess.run(["aarch64-linux-gnu-nm", "-n", "-S", "--defined-only", *extra,
                              module], capture_output=True, text=True).stdout
        syms = []
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tTwWiI":
                syms.append((int(f[0], 16), int(f[1], 16), f[3]))
        if syms:
            return syms
    return []


def by_function(counts, syms):
    starts = [s[0] for s in syms]
    funcs = collections.Counter()
    for off, n in counts.items():
        i = bisect.bisect_right(starts, off) - 1
        inside = i >= 0 and off < syms[i][0] + max(syms[i][1], 1)
        funcs[syms[i][2] if inside else "?"] += n
    return funcs


def by_line(counts, syms, module, func):
    ranges = [(s, s + z) for s, z, name in syms if name == func]
    if not ranges:
        sys.exit("no function %s in %s" % (func, module))
    offs = sorted(o for o in counts if any(lo <= o < hi for lo, hi in ranges))
    out = subprocess.run(["aarch64-linux-gnu-addr2line", "-e", module] + [hex(o) for o in offs],
                         capture_output=True, text=True).stdout.splitlines()
    lines = collections.Counter()
    for off, where in zip(offs, out):
        lines[os.path.basename(where.split(" (")[0])] += counts[off]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "aarch64", "lib",
                                                  "libhwtag.so"))
    ap.add_argument("--no-preload", action="store_true", help="do not preload --lib")
    ap.add_argument("--module", default=None,
                    help="text in the path of the module to profile (default: --lib's file)")
    ap.add_argument("-E", dest="env", action="append", default=[], help="guest VAR=VALUE")
    ap.add_argument("--lines", metavar="FUNC", help="also FUNC's instructions by source line")
    ap.add_argument("--calls", type=int, default=0, help="divide by N: a call's cost")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    text = a.module or os.path.basename(os.path.realpath(a.lib))
    env = list(a.env) + ([] if a.no_preload else ["LD_PRELOAD=" + os.path.abspath(a.lib)])
    with tempfile.TemporaryDirectory(prefix="hwtag-insnprof.") as tmp:
        cmd = run.QEMU + ["-plugin", "%s,out=%s/c.%%p,pcs=%s" % (run.build_insncount(PLUGIN),
                                                                 tmp, text)]
        for e in env:
            cmd += ["-E", e]
        r = subprocess.run(cmd + a.command, stdout=subprocess.DEVNULL)
        files = [os.path.join(tmp, f) for f in os.listdir(tmp)]
        module, counts = read_counts(files)
        totals = [int(ln.split()[1]) for f in files for ln in open(f) if ln.startswith("total ")]
    if module is None:
        sys.exit("no instruction of a module matching %r ran (exit status %d)" % (text,
                                                                                  r.returncode))
    syms = symbols(module)
    div = a.calls or 1
    mod_total = sum(counts.values())
    print("%s: %d guest instructions of %d in all (exit status %d)%s" % (
        module, mod_total, sum(totals), r.returncode, ", per call: /%d" % div if a.calls else ""))
    for name, n in by_function(counts, syms).most_common(a.top):
        print("%14.1f %5.1f%%  %s" % (n / div, 100.0 * n / mod_total, name))
    if a.lines:
        lines = by_line(counts, syms, module, a.lines)
        print("\n%s by source line:" % a.lines)
        for where, n in lines.most_common(a.top):
            print("%14.1f  %s" % (n / div, where))


if __name__ == "__main__":
    main()
