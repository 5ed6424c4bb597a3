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
#include "stackdepot_code.h"
#include "stackdepot_frame.h"

/* Pool of records in HWT_DEPOT_UNIT-byte units; an id is the unit index of its record, and
 * unit 0 is never handed out so that id 0 means "none". Pages are touched in order, as records
 * are added: the pool costs what it holds. */
#define HWT_DEPOT_POOL_UNITS (1u << HWT_STACKDEPOT_ID_BITS)
#define HWT_DEPOT_POOL_SIZE (HWT_DEPOT_POOL_UNITS * HWT_DEPOT_UNIT) /* 4 MiB */
#define HWT_DEPOT_BUCKETS (1u << 13)                                /* power of two; 32 KiB */

/* A stack is two shared frame records, its innermost HWT_DEPOT_INLINE frames (the head) and
 * the rest (the tail), named by an 8-byte record of their two ids. python3 start-up's 39.6k
 * stacks of 12 frames have 15.6k distinct heads and 6.5k distinct tails: the pairs cost 8 bytes
 * a stack where inline head codes and a tail id cost 16 (the whole depot: 745 KiB -> 619 KiB
 * by a model of its records; a split after 3 frames costs 641, after 5, 650). */
#define HWT_DEPOT_INLINE 4u

_Static_assert(HWT_DEPOT_POOL_UNITS <= (1u << HWT_STACKDEPOT_ID_BITS),
               "ids are unit indexes below 2^HWT_STACKDEPOT_ID_BITS");

enum { DEPOT_UNINIT, DEPOT_BUSY, DEPOT_READY, DEPOT_FAILED };

static int depot_state = DEPOT_UNINIT; /* set-up progress, atomic */
static uint32_t *depot_pool;           /* HWT_DEPOT_POOL_UNITS units, published before READY */
static uint32_t *depot_buckets;        /* heads of the bucket chains (ids), atomic */
static uint64_t depot_used = 1;        /* units handed out (unit 0 reserved); may pass the end */
static uint64_t depot_stacks;          /* records a put made and returned: (thread, stack) pairs */
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
    bool frames = hwt_stackdepot_frame_init();
    state = depot_pool && depot_buckets && frames ? DEPOT_READY : DEPOT_FAILED;
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

/* The 64 bits of the DEPOT_STACK record at id (id + 1 is inside the pool's padding at worst). */
static uint64_t stack_word(uint32_t id)
{
    return (uint64_t)depot_pool[id] | (uint64_t)depot_pool[id + 1] << 32;
}

/* The frames a DEPOT_STACK record at id says its capture left out. */
static uint32_t stack_more(uint32_t id)
{
    return (stack_word(id) & DEPOT_STACK_MORE) ? depot_pool[id + 2] : 0;
}

/* Parses the DEPOT_FRAMES record of id: its frame count and first code; 0 when id cannot name
 * one in this pool. Every read stays inside the pool, whatever id is. */
static unsigned frames_view(uint32_t id, const uint8_t **codes)
{
    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - 1)
        return 0;
    uint32_t header = depot_pool[id];
    unsigned nr = header >> DEPOT_NR_SHIFT;
    if (depot_record_kind(header) != DEPOT_FRAMES || nr == 0 || nr > HWT_STACK_MAX_FRAMES)
        return 0;
    *codes = (const uint8_t *)&depot_pool[id + 1];
    return nr;
}

/* The frames of the DEPOT_STACK record id into pcs (room for HWT_STACK_MAX_FRAMES); the
 * count, 0 for an id that names no stack. */
static unsigned stack_frames(uint32_t id, uintptr_t *pcs)
{
    const uint8_t *codes;
    uint32_t head, tail;
    unsigned n, rest = 0;

    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - 1 ||
        depot_record_kind(depot_pool[id]) != DEPOT_STACK)
        return 0;
    depot_stack_unpack(stack_word(id), &head, &tail);
    if (head >= id || tail >= id)
        return 0;
    n = frames_view(head, &codes);
    if (n == 0 || n > HWT_DEPOT_INLINE || (tail != 0 && n != HWT_DEPOT_INLINE) ||
        !depot_decode_frames(&codes, n, pcs, NULL))
        return 0;
    if (tail != 0) {
        rest = frames_view(tail, &codes);
        if (rest == 0 || n + rest > HWT_STACK_MAX_FRAMES ||
            !depot_decode_frames(&codes, rest, pcs + n, NULL))
            return 0;
    }
    return n + rest;
}

/* What a chain walk looks for, by kind: frames (pcs, n), a stack (head, tail), or an alias
 * (tid_code, target; n frames). tid_code: depot_zigzag(tid - the first tid), as the record holds
 * it. */

/* Whether the record at id is the one of key. */
static bool record_matches(uint32_t id, const struct hwt_stackdepot_key *key)
{
    uintptr_t frames[HWT_STACK_MAX_FRAMES];
    uint32_t header = depot_pool[id], head, tail;
    const uint8_t *p;
    uint64_t x;

    if (depot_record_kind(header) != key->kind)
        return false;
    if (key->kind == DEPOT_STACK) {
        depot_stack_unpack(stack_word(id), &head, &tail);
        return head == key->head && tail == key->tail && stack_more(id) == key->more;
    }
    if ((header & ~DEPOT_NEXT_MASK) != depot_counted_header(key))
        return false;
    p = (const uint8_t *)&depot_pool[id + 1];
    if (key->kind == DEPOT_FRAMES)
        return depot_decode_frames(&p, key->n, frames, key->pcs);
    /* DEPOT_ALIAS */
    return depot_varint_get(&p, &x) && x == key->tid_code && depot_varint_get(&p, &x) &&
           x == key->target;
}

