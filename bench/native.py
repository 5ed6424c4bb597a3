#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Native (x86_64, tagging compiled out) allocator-core benchmark of issue 10.

Builds bench/bench_threads.c for the host, runs its four workloads (remote, handoff, churn,
mixed; 2 threads) under glibc, jemalloc, mimalloc, tcmalloc (Debian packages, LD_PRELOAD) and
libhwtag from the native-release preset (stacks on, and HWTAG_STACKTRACE=off), all
configurations alternated inside each round, and writes results/native.md: median ops/s with
min-max, the time ratio to glibc of the same round (median of per-round ratios), and the
geometric mean of the ratios over the workloads. Host python3 stdlib only.

  cmake --preset native-release && cmake --build --preset native-release
  bench/native.py            # 5 rounds, about 2-3 minutes
  bench/native.py --quick    # 1 round, shorter runs, under a minute
"""
import argparse
import math
import os
import platform
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBDIR = "/usr/lib/x86_64-linux-gnu"
PEERS = [
    ("jemalloc", "libjemalloc.so.2", "libjemalloc2"),
    ("mimalloc", "libmimalloc.so.2", "libmimalloc2.0"),
    ("tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"),
]
# per-thread op counts: glibc takes roughly 0.1-0.4 s on each
WORKLOADS = [
    ("remote", 3000000, "server-style remote frees: 2 threads swap bins of 1000 live 10..1000 B objects every phase (larson shape)"),
    ("handoff", 2000000, "producer/consumer: 1 thread mallocs 16..512 B in batches of 64, the other frees them (xmalloc shape)"),
    ("churn", 6000000, "per-thread malloc/free over 256 private slots of 16..1024 B (glibc bench-malloc-thread shape)"),
    ("mixed", 3000000, "20000 long-lived 16 B..4 KiB objects per thread plus short-lived 16..256 B churn, 1 in 16 ops replaces a long-lived one"),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def build(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "bench_threads")
    src = os.path.join(ROOT, "bench", "bench_threads.c")
    subprocess.check_call(["gcc", "-O2", "-g", "-pthread", "-Wall", "-Wextra",
                           "-I", os.path.join(ROOT, "include"), "-o", exe, src, "-ldl"])
    return exe


def configs(lib):
    cs = [("glibc", {}, "glibc 2.36 malloc")]
    for name, so, pkg in PEERS:
        path = os.path.join(LIBDIR, so)
        if os.path.exists(path):
            cs.append((name, {"LD_PRELOAD": path}, "%s (%s, Debian)" % (name, pkg)))
        else:
            log("skip %s: %s missing (apt-get install %s)" % (name, path, pkg))
    if lib and os.path.exists(lib):
        cs.append(("hwtag", {"LD_PRELOAD": lib}, "libhwtag native-release, stacks on (default)"))
        cs.append(("hwtag-nostack", {"LD_PRELOAD": lib, "HWTAG_STACKTRACE": "off"},
                   "libhwtag native-release, HWTAG_STACKTRACE=off"))
    else:
        log("skip libhwtag: %s missing (cmake --build --preset native-release)" % lib)
    return cs


def run_one(exe, wl, ops, threads, env_extra, timeout):
    env = dict(os.environ)
    env.update(env_extra)
    argv = [exe, "--workload", wl, "--threads", str(threads), "--ops", str(ops)]
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    m = re.search(r"ops_s=([0-9.]+)", p.stdout)
    if p.returncode != 0 or not m:
        raise RuntimeError("%s %s failed rc=%d: %s" % (wl, env_extra, p.returncode, p.stderr[-300:]))
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 round, 1/4 of the work (< 1 min)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/native-release/lib/libhwtag.so"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build/native-bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    if platform.machine() != "x86_64":
        log("note: native.py is meant for the x86_64 host; running on %s anyway" % platform.machine())
    rounds = args.rounds or (1 if args.quick else 5)
    scale = 4 if args.quick else 1
    exe = build(args.build_dir)
    cs = configs(os.path.abspath(args.lib))
    res = {}  # (wl, cfg) -> [ops/s per round]
    t0 = time.time()
    for rnd in range(rounds):
        for wl, ops, _ in WORKLOADS:
            # rotate the order every round so no configuration always runs first
            order = cs[rnd % len(cs):] + cs[:rnd % len(cs)]
            for name, env, _ in order:
                v = run_one(exe, wl, ops // scale, args.threads, env, args.timeout)
                res.setdefault((wl, name), []).append(v)
        log("round %d/%d done (%.0f s)" % (rnd + 1, rounds, time.time() - t0))
    write(args, rounds, scale, cs, res, time.time() - t0)


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


def write(args, rounds, scale, cs, res, elapsed):
    names = [c[0] for c in cs]
    lines = ["# Native allocator-core benchmark (issue 10)", "",
             "`bench/native.py%s`: x86_64 host, %d round(s), %d threads, every configuration of a"
             " round run back to back in rotated order; %.0f s in all. libhwtag is the"
             " `native-release` preset (Release + LTO, HWTAG_MTE=OFF, no sanitizers)." % (
                 " --quick" if args.quick else "", rounds, args.threads, elapsed), "",
             "Cells: **time ratio to glibc** (median of the per-round ratios glibc ops/s / config"
             " ops/s; below 1 is faster than glibc) and, under it, the median ops/s in millions"
             " [min-max]. Machine: %s, shared with other jobs, so single figures move by"
             " 10-20%%; the ratios of one round are taken back to back." % cpu_model(), "",
             "| workload | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    ratios = {n: [] for n in names}
    for wl, _, _ in WORKLOADS:
        base = res[(wl, "glibc")]
        row = ["**%s**" % wl]
        for n in names:
            vals = res[(wl, n)]
            per = [b / v for b, v in zip(base, vals)]
            r = median(per)
            ratios[n].append(r)
            row.append("**%.2fx** %.1f M/s [%.1f-%.1f]" % (r, median(vals) / 1e6, min(vals) / 1e6, max(vals) / 1e6))
        lines.append("| " + " | ".join(row) + " |")
    lines.append("| **geometric mean** | " + " | ".join("**%.2fx**" % geomean(ratios[n]) for n in names) + " |")
    lines += ["", "Worst workload per configuration: " + ", ".join(
        "%s %.2fx (%s)" % (n, max(ratios[n]), WORKLOADS[ratios[n].index(max(ratios[n]))][0]) for n in names) + ".",
        "", "Issue 10's goals for libhwtag: geometric mean <= 1.00x with stacks off, <= 1.15x with"
        " stacks on, no workload above 1.5x.", "", "## Workloads", "",
        "`bench/bench_threads.c`, 2 threads, one op = one malloc + one free, every object touched"
        " at both ends:", ""]
    for wl, ops, desc in WORKLOADS:
        lines.append("- `%s` (%d ops per thread): %s" % (wl, ops // scale, desc))
    lines += ["", "## Configurations", ""]
    for n, env, desc in cs:
        lines.append("- `%s`: %s%s" % (n, desc, (" — `" + " ".join("%s=%s" % (k, rel(v)) for k, v in sorted(env.items())) + "`") if env else ""))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "native-quick.md" if args.quick else "native.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    log("wrote " + path)


if __name__ == "__main__":
    main()
