#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Guest instructions per malloc+free pair under qemu-aarch64, counted with the
project's own TCG plugin bench/insncount/insncount.c.

bench/bench_pairs.c (64 live blocks, single thread) runs twice per configuration and size, with
0 and N pairs; (count(N) - count(0)) / N is one pair's cost, start-up and the live set
excluded. The counts are exact and do not move with the machine's load, so one run each is
enough. Writes results/insns.md. Host python3 stdlib; needs gcc, aarch64-linux-gnu-gcc and
qemu-user. Configurations whose library is missing are skipped with a note.

  cmake --preset aarch64 && cmake --build --preset aarch64 --target hwtag_shared
  bench/insns.py             # N = 100000, sizes 32 1000 4000, about 2 minutes
  bench/insns.py --quick     # N = 20000, < 1 minute
"""
import argparse
import glob
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import run  # bench/run.py: the plugin's build and the qemu command line, shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
A64 = "/usr/lib/aarch64-linux-gnu"
QEMU = run.QEMU
TAG_KINDS = ["irg", "gmi", "addg", "subg", "subp", "stg", "stzg", "st2g", "stz2g", "stgp", "ldg",
             "dc_gva", "dc_gzva"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def rel(p):
    return p.replace(ROOT + "/", "")


def build(bdir):
    os.makedirs(bdir, exist_ok=True)
    plugin = run.build_insncount(os.path.join(bdir, "insncount.so"))
    prog = os.path.join(bdir, "bench_pairs")
    subprocess.check_call(["aarch64-linux-gnu-gcc", "-O2", "-pthread", "-o", prog,
                           os.path.join(ROOT, "bench/bench_pairs.c")])
    shim = os.path.join(bdir, "mte_on_shim.so")
    subprocess.check_call(["aarch64-linux-gnu-gcc", "-O2", "-shared", "-fPIC", "-o", shim,
                           os.path.join(ROOT, "bench/mte_on_shim.c")])
    return plugin, prog, shim


def find_scudo():
    c = sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-aarch64.so"))
    return c[-1] if c else None


def configs(lib, shim):
    """(name, description, preload list, env, allocator module substrings)"""
    out = [("glibc", "glibc 2.36 malloc", [], {}, ["libc.so"]),
           ("glibc-mte", "glibc, GLIBC_TUNABLES=glibc.mem.tagging=3 (sync)", [],
            {"GLIBC_TUNABLES": "glibc.mem.tagging=3"}, ["libc.so"])]
    for name, so, pkg in (("jemalloc", "libjemalloc.so.2", "libjemalloc2:arm64"),
                          ("mimalloc", "libmimalloc.so.2", "libmimalloc2.0:arm64"),
                          ("tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4:arm64")):
        p = os.path.join(A64, so)
        if os.path.exists(p):
            out.append((name, "%s (Debian %s)" % (name, pkg), [p], {}, [so.split(".so")[0]]))
        else:
            log("skip %s: %s missing (apt-get install %s)" % (name, p, pkg))
    scudo = find_scudo()
    if scudo:
        out.append(("scudo-mte", "Scudo standalone (LLVM) after mte_on_shim, sync checks",
                    [shim, scudo], {}, ["scudo"]))
    if lib and os.path.exists(lib):
        h = ["libhwtag.so"]
        out += [("hwtag-off", "libhwtag HWTAG_MODE=off", [lib], {"HWTAG_MODE": "off"}, h),
                ("hwtag-nostack", "libhwtag sync, HWTAG_STACKTRACE=off", [lib],
                 {"HWTAG_MODE": "sync", "HWTAG_STACKTRACE": "off"}, h),
                ("hwtag-sync", "libhwtag sync (default, stacks on)", [lib], {"HWTAG_MODE": "sync"}, h)]
    else:
        log("skip libhwtag: %s missing" % lib)
    return out


def count(plugin, prog, preload, env, size, ops, threads, tmp, burst=0):
    out = os.path.join(tmp, "c-%d-%d-%d-%d.txt" % (os.getpid(), size, ops, hash((tuple(preload), tuple(sorted(env.items())))) & 0xffffff))
    argv = QEMU + ["-plugin", "%s,out=%s" % (plugin, out)]
    for k, v in sorted(env.items()):
        argv += ["-E", "%s=%s" % (k, v)]
    if preload:
        argv += ["-E", "LD_PRELOAD=" + ":".join(preload)]
    argv += [prog, "--ops", str(ops), "--size", str(size), "--live", "64", "--threads", str(threads),
             "--burst", str(burst)]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or "RESULT" not in p.stdout:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), p.stderr[-400:]))
    res = {"total": 0, "mods": {}, "mte": {}}
    with open(out) as f:
        for line in f:
            w = line.split(None, 2)
            if w[0] == "total":
                res["total"] = int(w[1])
            elif w[0] == "module":
                res["mods"][w[2].strip()] = int(w[1])
            elif w[0] == "mte":
                res["mte"][w[1]] = int(w[2])
    os.unlink(out)
    return res


def per_pair(a, b, n, mods):
    d = lambda x, y: (y - x) / n
    alloc = sum(d(a["mods"].get(m, 0), v) for m, v in b["mods"].items() if any(s in m for s in mods))
    prog = sum(d(a["mods"].get(m, 0), v) for m, v in b["mods"].items() if m.endswith("/bench_pairs"))
    mte = {k: d(a["mte"].get(k, 0), b["mte"].get(k, 0)) for k in b["mte"]}
    return {"total": d(a["total"], b["total"]), "alloc": alloc, "prog": prog, "mte": mte,
            "tag": sum(mte.get(k, 0) for k in TAG_KINDS)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ops", type=int, default=None)
    ap.add_argument("--sizes", default="32,1000,4000")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/aarch64/lib/libhwtag.so"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build/insns"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--burst", type=int, default=0,
                    help="the other shape: N blocks allocated, then freed (writes insns-burst.md)")
    args = ap.parse_args()
    n = args.ops or (20000 if args.quick else 100000)
    if args.burst:
        n -= n % args.burst
    sizes = [int(s) for s in args.sizes.split(",")]
    plugin, prog, shim = build(args.build_dir)
    cs = configs(os.path.abspath(args.lib), shim)
    t0 = time.time()
    jobs = {}
    with ThreadPoolExecutor(args.jobs) as ex:
        for c in cs:
            for s in sizes:
                for ops in (0, n):
                    jobs[(c[0], s, ops)] = ex.submit(count, plugin, prog, c[2], c[3], s, ops,
                                                     args.threads, args.build_dir, args.burst)
    res = {}
    for c in cs:
        for s in sizes:
            res[(c[0], s)] = per_pair(jobs[(c[0], s, 0)].result(), jobs[(c[0], s, n)].result(), n * args.threads, c[4])
    write(args, n, sizes, cs, res, time.time() - t0)


def write(args, n, sizes, cs, res, elapsed):
    sz = " / ".join("%d" % s for s in sizes)
    L = ["# Guest instructions per malloc+free pair", "",
         "`bench/insns.py%s`: qemu-aarch64 %s with the plugin `bench/insncount/insncount.c`;"
         " `bench/bench_pairs` with %s, %d thread(s), run with 0 and %d pairs, cells"
         " = (count(%d) - count(0)) / %d, so start-up and the live set are excluded. Exact counts:"
         " they do not move with the machine's load (%.0f s in all)." % (
             (" --quick" if args.quick else "") + (" --burst %d" % args.burst if args.burst else ""), "7.2",
             "bursts of %d blocks allocated, then all freed" % args.burst if args.burst else "64 live blocks",
             args.threads, n, n, n * args.threads, elapsed), "",
         "All guest instructions of the process per pair (the benchmark loop's own ~23 are in"
         " every cell), and the MTE tag instructions per pair (irg, gmi, addg, subg, subp,"
         " stg/stzg/st2g/stz2g/stgp, ldg, dc gva/gzva; TCO writes apart):", "",
         "| allocator | " + " | ".join("%d B" % s for s in sizes) + " | MTE instructions per pair (%s B) | TCO writes per pair |" % sz,
         "|---|" + "---|" * len(sizes) + "---|---|"]
    for c in cs:
        r = [res[(c[0], s)] for s in sizes]
        tag = " / ".join("%.0f" % x["tag"] if x["tag"] >= 0.5 or x["tag"] == 0 else "%.2f" % x["tag"] for x in r)
        tco = " / ".join("%.0f" % x["mte"].get("tco", 0) for x in r)
        L.append("| %s | %s | %s | %s |" % (c[0], " | ".join("%.0f" % x["total"] for x in r),
                                            "–" if all(x["tag"] == 0 for x in r) else tag,
                                            "–" if all(x["mte"].get("tco", 0) == 0 for x in r) else tco))
    L += ["", "Where the instructions of a pair are: the allocator's own module (libc.so.6 for"
          " glibc, the preloaded library otherwise) / the benchmark program / the rest (ld.so"
          " PLT resolution is start-up only; kernel-side work is not guest code):", "",
          "| allocator | " + " | ".join("%d B" % s for s in sizes) + " |", "|---|" + "---|" * len(sizes)]
    for c in cs:
        L.append("| %s | %s |" % (c[0], " | ".join("%.0f / %.0f / %.0f" % (x["alloc"], x["prog"], abs(round(x["total"] - x["alloc"] - x["prog"])))
                                                  for x in (res[(c[0], s)] for s in sizes))))
    L += ["", "MTE instructions per pair by kind (configurations that tag):", "",
          "| allocator | size | " + " | ".join(TAG_KINDS + ["tco"]) + " |", "|---|---|" + "---|" * (len(TAG_KINDS) + 1)]
    for c in cs:
        for s in sizes:
            x = res[(c[0], s)]
            if x["tag"] == 0:
                continue
            L.append("| %s | %d | %s |" % (c[0], s, " | ".join(
                ("%.2f" % x["mte"].get(k, 0)).rstrip("0").rstrip(".") if x["mte"].get(k, 0) else "0" for k in TAG_KINDS + ["tco"])))
    L += ["", "## Configurations", ""]
    for c in cs:
        extra = " ".join("%s=%s" % kv for kv in sorted(c[3].items()))
        pre = ":".join(rel(p) for p in c[2])
        L.append("- `%s`: %s%s%s" % (c[0], c[1], (" — `" + extra + "`") if extra else "",
                                     (" — `LD_PRELOAD=" + pre + "`") if pre else ""))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "insns%s%s.md" % ("-burst" if args.burst else "", "-quick" if args.quick else ""))
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print("\n".join(L))
    log("wrote " + rel(path))


if __name__ == "__main__":
    main()
