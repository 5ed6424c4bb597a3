/* SPDX-License-Identifier: MIT */
/* Page-backed objects: their lifecycle under the shared lock (a mapping and an out-of-band
 * record each, taken from a stash, the cache or the OS), their tags and lookups. Which freed
 * mapping is reused or gives its pages back is large_cache.c's and large_budget.c's, how a
 * mapping is placed, guarded and cut is large_map.c's; this file never decides them. */
#include "large.h"

#include <limits.h>

#include "arch/mte.h"
#include "large_cache.h"
#include "large_map.h"
#include "large_record.h"
#include "lock.h"
#include "os.h"
#include "sample.h"
#include "size_class.h"
#include "counters.h"
#include "tag.h"
#include "tail.h"

/* Records an unlocked lookup follows before it asks again under the lock. */
#define UNLOCKED_WALK_MAX 64u

static struct hwt_lock large_lock = HWT_LOCK_INIT;
static uint64_t mapped_bytes; /* all mappings, live and cached */
/* Set once the OS has refused memory (hwt_large_unmap_cached): from then on a cached
 * mapping taken for a smaller object gives its unused end back as address space, and no
 * thread stashes mappings. Address space is what ran out, and a 1 MiB object in a 2 MiB
 * mapping would hold twice its share of it. */
static bool tight;

/* Ends a record (not in the cache list) for good; the caller unmaps *map, *size once it has
 * dropped the lock. */
static void retire_locked(struct hwt_large *l, uintptr_t *map, size_t *size)
{
    *map = l->map_start;
    *size = l->map_size;
    hwt_large_record_retire_locked(l);
    mapped_bytes -= *size;
}

/* Lock not held. A fresh mapping for a new object, recorded and in the lookups; NULL when
 * the OS refuses memory. */
static struct hwt_large *map_new(size_t need, size_t usable, size_t align, bool mte)
{
    void *m = hwt_large_map_aligned(need, align, mte);
    if (m == NULL)
        return NULL;
    hwt_lock(&large_lock);
    struct hwt_large *l = hwt_large_record_new_locked();
    if (l == NULL) {
        hwt_unlock(&large_lock);
        hwt_os_unmap(m, need);
        return NULL;
    }
    mapped_bytes += need;
    hwt_large_map_place(l, m, need, usable, align, mte);
    __atomic_store_n(&l->state, HWT_LARGE_LIVE, __ATOMIC_RELEASE);
    hwt_large_cache_live_locked(need);
    hwt_large_record_insert_locked(l);
    hwt_unlock(&large_lock);
    return l;
}

/* A cached mapping for the new object, else a fresh one; *fresh says which. */
static struct hwt_large *take_mapping(size_t need, size_t size, size_t usable, size_t align,
                                      bool mte, struct hwt_large_stash *st, bool *fresh)
{
    struct hwt_large *l = NULL;
    *fresh = false;
    /* Stashed mappings still count as live (hwt_large_cache_live_locked) and are in the
     * lookups as freed: taking one changes nothing shared but its state. None is tagged or
     * above HWT_LARGE_STASH_BLOCK. */
    if (st != NULL && !mte && need <= HWT_LARGE_STASH_BLOCK &&
        !__atomic_load_n(&tight, __ATOMIC_RELAXED))
        l = hwt_large_stash_take(st, need, size, align);
    if (l == NULL) {
        uintptr_t cut = 0;
        size_t cut_size = 0;
        hwt_lock(&large_lock);
        l = hwt_large_cache_take_locked(need, size, align, mte);
        if (l != NULL && tight) {
            cut_size = hwt_large_map_shrink(l, usable, &cut);
            mapped_bytes -= cut_size;
        }
        if (l != NULL)
            hwt_large_cache_live_locked(l->map_size);
        hwt_unlock(&large_lock);
        if (cut_size != 0)
            hwt_os_unmap((void *)cut, cut_size);
    }
    /* A cached mapping keeps its start, so its place in the lookups too. */
    if (l != NULL) {
        __atomic_store_n(&l->state, HWT_LARGE_LIVE, __ATOMIC_RELEASE);
        return l;
    }
    *fresh = true;
    return map_new(need, usable, align, mte);
}

void *hwt_large_alloc(size_t size, size_t align, bool zero, uint32_t stack,
                      struct hwt_large_stash *stash)
{
    if (size > hwt_os_memory_bytes || align > hwt_os_memory_bytes)
        return NULL;
    size_t need = hwt_large_map_size(size);
    size_t usable = hwt_align_up(size, HWT_GRANULE);
    unsigned order = hwt_sample_order(size);
    bool sampled = hwt_sample_should_tag(order);

