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
#define HWT_DEPOT_PC_SLOTS (1u << 14) /* open addressing over it, power of two; 64 KiB */
#define HWT_DEPOT_PC_PROBES 32u

/* A record, at a unit boundary, bytes in order:
 *   u32  link: bits 0-19 id of the next record in the bucket (0 = end), bits 20-23
 *        HWT_DEPOT_MAGIC, bits 24-31 the top byte of the stack's hash
 *   u8   kind (bits 6-7) and frame count (bits 0-5, 1..HWT_STACK_MAX_FRAMES)
 *   varint  tid of the thread that captured the stack
 *   DEPOT_STACK: one code per frame, innermost first (frame_put)
 *   DEPOT_ALIAS: varint id of the DEPOT_STACK record with the same frames seen first from
 *        another thread: the thread is part of what a report says, the frames are shared.
 * Immutable once published through a bucket (release CAS), so readers that reach it with an
 * acquire load need no lock. */
#define HWT_DEPOT_MAGIC 0xau
#define DEPOT_NEXT_MASK ((1u << HWT_STACKDEPOT_ID_BITS) - 1)
#define DEPOT_MAGIC_SHIFT 20u
#define DEPOT_CHECK_SHIFT 24u
#define DEPOT_KIND_SHIFT 6u
#define DEPOT_NR_MASK 0x3fu
#define DEPOT_HEADER 5u
#define DEPOT_VARINT_MAX 10u /* bytes of a 64-bit varint; a frame code is never longer */
#define DEPOT_RECORD_MAX (DEPOT_HEADER + DEPOT_VARINT_MAX * (HWT_STACK_MAX_FRAMES + 1))

enum { DEPOT_DEAD = 0, DEPOT_STACK = 1, DEPOT_ALIAS = 2 };

_Static_assert(HWT_STACK_MAX_FRAMES <= DEPOT_NR_MASK, "frame count fits its 6 bits");
_Static_assert(HWT_DEPOT_POOL_UNITS <= (1u << HWT_STACKDEPOT_ID_BITS),
               "ids are unit indexes below 2^HWT_STACKDEPOT_ID_BITS");
_Static_assert(HWT_STACKDEPOT_ID_BITS <= DEPOT_MAGIC_SHIFT, "next id fits the link word");

enum { DEPOT_UNINIT, DEPOT_BUSY, DEPOT_READY, DEPOT_FAILED };

static int depot_state = DEPOT_UNINIT; /* set-up progress, atomic */
static uint32_t *depot_pool;           /* HWT_DEPOT_POOL_UNITS units, published before READY */
static uint32_t *depot_buckets;        /* heads of the bucket chains (ids), atomic */
static uint64_t *depot_pcs;            /* the frame table, by index */
static uint32_t *depot_pc_slots;       /* index + 1 of a frame table entry, 0 = empty; atomic */
static uint32_t depot_pc_count;        /* frame table indexes handed out; may pass the end */
static uint64_t depot_used = 1;        /* units handed out (unit 0 reserved); may pass the end */
static uint64_t depot_stacks;          /* records published */

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
    depot_pool = hwt_meta_alloc(HWT_DEPOT_POOL_SIZE, HWT_DEPOT_UNIT);
    depot_buckets = hwt_meta_alloc(HWT_DEPOT_BUCKETS * sizeof(uint32_t), sizeof(uint32_t));
    depot_pcs = hwt_meta_alloc(HWT_DEPOT_PCS * sizeof(uint64_t), sizeof(uint64_t));
    depot_pc_slots = hwt_meta_alloc(HWT_DEPOT_PC_SLOTS * sizeof(uint32_t), sizeof(uint32_t));
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

