#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Native (x86_64, tagging compiled out) allocator-core benchmark.

Builds bench/bench_threads.c for the host, runs its five workloads (remote, handoff, churn,
mixed, bigbuf; 2 threads) under glibc, jemalloc, mimalloc, tcmalloc (Debian packages, LD_PRELOAD) and
libhwtag from the native-release preset (stacks on, and HWTAG_STACKTRACE=off), all
configurations alternated inside each round, and writes results/native.md: median ops/s with
min-max, the time ratio to glibc of the same round (median of per-round ratios), and the
geometric mean of the ratios over the workloads. Host python3 stdlib only.

  cmake --preset native-release && cmake --build --preset native-release
  bench/native.py            # 5 rounds, about a minute
  bench/native.py --quick    # 1 round, shorter runs, under a minute
  bench/native.py --checkers # also the checking allocators, Scudo and ASan's runtime

With --qemu the same workloads run under qemu-aarch64 with tagging on, against the MTE
peers: glibc, glibc's MTE mode (GLIBC_TUNABLES=glibc.mem.tagging=3), Scudo with MTE (sync,
through bench/mte_on_shim.c) and libhwtag from the aarch64 preset (sync with and without
stacks, and HWTAG_MODE=off), at 1/20 of the native op counts; writes results/native-qemu.md.

  cmake --preset aarch64 && cmake --build --preset aarch64
  bench/native.py --qemu     # 3 rounds, about 90 seconds
"""
import argparse
import math
import os
import platform
import re
import subprocess
import sys
import time

import run  # bench/run.py: Scudo's location and the qemu command line, shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBDIR = "/usr/lib/x86_64-linux-gnu"
QEMU_SCALE = 20  # qemu runs 1/QEMU_SCALE of the native ops
PEERS = [
    ("jemalloc", "libjemalloc.so.2", "libjemalloc2"),
    ("mimalloc", "libmimalloc.so.2", "libmimalloc2.0"),
    ("tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
]
# The checking allocators natively: the hardened allocator and ASan's runtime, each preloaded
# into the same uninstrumented program, so what they cost is their malloc and free alone
# (ASan's instrumentation of the program's own accesses is not there).
CHECKERS = [
    ("scudo", run.find_scudo(platform.machine()) or "-", "libclang-rt-14-dev", {},
     "Scudo standalone (LLVM's), default options"),
    ("asan", LIBDIR + "/libasan.so.8", "libasan8", {"ASAN_OPTIONS": "detect_leaks=0"},
     "ASan's runtime (gcc 12), default quarantine and redzones, leak check off"),
]
# per-thread op counts: glibc takes roughly 0.1-0.4 s on each
WORKLOADS = [
    ("remote", 3000000, "server-style remote frees: 2 threads swap bins of 1000 live 10..1000 B objects every phase (larson shape)"),
    ("handoff", 2000000, "producer/consumer: 1 thread mallocs 16..512 B in batches of 64, the other frees them (xmalloc shape)"),
    ("churn", 6000000, "per-thread malloc/free over 256 private slots of 16..1024 B (glibc bench-malloc-thread shape)"),
    ("mixed", 3000000, "20000 long-lived 16 B..4 KiB objects per thread plus short-lived 16..256 B churn, 1 in 16 ops replaces a long-lived one"),
    ("bigbuf", 150, "10 live buffers of 5..25 MiB per thread, a random one replaced per op and written whole (malloc-large shape)"),
]
MIN_OPS = 10  # per thread, whatever the scale (bigbuf's ops are few and long)


def scaled(ops, scale):
    return max(ops // scale, MIN_OPS)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def build(out_dir, cc="gcc"):
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "bench_threads")
    src = os.path.join(ROOT, "bench", "bench_threads.c")
    subprocess.check_call([cc, "-O2", "-g", "-pthread", "-Wall", "-Wextra",
                           "-I", os.path.join(ROOT, "include"), "-o", exe, src, "-ldl"])
    return exe


def qemu_configs(lib, out_dir):
    """(name, env, desc) of the MTE peers under qemu; env keys are the guest's."""
    cs = [("glibc", {}, "glibc 2.36 malloc, no tags"),
          ("glibc-mte", {"GLIBC_TUNABLES": "glibc.mem.tagging=3"},
           "glibc malloc, GLIBC_TUNABLES=glibc.mem.tagging=3 (sync)")]
    scudo = run.find_scudo()
    shim = os.path.join(out_dir, "mte_on_shim.so")
    if scudo:
        subprocess.check_call(["aarch64-linux-gnu-gcc", "-O2", "-shared", "-fPIC", "-Wall",
                               os.path.join(ROOT, "bench", "mte_on_shim.c"), "-o", shim])
        cs.append(("scudo-mte", {"LD_PRELOAD": shim + ":" + scudo},
                   "Scudo standalone after mte_on_shim (sync tag checks)"))
    else:
        log("skip scudo-mte: libclang_rt.scudo_standalone-aarch64.so missing "
            "(apt-get install libclang-rt-14-dev:arm64)")
    if lib and os.path.exists(lib):
        cs.append(("hwtag", {"LD_PRELOAD": lib}, "libhwtag sync, stacks on (default)"))
        cs.append(("hwtag-nostack", {"LD_PRELOAD": lib, "HWTAG_STACKTRACE": "off"},
                   "libhwtag sync, HWTAG_STACKTRACE=off"))
        cs.append(("hwtag-off", {"LD_PRELOAD": lib, "HWTAG_MODE": "off"},
                   "libhwtag, HWTAG_MODE=off"))
    else:
        log("skip libhwtag: %s missing (cmake --build --preset aarch64)" % lib)
    return cs


