#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs the libhwtag benchmark suite and writes results/ (Markdown + PNG).

Builds the bench programs (plain, ASan and HWASan variants) and two preload shims, runs every
workload under every allocator configuration, alternating configurations within a round and
repeating rounds, then writes results/results.md, results/summary.json and PNG plots made by
bench/plot.gp. On an x86_64 host every aarch64 program runs under qemu-aarch64; on an aarch64
host (MTE hardware) the same script runs them directly. Host python3 stdlib only.

    bench/run.py --quick            # a few minutes
    bench/run.py --full             # < ~30 minutes on 2 cores
    bench/run.py --quick --lib build/aarch64/lib/libhwtag.so
"""

import argparse
import datetime
import glob
import json
import os
import platform
import random
import re
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "bench")
NATIVE = platform.machine() in ("aarch64", "arm64")
QEMU = ["qemu-aarch64", "-cpu", "max,sve=off", "-L", "/"]
# Sanitizer runtimes read /proc/self/environ, which qemu-user does not emulate: they see the
# qemu process's own environment, so their options must also be in the host environment.
HOST_ENV_TOO = ("ASAN_OPTIONS", "HWASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS")

PY_MODULES = ("json re collections argparse subprocess email.parser http.client decimal "
              "datetime logging unittest xml.etree.ElementTree asyncio sqlite3 csv tempfile "
              "pathlib typing dataclasses hashlib zlib ssl urllib.request").split()
PY_QUICK = 10  # quick mode imports the first PY_QUICK modules only

# Kernel numbers this suite mirrors (KHWASAN cover letter v4, 2018, Odroid C2).
KERNEL_REF = [
    ("boot time", "1.7 s", "5.0 s", "5.0 s"),
    ("slab memory after boot", "40 kB", "~118 kB (1/8 shadow)", "~50 kB (1/16 shadow)"),
    ("iperf over loopback", "8.33 Gbit/s", "3.17 Gbit/s", "2.85 Gbit/s"),
]


def log(*a):
    print("[bench]", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Configurations


class Config:
    def __init__(self, name, desc, variant="plain", env=None, preload=(), needs=(),
                 expect_tags=None, ours_only=False):
        self.name, self.desc, self.variant = name, desc, variant
        self.env = dict(env or {})
        self.preload = list(preload)     # symbolic: "scudo", "mte_on", "mte_hide", "hwtag"
        self.needs = set(needs)          # resources that must exist
        self.expect_tags = expect_tags   # True / False / None (not checked)
        self.ours_only = ours_only       # only workloads we build (sanitizer builds)
        self.skip = None                 # reason, once known


def make_configs():
    hw = {"HWTAG_MODE": "sync"}
    return [
        Config("clean", "glibc malloc, no tagging"),
        Config("floor", "glibc malloc, no tags, but sync tag checks on for the process "
               "(mte_on_shim): the checked-access cost any MTE allocator pays",
               preload=["mte_on"], expect_tags=False),
        Config("glibc-mte-sync", "glibc malloc, GLIBC_TUNABLES=glibc.mem.tagging=3 (sync)",
               env={"GLIBC_TUNABLES": "glibc.mem.tagging=3"}, expect_tags=True),
        Config("glibc-mte-async", "glibc malloc, GLIBC_TUNABLES=glibc.mem.tagging=1 (async)",
               env={"GLIBC_TUNABLES": "glibc.mem.tagging=1"}, expect_tags=True),
        Config("asan", "workload built with gcc -fsanitize=address", variant="asan",
               env={"ASAN_OPTIONS": "detect_leaks=0"}, needs={"asan"}, ours_only=True),
        Config("hwasan", "workload built with clang -fsanitize=hwaddress", variant="hwasan",
               needs={"hwasan"}, ours_only=True),
        Config("scudo", "Scudo standalone preloaded, HWCAP2_MTE hidden (untagged path)",
               preload=["mte_hide", "scudo"], needs={"scudo"}, expect_tags=False),
        Config("scudo-mte-sync", "Scudo standalone preloaded after mte_on_shim (sync checks)",
               preload=["mte_on", "scudo"], needs={"scudo"}, expect_tags=True),
        Config("hwtag-off", "libhwtag, HWTAG_MODE=off", preload=["hwtag"],
               env={"HWTAG_MODE": "off"}, needs={"hwtag"}, expect_tags=False),
        Config("hwtag-sync", "libhwtag, HWTAG_MODE=sync", preload=["hwtag"], env=hw,
               needs={"hwtag"}, expect_tags=True),
        Config("hwtag-async", "libhwtag, HWTAG_MODE=async", preload=["hwtag"],
               env={"HWTAG_MODE": "async"}, needs={"hwtag"}, expect_tags=True),
        Config("hwtag-sample10", "libhwtag sync, HWTAG_SAMPLE=10 (order 3)", preload=["hwtag"],
               env=dict(hw, HWTAG_SAMPLE="10", HWTAG_SAMPLE_ORDER="3"), needs={"hwtag"},
               expect_tags=True),
        Config("hwtag-nostack", "libhwtag sync, HWTAG_STACKTRACE=off", preload=["hwtag"],
               env=dict(hw, HWTAG_STACKTRACE="off"), needs={"hwtag"}, expect_tags=True),
    ]


SWEEP_N = [1, 2, 5, 10, 20, 50]


def sweep_configs():
    out = [Config("hwtag-off", "libhwtag, HWTAG_MODE=off", preload=["hwtag"],
                  env={"HWTAG_MODE": "off"}, needs={"hwtag"})]
    for n in SWEEP_N:
        out.append(Config("sample%d" % n, "HWTAG_SAMPLE=%d, order 3" % n, preload=["hwtag"],
                          env={"HWTAG_MODE": "sync", "HWTAG_SAMPLE": str(n),
                               "HWTAG_SAMPLE_ORDER": "3"}, needs={"hwtag"}))
    return out


# ---------------------------------------------------------------------------------------------
# Building


class Build:
    def __init__(self, args):
        self.dir = args.build_dir
        self.have = {}
        self.notes = []
        self.cc = "gcc" if NATIVE else "aarch64-linux-gnu-gcc"
        self.clang = ["clang"] + ([] if NATIVE else ["--target=aarch64-linux-gnu",
                                                     "-fuse-ld=lld"])

    def _cc(self, cmd, out):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return r.stderr.strip().splitlines()[-1:] or ["failed"]
        return None

    def build(self):
        os.makedirs(self.dir, exist_ok=True)
        common = ["-O2", "-g", "-pthread", "-I" + os.path.join(REPO, "include"),
                  "-Wall", "-Wextra"]
        progs = ["boot", "micro", "loopback", "probe"]
        variants = {
            "plain": [self.cc] + common,
            "asan": [self.cc, "-fsanitize=address", "-fno-omit-frame-pointer"] + common,
            "hwasan": self.clang + ["-fsanitize=hwaddress", "-fno-omit-frame-pointer"] + common,
        }
        for v, cmd in variants.items():
            ok = True
            for p in progs:
                out = self.exe(p, v)
                err = self._cc(cmd + [os.path.join(BENCH, "bench_%s.c" % p), "-o", out, "-ldl"],
                               out)
                if err:
                    ok = False
                    self.notes.append("%s build of bench_%s failed: %s" % (v, p, err[0]))
                    break
            if ok and v != "plain":
                # Does the runtime start under this emulator at all?
                r = run_prog([self.exe("probe", v)], {"ASAN_OPTIONS": "detect_leaks=0"},
                             timeout=120)
                if r["rc"] != 0:
                    ok = False
                    self.notes.append("%s probe does not run: %s" % (v, r["err"][-200:]))
            self.have[v] = ok
        self.have["asan"] = self.have.get("asan", False)
        for shim in ("mte_on_shim", "mte_hide_shim"):
            out = os.path.join(self.dir, shim + ".so")
            err = self._cc([self.cc, "-O2", "-shared", "-fPIC", "-Wall", "-Wextra",
                            os.path.join(BENCH, shim + ".c"), "-o", out], out)
            if err:
                self.notes.append("%s failed: %s" % (shim, err[0]))
        return self.have["plain"]

    def exe(self, prog, variant="plain"):
        suffix = "" if variant == "plain" else "." + variant
        return os.path.join(self.dir, "bench_" + prog + suffix)


def find_scudo(arch="aarch64"):
    """Scudo standalone's runtime for arch (aarch64 here; native.py's x86_64), or None."""
    name = "libclang_rt.scudo_standalone-%s.so" % arch
    here = platform.machine()
    cands = []
    try:
        r = subprocess.run(["clang"] + ([] if arch == here else ["--target=%s-linux-gnu" % arch]) +
                           ["-print-file-name=" + name], capture_output=True, text=True)
        cands.append(r.stdout.strip())
    except OSError:
        pass
    cands += sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*/lib/linux/" + name), reverse=True)
    for c in cands:
        if c and os.path.isfile(c):
            return c
    return None


def build_insncount(out):
    """Our qemu plugin (bench/insncount/insncount.c) at out, compiled with the host gcc when
    missing or older than its source; returns out."""
    src = os.path.join(BENCH, "insncount", "insncount.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.check_call(["gcc", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC",
                               "-fvisibility=hidden", "-o", out, src, "-lpthread"])
    return out


# ---------------------------------------------------------------------------------------------
# Running one program


def command(argv, env):
    """argv/env for the guest -> (host argv, host env)."""
    henv = dict(os.environ)
    henv.pop("LD_PRELOAD", None)
    if NATIVE:
        henv.update(env)
        return list(argv), henv
    cmd = list(QEMU)
    for k, v in env.items():
        cmd += ["-E", "%s=%s" % (k, v)]
        if k in HOST_ENV_TOO:
            henv[k] = v
    return cmd + list(argv), henv


def run_prog(argv, env, timeout, measure=False):
    """Runs one program; with measure=True answers its BENCH_MEASURE handshakes by reading
    /proc/<pid>/smaps. Returns rc, out, err, wall (excluding measurement pauses), mem{label:..}."""
    env = dict(env)
    if measure:
        env["BENCH_MEASURE"] = "1"
    cmd, henv = command(argv, env)
    t0 = time.perf_counter()
    try:
        p = subprocess.Popen(cmd, env=henv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return {"rc": -1, "out": "", "err": str(e), "wall": 0, "mem": {}}
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, "out")
    sel.register(p.stderr, selectors.EVENT_READ, "err")
    bufs = {"out": b"", "err": b""}
    paused, mem, pending, timed_out = 0.0, {}, 0, False
    deadline = t0 + timeout
    open_streams = 2
    while open_streams:
        left = deadline - time.perf_counter()
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(left, 1.0)):
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            bufs[key.data] += data
            if key.data == "out" and measure:
                while True:
                    text = bufs["out"].decode("utf-8", "replace")
                    i = text.find("BENCH_MAPS_END\n", pending)
                    if i < 0:
                        break
                    tp = time.perf_counter()
                    block_start = text.rfind("BENCH_MEASURE ", 0, i)
                    label = text[block_start:].split()[1]
                    mem[label] = measure_memory(p.pid, text[block_start:i])
                    pending = i + len("BENCH_MAPS_END\n")
                    try:
                        p.stdin.write(b"\n")
                        p.stdin.flush()
                    except OSError:
                        pass
                    paused += time.perf_counter() - tp
    if timed_out:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    rc = p.wait()
    wall = time.perf_counter() - t0 - paused
    out = bufs["out"].decode("utf-8", "replace")
    err = bufs["err"].decode("utf-8", "replace")
    if timed_out:
        rc, err = -9, err + "\n[bench] timed out after %ds" % timeout
    return {"rc": rc, "out": out, "err": err, "wall": wall, "mem": mem}


def parse_kv(out, tag):
    """Last 'TAG k=v ...' line of out as a dict of numbers."""
    res = None
    for line in out.splitlines():
        if line.startswith(tag + " "):
            res = {}
            for kv in line.split()[1:]:
                k, _, v = kv.partition("=")
                try:
                    res[k] = float(v)
                except ValueError:
                    res[k] = v
    return res


# ---------------------------------------------------------------------------------------------
# Memory: the guest's own map list (under qemu the host cannot tell guest mappings from qemu's
# own), resident sizes from the host's /proc/<pid>/smaps of the same process.


def parse_maps(text):
    out = []
    for line in text.splitlines():
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) (\S+) (\S+) (\d+)\s*(.*)$", line)
        if m:
            out.append({"lo": int(m.group(1), 16), "hi": int(m.group(2), 16),
                        "perms": m.group(3), "off": int(m.group(4), 16),
                        "inode": int(m.group(6)), "path": m.group(7).strip()})
    return out


def parse_smaps(pid):
    ents, cur = [], None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) (\S+) (\S+) (\d+)\s*(.*)$", line)
            if m:
                cur = {"lo": int(m.group(1), 16), "hi": int(m.group(2), 16),
                       "off": int(m.group(4), 16), "path": m.group(7).strip(), "rss": 0}
                ents.append(cur)
            elif line.startswith("Rss:") and cur is not None:
                cur["rss"] = int(line.split()[1]) * 1024
    return ents


def present_bytes(pid, lo, hi):
    """Exact resident bytes of [lo, hi) from /proc/pid/pagemap (bits 63 present, 62 swapped)."""
    page = os.sysconf("SC_PAGE_SIZE")
    n = 0
    with open("/proc/%d/pagemap" % pid, "rb") as f:
        a = lo - lo % page
        while a < hi:
            cnt = min((hi - a) // page + 1, 1 << 16)
            f.seek(a // page * 8)
            data = f.read(cnt * 8)
            for i in range(0, len(data), 8):
                if int.from_bytes(data[i:i + 8], "little") >> 62:
                    n += 1
            a += cnt * page
    return n * page


def measure_memory(pid, block):
    lines = block.splitlines()
    shadow = None
    maps_text = []
    inmaps = False
    for line in lines:
        if line.startswith("BENCH_SHADOW "):
            _, lo, hi = line.split()
            shadow = (int(lo, 16), int(hi, 16))
        elif line.startswith("BENCH_MAPS_BEGIN"):
            inmaps = True
        elif inmaps:
            maps_text.append(line)
    guest = parse_maps("\n".join(maps_text))
    host = parse_smaps(pid)
    base = 0
    for g in guest:  # guest_base from the first file mapping seen on both sides
        if g["path"].startswith("/"):
            for h in host:
                if h["path"] == g["path"] and h["off"] == g["off"]:
                    base = h["lo"] - g["lo"]
                    break
            break
    heap = shad = 0
    for g in guest:
        if g["path"].startswith("/") or g["path"] in ("[stack]", "[vvar]", "[vdso]", "[vsyscall]"):
            continue
        if "w" not in g["perms"]:
            continue
        pieces = [(g["lo"], g["hi"], False)]
        if shadow:
            s_lo, s_hi = shadow
            pieces = []
            cuts = sorted({g["lo"], g["hi"], min(max(s_lo, g["lo"]), g["hi"]),
                           min(max(s_hi, g["lo"]), g["hi"])})
            for a, b in zip(cuts, cuts[1:]):
                if b > a:
                    pieces.append((a, b, s_lo <= a and b <= s_hi))
        for lo, hi, is_shadow in pieces:
            rss = 0
            for h in host:
                a, b = max(h["lo"], lo + base), min(h["hi"], hi + base)
                if b <= a or h["rss"] == 0:
                    continue
                if a == h["lo"] and b == h["hi"]:
                    rss += h["rss"]
                elif b - a <= (4 << 30):
                    rss += present_bytes(pid, a, b)
                else:
                    rss += h["rss"] * (b - a) // (h["hi"] - h["lo"])
            if is_shadow:
                shad += rss
            else:
                heap += rss
    return {"anon": heap, "shadow": shad}


# ---------------------------------------------------------------------------------------------
# Workloads


class Suite:
    def __init__(self, args, build, scudo, lib, programs):
        self.args, self.build, self.scudo, self.lib, self.programs = (args, build, scudo, lib,
                                                                      programs)
        self.quick = not args.full
        self.timeout = args.timeout

    def env_for(self, cfg):
        env = dict(cfg.env)
        pre = []
        for p in cfg.preload:
            pre.append({"scudo": self.scudo, "hwtag": self.lib,
                        "mte_on": os.path.join(self.build.dir, "mte_on_shim.so"),
                        "mte_hide": os.path.join(self.build.dir, "mte_hide_shim.so")}[p])
        if pre:
            env["LD_PRELOAD"] = ":".join(pre)
        return env

    def ours(self, cfg, prog, args, measure=False, extra_env=None):
        env = self.env_for(cfg)
        env.update(extra_env or {})
        return run_prog([self.build.exe(prog, cfg.variant)] + args, env, self.timeout, measure)

    # Each workload returns {metric: value} or raises RuntimeError.
    def w_boot(self, cfg):
        n = "100000" if self.quick else "400000"
        r = self.ours(cfg, "boot", ["--allocs", n], measure=True)
        res = check(r, "RESULT")
        m = r["mem"].get("end")
        if not m:
            raise RuntimeError("no memory measurement")
        out = {"wall_s": r["wall"], "replay_s": res["secs"],
               "anon_kib": m["anon"] / 1024, "shadow_kib": m["shadow"] / 1024,
               "live_kib": res["live_bytes"] / 1024}
        if "start" in r["mem"]:
            out["growth_kib"] = (m["anon"] - r["mem"]["start"]["anon"]) / 1024
        return out

    def w_empty(self, cfg):
        r = self.ours(cfg, "boot", ["--allocs", "0"], measure=True)
        check(r, "RESULT")
        return {"anon_kib": r["mem"]["end"]["anon"] / 1024}

    def w_python(self, cfg):
        py = os.path.join(self.programs, "usr", "bin", "python3")
        mods = PY_MODULES[:PY_QUICK] if self.quick else PY_MODULES
        script = ("import sys\nimport " + ", ".join(mods) + "\n"
                  "sys.stdout.write('BENCH_MEASURE end\\nBENCH_MAPS_BEGIN\\n' + "
                  "open('/proc/self/maps').read() + 'BENCH_MAPS_END\\n')\n"
                  "sys.stdout.flush(); sys.stdin.readline()\nprint('RESULT ok=1')\n")
        env = self.env_for(cfg)
        env["PYTHONMALLOC"] = "malloc"
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        r = run_prog([py, "-c", script], env, self.timeout, measure=True)
        check(r, "RESULT")
        m = r["mem"]["end"]
        return {"wall_s": r["wall"], "anon_kib": m["anon"] / 1024}

    def micro(self, cfg, lo, hi, threads, ops):
        r = self.ours(cfg, "micro", ["--min", str(lo), "--max", str(hi), "--threads",
                                     str(threads), "--ops", str(ops)])
        res = check(r, "RESULT")
        return {"mops_s": res["ops_per_s"] / 1e6, "ns_op": res["ns_per_op"]}

    def w_micro_small_1t(self, cfg):
        return self.micro(cfg, 16, 4096, 1, 100000 if self.quick else 400000)

    def w_micro_small_2t(self, cfg):
        return self.micro(cfg, 16, 4096, 2, 100000 if self.quick else 400000)

    def w_micro_large_1t(self, cfg):
        return self.micro(cfg, 32768, 1 << 20, 1, 1000 if self.quick else 4000)

    def w_micro_large_2t(self, cfg):
        return self.micro(cfg, 32768, 1 << 20, 2, 1000 if self.quick else 4000)

    def w_loopback(self, cfg, extra_env=None):
        msgs = "10000" if self.quick else "40000"
        r = self.ours(cfg, "loopback", ["--msgs", msgs, "--max-secs", str(self.timeout - 5)],
                      extra_env=extra_env)
        res = check(r, "RESULT")
        out = {"mbit_s": res["mbit_per_s"]}
        st = parse_kv(r["out"], "HWTAG_STATS")
        if st:
            allocs = st["small_allocs"] + st["large_allocs"]
            out["unchecked_pct"] = 100.0 * st["large_skipped"] / allocs if allocs else 0
            out["large_skipped_pct"] = (100.0 * st["large_skipped"] / st["large_allocs"]
                                        if st["large_allocs"] else 0)
        return out

    def w_iperf3(self, cfg):
        iperf = os.path.join(self.programs, "usr", "bin", "iperf3")
        secs = 1 if self.quick else 3
        env = self.env_for(cfg)
        last = "no attempt"
        for _ in range(3):
            port = random.randint(20000, 60999)
            scmd, senv = command([iperf, "-s", "-1", "-B", "127.0.0.1", "-p", str(port),
                                  "--forceflush"], env)
            srv = subprocess.Popen(scmd, env=senv, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True)
            try:
                ready = wait_for_line(srv, "listening", 60)
                if not ready:
                    last = "server did not start"
                    continue
                r = run_prog([iperf, "-c", "127.0.0.1", "-p", str(port), "-t", str(secs),
                              "-J", "--connect-timeout", "10000"], env, secs + 60)
                if r["rc"] != 0:
                    last = "client rc=%d %s" % (r["rc"], r["out"][-300:] + r["err"][-300:])
                    continue
                j = json.loads(r["out"])
                return {"gbit_s": j["end"]["sum_received"]["bits_per_second"] / 1e9}
            finally:
                try:
                    os.killpg(srv.pid, signal.SIGKILL)
                except OSError:
                    pass
                srv.wait()
        raise RuntimeError(last)

    def micro_size(self, size):
        def f(cfg):
            ops = 50000 if size <= 4096 else 1000
            return self.micro(cfg, size, size, 1, ops)
        return f


def wait_for_line(proc, needle, timeout):
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf, end = b"", time.time() + timeout
    while time.time() < end:
        if sel.select(timeout=0.5):
            d = os.read(proc.stdout.fileno(), 4096)
            if not d:
                return False
            buf += d
            if needle.encode() in buf:
                return True
    return False


def check(r, tag):
    if r["rc"] != 0:
        tail = (r["err"].strip().splitlines() or ["rc=%d" % r["rc"]])[-1]
        raise RuntimeError("rc=%d: %s" % (r["rc"], tail[:200]))
    res = parse_kv(r["out"], tag)
    if res is None:
        raise RuntimeError("no %s line" % tag)
    return res


# ---------------------------------------------------------------------------------------------
# Statistics and output


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, nd=3):
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if abs(x) >= 1000:
        return "%.0f" % x
    if abs(x) >= 100:
        return "%.1f" % x
    return ("%." + str(nd) + "g") % x


class Results:
    def __init__(self):
        self.runs = []  # {workload, config, round, metrics | error}

    def add(self, **kw):
        self.runs.append(kw)

    def values(self, wl, cfg, metric):
        return [r["metrics"][metric] for r in self.runs
                if r["workload"] == wl and r["config"] == cfg and "metrics" in r
                and metric in r["metrics"]]

    def per_round(self, wl, cfg, metric):
        return {r["round"]: r["metrics"][metric] for r in self.runs
                if r["workload"] == wl and r["config"] == cfg and "metrics" in r
                and metric in r["metrics"]}

    def ratios(self, wl, a, b, metric, wl_b=None, fn=None):
        """Per-round ratio a/b (same round), or fn(round values) when given."""
        ra, rb = self.per_round(wl, a, metric), self.per_round(wl_b or wl, b, metric)
        out = []
        for k in ra:
            if k in rb and rb[k]:
                out.append(ra[k] / rb[k])
        return out

    def errors(self, wl, cfg):
        return [r["error"] for r in self.runs
                if r["workload"] == wl and r["config"] == cfg and "error" in r]


WORKLOADS = [
    # name, method, primary metric, higher is better, unit, title
    ("boot", "w_boot", "wall_s", False, "s", "boot: start-up allocation trace replay (wall)"),
    ("python", "w_python", "wall_s", False, "s", "boot: python3 start-up importing stdlib"),
    ("micro-small-1t", "w_micro_small_1t", "mops_s", True, "Mops/s",
     "micro: malloc/free 16 B..4 KiB, 1 thread"),
    ("micro-small-2t", "w_micro_small_2t", "mops_s", True, "Mops/s",
     "micro: malloc/free 16 B..4 KiB, 2 threads"),
    ("micro-large-1t", "w_micro_large_1t", "mops_s", True, "Mops/s",
     "micro: malloc/free 32 KiB..1 MiB, 1 thread"),
    ("micro-large-2t", "w_micro_large_2t", "mops_s", True, "Mops/s",
     "micro: malloc/free 32 KiB..1 MiB, 2 threads"),
    ("loopback", "w_loopback", "mbit_s", True, "Mbit/s",
     "loopback: own TCP client/server, buffer per message"),
    ("iperf3", "w_iperf3", "gbit_s", True, "Gbit/s", "iperf3 server+client over 127.0.0.1"),
]
QUICK_SKIP = {"micro-small-2t", "micro-large-2t"}
# Configurations no target depends on: full mode only (unless named with --configs).
QUICK_SKIP_CONFIGS = {"glibc-mte-async", "hwtag-async", "hwtag-nostack"}
SIZE_ROUNDS = 3  # the by-size series runs in the first rounds only
MICRO_SIZES = [16, 64, 256, 1024, 4096, 32768, 131072, 1048576]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true",
                   help="small workloads, 3 rounds, the configurations targets need (default)")
    g.add_argument("--full", action="store_true",
                   help="larger workloads, 5 rounds, all configurations, 2 threads, by-size")
    ap.add_argument("--lib", default=os.path.join(REPO, "build", "aarch64", "lib", "libhwtag.so"))
    ap.add_argument("--out", default=os.path.join(REPO, "results"))
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build", "bench"))
    ap.add_argument("--programs", default=os.path.join(REPO, ".programs"),
                    help="DESTDIR of scripts/fetch-arm64-programs.sh (python3, iperf3)")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--workloads", help="comma-separated subset (boot,python,micro-small-1t,"
                    "...,loopback,iperf3,sweep,sizes)")
    ap.add_argument("--configs", help="comma-separated subset of configuration names")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per program run")
    ap.add_argument("--no-fetch", action="store_true",
                    help="do not run scripts/fetch-arm64-programs.sh when programs are missing")
    args = ap.parse_args()
    rounds = args.rounds or (5 if args.full else 3)
    mode = "full" if args.full else "quick"
    t_start = time.time()

    if not NATIVE and not shutil.which("qemu-aarch64"):
        sys.exit("qemu-aarch64 not found (scripts/setup.sh installs qemu-user)")

    build = Build(args)
    log("building bench programs in", build.dir)
    if not build.build():
        sys.exit("cannot build the plain bench programs:\n" + "\n".join(build.notes))
    notes = list(build.notes)
    scudo = find_scudo()
    lib = os.path.abspath(args.lib) if os.path.isfile(args.lib) else None
    if not lib:
        notes.append("libhwtag not found at %s: the hwtag-* configurations and the sampling "
                     "sweep are skipped (build it with `cmake --preset aarch64 && cmake --build "
                     "--preset aarch64`, or pass --lib PATH)" % args.lib)
    if not scudo:
        notes.append("libclang_rt.scudo_standalone-aarch64.so not found (libclang-rt-14-dev"
                     ":arm64): Scudo configurations skipped")
    programs = os.path.abspath(args.programs)
    fetch = os.path.join(REPO, "scripts", "fetch-arm64-programs.sh")
    if not os.path.exists(os.path.join(programs, "usr", "bin", "iperf3")) and not NATIVE \
            and not args.no_fetch and os.path.exists(fetch):
        log("fetching arm64 python3/iperf3 into", programs)
        subprocess.run(["bash", fetch, programs])
    if NATIVE and not os.path.exists(os.path.join(programs, "usr", "bin", "iperf3")):
        # On an aarch64 host the system's own python3 and iperf3 are the programs.
        programs = "/"
    have_py = os.path.exists(os.path.join(programs, "usr", "bin", "python3"))
    have_iperf = os.path.exists(os.path.join(programs, "usr", "bin", "iperf3"))
    if not have_py:
        notes.append("arm64 python3 not found under %s: python workload skipped" % programs)
    if not have_iperf:
        notes.append("arm64 iperf3 not found under %s: iperf3 workload skipped" % programs)

    resources = {"asan": build.have.get("asan"), "hwasan": build.have.get("hwasan"),
                 "scudo": bool(scudo), "hwtag": bool(lib)}
    configs = make_configs()
    if args.configs:
        want = set(args.configs.split(","))
        configs = [c for c in configs if c.name in want or c.name == "clean"]
    elif not args.full:
        configs = [c for c in configs if c.name not in QUICK_SKIP_CONFIGS]
    for c in configs:
        missing = [n for n in c.needs if not resources.get(n)]
        if missing:
            c.skip = "missing: " + ", ".join(missing)
    suite = Suite(args, build, scudo, lib, programs)

    # Verify that each configuration tags (or not) as claimed: pointer top byte.
    verify = {}
    for c in configs:
        if c.skip:
            continue
        r = suite.ours(c, "probe", [])
        small, large = parse_kv(r["out"], "PROBE small"), None
        for line in r["out"].splitlines():
            m = re.match(r"PROBE (small|large) size=\d+ tagged=(\d+)/(\d+)", line)
            if m:
                verify.setdefault(c.name, {})[m.group(1)] = "%s/%s" % (m.group(2), m.group(3))
        st = parse_kv(r["out"], "HWTAG_STATS")
        if st:
            verify.setdefault(c.name, {})["mte_active"] = int(st["mte_active"])
        if r["rc"] != 0:
            verify.setdefault(c.name, {})["error"] = (r["err"].strip().splitlines() or
                                                      ["rc=%d" % r["rc"]])[-1][:160]
        v = verify.get(c.name, {})
        tagged = v.get("small", "0/1").split("/")[0] != "0"
        v["ok"] = (c.expect_tags is None or tagged == c.expect_tags) and r["rc"] == 0
        if not v["ok"]:
            notes.append("configuration %s: expected %s but the probe saw small=%s large=%s" % (
                c.name, "tags" if c.expect_tags else "no tags", v.get("small"), v.get("large")))
        del small

    wl_sel = set(args.workloads.split(",")) if args.workloads else None
    plan = []
    for name, meth, metric, hib, unit, title in WORKLOADS:
        if wl_sel and name not in wl_sel:
            continue
        if not args.full and name in QUICK_SKIP:
            continue
        if name == "python" and not have_py or name == "iperf3" and not have_iperf:
            continue
        plan.append((name, getattr(suite, meth)))
    if args.full and (not wl_sel or "sizes" in wl_sel):
        for s in MICRO_SIZES:
            plan.append(("size-%d" % s, suite.micro_size(s)))
    do_sweep = bool(lib) and (not wl_sel or "sweep" in wl_sel)
    sweep = sweep_configs()
    boot_planned = any(n == "boot" for n, _ in plan)

    res = Results()
    raw_dir = os.path.join(args.out, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    raw_path = os.path.join(raw_dir, "runs-%s-%s.jsonl" % (mode, stamp))
    raw = open(raw_path, "w")
    active = [c for c in configs if not c.skip]

    def one(wl, fn, c, rnd):
        t0 = time.time()
        try:
            m = fn(c)
            res.add(workload=wl, config=c.name, round=rnd, metrics=m)
            rec = {"metrics": m}
        except (RuntimeError, KeyError, ValueError, OSError) as e:
            res.add(workload=wl, config=c.name, round=rnd, error=str(e))
            rec = {"error": str(e)}
            log("  %s/%s round %d failed: %s" % (wl, c.name, rnd, e))
        rec.update(workload=wl, config=c.name, round=rnd, secs=round(time.time() - t0, 2))
        raw.write(json.dumps(rec) + "\n")
        raw.flush()

    if have_py and any(n == "python" for n, _ in plan):
        suite.w_python(configs[0])  # warm the page cache; not recorded
    for rnd in range(rounds):
        log("round %d/%d (%.0fs so far)" % (rnd + 1, rounds, time.time() - t_start))
        # Alternate: rotate the order each round, and reverse it every other round.
        order = active[rnd % len(active):] + active[:rnd % len(active)]
        if rnd % 2:
            order.reverse()
        if boot_planned:
            one("empty", suite.w_empty, configs[0], rnd)
        for wl, fn in plan:
            if wl.startswith("size-") and rnd >= SIZE_ROUNDS:
                continue
            for c in order:
                if c.ours_only and wl in ("python", "iperf3"):
                    continue
                one(wl, fn, c, rnd)
        if do_sweep:
            sorder = sweep[rnd % len(sweep):] + sweep[:rnd % len(sweep)]
            for c in sorder:
                one("sweep", lambda cc: suite.w_loopback(cc), c, rnd)
    raw.close()
    elapsed = time.time() - t_start

    # Memory after boot relative to an empty program under clean glibc (same round).
    base = res.per_round("empty", "clean", "anon_kib")
    for r in res.runs:
        if r["workload"] in ("boot", "python") and "metrics" in r and r["round"] in base:
            m = r["metrics"]
            m["heap_kib"] = m["anon_kib"] - base[r["round"]]
            m["total_kib"] = m["heap_kib"] + m.get("shadow_kib", 0)

    write_outputs(args, mode, rounds, elapsed, configs, verify, notes, res, plan, do_sweep,
                  sweep, lib, scudo, raw_path)


def qemu_version():
    if NATIVE:
        return "none (native aarch64)"
    try:
        return subprocess.run(["qemu-aarch64", "--version"], capture_output=True,
                              text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        return "?"


def write_outputs(args, mode, rounds, elapsed, configs, verify, notes, res, plan, do_sweep,
                  sweep, lib, scudo, raw_path):
    out = args.out
    os.makedirs(out, exist_ok=True)
    datadir = os.path.join(out, "raw")
    names = [c.name for c in configs]
    L = []
    L.append("# libhwtag benchmarks (%s mode)\n" % mode)
    L.append("Generated by `bench/run.py --%s` on %s, %s; %d rounds, configurations "
             "alternated within each round; %.0f s in all." % (
                 mode, datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), qemu_version(),
                 rounds, elapsed, ))
    L.append("")
    if not NATIVE:
        L.append("**Everything ran under qemu-aarch64 (TCG emulation of MTE).** Absolute numbers "
                 "are emulation numbers, not hardware numbers: emulated tag checks and tag "
                 "stores cost far more than on silicon. Read the ratios against the clean run "
                 "of the same round.")
        L.append("")
    L.append("Values: median [min–max] over rounds; ratio = this configuration / clean glibc "
             "of the same round (median of the per-round ratios). For times lower is better, "
             "for throughputs higher is better.")
    L.append("")
    if notes:
        L.append("Notes:")
        for n in notes:
            L.append("- " + n)
        L.append("")

    L.append("## Configurations\n")
    L.append("| configuration | what | tagged pointers (small / large) | as expected |")
    L.append("|---|---|---|---|")
    for c in configs:
        if c.skip:
            L.append("| %s | %s | skipped (%s) | — |" % (c.name, c.desc, c.skip))
            continue
        v = verify.get(c.name, {})
        t = "%s / %s" % (v.get("small", "?"), v.get("large", "?"))
        if "mte_active" in v:
            t += ", mte_active=%d" % v["mte_active"]
        if "error" in v:
            t += " (%s)" % v["error"]
        L.append("| %s | %s | %s | %s |" % (c.name, c.desc, t,
                                            "yes" if v.get("ok") else "**no**"))
    L.append("")

    # Targets first: they are what maintainers check.
    targets = evaluate_targets(res)
    L.append("## Targets\n")
    L.append("| target | measured (median [min–max] of per-round ratios) | threshold | result |")
    L.append("|---|---|---|---|")
    for t in targets:
        L.append("| %s | %s | %s | %s |" % t)
    L.append("")

    lib_shown = os.path.relpath(lib, REPO) if lib.startswith(REPO + os.sep) else lib
    summary = {"mode": mode, "rounds": rounds, "native": NATIVE, "lib": lib_shown, "scudo": scudo,
               "notes": notes, "verify": verify, "workloads": {}, "targets": targets,
               "raw": os.path.relpath(raw_path, out)}
    meta = {w[0]: w for w in WORKLOADS}
    overview = []
    for wl, _ in plan:
        if wl.startswith("size-"):
            continue
        _, _, metric, hib, unit, title = meta[wl]
        L.append("## %s\n" % title)
        mem = wl in ("boot", "python")
        hdr = "| configuration | %s (%s) | ratio vs clean |" % (metric, unit)
        sep = "|---|---|---|"
        if mem:
            hdr += " heap KiB | shadow KiB | heap+shadow KiB | memory ratio vs clean |"
            sep += "---|---|---|---|"
        L.append(hdr)
        L.append(sep)
        wsum = {}
        for c in configs:
            vals = res.values(wl, c.name, metric)
            errs = res.errors(wl, c.name)
            if not vals:
                if errs:
                    L.append("| %s | failed: %s | — |%s" % (c.name, errs[0].replace("|", "/"),
                                                            " — | — | — | — |" if mem else ""))
                continue
            rat = res.ratios(wl, c.name, "clean", metric)
            row = "| %s | %s [%s–%s] | %s |" % (c.name, fmt(med(vals)), fmt(min(vals)),
                                                fmt(max(vals)), ratio_str(rat))
            wsum[c.name] = {"median": med(vals), "min": min(vals), "max": max(vals),
                            "ratio": med(rat) if rat else None, "n": len(vals),
                            "failed": len(errs)}
            if mem:
                hk = res.values(wl, c.name, "heap_kib")
                sk = res.values(wl, c.name, "shadow_kib") or [0]
                tk = res.values(wl, c.name, "total_kib")
                mr = res.ratios(wl, c.name, "clean", "total_kib")
                row += " %s | %s | %s | %s |" % (fmt(med(hk)), fmt(med(sk)), fmt(med(tk)),
                                                 ratio_str(mr))
                wsum[c.name].update(heap_kib=med(hk), shadow_kib=med(sk), total_kib=med(tk))
            if errs:
                row += " (%d failed)" % len(errs)
            L.append(row)
            if rat:
                overview.append((wl, c.name, med(rat) if hib else 1.0 / med(rat)))
        summary["workloads"][wl] = wsum
        if wl == "boot":
            lk = res.values("boot", "clean", "live_kib")
            L.append("")
            L.append("Requested bytes live at the end of the trace: %s KiB. heap = resident "
                     "anonymous memory of the process at the end of the replay minus that of an "
                     "empty program under clean glibc (same round); shadow = resident pages of "
                     "the sanitizer's shadow range. See Method." % fmt(med(lk)))
        L.append("")

    # Per-allocation tagging cost from the micro runs.
    L.append("## Cost of tagging per allocation (micro, ns per malloc+free pair, 1 thread)\n")
    L.append("| workload | glibc-MTE sync − clean | Scudo-MTE sync − Scudo | libhwtag sync − off |")
    L.append("|---|---|---|---|")
    for wl in ("micro-small-1t", "micro-large-1t"):
        def d(a, b):
            x, y = res.per_round(wl, a, "ns_op"), res.per_round(wl, b, "ns_op")
            ds = [x[k] - y[k] for k in x if k in y]
            return fmt(med(ds)) if ds else "—"
        L.append("| %s | %s | %s | %s |" % (wl, d("glibc-mte-sync", "clean"),
                                            d("scudo-mte-sync", "scudo"),
                                            d("hwtag-sync", "hwtag-off")))
    L.append("")

    # The floor: tag checks on, no tags. Under qemu every checked load and store of the program
    # costs this much whatever the allocator does; the rest of a configuration's cost is its own.
    fl = [(wl,) + meta[wl][2:4] for wl, _ in plan if not wl.startswith("size-") and
          res.values(wl, "floor", meta[wl][2])]
    if fl:
        L.append("## The floor: tag checks on, no tags (glibc malloc + mte_on_shim)\n")
        L.append("Ratios as throughput (higher is better; times inverted). \"above floor\" = "
                 "the configuration against the floor of the same round: what is left once the "
                 "program's own checked accesses are paid for.\n")
        cols = [c for c in ("glibc-mte-sync", "scudo-mte-sync", "hwtag-sync", "hwtag-sample10",
                            "hwtag-nostack") if c in names]
        L.append("| workload | floor vs clean | " + " | ".join("%s above floor" % c for c in cols)
                 + " |")
        L.append("|---|---|" + "---|" * len(cols))
        for wl, metric, hib in fl:
            inv = (lambda x: x) if hib else (lambda x: 1.0 / x)
            def rs(a, b):
                r = res.ratios(wl, a, b, metric)
                if not r:
                    return "—"
                r = sorted(inv(x) for x in r)
                return "%.2fx [%.2f–%.2f]" % (med(r), r[0], r[-1])
            L.append("| %s | %s | %s |" % (wl, rs("floor", "clean"),
                                           " | ".join(rs(c, "floor") for c in cols)))
        L.append("")

    sizes = [s for s in MICRO_SIZES if res.values("size-%d" % s, "clean", "mops_s")]
    if sizes:
        L.append("## micro by size (1 thread, Mops/s, median)\n")
        L.append("| size | " + " | ".join(names) + " |")
        L.append("|---" * (len(names) + 1) + "|")
        with open(os.path.join(datadir, "sizes.dat"), "w") as f:
            f.write("size " + " ".join(names) + "\n")
            for s in sizes:
                row = [fmt(med(res.values("size-%d" % s, n, "mops_s"))) for n in names]
                L.append("| %d | " % s + " | ".join(row) + " |")
                f.write("%d %s\n" % (s, " ".join(
                    str(med(res.values("size-%d" % s, n, "mops_s")) or "NaN") for n in names)))
        L.append("")

    if do_sweep:
        L.append("## Sampling sweep: loopback, HWTAG_SAMPLE_ORDER=3\n")
        L.append("| HWTAG_SAMPLE | Mbit/s | throughput vs off | slowdown vs off | share of "
                 "full-tagging slowdown removed | allocations unchecked | large allocations "
                 "unchecked |")
        L.append("|---|---|---|---|---|---|---|")
        full = res.ratios("sweep", "hwtag-off", "sample1", "mbit_s")
        full_slow = med(full) - 1 if full else None
        with open(os.path.join(datadir, "sweep.dat"), "w") as f:
            f.write("# N ratio_vs_off ratio_min ratio_max unchecked_pct large_unchecked_pct\n")
            for c in sweep[1:]:
                n = int(c.name[len("sample"):])
                v = res.values("sweep", c.name, "mbit_s")
                if not v:
                    continue
                rr = res.ratios("sweep", c.name, "hwtag-off", "mbit_s")
                slow = res.ratios("sweep", "hwtag-off", c.name, "mbit_s")
                sl = med(slow) - 1 if slow else None
                removed = (1 - sl / full_slow) * 100 if (full_slow and sl is not None) else None
                un = med(res.values("sweep", c.name, "unchecked_pct"))
                lun = med(res.values("sweep", c.name, "large_skipped_pct"))
                L.append("| %d | %s | %s | %s | %s | %s | %s |" % (
                    n, fmt(med(v)), ratio_str(rr), "%.0f%%" % (sl * 100) if sl is not None
                    else "—", "%.0f%%" % removed if removed is not None else "—",
                    "%.1f%%" % un if un is not None else "—",
                    "%.1f%%" % lun if lun is not None else "—"))
                f.write("%d %s %s %s %s %s\n" % (n, med(rr) if rr else "NaN",
                                                min(rr) if rr else "NaN",
                                                max(rr) if rr else "NaN",
                                                un if un is not None else "NaN",
                                                lun if lun is not None else "NaN"))
        off = res.values("sweep", "hwtag-off", "mbit_s")
        L.append("")
        L.append("HWTAG_MODE=off: %s Mbit/s (median). \"Unchecked\" = allocations left untagged "
                 "by sampling / all allocations, from hwtag_get_stats() at exit." % fmt(med(off)))
        L.append("")

    # Plot data.
    with open(os.path.join(datadir, "overview.dat"), "w") as f:
        wls = [w for w, _ in plan if not w.startswith("size-")]
        f.write("config " + " ".join(wls) + "\n")
        for c in configs:
            if c.name == "clean":
                continue
            vals = {w: v for (w, n, v) in overview if n == c.name}
            if not vals:
                continue
            f.write(c.name + " " + " ".join(
                "%.4f" % vals[w] if w in vals else "NaN" for w in wls) + "\n")
    with open(os.path.join(datadir, "memory.dat"), "w") as f:
        f.write("config heap_kib shadow_kib\n")
        for c in configs:
            s = summary["workloads"].get("boot", {}).get(c.name)
            if s and s.get("heap_kib") is not None:
                f.write("%s %.1f %.1f\n" % (c.name, s["heap_kib"], s["shadow_kib"] or 0))
    pngs = make_plots(out, datadir, bool(sizes), do_sweep)

    L.append("## Plots\n")
    for p in pngs:
        L.append("![%s](%s)" % (p, p))
    L.append("")
    L.append("## Kernel reference (KHWASAN cover letter v4, 2018, Odroid C2)\n")
    L.append("| measure | clean | KASAN (generic) | KHWASAN |")
    L.append("|---|---|---|---|")
    for r in KERNEL_REF:
        L.append("| %s |" % " | ".join(r))
    L.append("")
    L.append("Later HW_TAGS sampling result: ~50% cost on a loopback test without sampling, "
             "~20% with 1-in-10 sampling of order >= 3 page allocations. Userspace twins here: "
             "boot = trace replay + python3 start-up, slab = heap after boot, iperf = iperf3 and "
             "bench_loopback, sampling = the sweep.")
    L.append("")
    L.append(METHOD)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L) + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    log("wrote", os.path.join(out, "results.md"))


def ratio_str(rat):
    if not rat:
        return "—"
    return "%.2fx [%.2f–%.2f]" % (med(rat), min(rat), max(rat))


def evaluate_targets(res):
    T = []

    def ratio_target(desc, wl, a, b, metric, thr, hib=True):
        r = res.ratios(wl, a, b, metric)
        if not r:
            T.append((desc, "n/a (%s or %s missing)" % (a, b), "%s %.2f" % (
                ">=" if hib else "<=", thr), "n/a"))
            return
        ok = med(r) >= thr if hib else med(r) <= thr
        T.append((desc, ratio_str(r), "%s %.2fx" % (">=" if hib else "<=", thr),
                  "**pass**" if ok else "**miss**"))

    ratio_target("small 1T: libhwtag sync vs glibc-MTE sync (throughput)", "micro-small-1t",
                 "hwtag-sync", "glibc-mte-sync", "mops_s", 3.0)
    ratio_target("small 1T: libhwtag sync vs Scudo-MTE sync (throughput)", "micro-small-1t",
                 "hwtag-sync", "scudo-mte-sync", "mops_s", 3.0)
    ratio_target("small 1T: libhwtag off vs clean glibc (throughput)", "micro-small-1t",
                 "hwtag-off", "clean", "mops_s", 1.0)
    ratio_target("large 1T: libhwtag sync vs glibc-MTE sync (throughput)", "micro-large-1t",
                 "hwtag-sync", "glibc-mte-sync", "mops_s", 10.0)
    ratio_target("large 1T: HWTAG_SAMPLE=10 vs clean glibc (throughput)", "micro-large-1t",
                 "hwtag-sample10", "clean", "mops_s", 0.3)
    # the allocator itself, no tags, must not lose to glibc on the large path
    ratio_target("large 1T: libhwtag off vs clean glibc (throughput)", "micro-large-1t",
                 "hwtag-off", "clean", "mops_s", 0.8)
    ratio_target("large 2T: libhwtag off vs clean glibc (throughput)", "micro-large-2t",
                 "hwtag-off", "clean", "mops_s", 0.8)
    ratio_target("loopback: libhwtag off vs clean glibc (throughput)", "loopback",
                 "hwtag-off", "clean", "mbit_s", 0.9)
    ratio_target("iperf3: libhwtag sync vs glibc-MTE sync (throughput)", "iperf3",
                 "hwtag-sync", "glibc-mte-sync", "gbit_s", 1.0)
    # loopback: slowdown(sample10) <= half of slowdown(full), both against libhwtag off.
    full = res.ratios("loopback", "hwtag-off", "hwtag-sync", "mbit_s")
    s10 = res.ratios("loopback", "hwtag-off", "hwtag-sample10", "mbit_s")
    if full and s10:
        fs, ss = med(full) - 1, med(s10) - 1
        removed = 1 - ss / fs if fs > 0 else None
        T.append(("loopback: HWTAG_SAMPLE=10 removes >= half of full tagging's slowdown "
                  "(vs libhwtag off)",
                  "slowdown full %.0f%%, sample10 %.0f%%, removed %s" % (
                      fs * 100, ss * 100, "%.0f%%" % (removed * 100) if removed is not None
                      else "n/a (no slowdown)"),
                  ">= 50%", "**pass**" if removed is None or removed >= 0.5 else "**miss**"))
    else:
        T.append(("loopback: HWTAG_SAMPLE=10 removes >= half of full tagging's slowdown",
                  "n/a", ">= 50%", "n/a"))
    ratio_target("heap after boot: libhwtag sync vs clean glibc (heap+shadow)", "boot",
                 "hwtag-sync", "clean", "total_kib", 1.05, hib=False)
    for other in ("glibc-mte-sync", "scudo", "scudo-mte-sync", "asan", "hwasan"):
        ratio_target("heap after boot: libhwtag sync below %s (heap+shadow)" % other, "boot",
                     "hwtag-sync", other, "total_kib", 0.9999, hib=False)
    ratio_target("python3 start-up: libhwtag sync vs glibc-MTE sync (wall time)", "python",
                 "hwtag-sync", "glibc-mte-sync", "wall_s", 1.0, hib=False)
    return T


def make_plots(out, datadir, sizes, sweep):
    if not shutil.which("gnuplot"):
        log("gnuplot not found: no plots")
        return []
    made = []
    plots = ["overview", "memory"] + (["sizes"] if sizes else []) + (["sweep"] if sweep else [])
    for name in plots:
        png = name + ".png"
        with open(os.path.join(datadir, name + ".dat")) as f:
            ncol = len(f.readline().split())
        r = subprocess.run(["gnuplot", "-e", "which='%s'; datadir='%s'; outfile='%s'; ncol=%d" % (
            name, datadir, os.path.join(out, png), ncol), os.path.join(BENCH, "plot.gp")],
            capture_output=True, text=True)
        if r.returncode == 0 and os.path.exists(os.path.join(out, png)):
            made.append(png)
        else:
            log("plot %s failed: %s" % (name, r.stderr.strip()[-300:]))
    return made


METHOD = """## Method

