# SPDX-License-Identifier: MIT
"""Allocation-heavy, deterministic Python workload for the integration tests.

run_program.sh runs it twice under qemu-aarch64 with PYTHONMALLOC=malloc (so
every Python object goes through malloc/free/realloc), once with glibc's
malloc and once with libhwtag preloaded, and requires byte-identical output.
Every line printed is a pure function of the code below: fixed seeds, no
addresses, no timings, no iteration over hash-ordered sets. At SCALE 1 it
churns tens of MB through the allocator in ~8 s under qemu with glibc;
run_program.sh uses 0.25 (~3 s), as MTE tag checks under qemu cost 10x more.

Usage: python3 workload.py [SCALE]   (a factor on the loop sizes, default 1.0;
       run_program.sh uses a smaller one, as tagging is slow under qemu)
"""

import bisect
import collections
import decimal
import hashlib
import heapq
import io
import itertools
import json
import os
import random
import re
import sqlite3
import struct
import sys
import time
import zlib

SCALE = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0


def scaled(n):
    """n scaled by SCALE, at least 1."""
    return max(1, int(n * SCALE))


def digest(obj):
    """Short stable fingerprint of a JSON-serialisable value."""
    data = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(data).hexdigest()[:16]


def section(name, *values):
    print(f"{name}: " + " ".join(str(v) for v in values), flush=True)


def dicts_and_lists(rng):
    # Many small dicts and lists of varying size: the small size classes.
    records = []
    for i in range(scaled(30000)):
        rec = {"id": i, "name": f"user{i:06d}", "tags": [rng.randrange(100) for _ in range(i % 7)]}
        if i % 3 == 0:
            rec["extra"] = {"k" + str(j): j * i for j in range(i % 11)}
        records.append(rec)
    # Delete every other record, then grow the survivors: frees interleaved
    # with reallocs of lists.
    del records[::2]
    for rec in records:
        rec["tags"].extend(range(rec["id"] % 5))
    index = collections.defaultdict(list)
    for rec in records:
        for t in rec["tags"]:
            index[t].append(rec["id"])
    counts = collections.Counter(len(v) for v in index.values())
    section("dicts", len(records), len(index), digest(sorted(counts.items())), digest(records[-50:]))


def strings(rng):
    # String building, splitting, joining, formatting and slicing.
    words = ["".join(chr(97 + rng.randrange(26)) for _ in range(rng.randrange(1, 12)))
             for _ in range(scaled(20000))]
    text = " ".join(words)
    parts = text.split(" ")
    upper = [w.upper() for w in parts if len(w) > 4]
    buf = io.StringIO()
    for i, w in enumerate(parts):
        buf.write(f"{i}:{w[::-1]};")
    s = buf.getvalue()
    # Quadratic-ish growth by concatenation exercises realloc in place.
    acc = ""
    for w in parts[:5000]:
        acc += w
    section("strings", len(text), len(upper), len(s), hashlib.md5(s.encode()).hexdigest(),
            hashlib.sha1(acc.encode()).hexdigest()[:16])
    return text


def json_round_trip(rng):
    doc = {
        "items": [
            {"id": i, "price": round(rng.uniform(0, 1000), 2), "name": "item-%d" % i,
             "dims": [rng.randrange(1000) for _ in range(5)], "ok": bool(i & 1), "none": None}
            for i in range(scaled(8000))
        ],
        "meta": {"unicode": "h\u00e9llo w\u00f6rld \u2603 \U0001f600", "nested": [[[[1, 2], [3]]]]},
    }
    out = doc
    for _ in range(2):
        s = json.dumps(out, sort_keys=True, indent=1)
        out = json.loads(s)
    assert out == doc
    section("json", len(s), hashlib.sha256(s.encode()).hexdigest()[:16])


def regexes(text):
    pat = re.compile(r"\b([a-z])([a-z]*)\1\b")
    hits = pat.findall(text)
    subbed = re.sub(r"[aeiou]+", lambda m: str(len(m.group(0))), text)
    splits = re.split(r"(?:qu|x|zz)", text)
    emails = re.findall(r"(\w{3,})@(\w+)\.com",
                        " ".join(f"{w}@{w[::-1]}.com" for w in text.split()[:3000]))
    section("regex", len(hits), len(subbed), hashlib.sha256(subbed.encode()).hexdigest()[:16],
            len(splits), len(emails))


def sorting(rng):
    nums = [rng.randrange(10**9) for _ in range(scaled(100000))]
    tuples = sorted(((n % 1000, -n, str(n)) for n in nums), key=lambda t: (t[0], t[2]))
    heap = []
    for n in nums[:20000]:
        heapq.heappush(heap, n)
    smallest = [heapq.heappop(heap) for _ in range(100)]
    srt = sorted(nums)
    pos = [bisect.bisect_left(srt, q) for q in range(0, 10**9, 10**7)]
    section("sort", digest(tuples[:200]), digest(tuples[-200:]), digest(smallest), digest(pos))