/* Reads a varint from [*p, end). Returns false when it runs past end or past 64 bits. */
static bool varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return false;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
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
    uint32_t mine = 0; /* index + 1 claimed by this call */

    for (unsigned probe = 0; probe < HWT_DEPOT_PC_PROBES; probe++, slot++) {
        uint32_t *entry = &depot_pc_slots[slot & (HWT_DEPOT_PC_SLOTS - 1)];
        uint32_t e = __atomic_load_n(entry, __ATOMIC_ACQUIRE);
        if (e == 0) {
            if (mine == 0) {
                if (__atomic_load_n(&depot_pc_count, __ATOMIC_RELAXED) >= HWT_DEPOT_PCS)
                    return -1;
                mine = __atomic_fetch_add(&depot_pc_count, 1, __ATOMIC_RELAXED) + 1;
                if (mine > HWT_DEPOT_PCS)
                    return -1;
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
    uint8_t check; /* top byte of the stack's hash */
    uint8_t kind;
    uint8_t nr;
    uint32_t tid;
    uint32_t target;       /* DEPOT_ALIAS: the record holding the frames */
    const uint8_t *frames; /* DEPOT_STACK: the first frame code */
};

/* Parses the record of id; false when id cannot name a record of this pool. Every read stays
 * inside the pool, whatever id is. */
static bool depot_view(uint32_t id, struct depot_view *v)
{
    const uint8_t *p, *end = (const uint8_t *)(depot_pool + HWT_DEPOT_POOL_UNITS);
    uint64_t x;
    uint32_t link;

    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - 2)
        return false;
    link = depot_pool[id];
    p = (const uint8_t *)&depot_pool[id] + sizeof(link);
    if ((link >> DEPOT_MAGIC_SHIFT & 0xfu) != HWT_DEPOT_MAGIC)
        return false;
    v->next = link & DEPOT_NEXT_MASK;
    v->check = (uint8_t)(link >> DEPOT_CHECK_SHIFT);
    v->kind = *p >> DEPOT_KIND_SHIFT;
    v->nr = *p++ & DEPOT_NR_MASK;
    if (v->nr == 0 || v->nr > HWT_STACK_MAX_FRAMES || !varint_get(&p, end, &x) || x > UINT32_MAX)
        return false;
    v->tid = (uint32_t)x;
    v->frames = p;
    if (v->kind == DEPOT_STACK)
        return true;
    /* an alias is published after the record it names, so it names an older one */
    if (v->kind != DEPOT_ALIAS || !varint_get(&p, end, &x) || x == 0 || x >= id)
        return false;
    v->target = (uint32_t)x;
    return true;
}

/* Decodes the v->nr frames of a DEPOT_STACK record into pcs. */
static bool depot_frames(const struct depot_view *v, uintptr_t *pcs)
{
    const uint8_t *p = v->frames, *end = (const uint8_t *)(depot_pool + HWT_DEPOT_POOL_UNITS);
    uint32_t count = __atomic_load_n(&depot_pc_count, __ATOMIC_ACQUIRE);
    uint64_t prev = 0, x;

    for (unsigned i = 0; i < v->nr; i++) {
        if (p >= end)
            return false;
        uint8_t b = *p++;
        x = (uint64_t)(b >> 1 & 0x3f);
        if (b & 0x80) {
            uint64_t rest;
            if (!varint_get(&p, end, &rest) || rest >> 58 != 0)
                return false;
            x |= rest << 6;
        }
        if (b & 1) {
            prev += unzigzag(x);
        } else {
            if (x >= count || x >= HWT_DEPOT_PCS)
                return false;
            prev = depot_pcs[x];
        }
        pcs[i] = (uintptr_t)prev;
    }
    return true;
}

/* The frames of the record of id, following an alias; the count, or 0 for a bad id. */
static unsigned depot_fetch(uint32_t id, struct depot_view *v, uintptr_t *pcs)
{
    struct depot_view target;

    if (!depot_view(id, v))
        return 0;
    if (v->kind == DEPOT_ALIAS) {
        if (!depot_view(v->target, &target) || target.kind != DEPOT_STACK || target.nr != v->nr ||
            !depot_frames(&target, pcs))
            return 0;
        return v->nr;
    }
    return depot_frames(v, pcs) ? v->nr : 0;
}

static bool frames_equal(const uintptr_t *a, const uintptr_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* Walks the chain from head down to (not including) stop. Returns the id of (tid, pcs) or 0;
 * *base gets the first DEPOT_STACK record of the same frames from another thread, if any. */
static uint32_t depot_find(uint32_t head, uint32_t stop, uint32_t hash, uint32_t tid,
                           const uintptr_t *pcs, unsigned n, uint32_t *base)
{
    uintptr_t frames[HWT_STACK_MAX_FRAMES];
    struct depot_view v;

    for (uint32_t id = head; id != 0 && id != stop; id = v.next) {
        if (!depot_view(id, &v))
            return 0;
        if (v.check != (uint8_t)(hash >> DEPOT_CHECK_SHIFT) || v.nr != n)
            continue;
        if (v.kind == DEPOT_ALIAS ? v.tid != tid || depot_fetch(id, &v, frames) != n
                                  : !depot_frames(&v, frames))
            continue;
        if (!frames_equal(frames, pcs, n))
            continue;
        if (v.tid == tid)
            return id;
        if (*base == 0)
            *base = id;
    }
    return 0;
}

/* Codes (tid, pcs) as a record into buf, zero-padded to whole units; an alias of base when
 * base is not 0. Returns its size in units. */
static unsigned depot_encode(uint8_t *buf, uint32_t tid, const uintptr_t *pcs, unsigned n,
                             uint32_t base)
{
    unsigned len = sizeof(uint32_t); /* the link, written at publication */
    uint64_t prev = 0;

    buf[len++] = (uint8_t)((base ? DEPOT_ALIAS : DEPOT_STACK) << DEPOT_KIND_SHIFT | n);
    len += varint_put(buf + len, tid);
    if (base) {
        len += varint_put(buf + len, base);
    } else {
        for (unsigned i = 0; i < n; i++) {
            long index = pc_index(pcs[i]);
            if (index >= 0)
                len += frame_put(buf + len, false, (uint64_t)index);
            else
                len += frame_put(buf + len, true, zigzag((uint64_t)pcs[i] - prev));
            prev = pcs[i];
        }
    }
    while (len % HWT_DEPOT_UNIT)
        buf[len++] = 0;
    return len / HWT_DEPOT_UNIT;
}

static void depot_link(uint32_t id, uint32_t next, uint32_t hash)
{
    depot_pool[id] = next | HWT_DEPOT_MAGIC << DEPOT_MAGIC_SHIFT |
                     (hash >> DEPOT_CHECK_SHIFT) << DEPOT_CHECK_SHIFT;
}

uint32_t hwt_stackdepot_put(uint32_t tid, const uintptr_t *pcs, unsigned n)
{
    uint8_t buf[DEPOT_RECORD_MAX + HWT_DEPOT_UNIT];
    uint32_t hash, head, found, id, base = 0;
    uint32_t *bucket;
    uint64_t units, start;

    if (n == 0 || !depot_ready())
        return 0;
    if (n > HWT_STACK_MAX_FRAMES)
        n = HWT_STACK_MAX_FRAMES;
    hash = depot_hash(pcs, n);
    bucket = &depot_buckets[hash & (HWT_DEPOT_BUCKETS - 1)];
    head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
    found = depot_find(head, 0, hash, tid, pcs, n, &base);
    if (found)
        return found;

    /* Bump-allocate. Once full, the pool stays full: the load keeps the counter from growing
     * further than one record per racing thread past the end. */
    units = depot_encode(buf, tid, pcs, n, base);
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
        uint32_t old = head;
        depot_link(id, head, hash);
        if (__atomic_compare_exchange_n(bucket, &head, id, false, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE))
            break;
        /* Someone published first: if it is the same stack, theirs wins (ours is leaked, a
         * rare race bounded by the number of threads) so every thread gets the same id. */
        uint32_t ignored = 0;
        found = depot_find(head, old, hash, tid, pcs, n, &ignored);
        if (found) {
            depot_pool[id] = 0; /* no magic: never a record */
            return found;
        }
    }
    __atomic_fetch_add(&depot_stacks, 1, __ATOMIC_RELAXED);
    return id;
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
                           pcs * sizeof(uint64_t) + HWT_DEPOT_PC_SLOTS * sizeof(uint32_t)
                     : 0;
}
