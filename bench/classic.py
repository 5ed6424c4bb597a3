#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mimalloc-bench's thread programs natively, each allocator preloaded.

The five programs (larson, mstress, glibc-simple, glibc-thread, rptest) are third-party
code and not in this repository: --build compiles them from a checkout of
daanx/mimalloc-bench (gcc 12, -O2 -DNDEBUG, as its Release build) into --bin.

  bench/classic.py --build ~/mimalloc-bench            # into build/classic/bin
  bench/classic.py --rounds 3                          # the table, results/classic-run.md
  bench/classic.py --rounds 3 --checkers               # also Scudo and ASan's runtime
  bench/classic.py --ab 5 --only larson --lib-b OTHER.so --env-b HWTAG_STACKTRACE=off

Table mode: every configuration runs each program once a round, in an order rotated every
round; the figure is 1/throughput from the program's own output for larson, rptest and
glibc-thread (they run for a fixed time) and the wall time for mstress and glibc-simple.
Cells: the median over rounds of figure / glibc's figure of the same round [min-max], and
the median max RSS (/usr/bin/time %M). A/B mode: N pairs of one program under --lib-a and
--lib-b, the order swapped every pair; medians of both sides and their ratio.
Host python3 stdlib only.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import native  # bench/native.py: the peers and the detectors, shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME = "/usr/bin/time"

# name -> (argv after the binary, regex of the throughput figure or None: wall time)
PROGRAMS = {
    "larson": (["5", "8", "1000", "5000", "100", "4141", "2"],
               r"Throughput\s*=\s*([0-9.]+)\s+operations per second"),
    "mstress": (["2", "50", "25"], None),
    "glibc-simple": ([], None),
    "glibc-thread": (["2"], r"^([0-9]+) iterations"),
    "rptest": (["2", "0", "1", "2", "500", "1000", "100", "8", "16000"],
               r"([0-9]+) memory ops/CPU second"),
}
# name -> (compiler and flags, sources under the checkout's bench/, extra flags)
BUILD = {
    "larson": (["g++", "-std=c++17", "-DCPP=1"], ["larson/larson.cpp"], []),
    "mstress": (["gcc"], ["mstress/mstress.c"], []),
    "glibc-simple": (["gcc"], ["glibc-bench/bench-malloc-simple.c"], []),
    "glibc-thread": (["gcc"], ["glibc-bench/bench-malloc-thread.c"], ["-lm"]),
    "rptest": (["gcc", "-I{src}/rptest"],
               ["rptest/rptest.c", "rptest/thread.c", "rptest/timer.c"], ["-lm"]),
}
# the allocators and the detectors native.py runs, as (name, preload, environment)
PEERS = [(name, os.path.join(native.LIBDIR, so), {}) for name, so, _ in native.PEERS]
CHECKERS = [(name, path, env) for name, path, _, env, _ in native.CHECKERS]
log = native.log


def build(src, out):
    """Compiles the programs from the mimalloc-bench checkout src into out."""
    bench = os.path.join(src, "bench")
    os.makedirs(out, exist_ok=True)
    for name, (cc, srcs, extra) in BUILD.items():
        cmd = [c.format(src=bench) for c in cc] + ["-O2", "-DNDEBUG", "-pthread", "-w"]
        cmd += [os.path.join(bench, s) for s in srcs] + ["-o", os.path.join(out, name)] + extra
        log(" ".join(cmd))
        subprocess.run(cmd, check=True)


