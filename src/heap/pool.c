/* SPDX-License-Identifier: MIT */
/* Pool objects (hwtag_pool_alloc/free): tags for sub-ranges of heap objects, and a fixed
 * open-addressing table of their records in metadata memory, keyed by start address.
 * Writers hold pool_lock; the report side takes it with a bounded try-lock. A record
 * carries the identity of the heap object it was made in (start, tag, allocation stack),
 * so freeing that object drops its records at no cost: they stop matching. */
#include "pool.h"

#include <time.h>

#include "arch/mte.h"
#include "arch/mte_range.h"
#include "lock.h"
#include "lookup.h"
#include "meta.h"

#define POOL_SLOTS 8192u /* a power of two; 48 bytes each */
#define POOL_PROBES 32u
/* Report side: tries of the lock, 100 us apart, before going on without pool records. */
#define DESCRIBE_TRIES 200

struct pool_record {
    uintptr_t start;  /* untagged; 0 = empty slot */
    size_t size;      /* bytes */
    uintptr_t parent; /* start of the heap object */
    uint64_t seq;     /* insertion order: the oldest is evicted first */
    uint32_t parent_stack, alloc_stack, free_stack;
    uint8_t parent_tag, tag, live;
};

static struct hwt_lock pool_lock = HWT_LOCK_INIT;
static struct pool_record *records; /* POOL_SLOTS, mapped at the first pool call */
static uint64_t next_seq;

static unsigned slot_of(uintptr_t start)
{
    uint64_t h = (uint64_t)(start >> HWT_GRANULE_SHIFT) * UINT64_C(0x9e3779b97f4a7c15);
    return (unsigned)(h >> 40) & (POOL_SLOTS - 1);
}

/* The record of a range starting at start, or NULL. pool_lock held. */
static struct pool_record *find(uintptr_t start)
{
    unsigned s = slot_of(start);
    for (unsigned i = 0; i < POOL_PROBES; i++, s = (s + 1) & (POOL_SLOTS - 1)) {
        if (records[s].start == start)
            return &records[s];
        if (records[s].start == 0)
            return NULL;
    }
    return NULL;
}

/* A slot for start: its own record, the first empty one, or the oldest of the window.
 * pool_lock held. */
static struct pool_record *claim(uintptr_t start)
{
    unsigned s = slot_of(start);
    struct pool_record *oldest = &records[s];
    for (unsigned i = 0; i < POOL_PROBES; i++, s = (s + 1) & (POOL_SLOTS - 1)) {
        struct pool_record *r = &records[s];
        if (r->start == start || r->start == 0)
            return r;
        if (r->seq < oldest->seq)
            oldest = r;
    }
    return oldest;
}

/* The tag of the heap granule at addr, or HWT_TAG_UNTAGGED when addr is not heap memory
 * (never ldg a foreign address). */
static unsigned heap_tag_at(uintptr_t addr)
{
    struct hwt_object o;
    return hwt_lookup_addr(addr, &o) ? mte_load_tag(addr) : HWT_TAG_UNTAGGED;
}

/* The live heap object that block starts, with block's tag; false when there is none. */
static bool heap_object(const void *block, struct hwt_object *obj)
{
    uintptr_t addr = mte_untag(block);
    return hwt_lookup_addr(addr, obj) && obj->live && obj->start == addr &&
           obj->tag == mte_ptr_tag(block);
}

void *hwt_pool_alloc(const void *block, size_t offset, size_t size, uint32_t stack)
{
    struct hwt_object obj;

    if (block == NULL || size == 0 || offset % HWT_GRANULE != 0 || size % HWT_GRANULE != 0 ||
        !heap_object(block, &obj) || offset > obj.requested || size > obj.requested - offset)
        return NULL;
    uintptr_t start = obj.start + offset;
    if (!hwt_mte_active || !obj.sampled)
        return (void *)((uintptr_t)block + offset); /* untagged memory: nothing to check */

    uint64_t exclude = (UINT64_C(1) << HWT_TAG_UNTAGGED) | (UINT64_C(1) << HWT_TAG_FREE) |
                       (UINT64_C(1) << obj.tag) | (UINT64_C(1) << mte_load_tag(start)) |
                       (UINT64_C(1) << heap_tag_at(start - HWT_GRANULE)) |
                       (UINT64_C(1) << heap_tag_at(start + size));
    hwt_lock(&pool_lock);
    if (records == NULL)
        __atomic_store_n(&records, hwt_meta_alloc(POOL_SLOTS * sizeof(*records), 64),
                         __ATOMIC_RELEASE);
    struct pool_record *prev = records != NULL ? find(start) : NULL;
    if (prev != NULL)
        exclude |= UINT64_C(1) << prev->tag; /* a stale pointer of its last life faults */
    unsigned tag = mte_random_tag(exclude);
    void *tagged = mte_with_tag(start, tag);
    mte_store_tags(tagged, size, 0);
    if (records != NULL) {
        struct pool_record *r = claim(start);
        r->start = start;
        r->size = size;
        r->parent = obj.start;
        r->parent_stack = obj.alloc_stack;
        r->parent_tag = (uint8_t)obj.tag;
        r->tag = (uint8_t)tag;
        r->live = 1;
        r->alloc_stack = stack;
        r->free_stack = 0;
        r->seq = ++next_seq;
    }
    hwt_unlock(&pool_lock);
    return tagged;
}

