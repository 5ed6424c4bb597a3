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
#define HWT_DEPOT_BUCKETS (1u << 13)                                /* power of two; 32 KiB */

/* The frame table: each distinct return address once, so that a frame costs the varint of its
 * index (2 bytes for the first 8192 addresses) instead of 8 bytes. python3 start-up stores 39k
 * stacks over 6.6k distinct addresses. Once full, new addresses are coded as deltas.
 * An entry is 32 bits: the index of the address's 256 MiB window (its bits 28 and up, one of
 * DEPOT_WINDOWS kept as they come) and its offset in it. Code is loaded in a few such windows
 * (the program, the libraries next to each other); an address in none of them is coded as a
 * delta, as when the table is full. 8 bytes an entry cost python3 start-up 26 KiB more. */
#define HWT_DEPOT_PCS 12288u /* 48 KiB, filled in order */
#define DEPOT_WINDOW_SHIFT 28u
#define DEPOT_WINDOWS 16u             /* 2^(32 - DEPOT_WINDOW_SHIFT) */
#define HWT_DEPOT_PC_SLOTS (1u << 14) /* open addressing over it, power of two; 32 KiB */
#define HWT_DEPOT_PC_PROBES 32u

/* A stack is two shared frame records, its innermost HWT_DEPOT_INLINE frames (the head) and
 * the rest (the tail), named by an 8-byte record of their two ids. python3 start-up's 39.6k
 * stacks of 12 frames have 15.6k distinct heads and 6.5k distinct tails: the pairs cost 8 bytes
 * a stack where inline head codes and a tail id cost 16 (the whole depot: 745 KiB -> 619 KiB
 * by a model of its records; a split after 3 frames costs 641, after 5, 650). */
#define HWT_DEPOT_INLINE 4u

/* A record, at a unit boundary. Its first 32-bit word is a header: bits 0-19 the id of the next
 * record in the bucket (0 = end), bits 24-25 its kind; the other bits by kind.
 *   DEPOT_FRAMES  a head or a tail: bits 20-23 the top bits of the frames' hash, bits 26-31
 *           the frame count (1..32); then the codes of the frames (frame_put). Named by stacks
 *           only, never handed out.
 *   DEPOT_STACK  two units: the ids of its head and of its tail (0: the stack has no more
 *           than HWT_DEPOT_INLINE frames), 40 bits in the 42 bits left of the 64 (stack_pack).
 *           The stack as the first thread the depot saw captured it.
 *   DEPOT_ALIAS  the same stack from another thread: bits 20-23 and 26-31 as for frames;
 *           varint zigzag(tid - the first tid), varint id of the DEPOT_STACK record. The
 *           thread is part of what a report says, the frames are shared.
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

enum { DEPOT_DEAD = 0, DEPOT_STACK = 1, DEPOT_ALIAS = 2, DEPOT_FRAMES = 3 };

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
static uint32_t *depot_pcs;            /* the frame table, by index (window, offset) */
static uint64_t depot_windows[DEPOT_WINDOWS]; /* (address >> DEPOT_WINDOW_SHIFT) + 1, 0 = free */
static uint16_t *depot_pc_slots; /* index + 1 of a frame table entry, 0 = empty; atomic */
static uint32_t depot_pc_count;  /* frame table indexes handed out; may pass the end */
static uint64_t depot_used = 1;  /* units handed out (unit 0 reserved); may pass the end */
static uint64_t depot_stacks;    /* records a put made and returned: (thread, stack) pairs */
static uint64_t depot_tid0;      /* the first tid put + 1, 0 until then; set once */

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
    depot_pcs = hwt_meta_alloc(HWT_DEPOT_PCS * sizeof(uint32_t), sizeof(uint32_t));
    depot_pc_slots = hwt_meta_alloc(HWT_DEPOT_PC_SLOTS * sizeof(uint16_t), sizeof(uint16_t));
    state = depot_pool && depot_buckets && depot_pcs && depot_pc_slots ? DEPOT_READY : DEPOT_FAILED;
    __atomic_store_n(&depot_state, state, __ATOMIC_RELEASE);
    return state == DEPOT_READY;
}