def configs(lib, checkers):
    cs = [("glibc", {}, "glibc 2.36 malloc")]
    for name, so, pkg in PEERS:
        path = os.path.join(LIBDIR, so)
        if os.path.exists(path):
            cs.append((name, {"LD_PRELOAD": path}, "%s (%s, Debian)" % (name, pkg)))
        else:
            log("skip %s: %s missing (apt-get install %s)" % (name, path, pkg))
    if checkers:
        for name, path, pkg, env, desc in CHECKERS:
            if os.path.exists(path):
                cs.append((name, dict(env, LD_PRELOAD=path), "%s (%s, Debian)" % (desc, pkg)))
            else:
                log("skip %s: %s missing (apt-get install %s)" % (name, path, pkg))
    if lib and os.path.exists(lib):
        cs.append(("hwtag", {"LD_PRELOAD": lib}, "libhwtag native-release, stacks on (default)"))
        cs.append(("hwtag-nostack", {"LD_PRELOAD": lib, "HWTAG_STACKTRACE": "off"},
                   "libhwtag native-release, HWTAG_STACKTRACE=off"))
    else:
        log("skip libhwtag: %s missing (cmake --build --preset native-release)" % lib)
    return cs


def run_one(exe, wl, ops, threads, env_extra, timeout, qemu=False):
    argv = [exe, "--workload", wl, "--threads", str(threads), "--ops", str(ops)]
    if qemu:
        argv, env = run.command(argv, env_extra)  # guest env through qemu's -E
    else:
        env = dict(os.environ)
        env.update(env_extra)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    m = re.search(r"ops_s=([0-9.]+)", p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("%s %s failed\nrc=%d: %s" % (wl, env_extra, p.returncode,
                                                        (p.stderr.strip().splitlines() or [""])[-1]))
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 round, 1/4 of the work (< 1 min)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--qemu", action="store_true",
                    help="aarch64 under qemu with tagging on, against the MTE peers")
    ap.add_argument("--lib", default=None, help="libhwtag.so (default: the preset's build)")
    ap.add_argument("--checkers", action="store_true",
                    help="natively, also Scudo and ASan's runtime (a few minutes more)")
    ap.add_argument("--build-dir", default=None)
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    if platform.machine() != "x86_64":
        log("note: native.py is meant for the x86_64 host; running on %s anyway" % platform.machine())
    preset = "aarch64" if args.qemu else "native-release"
    lib = os.path.abspath(args.lib or os.path.join(ROOT, "build", preset, "lib", "libhwtag.so"))
    bdir = args.build_dir or os.path.join(ROOT, "build", "qemu-bench" if args.qemu else "native-bench")
    rounds = args.rounds or (1 if args.quick else 3 if args.qemu else 5)
    scale = (4 if args.quick else 1) * (QEMU_SCALE if args.qemu else 1)
    if args.qemu:
        exe = build(bdir, "aarch64-linux-gnu-gcc")
        cs = qemu_configs(lib, bdir)
        args.timeout = max(args.timeout, 300)
    else:
        exe = build(bdir)
        cs = configs(lib, args.checkers)
    res = {}  # (wl, cfg) -> [ops/s per round]
    failed = {}  # (wl, cfg) -> why a run failed (qemu only); its ops/s is None
    t0 = time.time()
    for rnd in range(rounds):
        for wl, ops, _ in WORKLOADS:
            # rotate the order every round so no configuration always runs first
            order = cs[rnd % len(cs):] + cs[:rnd % len(cs)]
            for name, env, _ in order:
                try:
                    v = run_one(exe, wl, scaled(ops, scale), args.threads, env, args.timeout, args.qemu)
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    if not args.qemu:
                        raise
                    # a peer that dies under emulation is reported, not fatal
                    why = str(e).strip().splitlines()[-1][-160:]
                    log("%s %s failed: %s" % (wl, name, why))
                    failed.setdefault((wl, name), why)
                    v = None  # keeps the rounds aligned for per-round ratios
                res.setdefault((wl, name), []).append(v)
        log("round %d/%d done (%.0f s)" % (rnd + 1, rounds, time.time() - t0))
    write(args, rounds, scale, cs, res, time.time() - t0, failed)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return "%s, %d cores" % (line.split(":", 1)[1].strip(), os.cpu_count())
    except OSError:
        pass
    return platform.machine()


def rel(path):
    return path.replace(ROOT + "/", "")


