#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the large path's time goes: system calls and page faults per large
malloc+free (32 KiB..1 MiB) under qemu-aarch64, libhwtag next to glibc and the peers.

bench/bench_large.c runs twice per configuration under `qemu-aarch64 -strace` (0 and N timed
ops, same warm-up): the difference of each system call's count / N is its count per op. Page
faults are the guest's own getrusage minor faults over the timed part (under qemu-user the
guest's getrusage is the qemu process's: a first touch of a guest page is a host fault), and
the time per op comes from runs without -strace (median of R runs, alternated). Guest
instructions per op (total, in libhwtag, and its DC GVA tag stores) come from the TCG plugin
bench/insncount/insncount.c, also as N ops minus 0 ops: exact, load-independent. Two shapes:
`ends` (bench_micro's large workload: 1024 live slots, first and last 16 bytes written) and
`pages` (64 live slots, one byte per 4 KiB page written too). Writes results/large.md.

  bench/large.py            # about 2 minutes
  bench/large.py --quick    # < 1 minute
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import time

import run as shared  # bench/run.py: the plugin's build and the qemu command line

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A64 = "/usr/lib/aarch64-linux-gnu"
QEMU = shared.QEMU
MEMCALLS = ["mmap", "munmap", "madvise", "mprotect", "brk", "mremap"]
SHAPES = [("ends", 1024, "1024 live slots, first and last 16 B written (bench_micro large)"),
          ("pages", 64, "64 live slots, every 4 KiB page written")]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])


def configs(lib):
    out = [("glibc", {}, [])]
    if os.path.exists(lib):
        out += [("hwtag-off", {"HWTAG_MODE": "off"}, [lib]),
                ("hwtag-sync", {"HWTAG_MODE": "sync"}, [lib]),
                ("hwtag-sample10", {"HWTAG_MODE": "sync", "HWTAG_SAMPLE": "10",
                                    "HWTAG_SAMPLE_ORDER": "3"}, [lib])]
    else:
        log("skip libhwtag: %s missing" % lib)
    for name, so in (("jemalloc", "libjemalloc.so.2"), ("mimalloc", "libmimalloc.so.2")):
        if os.path.exists(os.path.join(A64, so)):
            out.append((name, {}, [os.path.join(A64, so)]))
    return out