def run_one(exe, prog, preload, env_extra, cwd, timeout):
    """One run: a dict with ok, figure, throughput, elapsed, cpu, rss_mb, why."""
    args, rx = PROGRAMS[prog]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "HWTAG_"))}
    # only the program is preloaded: time -> env VAR=.. -> program
    assigns = ["%s=%s" % kv for kv in env_extra.items()]
    if preload:
        assigns.insert(0, "LD_PRELOAD=" + preload)
    fd, tfile = tempfile.mkstemp(prefix="time.", dir=cwd)
    os.close(fd)
    cmd = [TIME, "-o", tfile, "-f", "%e %U %S %M", "/usr/bin/env", *assigns, exe, *args]
    res = {"ok": False, "why": ""}
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                           errors="replace", timeout=timeout, start_new_session=True)
        times = open(tfile).read().split("\n")
    except subprocess.TimeoutExpired:
        res["why"] = "timeout after %.0f s" % timeout
        return res
    finally:
        os.unlink(tfile)
    # the last line holds the numbers; earlier ones may say how the program ended
    nums = [ln.split() for ln in times if re.fullmatch(r"[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+", ln)]
    m = re.search(rx, p.stdout, re.M) if rx else None
    if p.returncode != 0 or not nums or (rx and (not m or float(m.group(1)) <= 0)):
        res["why"] = "rc=%d %s" % (p.returncode, " | ".join(
            (p.stderr or p.stdout).strip().splitlines()[-2:]))
        return res
    e, u, s, kb = nums[-1]
    res.update(ok=True, elapsed=float(e), cpu=float(u) + float(s), rss_mb=int(kb) / 1024)
    res["throughput"] = float(m.group(1)) if m else None
    res["figure"] = 1 / res["throughput"] if m else res["elapsed"]
    return res


def span(vals, fmt="%.2f"):
    return (fmt + "x [" + fmt + "-" + fmt + "]") % (statistics.median(vals), min(vals),
                                                   max(vals)) if vals else "-"