def big_ints():
    # Big integers: limb arrays of growing size (medium and large blocks).
    f = 1
    for i in range(2, 2500):
        f *= i
    fib = [0, 1]
    for _ in range(5000):
        fib.append(fib[-1] + fib[-2])
    p = pow(3, 20000, 10**500 + 7)
    sys.set_int_max_str_digits(0)  # allow the long decimal conversion below
    s = str(f)
    decimal.getcontext().prec = 300
    d = decimal.Decimal(2).sqrt() * decimal.Decimal(1).exp()
    section("bigint", len(s), s[:20], s[-700:-680], fib[-1] % 1000000007,
            p % 999983, str(d)[:60])


def sqlite_module(rng):
    con = sqlite3.connect(":memory:")
    cur = con.cursor()
    cur.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, val REAL, blob BLOB)")
    rows = [(i, i % 37, f"name{i}", (i * 7919) % 1000 / 7.0, bytes(range(i % 200)))
            for i in range(scaled(20000))]
    cur.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    cur.execute("CREATE INDEX t_grp ON t(grp, val)")
    con.commit()
    agg = cur.execute("SELECT grp, count(*), round(sum(val), 3), max(length(blob)) FROM t "
                      "GROUP BY grp ORDER BY grp").fetchall()
    join = cur.execute("SELECT a.id, b.id FROM t a JOIN t b ON a.grp = b.grp AND a.id + 37 = b.id "
                       "WHERE a.val > 100 ORDER BY a.id LIMIT 500").fetchall()
    cur.execute("DELETE FROM t WHERE id % 3 = 0")
    cur.execute("UPDATE t SET name = name || '-' || grp WHERE id % 5 = 0")
    left = cur.execute("SELECT count(*), group_concat(name, ',') FROM "
                       "(SELECT name FROM t ORDER BY id DESC LIMIT 50)").fetchone()
    con.close()
    section("sqlite", digest(agg), digest(join), left[0], hashlib.sha256(left[1].encode()).hexdigest()[:16])


def compression(rng):
    chunks = []
    for i in range(scaled(200)):
        n = 1000 + (i * 997) % 20000
        chunks.append(bytes(rng.getrandbits(8) & 0x3F for _ in range(n // 8)) * 8)
    blob = b"".join(chunks)
    comp = zlib.compress(blob, 6)
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    streamed = b"".join(co.compress(c) for c in chunks) + co.flush()
    do = zlib.decompressobj(-15)
    back = b"".join(do.decompress(streamed[i:i + 4096]) for i in range(0, len(streamed), 4096))
    back += do.flush()
    assert zlib.decompress(comp) == blob and back == blob
    h = hashlib.sha512()
    for c in chunks:
        h.update(c)
    section("zlib", len(blob), len(comp), len(streamed), zlib.crc32(blob), zlib.adler32(comp),
            h.hexdigest()[:16], hashlib.blake2b(blob, digest_size=8).hexdigest())


def large_blocks(rng):
    # Large buffers (page-backed in most allocators), resized in place and not.
    total = 0
    bufs = []
    for i in range(60):
        b = bytearray(struct.pack("<I", i) * (1024 * (i + 1)))
        b.extend(b[: len(b) // 2])
        bufs.append(b)
        if len(bufs) > 8:
            total += zlib.crc32(bufs.pop(rng.randrange(len(bufs))))
    mv = memoryview(bufs[-1])[100:200000]
    section("large", total, zlib.crc32(mv), sum(len(b) for b in bufs))


def generators_and_classes(rng):
    class Node:
        __slots__ = ("key", "children")

        def __init__(self, key):
            self.key = key
            self.children = []

    root = Node(0)
    nodes = [root]
    for i in range(1, scaled(30000)):
        n = Node(i)
        nodes[rng.randrange(len(nodes))].children.append(n)
        nodes.append(n)

    def walk(n, depth=0):
        yield depth
        for c in n.children:
            yield from walk(c, depth + 1)

    depths = collections.Counter(walk(root))
    pairs = list(itertools.islice(itertools.combinations(range(300), 2), 20000))
    fs = frozenset(range(0, 50000, 3)) & frozenset(range(0, 50000, 5))
    section("objects", digest(sorted(depths.items())), len(pairs), len(fs), sum(fs))


def main():
    rng = random.Random(20240229)
    steps = [
        lambda: dicts_and_lists(rng),
        lambda: strings(rng),
        lambda: json_round_trip(rng),
        lambda: regexes(text),
        lambda: sorting(rng),
        big_ints,
        lambda: sqlite_module(rng),
        lambda: compression(rng),
        lambda: large_blocks(rng),
        lambda: generators_and_classes(rng),
    ]
    # WORKLOAD_TIMING=1 prints each step's time on stderr (for sizing the
    # steps; the tests leave it unset, as times differ run to run).
    timing = os.environ.get("WORKLOAD_TIMING") == "1"
    text = None
    for step in steps:
        t0 = time.monotonic()
        result = step()
        if result is not None:
            text = result
        if timing:
            print(f"  {time.monotonic() - t0:7.2f} s", file=sys.stderr, flush=True)
    section("done", "ok")


if __name__ == "__main__":
    main()