- **Runner.** On an x86_64 host every aarch64 program runs as `qemu-aarch64 -cpu max,sve=off -L /`
  (QEMU 7.2 emulates MTE for `-cpu max`; `sve=off` because glibc's SVE string functions are not
  tag-checked by QEMU 7.2). On an aarch64 host the script runs programs directly, same steps.
- **Configurations** alternate inside a round (the order rotates and reverses each round), every
  round has its own clean run, and ratios are taken per round before the median.
- **Tagging is verified, not assumed:** `bench_probe` prints the top byte of small and large
  pointers under each configuration (table "Configurations"). glibc tags only with
  `glibc.mem.tagging` set (3 = sync, 1 = async: glibc itself then enables MTE with prctl).
  Scudo standalone tags whenever HWCAP2_MTE is present but nothing turns tag checks on outside
  Android, and under QEMU it even aborts ("corrupted chunk header") when the tagged-address ABI
  is off; so `scudo-mte-sync` preloads `mte_on_shim.so` (prctl: tagged ABI, sync checks, tags
  1-15) before Scudo, and the untagged `scudo` configuration preloads `mte_hide_shim.so`, which
  hides HWCAP2_MTE from getauxval so that Scudo takes its untagged path. `floor` preloads
  `mte_on_shim.so` in front of plain glibc malloc: no tags anywhere (the probe checks), but the
  process runs with sync tag checks on, so QEMU takes its checked-access path for every load
  and store; it is the cost any MTE allocator pays under QEMU before doing any tag work. Scudo 14 tags only its
  primary (small) allocations, not the secondary (large) ones.
