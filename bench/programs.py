#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Real arm64 programs side by side: glibc, glibc's MTE heap and libhwtag.

Runs the workloads of tests/integration/run_program.sh (the same programs from
.programs/ and the same inputs) under qemu-aarch64 in four configurations,
alternated inside each round (the order rotates), and writes a Markdown table:
wall time relative to glibc without tags (median [min-max] of the per-round
ratios), then, once per configuration, guest instructions from the insncount
plugin split by module (libhwtag, libc, the program, the rest) and the MTE
instructions by kind. Host python3 stdlib only.

  bench/programs.py                       # 3 rounds, results/programs.md
  bench/programs.py --rounds 5 --only sqlite,lua --no-insns
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import run  # bench/run.py: the plugin's build and the qemu command line, shared

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "integration")
QEMU = run.QEMU
PLUGIN = os.path.join(ROOT, "build", "programs", "insncount.so")  # built on first use

CONFIGS = [  # name, label, environment (LIB / SHIM substituted)
    ("glibc", "glibc", {}),
    ("glibc-mte", "glibc MTE", {"GLIBC_TUNABLES": "glibc.mem.tagging=3", "LD_PRELOAD": "SHIM"}),
    ("hwtag", "libhwtag", {"LD_PRELOAD": "LIB", "HWTAG_MODE": "sync"}),
    ("hwtag-nostack", "libhwtag stacks off",
     {"LD_PRELOAD": "LIB", "HWTAG_MODE": "sync", "HWTAG_STACKTRACE": "off"}),
]


def workloads(progs, data):
    """name -> (argv, env, stdin path or None), as run_program.sh runs them."""
    d = data
    p = lambda x: os.path.join(progs, x)
    return {
        "sqlite3": ([p("usr/bin/sqlite3"), "-batch", "-bail", "@RUN@/test.db"], {},
                    os.path.join(HERE, "workload.sql")),
        "perl": ([p("usr/bin/perl"), "-I" + p("usr/lib/aarch64-linux-gnu/perl-base"),
                  os.path.join(HERE, "workload.pl"), d + "/words"],
                 {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}, None),
        "lua": ([p("usr/bin/lua5.4"), os.path.join(HERE, "workload.lua"), d + "/words"], {}, None),
        "tcl": ([p("usr/bin/tclsh8.6"), os.path.join(HERE, "workload.tcl"), d + "/words"], {},
                None),
        "jq": ([p("usr/bin/jq"), "-s", "-f", os.path.join(HERE, "workload.jq"),
                d + "/words.json"], {"LD_LIBRARY_PATH": p("usr/lib/aarch64-linux-gnu")}, None),
        "gawk": ([p("usr/bin/gawk"), "-f", os.path.join(HERE, "workload.awk"), d + "/words"], {},
                 None),
        "sed": ([p("bin/sed"), "-n", "-e", "H", "-e", r"${x;s/\n/,/g;s/\([a-z]\)\1/<\1>/g;p}",
                 d + "/words"], {}, None),
        "grep-E": ([p("bin/grep"), "-E", "-n", "-o", r"\b([a-z]{2})\1[a-z]*\b", d + "/words"],
                   {}, None),
        "grep-w": ([p("bin/grep"), "-n", "-w", "-i", "-E", "-e", "sa", "-e", "xe", "-e",
                    "motu[0-9]+", d + "/words"], {}, None),
        "python": ([p("usr/bin/python3"), "-s", os.path.join(HERE, "workload.py"), "0.25"],
                   {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0",
                    "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}, None),
        "bash": ([p("bin/bash"), "--norc", "--noprofile", os.path.join(HERE, "workload.bash"),
                  d + "/words.shell", "6"], {}, None),
    }


def make_inputs(progs, d):
    """The quick inputs of run_program.sh's make_inputs."""
    os.makedirs(d, exist_ok=True)
    words = os.path.join(d, "words")
    with open(words, "w") as f:
        subprocess.run(["awk", "-v", "lines=1500", "-v", "vocab=8000", "-f",
                        os.path.join(HERE, "words.awk")], stdout=f, check=True)
    lines = open(words).read().splitlines(True)
    with open(os.path.join(d, "words.shell"), "w") as f:
        f.writelines(lines[:400])
    with open(os.path.join(d, "words.json"), "w") as f:
        for i, ln in enumerate(lines[:400], 1):
            f.write('{"n":%d,"text":"%s"}\n' % (i, ln.rstrip("\n")))


def guest_env(work, cfg_env, lib, shim, extra):
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "TMPDIR": work, "LC_ALL": "C.UTF-8"}
    env.update(extra)
    for k, v in cfg_env.items():
        env[k] = {"LIB": lib, "SHIM": shim}.get(v, v)
    return env


def run_one(argv, env, stdin, rundir, counts=None, strace=None):
    """One guest run; returns (seconds, rc, stdout bytes)."""
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    argv = [a.replace("@RUN@", rundir) for a in argv]
    evs = []
    for k, v in env.items():
        evs += ["-E", "%s=%s" % (k, v)]
    if counts:  # one file per process (a forked child counts from its fork), summed
        run.build_insncount(PLUGIN)
        shutil.rmtree(counts, ignore_errors=True)
        os.makedirs(counts)
        cmd = QEMU + ["-plugin", "%s,out=%s/c.%%p" % (PLUGIN, counts)] + evs + argv
    elif strace:
        cmd = QEMU + ["-strace"] + evs + argv
    else:
        cmd = QEMU + evs + argv
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdin=fin, stdout=subprocess.PIPE,
                       stderr=open(strace, "wb") if strace else subprocess.PIPE,
                       env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")},
                       timeout=900)
    dt = time.monotonic() - t0
    return dt, r.returncode, r.stdout


