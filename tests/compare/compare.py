#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Side-by-side comparison of bug reports: libhwtag against HWASan and ASan.

Builds every program of tests/compare/progs three ways (gcc + libhwtag preloaded, clang
-fsanitize=address, clang -fsanitize=hwaddress), runs each (under qemu-aarch64 on a
non-aarch64 host), saves each run's stderr in the results directory (default build/compare,
PROG.TOOL.txt), scores each report on the criteria below and prints a Markdown table
(program x tool x criteria), also written to RESULTS/table.md.

    tests/compare/compare.py [--lib build/aarch64/lib/libhwtag.so] [--results DIR] [--only P]

Exit status: 0 when libhwtag is at or above the best peer on every criterion it claims for
that program, 1 when it is behind on one (the lines starting "BEHIND" say where), 77 when
clang, the sanitizer runtimes, the cross compilers or qemu are missing. A program's
"unclaimed" letters are shown but not asserted: an async fault carries no address, and a
read inside an object's last 16-byte granule is invisible to MTE (docs/design.md).

Criteria (a column each; "-" where a criterion does not apply to the program):
  a detected      a report at all
  b type          the right bug type (overflow, use-after-free, double free, invalid free)
  c title         the title names the user's function: libhwtag's "BUG: KASAN:" line, the
                  sanitizers' SUMMARY line (their first line names no function); not
                  memcpy/strcpy/__asan_memcpy/libstdc++ internals, and for the stripped
                  program the program's module, not __libc_start_main
  d size          the access size is the whole libc call's (80 for memcpy(dst, src, 80))
  e alloc         an allocation stack naming the allocating function
  f free          a free stack naming the freeing function (use-after-free, double free)
  g thread        "created by" with the creating thread's function (thread program)
  h file:line     source file:line of the program in the frames
  i object        the object described: its exact size and the distance to it
  j width         longest line of the report <= MAX_WIDTH columns (shown, never asserted:
                  libhwtag promises no width)
  k syzkaller     libhwtag only: the title parses with syzkaller's KASAN patterns
