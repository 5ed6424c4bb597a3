#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every report the given detect tests make, run through syzkaller's KASAN title patterns
(pkg/report/linux.go), in its order: an access report must give "KASAN: <bug-type>
<Read|Write> in <function>" with the header's bug type and function and the access line's
direction, a bad free "KASAN: invalid-free in <function>", and an asynchronous report must
still be recognised as a KASAN report ("BUG: KASAN: (.*)").

usage: syzkaller_titles.py [--emulator 'qemu-aarch64;-cpu;max,sve=off;-L;/'] [--no-mte] TEST...
--no-mte: a build without tag checks, whose tests make only the software-found reports
(tail overwrites, bad frees); only those are required.
"""
import os
import re
import subprocess
import sys
import tempfile

FUNC = r"([a-zA-Z0-9_]+)(?:\.|\+)"
ACCESS = re.compile(r"BUG: KASAN: ([a-z\-]+) in " + FUNC +
                    r"(?:.*\n)+?.*(Read|Write) (?:of size|at addr) (?:[0-9a-f]+)")
FREE = re.compile(r"BUG: KASAN: (?:double-free or invalid-free|double-free|invalid-free) in " +
                  FUNC)
ANY = re.compile(r"BUG: KASAN: (.*)")
RULE = "=" * 66
FREE_TYPES = {"double-free", "invalid-free"}
# every kind the detect tests make must be seen: bug types, and two forms of their own
WANTED = {"slab-out-of-bounds", "slab-use-after-free", "out-of-bounds", "use-after-free",
          "double-free", "invalid-free", "invalid-access", "async", "tail"}


def reports(text):
    """The reports in text: from a rule line followed by a BUG: KASAN header to the next rule."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) - 1:
        if lines[i] == RULE and lines[i + 1].startswith("BUG: KASAN:"):
            j = i + 1
            while j < len(lines) and lines[j] != RULE:
                j += 1
            yield "\n".join(lines[i + 1:j]) + "\n"
            i = j
        i += 1


def title(report):
    """syzkaller's title of a report, or None, and whether the format said corrupted."""
    m = ACCESS.search(report)
    if m:
        return "KASAN: %s %s in %s" % (m.group(1), m.group(3), m.group(2)), m
    m = FREE.search(report)
    if m:
        return "KASAN: invalid-free in %s" % m.group(1), m
    m = ANY.search(report)
    if m:
        return "KASAN: %s" % m.group(1), m
    return None, None


def check(report):
    """Returns (kind, error or None)."""
    lines = report.split("\n")
    header = re.match(r"BUG: KASAN: ([a-z\-]+)(?: in " + FUNC + r")?", lines[0])
    if not header:
        return None, "unreadable header: " + lines[0]
    bug, func = header.group(1), header.group(2)
    got, m = title(report)
    if lines[1].startswith("Asynchronous fault"):
        if got != "KASAN: " + bug or m.re is not ANY:
            return "async", "async report not read as KASAN: %r" % got
        return "async", None
    if func is None:
        return bug, "header names no function: " + lines[0]
    if bug in FREE_TYPES:
        want = "KASAN: invalid-free in " + func
        if got != want or m.re is not FREE:
            return bug, "title %r, want %r" % (got, want)
        return bug, None
    direction = lines[1].split(" ", 1)[0]
    want = "KASAN: %s %s in %s" % (bug, direction, func)
    # the access line itself, the line after the header, must be what the pattern read
    if got != want or m.re is not ACCESS or m.group(0).count("\n") != 1:
        return bug, "title %r, want %r (access line %r)" % (got, want, lines[1])
    kind = "tail" if "The write is of unknown size" in report else bug
    return kind, None


def main(argv):
    emulator = []
    if len(argv) > 2 and argv[1] == "--emulator":
        emulator = [a for a in argv[2].split(";") if a]
        argv = argv[2:]
    wanted = WANTED
    if len(argv) > 1 and argv[1] == "--no-mte":
        wanted = {"tail", "invalid-free"}
        argv = argv[1:]
    tests = [t for t in argv[1:] if t]  # an empty generator expression may leave ""
    if not tests:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "reports.txt")
        env = dict(os.environ, HWT_DETECT_SAVE=saved)
        for t in tests:
            run = subprocess.run(emulator + [t], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=900)
            if run.returncode == 77:
                print("SKIP: %s (no tag checks)" % t)
                return 77
            if run.returncode != 0:
                print("FAIL: %s exited %d:\n%s" % (t, run.returncode, run.stdout.decode()))
                return 1
        text = open(saved, errors="replace").read() if os.path.exists(saved) else ""
    seen, errors, count = set(), [], 0
    for report in reports(text):
        count += 1
        kind, error = check(report)
        seen.add(kind)
        if error:
            errors.append(error + "\n" + "\n".join(report.split("\n")[:4]))
    missing = wanted - seen
    for e in errors[:20]:
        print("FAIL:", e)
    if missing:
        print("FAIL: no report of kind(s) %s among %d" % (", ".join(sorted(missing)), count))
    print("%d reports, kinds %s, %d bad titles" % (count, ", ".join(sorted(k for k in seen if k)),
                                                  len(errors)))
    return 1 if errors or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