/* Multiplicative mixing over the frames only, so that the same stack from two threads lands in
 * one bucket: good enough spread for return addresses, a few cycles a frame. 64 bits: the
 * low 32 pick the bucket and the check bits, all of them key a thread's cache. */
static uint64_t depot_hash(const uintptr_t *pcs, unsigned n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= pcs[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return h ^ (h >> 29);
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

/* The address of a frame table entry. An entry not yet written reads as a made-up address,
 * which only a damaged id can reach. */
static inline uint64_t pc_of_entry(uint32_t e)
{
    return (__atomic_load_n(&depot_windows[e >> DEPOT_WINDOW_SHIFT], __ATOMIC_RELAXED) - 1)
               << DEPOT_WINDOW_SHIFT |
           (e & ((1u << DEPOT_WINDOW_SHIFT) - 1));
}

/* The entry of pc, claiming a window for it when it is in none yet; false when all are
 * taken. Windows are published (release) before an entry names them, and records reach
 * entries through their own release publication. */
static bool pc_entry(uint64_t pc, uint32_t *e)
{
    uint64_t win = (pc >> DEPOT_WINDOW_SHIFT) + 1;
    for (unsigned i = 0; i < DEPOT_WINDOWS; i++) {
        uint64_t w = __atomic_load_n(&depot_windows[i], __ATOMIC_ACQUIRE);
        if (w == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&depot_windows[i], &zero, win, false, __ATOMIC_RELEASE,
                                             __ATOMIC_ACQUIRE))
                w = zero; /* another thread took it: maybe for this window */
            else
                w = win;
        }
        if (w == win) {
            *e = i << DEPOT_WINDOW_SHIFT | (uint32_t)(pc & ((1u << DEPOT_WINDOW_SHIFT) - 1));
            return true;
        }
    }
    return false;
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
    uint32_t entry_of_pc;

    if (!pc_entry(pc, &entry_of_pc))
        return -1;

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
                depot_pcs[mine - 1] = entry_of_pc;
            }
            if (__atomic_compare_exchange_n(entry, &e, mine, false, __ATOMIC_RELEASE,
                                            __ATOMIC_ACQUIRE))
                return (long)mine - 1;
        }
        if (depot_pcs[e - 1] == entry_of_pc)
            return (long)e - 1;
    }
    return -1;
}

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

/* A DEPOT_STACK record's two ids, in the bits of its 64 that the header leaves free: bits
 * 20-23, then 26-61. */
static uint64_t stack_pack(uint32_t head, uint32_t tail)
{
    uint64_t x = (uint64_t)head | (uint64_t)tail << HWT_STACKDEPOT_ID_BITS;
    return (x & 0xf) << DEPOT_CHECK_SHIFT | (x >> 4) << DEPOT_NR_SHIFT;
}

static void stack_unpack(uint64_t v, uint32_t *head, uint32_t *tail)
{
    uint64_t x = (v >> DEPOT_CHECK_SHIFT & 0xf) | (v >> DEPOT_NR_SHIFT) << 4;
    *head = (uint32_t)(x & DEPOT_NEXT_MASK);
    *tail = (uint32_t)(x >> HWT_STACKDEPOT_ID_BITS & DEPOT_NEXT_MASK);
}

static unsigned record_kind(uint32_t header)
{
    return header >> DEPOT_KIND_SHIFT & DEPOT_KIND_MASK;
}

/* The 64 bits of the DEPOT_STACK record at id (id + 1 is inside the pool's padding at worst). */
static uint64_t stack_word(uint32_t id)
{
    return (uint64_t)depot_pool[id] | (uint64_t)depot_pool[id + 1] << 32;
}

/* Parses the DEPOT_FRAMES record of id: its frame count and first code; 0 when id cannot name
 * one in this pool. Every read stays inside the pool, whatever id is. */