"""

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROGS = os.path.join(HERE, "progs")
NATIVE = platform.machine() in ("aarch64", "arm64")
QEMU = [] if NATIVE else ["qemu-aarch64", "-cpu", "max,sve=off", "-L", "/"]
MAX_WIDTH = 120
# Criteria libhwtag claims nowhere (docs/design.md promises no line width): reported, not
# asserted.
NOT_CLAIMED = "j"
TOOLS = ("libhwtag", "hwasan", "asan")
CRITERIA = [("a", "detected"), ("b", "type"), ("c", "title"), ("d", "size"),
            ("e", "alloc"), ("f", "free"), ("g", "thread"), ("h", "file:line"),
            ("i", "object"), ("j", "width"), ("k", "syzkaller")]

# name: source, bug, title functions accepted (for a tail overwrite found at free, the
# user's function that freed is the one libhwtag can name), allocating function, freeing function,
# whole-call access size, object size, libhwtag environment, criteria libhwtag does not
# claim for this program (docs/design.md: an async fault carries no address).
P = dict
PROGRAMS = [
    P(name="heap_off_by_one", src="heap_off_by_one.c", bug="overflow", func=["fill_buffer"],
      alloc="main", objsize=32),
    P(name="list_uaf", src="list_uaf.c", bug="uaf", func=["list_sum_from"],
      alloc="list_push", free="list_remove_next", objsize=16),
    P(name="double_free", src="double_free.c", bug="double-free", func=["config_release", "main"],
      alloc="config_load", free="config_release", objsize=36),
    P(name="invalid_free", src="invalid_free.c", bug="invalid-free", func=["packet_destroy"],
      alloc="packet_new", objsize=64),
    P(name="memcpy_overflow", src="memcpy_overflow.c", bug="overflow", func=["record_copy"],
      alloc="record_copy", size=80, objsize=64),
    P(name="strcpy_overflow", src="strcpy_overflow.c", bug="overflow", func=["user_set_name"],
      alloc="user_set_name", size=21, objsize=16),
    P(name="memset_overflow", src="memset_overflow.c", bug="overflow", func=["table_reset"],
      alloc="main", size=72, objsize=64),
    P(name="cxx_string", src="cxx_string.cc", bug="overflow", func=["make_label"],
      alloc="main", size=24, objsize=16),
    P(name="cxx_vector", src="cxx_vector.cc", bug="overflow", func=["store_samples", "main"],
      alloc="main", objsize=40),
    P(name="thread_overflow", src="thread_overflow.c", bug="overflow", func=["worker_process"],
      alloc="loader_main", creator="dispatcher_main", objsize=32),
    P(name="stripped_overflow", src="stripped_overflow.c", bug="overflow", strip=True,
      func=[], alloc=None, objsize=16),
    P(name="tail_at_free", src="tail_at_free.c", bug="overflow",
      func=["format_id", "release_id"], alloc="format_id", objsize=13),
    P(name="async_uaf", src="async_uaf.c", bug="uaf", func=["session_touch"],
      alloc="session_open", free="session_close", objsize=32,
      env={"HWTAG_MODE": "async"}, unclaimed="bcdefik"),
    P(name="granule_read", src="granule_read.c", bug="overflow", func=["checksum"],
      alloc="main", objsize=13, unclaimed="abcdefhik"),
]

# syzkaller's KASAN title patterns (pkg/report/linux.go)
SYZ_ACCESS = re.compile(r"BUG: KASAN: ([a-z\-]+) in ([a-zA-Z0-9_]+)(?:\.|\+)(?:.*\n)+?.*"
                        r"(Read|Write) (?:of size|at addr) (?:[0-9a-f]+)")
SYZ_FREE = re.compile(r"BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free)"
                      r" in ([a-zA-Z0-9_]+)(?:\.|\+)")


def log(*a):
    print("[compare]", *a, file=sys.stderr, flush=True)


def find_symbolizer():
    for c in ["/usr/bin/llvm-symbolizer"] + sorted(
            [os.path.join(d, "llvm-symbolizer") for d in
             (os.path.join("/usr/lib", x, "bin") for x in os.listdir("/usr/lib")
              if x.startswith("llvm-"))], reverse=True):
        if os.access(c, os.X_OK):
            return c
    return shutil.which("llvm-symbolizer")


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Tools:
    def __init__(self):
        self.gcc = "gcc" if NATIVE else "aarch64-linux-gnu-gcc"
        self.gxx = "g++" if NATIVE else "aarch64-linux-gnu-g++"
        self.strip = "strip" if NATIVE else "aarch64-linux-gnu-strip"
        tgt = [] if NATIVE else ["--target=aarch64-linux-gnu", "-fuse-ld=lld"]
        self.clang = ["clang"] + tgt
        self.clangxx = ["clang++"] + tgt
        self.symbolizer = find_symbolizer()

    def missing(self):
        """Why the comparison cannot run here, or None."""
        for t in [self.gcc, self.gxx, self.strip, "clang", "clang++"] + QEMU[:1]:
            if not shutil.which(t):
                return "%s not found" % t
        for rt in ("asan", "hwasan"):
            r = sh(self.clang + ["-print-file-name=libclang_rt.%s-aarch64.a" % rt])
            path = r.stdout.strip()
            if r.returncode != 0 or not os.path.isabs(path) or not os.path.exists(path):
                return "libclang_rt.%s-aarch64.a not found (libclang-rt-dev)" % rt
        return None


def build(tools, prog, tool, outdir):
    src = os.path.join(PROGS, prog["src"])
    cxx = src.endswith(".cc")
    os.makedirs(os.path.join(outdir, tool), exist_ok=True)
    exe = os.path.join(outdir, tool, prog["name"])
    common = ["-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-Wall", "-Wno-array-bounds",
              "-Wno-stringop-overflow"]
    if tool == "libhwtag":
        cmd = [tools.gxx if cxx else tools.gcc] + common
    else:
        san = "address" if tool == "asan" else "hwaddress"
        cmd = (tools.clangxx if cxx else tools.clang) + ["-fsanitize=" + san,
                                                       "-Wno-unknown-warning-option"] + common
    r = sh(cmd + [src, "-o", exe])
    if r.returncode != 0:
        return None, r.stderr.strip()
    if prog.get("strip"):
        r = sh([tools.strip, exe])
        if r.returncode != 0:
            return None, r.stderr.strip()
    return exe, None


def run(tools, prog, tool, exe, lib, timeout):
    env = {}
    if tool == "libhwtag":
        env = {"LD_PRELOAD": lib, "HWTAG_MODE": "sync"}
        env.update(prog.get("env", {}))
    elif tool == "asan":
        env = {"ASAN_OPTIONS": "detect_leaks=0:symbolize=1",
               "ASAN_SYMBOLIZER_PATH": tools.symbolizer or ""}
    else:
        env = {"HWASAN_OPTIONS": "symbolize=1",
               "HWASAN_SYMBOLIZER_PATH": tools.symbolizer or ""}
    henv = dict(os.environ)
    # The sanitizer runtimes read /proc/self/environ, which qemu-user does not emulate:
    # their options go in the host environment too. LD_PRELOAD goes only to the guest.
    for k, v in env.items():
        if k != "LD_PRELOAD":
            henv[k] = v
    if QEMU:
        cmd = QEMU[:]
        for k, v in env.items():
            cmd += ["-E", "%s=%s" % (k, v)]
        cmd.append(exe)
    else:
        henv.update(env)
        cmd = [exe]
    try:
        r = subprocess.run(cmd, env=henv, capture_output=True, text=True, timeout=timeout,
                           cwd=REPO, errors="replace")
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return -999, err + "\n[compare] timed out after %d s\n" % timeout


# ---------------------------------------------------------------------------------------------
# Reading a report


def report_text(tool, err):
    """The report itself out of the program's stderr ("" when there is none)."""
    if tool == "libhwtag":
        m = re.search(r"^=+\n(BUG: KASAN:.*?)^=+$", err, re.S | re.M)
        return m.group(0) if m else ""
    key = "AddressSanitizer" if tool == "asan" else "HWAddressSanitizer"
    i = err.find("==ERROR: " + key)
    if i < 0:
        return ""
    i = err.rfind("\n", 0, i) + 1
    j = err.find("==ABORTING", i)
    return err[i:j if j >= 0 else len(err)]