/* Walks the chain from head down to (not including) stop. Returns the id of the record of key
 * or 0. */
static uint32_t depot_find(uint32_t head, uint32_t stop, const struct hwt_stackdepot_key *key)
{
    for (uint32_t id = head; id != 0 && id != stop; id = depot_pool[id] & DEPOT_NEXT_MASK) {
        if (id >= HWT_DEPOT_POOL_UNITS - 1)
            return 0;
        if (record_matches(id, key))
            return id;
    }
    return 0;
}

/* Finds the record of key, or adds it; *added says which. Returns its id, 0 when the pool is
 * full. */
static uint32_t depot_insert(const struct hwt_stackdepot_key *key, bool *added)
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
    units = hwt_stackdepot_code_encode(buf, key);
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
    struct hwt_stackdepot_key key = {
        .hash = (uint32_t)hash, .kind = DEPOT_FRAMES, .pcs = pcs, .n = n};
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
    return hwt_stackdepot_put_cached(NULL, tid, pcs, n, 0);
}

uint32_t hwt_stackdepot_put_cached(struct hwt_stackdepot_cache *cache, uint32_t tid,
                                   const uintptr_t *pcs, unsigned n, unsigned more)
{
    struct hwt_stackdepot_key key = {.kind = DEPOT_STACK};
    uint32_t id;
    bool added;

    if (n == 0 || !depot_ready())
        return 0;
    if (n > HWT_STACK_MAX_FRAMES) {
        more += n - HWT_STACK_MAX_FRAMES;
        n = HWT_STACK_MAX_FRAMES;
    }
    key.more = more < HWT_STACK_MORE_MAX ? more : HWT_STACK_MORE_MAX;
    key.head = frames_put(cache, pcs, n < HWT_DEPOT_INLINE ? n : HWT_DEPOT_INLINE);
    if (n > HWT_DEPOT_INLINE)
        key.tail = frames_put(cache, pcs + HWT_DEPOT_INLINE, n - HWT_DEPOT_INLINE);
    if (key.head == 0 || (n > HWT_DEPOT_INLINE && key.tail == 0))
        return 0;
    key.hash = mix_ids(key.head, (uint64_t)key.tail | (uint64_t)key.more << HWT_STACKDEPOT_ID_BITS);
    id = depot_insert(&key, &added);
    if (id == 0)
        return 0;
    uint32_t base = tid_base(tid);
    if (tid != base) {
        key = (struct hwt_stackdepot_key){.kind = DEPOT_ALIAS,
                                          .n = n,
                                          .tid_code = depot_zigzag((uint64_t)((int64_t)tid - base)),
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
    if (depot_record_kind(header) == DEPOT_ALIAS) {
        p = (const uint8_t *)&depot_pool[id + 1];
        if (!depot_varint_get(&p, &x))
            return 0;
        stack_tid += (uint32_t)depot_unzigzag(x);
        if (!depot_varint_get(&p, &x) || x == 0 || x >= id)
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

unsigned hwt_stackdepot_more(uint32_t id)
{
    if (__atomic_load_n(&depot_state, __ATOMIC_ACQUIRE) != DEPOT_READY || id == 0 ||
        id >= __atomic_load_n(&depot_used, __ATOMIC_ACQUIRE) || id >= HWT_DEPOT_POOL_UNITS - 1)
        return 0;
    uint32_t header = depot_pool[id];
    if (depot_record_kind(header) == DEPOT_ALIAS) {
        const uint8_t *p = (const uint8_t *)&depot_pool[id + 1];
        uint64_t x;
        if (!depot_varint_get(&p, &x) || !depot_varint_get(&p, &x) || x == 0 || x >= id)
            return 0;
        id = (uint32_t)x;
        header = depot_pool[id];
    }
    if (depot_record_kind(header) != DEPOT_STACK)
        return 0;
    uint32_t more = stack_more(id);
    return more < HWT_STACK_MORE_MAX ? more : HWT_STACK_MORE_MAX;
}

void hwt_stackdepot_usage(uint64_t *stacks, uint64_t *bytes)
{
    uint64_t used = __atomic_load_n(&depot_used, __ATOMIC_RELAXED);

    if (used > HWT_DEPOT_POOL_UNITS)
        used = HWT_DEPOT_POOL_UNITS;
    if (stacks)
        *stacks = __atomic_load_n(&depot_stacks, __ATOMIC_RELAXED);
    if (bytes)
        *bytes = __atomic_load_n(&depot_state, __ATOMIC_RELAXED) == DEPOT_READY
                     ? (used - 1) * HWT_DEPOT_UNIT + HWT_DEPOT_BUCKETS * sizeof(uint32_t) +
                           hwt_stackdepot_frame_bytes()
                     : 0;
}