- **ASan / HWASan** apply only to workloads whose source we have (bench_*.c): gcc
  `-fsanitize=address` (libasan8:arm64, `detect_leaks=0`) and clang 14
  `--target=aarch64-linux-gnu -fsanitize=hwaddress` (libclang-rt-14-dev:arm64). Their start-up
  cost (mapping and touching shadow) is part of their wall time.
- **Memory.** QEMU 7.2's guest `/proc/self/smaps` does not give real resident sizes, so the
  program (or the python3 script) prints its own `/proc/self/maps` at the measurement point and
  waits; run.py reads the host's `/proc/<pid>/smaps` (and `pagemap` for partial overlaps) of
  that same process and sums the resident pages of the guest's writable anonymous mappings
  (heap, mmap'd chunks, allocator metadata, bss; not file mappings, not the stack), splitting
  off the sanitizer's shadow range (ASan: `__asan_get_shadow_mapping`, HWASan:
  `__hwasan_shadow_memory_dynamic_address`, 1/8 and 1/16 of the address space). "heap" is that
  sum minus the same sum for an empty program under clean glibc in the same round, so fixed
  runtime costs (ASan's allocator metadata, libhwtag's metadata arena) count. The MTE tag
  storage itself is not in any process's address space (on hardware it is 1/32 of RAM reserved
  by firmware/kernel; under QEMU it lives in QEMU's own heap), so glibc-MTE, Scudo-MTE and
  libhwtag show no shadow column: that is the real difference from ASan/HWASan shadow.
  Measurement pauses are excluded from wall times.
