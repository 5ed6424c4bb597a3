/* SPDX-License-Identifier: MIT */
/* The stack depot: deduplicated (thread, stack) records, compactly encoded in a fixed pool behind
 * a lock-free hash table, reserved once from meta.c; it never frees, never takes a lock after
 * set-up, never mallocs. */
#include "stackdepot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "meta.h"

/* Pool of records in HWT_DEPOT_UNIT-byte units; an id is the unit index of its record, and
 * unit 0 is never handed out so that id 0 means "none". Pages are touched in order, as records
 * are added: the pool costs what it holds. */
#define HWT_DEPOT_UNIT sizeof(uint32_t)
#define HWT_DEPOT_POOL_UNITS (1u << HWT_STACKDEPOT_ID_BITS)
#define HWT_DEPOT_POOL_SIZE (HWT_DEPOT_POOL_UNITS * HWT_DEPOT_UNIT) /* 4 MiB */
#define HWT_DEPOT_BUCKETS (1u << 14)                                /* power of two; 64 KiB */

/* The frame table: each distinct return address once, so that a frame costs the varint of its
 * index (2 bytes for the first 8192 addresses) instead of 8 bytes. python3 start-up stores 39k
 * stacks over 6.6k distinct addresses. Once full, new addresses are coded as deltas. */
#define HWT_DEPOT_PCS 12288u          /* 96 KiB, filled in order */
#define HWT_DEPOT_PC_SLOTS (1u << 14) /* open addressing over it, power of two; 32 KiB */
#define HWT_DEPOT_PC_PROBES 32u

/* The frames after the innermost HWT_DEPOT_INLINE are a tail record of their own, shared by
 * every stack that ends the same way: python3 start-up's 39k stacks of 12 frames have 6.4k
 * distinct tails after 4 frames (after 3: 10k, after 5: 4.2k; 4 costs least). */
#define HWT_DEPOT_INLINE 4u

/* A record, at a unit boundary: a 32-bit header, then bytes.
 *   header  bits 0-19 id of the next record in the bucket (0 = end), bits 20-23 the top bits
 *           of the frames' hash, bits 24-25 kind, bits 26-31 frame count (1..32)
 *   DEPOT_STACK  varint zigzag(tid - the first tid the depot saw), so the main thread's is a
 *           byte; codes of the innermost HWT_DEPOT_INLINE frames (frame_put); if there are
 *           more, varint id of the DEPOT_TAIL record of the rest
 *   DEPOT_TAIL   codes of its frames; found by their hash like a stack, named by stacks only
 *   DEPOT_ALIAS  varint tid as for a stack, varint id of the DEPOT_STACK record with the same
 *           frames seen first from another thread: the thread is part of what a report says,
 *           the frames are shared
 * A record only names older records. Immutable once published through a bucket (release
 * CAS), so readers that reach it with an acquire load need no lock. */
#define DEPOT_NEXT_MASK ((1u << HWT_STACKDEPOT_ID_BITS) - 1)
#define DEPOT_CHECK_SHIFT 20u
#define DEPOT_CHECK_MASK 0xfu
#define DEPOT_KIND_SHIFT 24u
#define DEPOT_KIND_MASK 0x3u
#define DEPOT_NR_SHIFT 26u
#define DEPOT_VARINT_MAX 10u /* bytes of a 64-bit varint; a frame code is never longer */
#define DEPOT_RECORD_MAX (sizeof(uint32_t) + DEPOT_VARINT_MAX * (HWT_STACK_MAX_FRAMES + 2))
/* Zero bytes past the pool, never written. A decoder reads at most this far from the unit it
 * starts at (a varint stops after 10 bytes, a frame code after 11, a record after its count),
 * so whatever id it is given it stays inside the mapping without checking byte by byte. */
#define DEPOT_PAD (sizeof(uint32_t) + (DEPOT_VARINT_MAX + 1) * (HWT_STACK_MAX_FRAMES + 2))

enum { DEPOT_DEAD = 0, DEPOT_STACK = 1, DEPOT_ALIAS = 2, DEPOT_TAIL = 3 };