enum hwt_pool_verdict hwt_pool_free(const void *ptr, size_t size, uint32_t stack)
{
    struct hwt_object obj;
    uintptr_t start = mte_untag(ptr);
    unsigned tag = mte_ptr_tag(ptr);

    if (ptr == NULL || size == 0 || start % HWT_GRANULE != 0 || size % HWT_GRANULE != 0)
        return HWT_POOL_EINVAL;
    if (!hwt_lookup_addr(start, &obj) || !obj.live || start < obj.start ||
        start > obj.start + obj.requested || size > obj.start + obj.requested - start)
        return HWT_POOL_INVALID;
    if (!hwt_mte_active || !obj.sampled)
        return HWT_POOL_OK;
    /* every granule must still be this pool object's: nothing is changed otherwise */
    for (uintptr_t g = start; g < start + size; g += HWT_GRANULE) {
        unsigned mem = mte_load_tag(g);
        if (mem != tag)
            return g == start && mem == HWT_TAG_FREE ? HWT_POOL_DOUBLE : HWT_POOL_INVALID;
    }
    if (tag == obj.tag)
        return HWT_POOL_INVALID; /* the heap object's own memory, not a pool object */
    hwt_lock(&pool_lock);
    mte_store_tags(mte_with_tag(start, HWT_TAG_FREE), size, 0);
    struct pool_record *r = records != NULL ? find(start) : NULL;
    if (r != NULL && r->tag == tag) {
        r->live = 0;
        r->size = size;
        r->free_stack = stack;
    }
    hwt_unlock(&pool_lock);
    return HWT_POOL_OK;
}

/* Distance of addr from [start, start+size): 0 inside. */
static uintptr_t distance(uintptr_t addr, uintptr_t start, size_t size)
{
    if (addr < start)
        return start - addr;
    return addr < start + size ? 0 : addr - (start + size) + 1;
}

bool hwt_pool_describe(uintptr_t addr, unsigned pointer_tag, const struct hwt_object *parent,
                       struct hwt_object *out)
{
    struct pool_record *tab = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    const struct pool_record *best = NULL;
    uintptr_t best_dist = 0;
    int tries = 0;

    if (tab == NULL || !parent->live)
        return false;
    while (!hwt_trylock(&pool_lock)) {
        struct timespec ts = {0, 100000};
        if (++tries == DESCRIBE_TRIES)
            return false; /* held for 20 ms: a thread stopped inside, go on without */
        nanosleep(&ts, NULL);
    }
    for (unsigned i = 0; i < POOL_SLOTS; i++) {
        const struct pool_record *r = &tab[i];
        if (r->start == 0 || r->tag != pointer_tag || r->parent != parent->start ||
            r->parent_tag != parent->tag || r->parent_stack != parent->alloc_stack)
            continue;
        uintptr_t d = distance(addr, r->start, r->size);
        if (best == NULL || d < best_dist || (d == best_dist && r->seq > best->seq)) {
            best = r;
            best_dist = d;
        }
    }
    if (best != NULL) {
        *out = *parent;
        out->start = best->start;
        out->size = best->size;
        out->requested = best->size;
        out->tag = best->tag;
        out->live = best->live != 0;
        out->ever_used = true;
        out->alloc_stack = best->alloc_stack;
        out->free_stack = best->free_stack;
    }
    hwt_unlock(&pool_lock);
    return best != NULL;
}

void hwt_pool_lock(void)
{
    hwt_lock(&pool_lock);
}

void hwt_pool_unlock(void)
{
    hwt_unlock(&pool_lock);
}

void hwt_pool_reset_lock(void)
{
    hwt_lock_reset(&pool_lock);
}