def parse_counts(path, lib):
    """Counts of every process of the run (forked children too), summed."""
    tot, mods, mte = 0, {"libhwtag": 0, "libc": 0, "ld.so": 0, "program": 0, "other": 0}, {}
    lines = []
    for fn in sorted(os.listdir(path)):
        lines += open(os.path.join(path, fn)).readlines()
    for ln in lines:  # bench/insncount/insncount.c's lines
        f = ln.rstrip("\n").split(" ", 2)
        if f[0] == "total":
            tot += int(f[1])
        elif f[0] == "module":
            name = os.path.basename(f[2])
            if name.startswith("libhwtag"):
                mods["libhwtag"] += int(f[1])
            elif name.startswith("libc.so") or name.startswith("libc-"):
                mods["libc"] += int(f[1])
            elif name.startswith("ld-linux"):
                mods["ld.so"] += int(f[1])
            else:  # the program and its own libraries (libsqlite3, libperl, ...)
                mods["program"] += int(f[1])
        elif f[0] == "mte":
            mte[f[1]] = mte.get(f[1], 0) + int(f[2])
    return tot, mods, mte


def strace_counts(path):
    c = {}
    for ln in open(path, errors="replace"):
        parts = ln.split(" ", 2)
        if len(parts) >= 2 and "(" in parts[1]:
            name = parts[1].split("(")[0]
            if name.isidentifier():
                c[name] = c.get(name, 0) + 1
    return c


