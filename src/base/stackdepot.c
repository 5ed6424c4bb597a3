/* SPDX-License-Identifier: MIT */
/* The stack depot: a fixed pool of deduplicated (thread, stack) records behind a lock-free hash
 * table, reserved once from meta.c; it never frees, never takes a lock after set-up, never mallocs.
 */
#include "stackdepot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "meta.h"

/* Pool of records in HWT_DEPOT_UNIT-byte units; an id is the unit index of its record, and
 * unit 0 is never handed out so that id 0 means "none". */
#ifndef HWT_DEPOT_POOL_SIZE
#define HWT_DEPOT_POOL_SIZE (8u << 20)
#endif
#define HWT_DEPOT_BUCKETS (1u << 14) /* power of two; 64 KiB */
#define HWT_DEPOT_UNIT sizeof(uint64_t)
#define HWT_DEPOT_POOL_UNITS (HWT_DEPOT_POOL_SIZE / HWT_DEPOT_UNIT)
#define HWT_DEPOT_MAGIC 0x5d3fu

/* One stored stack. Immutable once published through a bucket (release CAS), so readers that
 * reach it with an acquire load need no lock. */
struct depot_record {
    uint32_t next;  /* id of the next record in the same bucket, 0 = end */
    uint32_t hash;  /* full hash of (tid, frames) */
    uint32_t tid;   /* thread that captured the stack */
    uint16_t nr;    /* frame count, 1..HWT_STACK_MAX_FRAMES */
    uint16_t magic; /* HWT_DEPOT_MAGIC: cheap sanity check on ids from damaged metadata */
    uint64_t pcs[];
};

_Static_assert(sizeof(struct depot_record) % HWT_DEPOT_UNIT == 0, "record header in whole units");
_Static_assert(HWT_DEPOT_POOL_UNITS <= (1u << HWT_STACKDEPOT_ID_BITS),
               "ids are unit indexes below 2^HWT_STACKDEPOT_ID_BITS");

enum { DEPOT_UNINIT, DEPOT_BUSY, DEPOT_READY, DEPOT_FAILED };

static int depot_state = DEPOT_UNINIT; /* set-up progress, atomic */
static uint64_t *depot_pool;           /* HWT_DEPOT_POOL_UNITS units, published before READY */
static uint32_t *depot_buckets;        /* heads of the bucket chains (ids), atomic */
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
    state = depot_pool && depot_buckets ? DEPOT_READY : DEPOT_FAILED;
    __atomic_store_n(&depot_state, state, __ATOMIC_RELEASE);
    return state == DEPOT_READY;
}

/* Multiplicative mixing: good enough spread for return addresses, a few cycles a frame. */
static uint32_t depot_hash(uint32_t tid, const uintptr_t *pcs, unsigned n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ ((uint64_t)tid << 32) ^ n;
    for (unsigned i = 0; i < n; i++) {
        h ^= pcs[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return (uint32_t)(h ^ (h >> 29));
}

/* The record of id, or NULL when id cannot name a record of this pool. */
static const struct depot_record *depot_record(uint32_t id)
{
    const size_t header_units = sizeof(struct depot_record) / HWT_DEPOT_UNIT;
    const struct depot_record *rec;

    if (id == 0 || id >= HWT_DEPOT_POOL_UNITS - header_units)
        return NULL;
    rec = (const struct depot_record *)&depot_pool[id];
    if (rec->magic != HWT_DEPOT_MAGIC || rec->nr == 0 || rec->nr > HWT_STACK_MAX_FRAMES ||
        id + header_units + rec->nr > HWT_DEPOT_POOL_UNITS)
        return NULL;
    return rec;
}

static bool depot_equal(const struct depot_record *rec, uint32_t hash, uint32_t tid,
                        const uintptr_t *pcs, unsigned n)
{
    if (rec->hash != hash || rec->tid != tid || rec->nr != n)
        return false;
    for (unsigned i = 0; i < n; i++)
        if (rec->pcs[i] != pcs[i])
            return false;
    return true;
}

/* Walks the chain from head down to (not including) stop. Returns the id of a match or 0. */
static uint32_t depot_find(uint32_t head, uint32_t stop, uint32_t hash, uint32_t tid,
                           const uintptr_t *pcs, unsigned n)
{
    for (uint32_t id = head; id != 0 && id != stop;) {
        const struct depot_record *rec = depot_record(id);
        if (!rec)
            return 0;
        if (depot_equal(rec, hash, tid, pcs, n))
            return id;
        id = rec->next;
    }
    return 0;
}

uint32_t hwt_stackdepot_put(uint32_t tid, const uintptr_t *pcs, unsigned n)
{
    uint32_t hash, head, found, id;
    uint32_t *bucket;
    struct depot_record *rec;
    uint64_t units, start;

    if (n == 0 || !depot_ready())
        return 0;
    if (n > HWT_STACK_MAX_FRAMES)
        n = HWT_STACK_MAX_FRAMES;
    hash = depot_hash(tid, pcs, n);
    bucket = &depot_buckets[hash & (HWT_DEPOT_BUCKETS - 1)];
    head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
    found = depot_find(head, 0, hash, tid, pcs, n);
    if (found)
        return found;

    /* Bump-allocate. Once full, the pool stays full: the load keeps the counter from growing
     * further than one record per racing thread past the end. */
    units = sizeof(struct depot_record) / HWT_DEPOT_UNIT + n;
    if (__atomic_load_n(&depot_used, __ATOMIC_RELAXED) + units > HWT_DEPOT_POOL_UNITS)
        return 0;
    start = __atomic_fetch_add(&depot_used, units, __ATOMIC_RELAXED);
    if (start + units > HWT_DEPOT_POOL_UNITS)
        return 0;
    id = (uint32_t)start;
    rec = (struct depot_record *)&depot_pool[id];
    rec->hash = hash;
    rec->tid = tid;
    rec->nr = (uint16_t)n;
    rec->magic = HWT_DEPOT_MAGIC;
    for (unsigned i = 0; i < n; i++)
        rec->pcs[i] = pcs[i];

    for (;;) {
        rec->next = head;
        if (__atomic_compare_exchange_n(bucket, &head, id, false, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE))
            break;
        /* Someone published first: if it is the same stack, theirs wins (ours is leaked, a
         * rare race bounded by the number of threads) so every thread gets the same id. */
        found = depot_find(head, rec->next, hash, tid, pcs, n);
        if (found) {
            rec->magic = 0;
            return found;
        }
    }
    __atomic_fetch_add(&depot_stacks, 1, __ATOMIC_RELAXED);
    return id;
}

unsigned hwt_stackdepot_get(uint32_t id, uint32_t *tid, uintptr_t *pcs, unsigned max)
{
    const struct depot_record *rec;
    unsigned n;

    if (__atomic_load_n(&depot_state, __ATOMIC_ACQUIRE) != DEPOT_READY)
        return 0;
    /* Ids in [1, used) were handed out; only published records are reachable from one. */
    if (id >= __atomic_load_n(&depot_used, __ATOMIC_ACQUIRE))
        return 0;
    rec = depot_record(id);
    if (!rec)
        return 0;
    n = rec->nr < max ? rec->nr : max;
    for (unsigned i = 0; i < n; i++)
        pcs[i] = (uintptr_t)rec->pcs[i];
    if (tid)
        *tid = rec->tid;
    return n;
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
                     ? (used - 1) * HWT_DEPOT_UNIT + HWT_DEPOT_BUCKETS * sizeof(uint32_t)
                     : 0;
}