static unsigned frames_view(uint32_t id, const uint8_t **codes)
{
    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - 1)
        return 0;
    uint32_t header = depot_pool[id];
    unsigned nr = header >> DEPOT_NR_SHIFT;
    if (record_kind(header) != DEPOT_FRAMES || nr == 0 || nr > HWT_STACK_MAX_FRAMES)
        return 0;
    *codes = (const uint8_t *)&depot_pool[id + 1];
    return nr;
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
         * yet written reads as a made-up address, pc_of_entry) */
        if (likely(!(w & 0x81))) {
            prev = pc_of_entry(depot_pcs[w >> 1 & 0x7f]);
            q++;
        } else if ((w & 0x8081) == 0x80) {
            prev = pc_of_entry(depot_pcs[(w >> 1 & 0x3f) | (w >> 8) << 6]);
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
                prev = pc_of_entry(depot_pcs[x]);
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

/* The frames of the DEPOT_STACK record id into pcs (room for HWT_STACK_MAX_FRAMES); the
 * count, 0 for an id that names no stack. */
static unsigned stack_frames(uint32_t id, uintptr_t *pcs)
{
    const uint8_t *codes;
    uint32_t head, tail;
    unsigned n, rest = 0;

    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - 1 || record_kind(depot_pool[id]) != DEPOT_STACK)
        return 0;
    stack_unpack(stack_word(id), &head, &tail);
    if (head >= id || tail >= id)
        return 0;
    n = frames_view(head, &codes);
    if (n == 0 || n > HWT_DEPOT_INLINE || (tail != 0 && n != HWT_DEPOT_INLINE) ||
        !decode_frames(&codes, n, pcs, NULL))
        return 0;
    if (tail != 0) {
        rest = frames_view(tail, &codes);
        if (rest == 0 || n + rest > HWT_STACK_MAX_FRAMES ||
            !decode_frames(&codes, rest, pcs + n, NULL))
            return 0;
    }
    return n + rest;
}

/* What a chain walk looks for, by kind: frames (pcs, n), a stack (head, tail), or an alias
 * (tid_code, target; n frames). tid_code: zigzag(tid - the first tid), as the record holds it. */
struct depot_key {
    uint32_t hash;
    unsigned kind;
    const uintptr_t *pcs;
    unsigned n;
    uint32_t head, tail;
    uint64_t tid_code;
    uint32_t target;
};

/* The header of a DEPOT_FRAMES or DEPOT_ALIAS record of key, without the next id. */
static uint32_t counted_header(const struct depot_key *key)
{
    return (uint32_t)hash_check(key->hash) << DEPOT_CHECK_SHIFT |
           (uint32_t)key->kind << DEPOT_KIND_SHIFT | key->n << DEPOT_NR_SHIFT;
}

/* Whether the record at id is the one of key. */
static bool record_matches(uint32_t id, const struct depot_key *key)
{
    uintptr_t frames[HWT_STACK_MAX_FRAMES];
    uint32_t header = depot_pool[id], head, tail;
    const uint8_t *p;
    uint64_t x;

    if (record_kind(header) != key->kind)
        return false;
    if (key->kind == DEPOT_STACK) {
        stack_unpack(stack_word(id), &head, &tail);
        return head == key->head && tail == key->tail;
    }
    if ((header & ~DEPOT_NEXT_MASK) != counted_header(key))
        return false;
    p = (const uint8_t *)&depot_pool[id + 1];
    if (key->kind == DEPOT_FRAMES)
        return decode_frames(&p, key->n, frames, key->pcs);
    /* DEPOT_ALIAS */
    return varint_get(&p, &x) && x == key->tid_code && varint_get(&p, &x) && x == key->target;
}

/* Walks the chain from head down to (not including) stop. Returns the id of the record of key
 * or 0. */