def table(a, cfgs, progs, workdir):
    names = [c[0] for c in cfgs]
    results = {(p, n): [] for p in progs for n in names}
    for r in range(a.rounds):
        order = cfgs[r % len(cfgs):] + cfgs[:r % len(cfgs)]
        for prog in progs:
            for name, lib, env in order:
                x = run_one(os.path.join(a.bin, prog), prog, lib, env, workdir, a.timeout)
                results[(prog, name)].append(x)
                log("[round %d/%d] %-12s %-16s %s" % (
                    r + 1, a.rounds, prog, name,
                    "fig=%.6g wall=%.2fs rss=%.1fMB" % (x["figure"], x["elapsed"], x["rss_mb"])
                    if x["ok"] else "FAILED " + x["why"]))
    lines = ["# mimalloc-bench's thread programs, natively", "",
             "`bench/classic.py --rounds %d%s`, libhwtag `%s`. Time as a ratio to glibc's in "
             "the same round (below 1 is faster), median [min-max] of the rounds, then the "
             "median max RSS." % (a.rounds, " --checkers" if a.checkers else "",
                                 os.path.relpath(a.lib, ROOT)), "",
             "| program | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for prog in progs:
        row = []
        for n in names:
            pairs = [(g, x) for g, x in zip(results[(prog, "glibc")], results[(prog, n)])
                     if g["ok"] and x["ok"]]
            rss = [x["rss_mb"] for x in results[(prog, n)] if x["ok"]]
            fails = sum(not x["ok"] for x in results[(prog, n)])
            row.append("%s, %.1fM%s" % (span([x["figure"] / g["figure"] for g, x in pairs]),
                                        statistics.median(rss) if rss else 0,
                                        " (%d failed)" % fails if fails else ""))
        lines.append("| %s | %s |" % (prog, " | ".join(row)))
    lines += ["", "Configurations: " + "; ".join(
        "%s: %s" % (n, " ".join(["LD_PRELOAD=" + lib] if lib else []) +
                    "".join(" %s=%s" % kv for kv in env.items()) or "no preload")
        for n, lib, env in cfgs) + "."]
    text = "\n".join(lines) + "\n"
    with open(a.out, "w") as f:
        f.write(text)
    print(text)
    log("wrote " + a.out)


def ab(a, progs, workdir):
    prog = progs[0]
    sides = {"A": (a.lib_a, env_of(a.env_a)), "B": (a.lib_b, env_of(a.env_b))}
    thr = PROGRAMS[prog][1] is not None
    fig = {"A": [], "B": []}
    cpu = {"A": [], "B": []}
    print("%s: figure = %s" % (prog, "throughput (higher is better)" if thr
                               else "wall s (lower is better)"))
    for i in range(a.ab):
        for s in ("AB" if i % 2 == 0 else "BA"):
            lib, env = sides[s]
            x = run_one(os.path.join(a.bin, prog), prog, lib, env, workdir, a.timeout)
            if not x["ok"]:
                print("%s FAILED %s" % (s, x["why"]), flush=True)
                continue
            fig[s].append(x["throughput"] if thr else x["elapsed"])
            cpu[s].append(x["cpu"])
            print("%s %12.6g  cpu %.2f s  rss %.1f MB" % (s, fig[s][-1], x["cpu"], x["rss_mb"]),
                  flush=True)
    for label, d in (("figure", fig), ("cpu s", cpu)):
        if d["A"] and d["B"]:
            ma, mb = statistics.median(d["A"]), statistics.median(d["B"])
            print("%-7s median A %.6g [%.6g-%.6g], B %.6g [%.6g-%.6g], B/A %.3f" % (
                label, ma, min(d["A"]), max(d["A"]), mb, min(d["B"]), max(d["B"]), mb / ma))


def env_of(items):
    env = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep:
            sys.exit("bad --env value %r (want K=V)" % it)
        env[k] = v
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", metavar="MIMALLOC_BENCH", help="compile the programs from it")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "classic", "bin"))
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "native-release", "lib",
                                                  "libhwtag.so"))
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--checkers", action="store_true", help="also Scudo and ASan's runtime")
    ap.add_argument("--only", default="", help="comma-separated: " + ",".join(PROGRAMS))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "classic-run.md"))
    ap.add_argument("--ab", type=int, default=0, metavar="N", help="N A/B pairs of one program")
    ap.add_argument("--lib-a", default=None, help="A/B: side A's preload, or none (default --lib)")
    ap.add_argument("--lib-b", default=None, help="A/B: side B's preload, or none (default --lib)")
    ap.add_argument("--env-a", action="append")
    ap.add_argument("--env-b", action="append")
    ap.add_argument("--timeout", type=float, default=600, help="per run, seconds")
    a = ap.parse_args()
    if a.build:
        build(a.build, a.bin)
    progs = [p for p in a.only.split(",") if p] or list(PROGRAMS)
    bad = [p for p in progs if p not in PROGRAMS]
    if bad:
        sys.exit("unknown program(s) %s; choose from %s" % (bad, ", ".join(PROGRAMS)))
    a.lib = os.path.abspath(a.lib)
    # "none": no preload (glibc's malloc)
    a.lib_a, a.lib_b = [None if x == "none" else os.path.abspath(x or a.lib)
                        for x in (a.lib_a, a.lib_b)]
    if a.ab and len(progs) != 1:
        sys.exit("--ab takes one program (--only)")
    if a.rounds:
        cfgs = [("glibc", None, {})] + PEERS + (CHECKERS if a.checkers else [])
        cfgs += [("libhwtag", a.lib, {}), ("libhwtag-nostack", a.lib, {"HWTAG_STACKTRACE": "off"})]
    else:
        cfgs = [(s, lib, {}) for s, lib in (("A", a.lib_a), ("B", a.lib_b)) if a.ab]
    missing = [p for p in [TIME] + [os.path.join(a.bin, x) for x in progs] +
               [lib for _, lib, _ in cfgs if lib] if not os.path.exists(p)]
    if missing:
        sys.exit("missing: %s%s" % (", ".join(missing), "" if os.path.isdir(a.bin) else
                                   " (build them: bench/classic.py --build MIMALLOC_BENCH)"))
    workdir = tempfile.mkdtemp(prefix="hwtag-classic.")
    if a.rounds:
        table(a, cfgs, progs, workdir)
    if a.ab:
        ab(a, progs, workdir)
    for f in os.listdir(workdir):
        os.unlink(os.path.join(workdir, f))
    os.rmdir(workdir)


if __name__ == "__main__":
    main()