_Static_assert(HWT_STACK_MAX_FRAMES < (1u << (32 - DEPOT_NR_SHIFT)), "frame count fits");
_Static_assert(HWT_DEPOT_POOL_UNITS <= (1u << HWT_STACKDEPOT_ID_BITS),
               "ids are unit indexes below 2^HWT_STACKDEPOT_ID_BITS");
_Static_assert(HWT_STACKDEPOT_ID_BITS <= DEPOT_CHECK_SHIFT, "next id fits the header");
_Static_assert(HWT_DEPOT_PCS < UINT16_MAX, "a frame slot holds an index + 1 in 16 bits");
_Static_assert(HWT_DEPOT_PCS >= (1u << 13),
               "an index of a 1- or 2-byte code is inside the frame table");

enum { DEPOT_UNINIT, DEPOT_BUSY, DEPOT_READY, DEPOT_FAILED };

static int depot_state = DEPOT_UNINIT; /* set-up progress, atomic */
static uint32_t *depot_pool;           /* HWT_DEPOT_POOL_UNITS units, published before READY */
static uint32_t *depot_buckets;        /* heads of the bucket chains (ids), atomic */
static uint64_t *depot_pcs;            /* the frame table, by index */
static uint16_t *depot_pc_slots;       /* index + 1 of a frame table entry, 0 = empty; atomic */
static uint32_t depot_pc_count;        /* frame table indexes handed out; may pass the end */
static uint64_t depot_used = 1;        /* units handed out (unit 0 reserved); may pass the end */
static uint64_t depot_stacks;          /* stack and alias records published */
static uint64_t depot_tid0;            /* the first tid put + 1, 0 until then; set once */

/* Reserves the pool at first use. A put racing the first one gets 0 (no stack) rather than
 * waiting: the racer may be a signal handler interrupting the very thread that sets up. */