static uint32_t depot_find(uint32_t head, uint32_t stop, const struct depot_key *key)
{
    for (uint32_t id = head; id != 0 && id != stop; id = depot_pool[id] & DEPOT_NEXT_MASK) {
        if (id >= HWT_DEPOT_POOL_UNITS - 1)
            return 0;
        if (record_matches(id, key))
            return id;
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

/* Codes the record of key into buf: its header without the next id (bits 0-19 clear), then its
 * body, zero-padded to whole units. Returns the units. */
static unsigned depot_encode(uint8_t *buf, const struct depot_key *key)
{
    uint32_t header = counted_header(key);
    unsigned len = sizeof(uint32_t);

    if (key->kind == DEPOT_STACK) {
        uint64_t v = stack_pack(key->head, key->tail) | (uint32_t)DEPOT_STACK << DEPOT_KIND_SHIFT;
        __builtin_memcpy(buf, &v, sizeof(v));
        return 2;
    }
    if (key->kind == DEPOT_FRAMES) {
        len += encode_frames(buf + len, key->pcs, key->n);
    } else { /* DEPOT_ALIAS */
        len += varint_put(buf + len, key->tid_code);
        len += varint_put(buf + len, key->target);
    }
    __builtin_memcpy(buf, &header, sizeof(header));
    while (len % HWT_DEPOT_UNIT)
        buf[len++] = 0;
    return len / HWT_DEPOT_UNIT;
}

/* Finds the record of key, or adds it; *added says which. Returns its id, 0 when the pool is
 * full. */
static uint32_t depot_insert(const struct depot_key *key, bool *added)
{
    uint8_t buf[DEPOT_RECORD_MAX + HWT_DEPOT_UNIT];
    uint32_t *bucket = &depot_buckets[key->hash & (HWT_DEPOT_BUCKETS - 1)];
    uint32_t head, found, id, header;
    uint64_t units, start;

    *added = false;
    head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
    found = depot_find(head, 0, key);
    if (found)
        return found;

    /* Bump-allocate. Once full, the pool stays full: the load keeps the counter from growing
     * further than one record per racing thread past the end. */
    units = depot_encode(buf, key);
    if (__atomic_load_n(&depot_used, __ATOMIC_RELAXED) + units > HWT_DEPOT_POOL_UNITS)
        return 0;
    start = __atomic_fetch_add(&depot_used, units, __ATOMIC_RELAXED);
    if (start + units > HWT_DEPOT_POOL_UNITS)
        return 0;
    id = (uint32_t)start;
    __builtin_memcpy(&header, buf, sizeof(header));
    for (unsigned i = 1; i < units; i++) {
        uint32_t word;
        __builtin_memcpy(&word, buf + i * HWT_DEPOT_UNIT, sizeof(word));
        depot_pool[id + i] = word;
    }

    for (;;) {
        uint32_t old = head;
        depot_pool[id] = header | head;
        if (__atomic_compare_exchange_n(bucket, &head, id, false, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE))
            break;
        /* Someone published first: if it is the same record, theirs wins (ours is leaked, a
         * rare race bounded by the number of threads) so every thread gets the same id. */
        found = depot_find(head, old, key);
        if (found) {
            depot_pool[id] = 0; /* DEPOT_DEAD: never a record */
            return found;
        }
    }
    *added = true;
    return id;
}

/* Id of the DEPOT_FRAMES record of pcs[0..n), stored if new; 0 when the pool is full.
 * cache: the calling thread's, or NULL. A cached id is of a published record, which stays. */
static uint32_t frames_put(struct hwt_stackdepot_cache *cache, const uintptr_t *pcs, unsigned n)
{
    uint64_t hash = depot_hash(pcs, n);
    uint64_t tag = hash | 1; /* never 0, the empty slot's */
    unsigned i = (unsigned)(hash >> 32) & (HWT_STACKDEPOT_CACHE_SLOTS - 1);
    if (cache && cache->slot[i].key == tag)
        return (uint32_t)cache->slot[i].id;
    struct depot_key key = {.hash = (uint32_t)hash, .kind = DEPOT_FRAMES, .pcs = pcs, .n = n};
    bool added;
    uint32_t id = depot_insert(&key, &added);
    if (cache && id != 0) {
        cache->slot[i].key = tag;
        cache->slot[i].id = id;
    }
    return id;
}

static uint32_t mix_ids(uint64_t a, uint64_t b)
{
    uint64_t h = (a << 32 ^ b) * 0x9e3779b97f4a7c15u;
    return (uint32_t)(h >> 32 ^ h);
}

uint32_t hwt_stackdepot_put(uint32_t tid, const uintptr_t *pcs, unsigned n)
{
    return hwt_stackdepot_put_cached(NULL, tid, pcs, n);
}

uint32_t hwt_stackdepot_put_cached(struct hwt_stackdepot_cache *cache, uint32_t tid,
                                   const uintptr_t *pcs, unsigned n)
{
    struct depot_key key = {.kind = DEPOT_STACK};
    uint32_t id;
    bool added;

    if (n == 0 || !depot_ready())
        return 0;
    if (n > HWT_STACK_MAX_FRAMES)
        n = HWT_STACK_MAX_FRAMES;
    key.head = frames_put(cache, pcs, n < HWT_DEPOT_INLINE ? n : HWT_DEPOT_INLINE);
    if (n > HWT_DEPOT_INLINE)
        key.tail = frames_put(cache, pcs + HWT_DEPOT_INLINE, n - HWT_DEPOT_INLINE);
    if (key.head == 0 || (n > HWT_DEPOT_INLINE && key.tail == 0))
        return 0;
    key.hash = mix_ids(key.head, key.tail);
    id = depot_insert(&key, &added);
    if (id == 0)
        return 0;
    uint32_t base = tid_base(tid);
    if (tid != base) {
        key = (struct depot_key){.kind = DEPOT_ALIAS,
                                 .n = n,
                                 .tid_code = zigzag((uint64_t)((int64_t)tid - base)),
                                 .target = id};
        key.hash = mix_ids(id, (uint64_t)tid | UINT64_C(1) << 32);
        id = depot_insert(&key, &added);
    }
    if (added)
        __atomic_fetch_add(&depot_stacks, 1, __ATOMIC_RELAXED);
    return id;
}

unsigned hwt_stackdepot_get(uint32_t id, uint32_t *tid, uintptr_t *pcs, unsigned max)
{
    uintptr_t frames[HWT_STACK_MAX_FRAMES];
    uint32_t stack_tid, header;
    const uint8_t *p;
    uint64_t x;
    unsigned n;

    if (__atomic_load_n(&depot_state, __ATOMIC_ACQUIRE) != DEPOT_READY)
        return 0;
    /* Ids in [1, used) were handed out; only published records are reachable from one. */
    if (id == 0 || id >= __atomic_load_n(&depot_used, __ATOMIC_ACQUIRE) ||
        id >= HWT_DEPOT_POOL_UNITS - 1)
        return 0;
    /* records exist, so the base is set */
    stack_tid = (uint32_t)(__atomic_load_n(&depot_tid0, __ATOMIC_ACQUIRE) - 1);
    header = depot_pool[id];
    if (record_kind(header) == DEPOT_ALIAS) {
        p = (const uint8_t *)&depot_pool[id + 1];
        if (!varint_get(&p, &x))
            return 0;
        stack_tid += (uint32_t)unzigzag(x);
        if (!varint_get(&p, &x) || x == 0 || x >= id)
            return 0;
        n = stack_frames((uint32_t)x, frames);
        if (n != header >> DEPOT_NR_SHIFT)
            return 0;
    } else {
        n = stack_frames(id, frames);
    }
    if (n == 0)
        return 0;
    if (n > max)
        n = max;
    for (unsigned i = 0; i < n; i++)
        pcs[i] = frames[i];
    if (tid)
        *tid = stack_tid;
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
                           pcs * sizeof(uint32_t) + HWT_DEPOT_PC_SLOTS * sizeof(uint16_t)
                     : 0;
}