    /* Objects left untagged get memory without PROT_MTE: no tag storage, and no tag-check
     * cost on their accesses (under QEMU the dominant cost of a checked access). */
    bool mte = sampled && hwt_mte_active;
    bool fresh;
    struct hwt_large *l = take_mapping(need, size, usable, align, mte, stash, &fresh);
    if (l == NULL)
        return NULL;
    /* the caller's zeros must survive the tail write in the last granule, however they
     * came about; only the zeroing itself is skipped for fresh (zero) anonymous memory */
    bool keep = zero;
    if (fresh)
        zero = false;
    /* A cached mapping keeps its start, so exclude the tag it had: a stale pointer to it
     * must fault. */
    uint16_t exclude = l->sampled ? HWT_TAG_BIT(l->tag) : 0;
    l->requested = size;
    l->alloc_stack = stack;
    l->free_stack = 0;
    hwt_large_cache_taken(l, need, usable);

    unsigned tag = sampled ? hwt_tag_pick(exclude) : HWT_TAG_UNTAGGED;
    hwt_large_map_retag(l, usable, tag, zero);
    l->tag = (uint8_t)tag;
    l->sampled = sampled;

    HWT_COUNT(large_allocs, 1);
    HWT_COUNT(large_by_order[order < HWTAG_MAX_ORDER ? order : HWTAG_MAX_ORDER - 1], 1);
    if (sampled) {
        HWT_COUNT(large_tagged, 1);
    } else {
        HWT_COUNT(large_skipped, 1);
        HWT_COUNT(large_skipped_by_order[order < HWTAG_MAX_ORDER ? order : HWTAG_MAX_ORDER - 1], 1);
    }
    HWT_COUNT(live_bytes, (int64_t)usable);
    void *ptr = mte_with_tag(l->start, tag);
    hwt_tail_write(ptr, size, keep);
    return ptr;
}

enum hwt_free_check hwt_large_check(const void *ptr, struct hwt_large **out)
{
    uintptr_t addr = mte_heap_addr(ptr);
    if ((addr & (hwt_os_page_size - 1)) != 0)
        return HWT_FREE_NOT_OURS;
    /* A live object of a correct program is found without the lock; its free's change of
     * state (hwt_large_free) decides between two frees that race. Anything else is
     * looked at again under the lock, as a miss there is an invalid free. */
    struct hwt_large *l = hwt_large_record_find(addr, UNLOCKED_WALK_MAX);
    if (l != NULL && __atomic_load_n(&l->state, __ATOMIC_ACQUIRE) == HWT_LARGE_LIVE &&
        (!hwt_mte_active || mte_ptr_tag(ptr) == l->tag)) {
        *out = l;
        return HWT_FREE_OK;
    }
    hwt_lock(&large_lock);
    l = hwt_large_record_find(addr, UINT_MAX);
    enum hwt_free_check r = HWT_FREE_OK;
    if (l == NULL)
        r = HWT_FREE_NOT_OURS;
    else if (l->state != HWT_LARGE_LIVE)
        r = HWT_FREE_DOUBLE;
    else if (hwt_mte_active && mte_ptr_tag(ptr) != l->tag)
        r = HWT_FREE_DOUBLE;
    hwt_unlock(&large_lock);
    if (l != NULL)
        *out = l;
    return r;
}

/* l, freed (state CACHED) and not in a stash, joins the shared cache (keep) or is unmapped;
 * cached mappings over the budget give their pages back. */
static void cache_put(struct hwt_large *l, bool keep, unsigned frees)
{
    struct hwt_large *evicted[HWT_LARGE_EVICT_MAX + 1];
    uintptr_t unmap_start[HWT_LARGE_EVICT_MAX + 1];
    size_t unmap_size[HWT_LARGE_EVICT_MAX + 1];
    struct hwt_large_release released[HWT_LARGE_RELEASE_MAX];
    unsigned nreleased;

    hwt_lock(&large_lock);
    unsigned n = hwt_large_cache_put_locked(l, keep, frees, evicted, released, &nreleased);
    if (!keep)
        evicted[n++] = l;
    for (unsigned i = 0; i < n; i++)
        retire_locked(evicted[i], &unmap_start[i], &unmap_size[i]);
    hwt_unlock(&large_lock);
    for (unsigned i = 0; i < n; i++)
        hwt_os_unmap((void *)unmap_start[i], unmap_size[i]);
    if (nreleased == 0)
        return;
    for (unsigned i = 0; i < nreleased; i++)
        hwt_large_cache_release(&released[i]);
    hwt_lock(&large_lock);
    hwt_large_cache_return_locked(released, nreleased);
    hwt_unlock(&large_lock);
}