def fmt_m(n):
    return "%.1f" % (n / 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "build/aarch64/lib/libhwtag.so"))
    ap.add_argument("--programs", default=os.path.join(ROOT, ".programs"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated workloads")
    ap.add_argument("--configs", default="", help="comma-separated configurations")
    ap.add_argument("--no-insns", action="store_true")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--strace", action="store_true", help="syscall counts per configuration")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "programs.md"))
    a = ap.parse_args()

    lib = os.path.realpath(a.lib)
    progs = os.path.realpath(a.programs)
    work = tempfile.mkdtemp(prefix="hwtag-programs.")
    shim = os.path.join(work, "mte_on_shim.so")
    subprocess.run(["aarch64-linux-gnu-gcc", "-O2", "-shared", "-fPIC",
                    os.path.join(ROOT, "bench", "mte_on_shim.c"), "-o", shim], check=True)
    data = os.path.join(work, "data")
    make_inputs(progs, data)
    wl = workloads(progs, data)
    names = [n for n in wl if not a.only or n in a.only.split(",")]
    cfgs = [c for c in CONFIGS if not a.configs or c[0] in a.configs.split(",")]
    if cfgs[0][0] != "glibc":
        cfgs.insert(0, CONFIGS[0])

    times = {(n, c[0]): [] for n in names for c in cfgs}
    ratios = {(n, c[0]): [] for n in names for c in cfgs}
    bad = []
    ref_out = {}
    for rnd in range(0 if a.no_time else a.rounds):
        for n in names:
            argv, extra, stdin = wl[n]
            k = rnd % len(cfgs)
            order = cfgs[k:] + cfgs[:k]
            this = {}
            for name, _, cenv in order:
                env = guest_env(work, cenv, lib, shim, extra)
                dt, rc, out = run_one(argv, env, stdin, os.path.join(work, "run"))
                if n not in ref_out and name == "glibc":
                    ref_out[n] = out
                if rc != 0 or (name == "glibc" and out != ref_out[n]):
                    bad.append("%s %s round %d: exit %d" % (n, name, rnd, rc))
                this[name] = dt
                times[(n, name)].append(dt)
            for name in this:
                ratios[(n, name)].append(this[name] / this["glibc"])
            print("round %d %-8s %s" % (rnd, n, " ".join("%s %.2fs" % (c, this[c]) for c in this)),
                  file=sys.stderr, flush=True)

    counts = {}
    if not a.no_insns:
        for n in names:
            argv, extra, stdin = wl[n]
            for name, _, cenv in cfgs:
                env = guest_env(work, cenv, lib, shim, extra)
                cf = os.path.join(work, "counts.%s.%s" % (n, name))
                run_one(argv, env, stdin, os.path.join(work, "run"), counts=cf)
                counts[(n, name)] = parse_counts(cf, lib)
                print("insns %-8s %-14s %s" % (n, name, fmt_m(counts[(n, name)][0])),
                      file=sys.stderr, flush=True)
    sys_c = {}
    if a.strace:
        for n in names:
            argv, extra, stdin = wl[n]
            for name, _, cenv in cfgs:
                env = guest_env(work, cenv, lib, shim, extra)
                sf = os.path.join(work, "strace")
                run_one(argv, env, stdin, os.path.join(work, "run"), strace=sf)
                sys_c[(n, name)] = strace_counts(sf)

    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    L = ["# Real programs under qemu: glibc, glibc MTE, libhwtag\n",
         "`bench/programs.py --rounds %d` at %s; %s. Time relative to glibc without tags in the "
         "same round, median [min-max] of %d rounds (configurations alternated, order "
         "rotating).\n" % (a.rounds, rev, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                          a.rounds)]
    if not a.no_time:
        L.append("| program | glibc (s) | " + " | ".join(c[1] for c in cfgs[1:]) +
                 " | libhwtag / glibc MTE |")
        L.append("|---" * (len(cfgs) + 2) + "|")
        for n in names:
            row = ["%s" % n, "%.2f" % statistics.median(times[(n, "glibc")])]
            for name, _, _ in cfgs[1:]:
                r = ratios[(n, name)]
                row.append("x%.2f [%.2f-%.2f]" % (statistics.median(r), min(r), max(r)))
            if ("hwtag" in [c[0] for c in cfgs]) and ("glibc-mte" in [c[0] for c in cfgs]):
                rel = [h / g for h, g in zip(ratios[(n, "hwtag")], ratios[(n, "glibc-mte")])]
                row.append("%.2f" % statistics.median(rel))
            else:
                row.append("–")
            L.append("| " + " | ".join(row) + " |")
        L.append("")
    if counts:
        L.append("Guest instructions, millions (insncount plugin, one run per configuration, every "
                 "process of the run summed): total = "
                 "libhwtag + libc + program (with its own libraries) + ld.so; MTE instructions by kind.\n")
        L.append("| program | config | total | libhwtag | libc | program | ld.so | MTE kinds |")
        L.append("|---|---|---|---|---|---|---|---|")
        for n in names:
            for name, label, _ in cfgs:
                tot, m, mte = counts[(n, name)]
                kinds = ", ".join("%s %d" % (k, v) for k, v in sorted(mte.items(),
                                                                     key=lambda x: -x[1]) if v)
                L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    n, label, fmt_m(tot), fmt_m(m["libhwtag"]), fmt_m(m["libc"]),
                    fmt_m(m["program"]), fmt_m(m["ld.so"] + m["other"]), kinds or "–"))
        L.append("")
    if sys_c:
        L.append("System calls (qemu -strace), the most frequent:\n")
        for n in names:
            for name, label, _ in cfgs:
                c = sys_c[(n, name)]
                top = sorted(c.items(), key=lambda x: -x[1])[:6]
                L.append("- %s, %s: %s" % (n, label, ", ".join("%s %d" % t for t in top)))
        L.append("")
    if bad:
        L.append("Failed runs: " + "; ".join(bad) + "\n")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    open(a.out, "w").write("\n".join(L))
    print("\n".join(L))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