static bool depot_ready(void)
{
    int state = __atomic_load_n(&depot_state, __ATOMIC_ACQUIRE);
    if (likely(state == DEPOT_READY))
        return true;
    if (state != DEPOT_UNINIT ||
        !__atomic_compare_exchange_n(&depot_state, &state, DEPOT_BUSY, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return false;
    depot_pool = hwt_meta_alloc(HWT_DEPOT_POOL_SIZE + DEPOT_PAD, HWT_DEPOT_UNIT);
    depot_buckets = hwt_meta_alloc(HWT_DEPOT_BUCKETS * sizeof(uint32_t), sizeof(uint32_t));
    depot_pcs = hwt_meta_alloc(HWT_DEPOT_PCS * sizeof(uint64_t), sizeof(uint64_t));
    depot_pc_slots = hwt_meta_alloc(HWT_DEPOT_PC_SLOTS * sizeof(uint16_t), sizeof(uint16_t));
    state = depot_pool && depot_buckets && depot_pcs && depot_pc_slots ? DEPOT_READY : DEPOT_FAILED;
    __atomic_store_n(&depot_state, state, __ATOMIC_RELEASE);
    return state == DEPOT_READY;
}

/* Multiplicative mixing over the frames only, so that the same stack from two threads lands in
 * one bucket: good enough spread for return addresses, a few cycles a frame. */
static uint32_t depot_hash(const uintptr_t *pcs, unsigned n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= pcs[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return (uint32_t)(h ^ (h >> 29));
}

static unsigned varint_put(uint8_t *p, uint64_t v)
{
    unsigned i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

/* Reads a varint at *p (at most DEPOT_VARINT_MAX bytes). Returns false past 64 bits. */
static inline bool varint_get(const uint8_t **p, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;

    if (likely(!(*q & 0x80))) {
        *out = *q;
        *p = q + 1;
        return true;
    }
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = *q++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            *p = q;
            return true;
        }
    }
    return false;
}

/* A frame code: bit 0 of the first byte says what the rest is, 0 an index into the frame table,
 * 1 the zigzag difference from the previous frame (the frame itself for the first); the first
 * byte carries 6 bits of it, a varint of the rest follows when bit 7 is set. */
static unsigned frame_put(uint8_t *p, bool delta, uint64_t v)
{
    p[0] = (uint8_t)((v & 0x3f) << 1 | (delta ? 1u : 0u));
    if (v >> 6 == 0)
        return 1;
    p[0] |= 0x80;
    return 1 + varint_put(p + 1, v >> 6);
}

static uint64_t zigzag(uint64_t diff)
{
    return diff << 1 ^ (uint64_t)((int64_t)diff >> 63);
}

static uint64_t unzigzag(uint64_t v)
{
    return v >> 1 ^ (0 - (v & 1));
}

static uint32_t pc_slot_of(uint64_t pc)
{
    return (uint32_t)((pc * 0x9e3779b97f4a7c15u) >> 40);
}

/* Index of pc in the frame table, adding it when there is room; -1 when it has none. Two
 * threads adding the same pc meet at its slot: the loser uses the winner's index and keeps
 * its own for the next slot it probes (an index is lost only when the probes run out). */
static long pc_index(uint64_t pc)
{
    uint32_t slot = pc_slot_of(pc);
    uint16_t mine = 0; /* index + 1 claimed by this call */

    for (unsigned probe = 0; probe < HWT_DEPOT_PC_PROBES; probe++, slot++) {
        uint16_t *entry = &depot_pc_slots[slot & (HWT_DEPOT_PC_SLOTS - 1)];
        uint16_t e = __atomic_load_n(entry, __ATOMIC_ACQUIRE);
        if (e == 0) {
            if (mine == 0) {
                if (__atomic_load_n(&depot_pc_count, __ATOMIC_RELAXED) >= HWT_DEPOT_PCS)
                    return -1;
                uint32_t claim = __atomic_fetch_add(&depot_pc_count, 1, __ATOMIC_RELAXED);
                if (claim >= HWT_DEPOT_PCS)
                    return -1;
                mine = (uint16_t)(claim + 1);
                depot_pcs[mine - 1] = pc;
            }
            if (__atomic_compare_exchange_n(entry, &e, mine, false, __ATOMIC_RELEASE,
                                            __ATOMIC_ACQUIRE))
                return (long)mine - 1;
        }
        if (depot_pcs[e - 1] == pc)
            return (long)e - 1;
    }
    return -1;
}

/* A parsed record. */
struct depot_view {
    uint32_t next;
    uint8_t check; /* top bits of the frames' hash */
    uint8_t kind;
    uint8_t nr;
    uint32_t tid;          /* DEPOT_STACK, DEPOT_ALIAS */
    uint32_t target;       /* DEPOT_ALIAS: the record holding the frames */
    const uint8_t *frames; /* DEPOT_STACK, DEPOT_TAIL: the first frame code */
};

static uint8_t hash_check(uint32_t hash)
{
    return (uint8_t)(hash >> (32 - 4));
}

/* The tid a record codes tid against: the first one ever put, fixed before any record. */
static uint32_t tid_base(uint32_t tid)
{
    uint64_t t0 = __atomic_load_n(&depot_tid0, __ATOMIC_ACQUIRE);
    if (t0 == 0) {
        __atomic_compare_exchange_n(&depot_tid0, &t0, (uint64_t)tid + 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        t0 = __atomic_load_n(&depot_tid0, __ATOMIC_ACQUIRE);
    }
    return (uint32_t)(t0 - 1);
}

/* Parses the record of id; false when id cannot name a record of this pool. Every read stays
 * inside the pool, whatever id is. */
static bool depot_view(uint32_t id, struct depot_view *v)
{
    const uint8_t *p;
    uint64_t x;
    uint32_t header;

    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - 1)
        return false;
    header = depot_pool[id];
    p = (const uint8_t *)&depot_pool[id + 1];
    v->next = header & DEPOT_NEXT_MASK;
    v->check = (uint8_t)(header >> DEPOT_CHECK_SHIFT & DEPOT_CHECK_MASK);
    v->kind = (uint8_t)(header >> DEPOT_KIND_SHIFT & DEPOT_KIND_MASK);
    v->nr = (uint8_t)(header >> DEPOT_NR_SHIFT);
    if (v->kind == DEPOT_DEAD || v->nr == 0 || v->nr > HWT_STACK_MAX_FRAMES)
        return false;
    v->frames = p;
    if (v->kind == DEPOT_TAIL)
        return true;
    if (!varint_get(&p, &x))
        return false;
    /* records exist, so the base is set */
    v->tid = (uint32_t)(__atomic_load_n(&depot_tid0, __ATOMIC_ACQUIRE) - 1) + (uint32_t)unzigzag(x);
    v->frames = p;
    if (v->kind == DEPOT_STACK)
        return true;
    if (!varint_get(&p, &x) || x == 0 || x >= id)
        return false;
    v->target = (uint32_t)x;
    return true;
}

/* Decodes n frame codes from *p into pcs; with expect, stops at the first frame that differs
 * from it (false), so a chain walk rejects another stack after a frame or two. */
static inline __attribute__((always_inline)) bool
decode_frames(const uint8_t **p, unsigned n, uintptr_t *pcs, const uintptr_t *expect)
{
    const uint8_t *q = *p;
    uint64_t prev = 0, x;

    for (unsigned i = 0; i < n; i++) {
        unsigned w = q[0] | (unsigned)q[1] << 8;
        /* the common codes, an index of 1 or 2 bytes: always inside the table (an entry not
         * yet written reads 0, which only a damaged id can reach) */
        if (likely(!(w & 0x81))) {
            prev = depot_pcs[w >> 1 & 0x7f];
            q++;
        } else if ((w & 0x8081) == 0x80) {
            prev = depot_pcs[(w >> 1 & 0x3f) | (w >> 8) << 6];
            q += 2;
        } else {
            x = (uint64_t)(w >> 1 & 0x3f);
            q++;
            if (w & 0x80) {
                uint64_t rest;
                if (!varint_get(&q, &rest) || rest >> 58 != 0)
                    return false;
                x |= rest << 6;
            }
            if (w & 1)
                prev += unzigzag(x);
            else if (x < HWT_DEPOT_PCS)
                prev = depot_pcs[x];
            else
                return false;
        }
        pcs[i] = (uintptr_t)prev;
        if (expect && expect[i] != pcs[i])
            return false;
    }
    *p = q;
    return true;
}

/* Decodes the v->nr frames of the DEPOT_STACK or DEPOT_TAIL record id (viewed as v), checked
 * against expect as decode_frames does when it is not NULL. */
static bool depot_frames(uint32_t id, const struct depot_view *v, uintptr_t *pcs,
                         const uintptr_t *expect)
{
    const uint8_t *p = v->frames;
    struct depot_view tail;
    unsigned inline_nr;
    uint64_t x;

    if (v->kind == DEPOT_TAIL)
        return decode_frames(&p, v->nr, pcs, expect);
    inline_nr = v->nr < HWT_DEPOT_INLINE ? v->nr : HWT_DEPOT_INLINE;
    if (!decode_frames(&p, inline_nr, pcs, expect))
        return false;
    if (v->nr == inline_nr)
        return true;
    if (!varint_get(&p, &x) || x == 0 || x >= id)
        return false;
    if (!depot_view((uint32_t)x, &tail) || tail.kind != DEPOT_TAIL || tail.nr != v->nr - inline_nr)
        return false;
    p = tail.frames;
    return decode_frames(&p, tail.nr, pcs + inline_nr, expect ? expect + inline_nr : NULL);
}

/* The frames of the record of id, following an alias; the count, or 0 for a bad id or a
 * tail (not a stack of its own). */
static unsigned depot_fetch(uint32_t id, struct depot_view *v, uintptr_t *pcs)
{
    struct depot_view target;

    if (!depot_view(id, v) || v->kind == DEPOT_TAIL)
        return 0;
    if (v->kind == DEPOT_ALIAS) {
        if (!depot_view(v->target, &target) || target.kind != DEPOT_STACK || target.nr != v->nr ||
            !depot_frames(v->target, &target, pcs, NULL))
            return 0;
        return v->nr;
    }
    return depot_frames(id, v, pcs, NULL) ? v->nr : 0;
}

static bool frames_equal(const uintptr_t *a, const uintptr_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* What a chain walk looks for: a stack of tid (or, in *base, the first DEPOT_STACK of the same
 * frames from another thread), or a tail. */
struct depot_key {
    uint32_t hash;
    bool tail;
    uint32_t tid;
    const uintptr_t *pcs;
    unsigned n;
};

/* Walks the chain from head down to (not including) stop. Returns the id of the record of key
 * or 0; *base as above. */
static uint32_t depot_find(uint32_t head, uint32_t stop, const struct depot_key *key,
                           uint32_t *base)
{
    uintptr_t frames[HWT_STACK_MAX_FRAMES];
    struct depot_view v;

    /* what the header of a candidate holds: its hash bits and count, and a tail or not */
    uint32_t want = (uint32_t)hash_check(key->hash) << DEPOT_CHECK_SHIFT | key->n << DEPOT_NR_SHIFT;
    uint32_t mask = DEPOT_CHECK_MASK << DEPOT_CHECK_SHIFT | 0xffffffffu << DEPOT_NR_SHIFT;
    uint32_t next;

    for (uint32_t id = head; id != 0 && id != stop; id = next) {
        if (id >= HWT_DEPOT_POOL_UNITS - 1)
            return 0;
        uint32_t header = depot_pool[id];
        next = header & DEPOT_NEXT_MASK;
        if ((header & mask) != want ||
            ((header >> DEPOT_KIND_SHIFT & DEPOT_KIND_MASK) == DEPOT_TAIL) != key->tail)
            continue;
        if (!depot_view(id, &v))
            return 0;
        if (v.kind == DEPOT_ALIAS ? v.tid != key->tid || depot_fetch(id, &v, frames) != key->n ||
                                        !frames_equal(frames, key->pcs, key->n)
                                  : !depot_frames(id, &v, frames, key->pcs))
            continue;
        if (key->tail || v.tid == key->tid)
            return id;
        if (*base == 0)
            *base = id;
    }
    return 0;
}

static unsigned encode_frames(uint8_t *p, const uintptr_t *pcs, unsigned n)
{
    unsigned len = 0;
    uint64_t prev = 0;

    for (unsigned i = 0; i < n; i++) {
        long index = pc_index(pcs[i]);
        if (index >= 0)
            len += frame_put(p + len, false, (uint64_t)index);
        else
            len += frame_put(p + len, true, zigzag((uint64_t)pcs[i] - prev));
        prev = pcs[i];
    }
    return len;
}

/* Codes the body of a record of key into buf after its header: an alias of base when base is
 * not 0, a stack naming tail when tail is not 0. Zero-pads it to whole units; returns them. */
static unsigned depot_encode(uint8_t *buf, const struct depot_key *key, uint32_t base,
                             uint32_t tail)
{
    unsigned len = sizeof(uint32_t); /* the header, written at publication */

    if (!key->tail)
        len += varint_put(buf + len, zigzag((uint64_t)((int64_t)key->tid - tid_base(key->tid))));
    if (base) {
        len += varint_put(buf + len, base);
    } else if (key->tail) {
        len += encode_frames(buf + len, key->pcs, key->n);
    } else {
        len += encode_frames(buf + len, key->pcs, tail ? HWT_DEPOT_INLINE : key->n);
        if (tail)
            len += varint_put(buf + len, tail);
    }
    while (len % HWT_DEPOT_UNIT)
        buf[len++] = 0;
    return len / HWT_DEPOT_UNIT;
}

static uint32_t depot_header(uint32_t next, const struct depot_key *key, unsigned kind)
{
    return next | (uint32_t)hash_check(key->hash) << DEPOT_CHECK_SHIFT |
           (uint32_t)kind << DEPOT_KIND_SHIFT | key->n << DEPOT_NR_SHIFT;
}

/* Finds the record of key, or adds it. Returns its id, 0 when the pool is full. */
static uint32_t depot_insert(const struct depot_key *key)
{
    uint8_t buf[DEPOT_RECORD_MAX + HWT_DEPOT_UNIT];
    uint32_t *bucket = &depot_buckets[key->hash & (HWT_DEPOT_BUCKETS - 1)];
    uint32_t head, found, id, base = 0, tail = 0;
    unsigned kind = key->tail ? DEPOT_TAIL : DEPOT_STACK;
    uint64_t units, start;

    head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
    found = depot_find(head, 0, key, &base);
    if (found)
        return found;
    if (base) {
        kind = DEPOT_ALIAS;
    } else if (!key->tail && key->n > HWT_DEPOT_INLINE) {
        const uintptr_t *rest = key->pcs + HWT_DEPOT_INLINE;
        unsigned rest_n = key->n - HWT_DEPOT_INLINE;
        struct depot_key tail_key = {depot_hash(rest, rest_n), true, 0, rest, rest_n};
        tail = depot_insert(&tail_key);
        if (tail == 0)
            return 0;
    }

    /* Bump-allocate. Once full, the pool stays full: the load keeps the counter from growing
     * further than one record per racing thread past the end. */
    units = depot_encode(buf, key, base, tail);
    if (__atomic_load_n(&depot_used, __ATOMIC_RELAXED) + units > HWT_DEPOT_POOL_UNITS)
        return 0;
    start = __atomic_fetch_add(&depot_used, units, __ATOMIC_RELAXED);
    if (start + units > HWT_DEPOT_POOL_UNITS)
        return 0;
    id = (uint32_t)start;
    for (unsigned i = 1; i < units; i++) {
        uint32_t word;
        __builtin_memcpy(&word, buf + i * HWT_DEPOT_UNIT, sizeof(word));
        depot_pool[id + i] = word;
    }

    for (;;) {
        uint32_t old = head, ignored = 0;
        depot_pool[id] = depot_header(head, key, kind);
        if (__atomic_compare_exchange_n(bucket, &head, id, false, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE))
            break;
        /* Someone published first: if it is the same record, theirs wins (ours is leaked, a
         * rare race bounded by the number of threads) so every thread gets the same id. */
        found = depot_find(head, old, key, &ignored);
        if (found) {
            depot_pool[id] = 0; /* DEPOT_DEAD: never a record */
            return found;
        }
    }
    if (!key->tail)
        __atomic_fetch_add(&depot_stacks, 1, __ATOMIC_RELAXED);
    return id;
}

uint32_t hwt_stackdepot_put(uint32_t tid, const uintptr_t *pcs, unsigned n)
{
    if (n == 0 || !depot_ready())
        return 0;
    if (n > HWT_STACK_MAX_FRAMES)
        n = HWT_STACK_MAX_FRAMES;
    struct depot_key key = {depot_hash(pcs, n), false, tid, pcs, n};
    return depot_insert(&key);
}

unsigned hwt_stackdepot_get(uint32_t id, uint32_t *tid, uintptr_t *pcs, unsigned max)
{
    uintptr_t frames[HWT_STACK_MAX_FRAMES];
    struct depot_view v;
    unsigned n;

    if (__atomic_load_n(&depot_state, __ATOMIC_ACQUIRE) != DEPOT_READY)
        return 0;
    /* Ids in [1, used) were handed out; only published records are reachable from one. */
    if (id >= __atomic_load_n(&depot_used, __ATOMIC_ACQUIRE))
        return 0;
    n = depot_fetch(id, &v, frames);
    if (n == 0)
        return 0;
    if (n > max)
        n = max;
    for (unsigned i = 0; i < n; i++)
        pcs[i] = frames[i];
    if (tid)
        *tid = v.tid;
    return n;
}

void hwt_stackdepot_usage(uint64_t *stacks, uint64_t *bytes)
{
    uint64_t used = __atomic_load_n(&depot_used, __ATOMIC_RELAXED);
    uint64_t pcs = __atomic_load_n(&depot_pc_count, __ATOMIC_RELAXED);

    if (used > HWT_DEPOT_POOL_UNITS)
        used = HWT_DEPOT_POOL_UNITS;
    if (pcs > HWT_DEPOT_PCS)
        pcs = HWT_DEPOT_PCS;
    if (stacks)
        *stacks = __atomic_load_n(&depot_stacks, __ATOMIC_RELAXED);
    if (bytes)
        *bytes = __atomic_load_n(&depot_state, __ATOMIC_RELAXED) == DEPOT_READY
                     ? (used - 1) * HWT_DEPOT_UNIT + HWT_DEPOT_BUCKETS * sizeof(uint32_t) +
                           pcs * sizeof(uint64_t) + HWT_DEPOT_PC_SLOTS * sizeof(uint16_t)
                     : 0;
}