/* Whether l's free was the one that ended it (false: another thread's free won a race). */
static bool end_live(struct hwt_large *l)
{
    uint8_t expected = HWT_LARGE_LIVE;
    return __atomic_compare_exchange_n(&l->state, &expected, HWT_LARGE_CACHED, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}

/* Mappings out of a stash join the shared cache; the first carries the stash's count of
 * frees since its last visit (frees, taken with it). */
static void stash_hand_over(struct hwt_large **out, unsigned n, unsigned frees)
{
    for (unsigned i = 0; i < n; i++)
        cache_put(out[i], true, i == 0 ? frees : 0);
}

void hwt_large_stash_flush(struct hwt_large_stash *st)
{
    struct hwt_large *out[HWT_LARGE_STASH_MAX];
    unsigned frees;
    unsigned n = hwt_large_stash_empty(st, out, &frees);
    stash_hand_over(out, n, frees);
}

void hwt_large_free(struct hwt_large *l, uint32_t stack, struct hwt_large_stash *stash)
{
    size_t usable = hwt_align_up(l->requested, HWT_GRANULE);

    l->free_stack = stack;
    bool keep = hwt_large_cache_admit(l);
    HWT_COUNT(large_frees, 1);
    HWT_COUNT(live_bytes, -(int64_t)usable);
    if (keep && stash != NULL && hwt_large_stash_keeps(l) &&
        !__atomic_load_n(&tight, __ATOMIC_RELAXED)) {
        if (end_live(l)) {
            unsigned frees;
            struct hwt_large *out[HWT_LARGE_STASH_MAX];
            unsigned n = hwt_large_stash_put(stash, l, out, &frees);
            stash_hand_over(out, n, frees);
        }
        return;
    }
    /* Retag a tagged object free so the old pointer faults; an unsampled one stays tag 0:
     * skipping its tagging is what sampling buys. Kept resident rather than given back: its
     * next user retags it anyway, and a pass of DC GVA costs less than faulting it in (unless
     * its pages were mostly never touched: then admit gave them back, see large_cache.c). */
    if (keep && l->area_tag != HWT_TAG_UNTAGGED) {
        hwt_tag_range(l->start, l->area, HWT_TAG_FREE, false);
        l->area_tag = HWT_TAG_FREE;
    }
    if (end_live(l))
        cache_put(l, keep, 1);
}

size_t hwt_large_requested(const struct hwt_large *l)
{
    return l->requested;
}

size_t hwt_large_usable(const struct hwt_large *l)
{
    return hwt_align_up(l->requested, HWT_GRANULE);
}

bool hwt_large_resize(struct hwt_large *l, size_t new_size)
{
    size_t room = l->map_start + l->map_size - l->start;
    size_t new_usable = hwt_align_up(new_size, HWT_GRANULE);
    /* Keep a guard granule, and do not pin a mapping more than twice the new size. */
    if (new_usable + HWT_GRANULE > room || new_size <= HWT_SMALL_MAX || room > 2 * new_usable)
        return false;
    size_t old_usable = hwt_align_up(l->requested, HWT_GRANULE);
    HWT_COUNT(live_bytes, (int64_t)new_usable - (int64_t)old_usable);
    hwt_large_map_retag(l, new_usable, l->tag, false);
    l->requested = new_size;
    return true;
}

bool hwt_large_lookup(uintptr_t addr, struct hwt_object *out)
{
    for (const struct hwt_large *l = hwt_large_record_all(); l != NULL; l = l->anext) {
        uint8_t state = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
        if (state == HWT_LARGE_DEAD || addr < l->map_start || addr >= l->map_start + l->map_size)
            continue;
        hwt_large_record_describe(l, state, out);
        return true;
    }
    return false;
}

void hwt_large_walk_live(void (*fn)(const struct hwt_object *obj, void *arg), void *arg)
{
    for (const struct hwt_large *l = hwt_large_record_all(); l != NULL; l = l->anext) {
        uint8_t state = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
        if (state != HWT_LARGE_LIVE)
            continue;
        struct hwt_object obj;
        hwt_large_record_describe(l, state, &obj);
        fn(&obj, arg);
    }
}

void hwt_large_lock(void)
{
    hwt_large_map_lock();
    hwt_lock(&large_lock);
}

void hwt_large_unlock(void)
{
    hwt_unlock(&large_lock);
    hwt_large_map_unlock();
}

void hwt_large_reset_lock(void)
{
    hwt_lock_reset(&large_lock);
    hwt_large_map_reset_lock();
}

uint64_t hwt_large_mapped(void)
{
    return __atomic_load_n(&mapped_bytes, __ATOMIC_RELAXED);
}

size_t hwt_large_trim(void)
{
    hwt_lock(&large_lock);
    size_t given = hwt_large_cache_trim_locked();
    hwt_unlock(&large_lock);
    return given;
}

size_t hwt_large_unmap_cached(void)
{
    enum { BATCH = 32 }; /* unmapped outside the lock, a batch at a time */
    struct hwt_large *out[BATCH];
    uintptr_t start[BATCH];
    size_t size[BATCH], given = 0;
    unsigned n;
    __atomic_store_n(&tight, true, __ATOMIC_RELAXED);
    do {
        hwt_lock(&large_lock);
        n = hwt_large_cache_evict_locked(out, BATCH);
        for (unsigned i = 0; i < n; i++)
            retire_locked(out[i], &start[i], &size[i]);
        hwt_unlock(&large_lock);
        for (unsigned i = 0; i < n; i++) {
            hwt_os_unmap((void *)start[i], size[i]);
            given += size[i];
        }
    } while (n == BATCH);
    return given + hwt_large_map_give_unused();
}

size_t hwt_large_cached_resident(void)
{
    hwt_lock(&large_lock);
    size_t r = hwt_large_cache_resident_locked();
    hwt_unlock(&large_lock);
    return r;
}