def title(tool, rep):
    if tool == "libhwtag":
        m = re.search(r"^BUG: KASAN: .*$", rep, re.M)
    else:
        m = re.search(r"^SUMMARY: .*$", rep, re.M)
    return m.group(0) if m else ""


def section(rep, header_re):
    """The frame lines after the first line matching header_re, up to a blank line."""
    m = re.search(header_re, rep, re.M)
    if not m:
        return None
    rest = rep[m.end():].split("\n")[1:]
    out = []
    for line in rest:
        if not line.strip():
            break
        out.append(line)
    return "\n".join(out)


def stack_names(rep, header_re, func, missing):
    """(ok, note) of the stack under header_re: it names func (any frame when func is
    empty); missing is the note when there is no such stack."""
    sec = section(rep, header_re)
    if sec is None:
        return (False, missing)
    if func:
        return (bool(re.search(r"\b%s\b" % func, sec)), "")
    return (bool(sec.strip()), "")


ALLOC_HDR = {"libhwtag": r"^Allocated by task", "asan": r"allocated by thread .* here:",
             "hwasan": r"allocated (here|by thread .* here):"}
FREE_HDR = {"libhwtag": r"^Freed by task", "asan": r"freed by thread .* here:",
            "hwasan": r"freed by thread .* here:"}
BUG_WORDS = {
    "overflow": ["out-of-bounds", "heap-buffer-overflow"],
    "uaf": ["use-after-free"],
    "double-free": ["double-free"],
    "invalid-free": ["invalid-free", "not malloc()-ed"],
}


def bug_type(tool, rep):
    """The bug type a report states."""
    if tool == "libhwtag":
        m = re.search(r"^BUG: KASAN: (\S+)", rep, re.M)
        return m.group(1) if m else ""
    m = re.search(r"ERROR: \w+: (.*?)(?: on address| on 0x|$)", rep, re.M)
    t = m.group(1) if m else ""
    if "not malloc()-ed" in rep.split("\n", 3)[1] + rep.split("\n", 3)[0]:
        t = "bad-free (not malloc()-ed)"
    if tool == "hwasan":
        c = re.search(r"^Cause: (\S+)", rep, re.M)   # tag-mismatch carries a "Cause:" line
        if c and t in ("tag-mismatch", "invalid-free"):
            t = "%s (%s)" % (t, c.group(1))
    return t