- **Workloads.** `boot`: bench_boot replays a deterministic synthetic start-up trace (100k
  allocations quick, 400k full; 56% 16-64 B, 25% 65-256 B, 12% 257 B-1 KiB, 5% 1-4 KiB, 1.6%
  4-32 KiB, 0.2% 32-512 KiB; lifetimes: 45% temporaries, 25% short, 10% medium, 20% live past
  boot; buffers > 4 KiB mostly temporary; 3% reallocs of growing buffers; every byte of small
  objects written). `python`: arm64 python3.11 with PYTHONMALLOC=malloc importing {nmods} stdlib
  modules. `micro`: each thread replaces a random one of 1024 live slots per op (free +
  malloc + 16 B written at each end), log-uniform sizes. `loopback`: bench_loopback, client
  and server threads over 127.0.0.1 (ephemeral port), malloc per message on both sides, 80%
  64 B-2 KiB and 20% 32-128 KiB messages. `iperf3`: Debian's arm64 iperf3 server (-1) and
  client (1 s quick, 3 s full) both under the configuration, random port 20000-60999 on
  127.0.0.1. Every run has a timeout (--timeout, default 180 s).
- **Native MTE hardware** (Pixel 8 and later with a Linux userland, or Armv8.5+ MTE boards with
  a kernel built with CONFIG_ARM64_MTE): install gcc, clang, lld, libclang-rt-dev, python3,
  iperf3 and gnuplot, build libhwtag with the host compiler, then run
  `bench/run.py --full --lib build/<preset>/lib/libhwtag.so --programs /`. Without qemu the
  numbers are hardware numbers, and the hardware tag-check cost is far smaller than under TCG.
""".replace("{nmods}", str(len(PY_MODULES)))

if __name__ == "__main__":
    main()