def paired(a, b):
    """Per-round pairs of two configurations' ops/s, rounds where either failed left out."""
    return [(x, y) for x, y in zip(a, b) if x is not None and y is not None]


def write(args, rounds, scale, cs, res, elapsed, failed):
    names = [c[0] for c in cs]
    if args.qemu:
        head = ["# Allocator-core workloads under qemu with tagging on", "",
                "`bench/native.py --qemu%s`: qemu-aarch64 (QEMU 7.2, `-cpu max,sve=off`) on the"
                " x86_64 host, %d round(s), %d threads, every configuration of a round run back"
                " to back in rotated order; %.0f s in all. libhwtag is the `aarch64` preset."
                " Under qemu every tag-checked load and store of the program costs several times"
                " an unchecked one, which MTE hardware does not pay." % (
                    " --quick" if args.quick else "", rounds, args.threads, elapsed)]
    else:
        head = ["# Native allocator-core benchmark", "",
                "`bench/native.py%s`: x86_64 host, %d round(s), %d threads, every configuration of a"
                " round run back to back in rotated order; %.0f s in all. libhwtag is the"
                " `native-release` preset (Release + LTO, HWTAG_MTE=OFF, no sanitizers)." % (
                    " --quick" if args.quick else "", rounds, args.threads, elapsed)]
    lines = head + ["",
             "Cells: **time ratio to glibc** (median of the per-round ratios glibc ops/s / config"
             " ops/s; below 1 is faster than glibc) and, under it, the median ops/s (in millions,"
             " M/s, where that is over 0.1) [min-max]. Machine: %s, shared with other jobs, so single figures move by"
             " 10-20%%; the ratios of one round are taken back to back." % cpu_model(), "",
             "| workload | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    ratios = {n: [] for n in names}
    for wl, _, _ in WORKLOADS:
        base = res[(wl, "glibc")]
        row = ["**%s**" % wl]
        for n in names:
            pairs = paired(base, res[(wl, n)])
            if not pairs:
                row.append("**failed** in every round")
                continue
            vals = [v for _, v in pairs]
            r = median([b / v for b, v in pairs])
            if (wl, n) not in failed:
                ratios[n].append(r)
            unit, div = ("M/s", 1e6) if median(vals) >= 1e5 else ("/s", 1.0)
            row.append("**%.2fx** %.1f %s [%.1f-%.1f]%s" % (
                r, median(vals) / div, unit, min(vals) / div, max(vals) / div,
                " (failed in %d of %d rounds)" % (rounds - len(pairs), rounds)
                if (wl, n) in failed else ""))
        lines.append("| " + " | ".join(row) + " |")
    complete = [n for n in names if len(ratios[n]) == len(WORKLOADS)]
    lines.append("| **geometric mean** | " + " | ".join(
        ("**%.2fx**" % geomean(ratios[n])) if n in complete else "-" for n in names) + " |")
    lines += ["", "Worst workload per configuration: " + ", ".join(
        "%s %.2fx (%s)" % (n, max(ratios[n]), WORKLOADS[ratios[n].index(max(ratios[n]))][0])
        for n in complete) + "."]
    for (wl, n), why in sorted(failed.items()):
        lines += ["", "`%s` failed on `%s` (%s)." % (n, wl, why)]
    if args.qemu:
        lines += ["", "libhwtag's time relative to each MTE peer (median of the per-round ratios;"
                  " below 1 is faster):", "",
                  "| workload | " + " | ".join("%s / %s" % (h, p) for h in ("hwtag", "hwtag-nostack")
                                                for p in ("glibc-mte", "scudo-mte")) + " |",
                  "|---|" + "---|" * 4]
        for wl, _, _ in WORKLOADS:
            row = ["**%s**" % wl]
            for h in ("hwtag", "hwtag-nostack"):
                for p in ("glibc-mte", "scudo-mte"):
                    pairs = paired(res.get((wl, p), []), res.get((wl, h), []))
                    if pairs:
                        row.append("%.2fx" % median([pv / hv for pv, hv in pairs]))
                    else:
                        row.append("-")
            lines.append("| " + " | ".join(row) + " |")
        lines += ["", "A configuration that failed in some rounds is compared over the rounds it"
                  " ran and left out of the geometric mean."]
    lines += ["", "## Workloads", "",
        "`bench/bench_threads.c`, 2 threads, one op = one malloc + one free, every object touched"
        " at both ends:", ""]
    for wl, ops, desc in WORKLOADS:
        lines.append("- `%s` (%d ops per thread): %s" % (wl, scaled(ops, scale), desc))
    lines += ["", "## Configurations", ""]
    for n, env, desc in cs:
        lines.append("- `%s`: %s%s" % (n, desc, (" — `" + " ".join("%s=%s" % (k, rel(v)) for k, v in sorted(env.items())) + "`") if env else ""))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "native%s%s.md" % ("-qemu" if args.qemu else "",
                                                      "-quick" if args.quick else ""))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    log("wrote " + path)


if __name__ == "__main__":
    main()