def score(prog, tool, rep, rc):
    """{criterion: (True/False/None, note)}; None: does not apply."""
    s = {}
    srcbase = prog["src"]
    s["a"] = (bool(rep), "" if rep else "rc %s, no report" % rc)
    if not rep:
        for c, _ in CRITERIA[1:]:
            s[c] = (False, "") if applies(prog, tool, c) else (None, "")
        return s
    bt = bug_type(tool, rep)
    ok = any(w in bt for w in BUG_WORDS[prog["bug"]])
    if prog["bug"] == "invalid-free" and tool == "hwasan":
        # HWASan titles an interior free "invalid-free" with a "Cause:" guess
        ok = bt.startswith("invalid-free")
    if prog["bug"] == "double-free" and tool == "hwasan":
        ok = bt.startswith("invalid-free") and "use-after-free" in bt or "double-free" in bt
    s["b"] = (ok, bt)
    t = title(tool, rep)
    if prog.get("strip"):
        mod = prog["name"]
        ok = mod in t and "__libc_start_main" not in t and "libc" not in t.split(" in ")[-1]
    else:
        ok = any(names(f, t) for f in prog["func"])
    s["c"] = (ok, short(t if tool == "libhwtag" else summary_where(t)))
    if "size" in prog:
        m = re.search(r"(?i)\b(read|write) of size (\d+)", rep)
        got = int(m.group(2)) if m else None
        s["d"] = (got == prog["size"], "size %s" % got)
    else:
        s["d"] = (None, "")
    s["e"] = (stack_names(rep, ALLOC_HDR[tool], prog.get("alloc"), "no allocation stack")
              if applies(prog, tool, "e") else (None, ""))
    s["f"] = (stack_names(rep, FREE_HDR[tool], prog["free"], "no free stack")
              if prog.get("free") else (None, ""))
    s["g"] = (stack_names(rep, r"created by T\d+ here:", prog["creator"], "no creation stack")
              if prog.get("creator") else (None, ""))
    if prog.get("strip"):
        s["h"] = (None, "")
    else:
        s["h"] = (bool(re.search(r"%s:\d+" % re.escape(srcbase), rep)), "")
    m1 = re.search(r"located (\d+) bytes (to the right of|to the left of|inside of|inside)", rep)
    m2 = re.search(r"(\d+)-byte region", rep)
    if m1 and m2:
        size = int(m2.group(1))
        where = m1.group(2).split()[-2] if m1.group(2).startswith("to") else "inside"
        s["i"] = (size == prog["objsize"], "%s B %s, %d-byte" % (m1.group(1), where, size))
    else:
        s["i"] = (False, "no region line")
    width = max(len(line) for line in rep.split("\n"))
    s["j"] = (width <= MAX_WIDTH, "%d cols" % width)
    if tool == "libhwtag":
        pat = SYZ_FREE if prog["bug"] in ("double-free", "invalid-free") else SYZ_ACCESS
        m = pat.search(rep)
        s["k"] = (bool(m), "")
    else:
        s["k"] = (None, "")
    return s


def names(func, text):
    """Whether text names func, plainly or inside an Itanium-mangled symbol
    (_Z10make_labelB5cxx11PKcm names make_label)."""
    return bool(re.search(r"(?:\b|(?<=\d))%s(?=\b|[A-Z])" % re.escape(func), text))


def applies(prog, tool, c):
    if c == "d":
        return "size" in prog
    if c == "f":
        return bool(prog.get("free"))
    if c == "g":
        return bool(prog.get("creator"))
    if c == "h":
        return not prog.get("strip")
    if c == "k":
        return tool == "libhwtag"
    return True


def summary_where(t):
    """What a sanitizer's SUMMARY line names: "in FUNC", or the module+offset."""
    m = re.search(r" in (\S.*)$", t)
    if m:
        return "in " + m.group(1)
    m = re.search(r"\(([^()]*\+0x[0-9a-f]+)\)", t)
    return os.path.basename(m.group(1)) if m else t


def short(t, n=60):
    t = re.sub(r"^(BUG: KASAN: |SUMMARY: )", "", t)
    return t if len(t) <= n else t[:n - 1] + "…"