def run(prog, env, pre, shape, slots, ops, strace=False, plugin=None):
    argv = QEMU + (["-strace"] if strace else [])
    if plugin:
        argv += ["-plugin", "%s,out=%s" % plugin]
    for k, v in sorted(env.items()):
        argv += ["-E", "%s=%s" % (k, v)]
    if pre:
        argv += ["-E", "LD_PRELOAD=" + ":".join(pre)]
    argv += [prog, "--ops", str(ops), "--slots", str(slots), "--touch", shape]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    m = re.search(r"RESULT (.*)", p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("%s: rc=%d %s" % (" ".join(argv), p.returncode, p.stderr[-300:]))
    res = {k: float(v) for k, v in (kv.split("=") for kv in m.group(1).split())}
    calls = collections.Counter()
    if strace:
        for line in p.stderr.splitlines():
            c = re.match(r"\d+ ([a-z0-9_]+)\(", line)
            if c:
                calls[c.group(1)] += 1
    return res, calls


def insns(prog, env, pre, shape, slots, ops, plugin, tmp):
    """Guest instructions of one run: {"total", "hwtag" (libhwtag's code), "dc_gva"}."""
    out = os.path.join(tmp, "insns-%d.txt" % os.getpid())
    run(prog, env, pre, shape, slots, ops, plugin=(plugin, out))
    r = {"total": 0, "hwtag": 0, "dc_gva": 0}
    with open(out) as f:
        for line in f:
            w = line.split(None, 2)
            if w[0] == "total":
                r["total"] = int(w[1])
            elif w[0] == "module" and "libhwtag" in w[2]:
                r["hwtag"] += int(w[1])
            elif w[0] == "mte" and w[1] in ("dc_gva", "dc_gzva"):
                r["dc_gva"] += int(w[2])
    os.unlink(out)
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/aarch64/lib/libhwtag.so"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build/large"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    args = ap.parse_args()
    n = 500 if args.quick else 2000
    reps = 1 if args.quick else 3
    os.makedirs(args.build_dir, exist_ok=True)
    prog = os.path.join(args.build_dir, "bench_large")
    subprocess.check_call(["aarch64-linux-gnu-gcc", "-O2", "-Wall", "-o", prog,
                           os.path.join(ROOT, "bench/bench_large.c")])
    plugin = shared.build_insncount(os.path.join(args.build_dir, "insncount.so"))
    cs = configs(os.path.abspath(args.lib))
    t0 = time.time()
    R = {}
    for shape, slots, _ in SHAPES:
        for name, env, pre in cs:
            _, c0 = run(prog, env, pre, shape, slots, 0, strace=True)
            rs, c1 = run(prog, env, pre, shape, slots, n, strace=True)
            i0 = insns(prog, env, pre, shape, slots, 0, plugin, args.build_dir)
            i1 = insns(prog, env, pre, shape, slots, n, plugin, args.build_dir)
            R[(shape, name)] = {"calls": {k: (c1[k] - c0.get(k, 0)) / n for k in c1},
                                "insns": {k: (i1[k] - i0[k]) / n for k in i1},
                                "minflt_op_strace": rs["minflt_op"], "ns": [], "flt": []}
        for rep in range(reps):  # timing without -strace, configurations alternated
            order = cs[rep % len(cs):] + cs[:rep % len(cs)]
            for name, env, pre in order:
                rs, _ = run(prog, env, pre, shape, slots, n)
                R[(shape, name)]["ns"].append(rs["ns_op"])
                R[(shape, name)]["flt"].append(rs["minflt_op"])
        log("%s done (%.0f s)" % (shape, time.time() - t0))
    write(args, n, reps, cs, R, time.time() - t0)


def write(args, n, reps, cs, R, elapsed):
    L = ["# The large path per operation", "",
         "`bench/large.py%s`: `bench/bench_large` under qemu-aarch64 7.2, malloc+free of"
         " log-uniform 32 KiB..1 MiB objects, %d timed ops per run; system calls from"
         " `qemu-aarch64 -strace` (run with %d ops minus run with 0 ops, / %d), page faults"
         " from the guest's getrusage over the timed part, guest instructions from the TCG plugin"
         " bench/insncount (N ops minus 0 ops; `in libhwtag` is the library's own code, `DC GVA`"
         " its tag stores of 512 B each), time per op the median of %d runs"
         " without -strace, configurations alternated (%.0f s in all)." % (
             " --quick" if args.quick else "", n, n, n, reps, elapsed), ""]
    for shape, slots, desc in SHAPES:
        L += ["## %s: %s" % (shape, desc), "",
              "| allocator | µs per op | time vs glibc | " + " | ".join(c + " / op" for c in MEMCALLS) +
              " | other syscalls / op | minor faults / op | insns / op | in libhwtag | DC GVA / op |",
              "|---|---|---|" + "---|" * len(MEMCALLS) + "---|---|---|---|---|"]
        g = median(R[(shape, "glibc")]["ns"])
        for name, _, _ in cs:
            r = R[(shape, name)]
            ns = median(r["ns"])
            oth = sorted(((v, k) for k, v in r["calls"].items() if k not in MEMCALLS and v >= 0.005), reverse=True)
            other = "%.2f" % sum(v for v, _ in oth) + (" (%s)" % ", ".join("%s %.2f" % (k, v) for v, k in oth[:3]) if oth else "")
            L.append("| %s | %.1f [%.1f-%.1f] | %.2fx | %s | %s | %.1f | %.0f | %.0f | %.0f |" % (
                name, ns / 1e3, min(r["ns"]) / 1e3, max(r["ns"]) / 1e3, ns / g,
                " | ".join("%.2f" % r["calls"].get(c, 0) for c in MEMCALLS), other,
                median(r["flt"]), r["insns"]["total"], r["insns"]["hwtag"],
                r["insns"]["dc_gva"]))
        L.append("")
    L.append("<!-- analysis -->")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "large-quick.md" if args.quick else "large.md")
    old = open(path).read() if os.path.exists(path) else ""
    if "<!-- analysis -->" in old:  # keep the hand-written analysis below the marker
        L[-1] = "<!-- analysis -->" + old.split("<!-- analysis -->", 1)[1].rstrip("\n")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))
    log("wrote " + path.replace(ROOT + "/", ""))


if __name__ == "__main__":
    main()