def cell(v):
    ok, note = v
    if ok is None:
        return "-"
    mark = "✓" if ok else "✗"
    note = note.replace("|", "\\|")
    return "%s %s" % (mark, note) if note else mark


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(REPO, "build/aarch64/lib/libhwtag.so"))
    ap.add_argument("--results", default=os.path.join(REPO, "build", "compare"))
    ap.add_argument("--only", action="append", help="program name (repeatable)")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--emulator", help="how to run an aarch64 program, ';'-separated (CMake's "
                    "CMAKE_CROSSCOMPILING_EMULATOR); default qemu-aarch64 on other hosts")
    args = ap.parse_args()
    global QEMU
    if args.emulator is not None:
        QEMU = [a for a in args.emulator.split(";") if a]

    tools = Tools()
    why = tools.missing()
    if why:
        print("SKIP: %s" % why)
        return 77
    if not os.path.exists(args.lib):
        print("SKIP: %s not built" % args.lib)
        return 77
    lib = os.path.abspath(args.lib)
    os.makedirs(args.results, exist_ok=True)
    progs = [p for p in PROGRAMS if not args.only or p["name"] in args.only]

    def one(job):
        prog, tool = job
        exe, err = build(tools, prog, tool, args.results)
        if not exe:
            return job, None, "build failed: " + err.splitlines()[-1] if err else "build failed"
        rc, stderr = run(tools, prog, tool, exe, lib, args.timeout)
        with open(os.path.join(args.results, "%s.%s.txt" % (prog["name"], tool)), "w") as f:
            f.write(stderr)
        return job, rc, stderr

    jobs = [(p, t) for p in progs for t in TOOLS]
    results = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for (prog, tool), rc, stderr in ex.map(one, jobs):
            log(prog["name"], tool, "rc", rc)
            if rc is None:
                if tool != "libhwtag":
                    # a peer that does not build here is a missing peer, not a failure
                    print("SKIP: %s %s: %s" % (prog["name"], tool, stderr))
                    return 77
                results[(prog["name"], tool)] = score(prog, tool, "", stderr)
                continue
            results[(prog["name"], tool)] = score(prog, tool, report_text(tool, stderr), rc)

    head = "| program | tool | " + " | ".join("%s %s" % c for c in CRITERIA) + " |"
    lines = [head, "|" + "---|" * (len(CRITERIA) + 2)]
    for prog in progs:
        for tool in TOOLS:
            s = results[(prog["name"], tool)]
            lines.append("| %s | %s | " % (prog["name"], tool) +
                         " | ".join(cell(s[c]) for c, _ in CRITERIA) + " |")
    table = "\n".join(lines) + "\n"

    behind, summary = [], []
    for c, cname in CRITERIA:
        if c == "k":
            continue
        at, ahead, below, unclaimed = 0, 0, 0, 0
        for prog in progs:
            ours = results[(prog["name"], "libhwtag")][c][0]
            peers = [results[(prog["name"], t)][c][0] for t in TOOLS[1:]]
            if ours is None or all(p is None for p in peers):
                continue
            claimed = c not in prog.get("unclaimed", "") + NOT_CLAIMED
            best = any(p for p in peers)
            if ours or not best:
                at += 1
                ahead += bool(ours and not best)
            else:
                below += claimed
                unclaimed += not claimed
                if claimed:
                    behind.append("BEHIND: %s, criterion %s (%s): libhwtag %s; peers %s" % (
                        prog["name"], c, cname, cell(results[(prog["name"], "libhwtag")][c]),
                        ", ".join("%s %s" % (t, cell(results[(prog["name"], t)][c]))
                                  for t in TOOLS[1:])))
                else:
                    summary.append("behind, not claimed: %s %s (%s)" % (prog["name"], c, cname))
        summary.append("criterion %s (%s): libhwtag at or above the best peer on %d (ahead of "
                       "both on %d), below on %d claimed, %d unclaimed"
                       % (c, cname, at, ahead, below, unclaimed))
    k_fail = [p["name"] for p in progs if results[(p["name"], "libhwtag")]["k"][0] is False
              and "k" not in p.get("unclaimed", "")]
    for n in k_fail:
        behind.append("BEHIND: %s, criterion k (syzkaller): the title does not parse" % n)

    with open(os.path.join(args.results, "table.md"), "w") as f:
        f.write(table)
    print(table)
    for line in summary + behind:
        print(line)
    return 1 if behind else 0


if __name__ == "__main__":
    sys.exit(main())
