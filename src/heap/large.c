/* SPDX-License-Identifier: MIT */
/* Page-backed objects: a mapping each, an out-of-band record each, their tags (DC GVA/GZVA
 * over whole blocks) and lookups. Which freed mapping is reused or gives its pages back is
 * large_cache.c's; this file never decides it. */
#include "large.h"

#include <string.h>

#include "arch/mte.h"
#include "large_cache.h"
#include "lock.h"
#include "meta.h"
#include "os.h"
#include "sample.h"
#include "size_class.h"
#include "counters.h"
#include "tag.h"
#include "tail.h"

#define HASH_BUCKETS 1024u

static struct hwt_lock large_lock = HWT_LOCK_INIT;
/* large_lock for writers; from a page boundary: 8 KiB in 2 pages, not 3 */
static struct hwt_large *buckets[HASH_BUCKETS] __attribute__((aligned(4096)));
static struct hwt_large *all_records; /* published with release; walked by lookups */
static struct hwt_large *dead_list;
static uint64_t mapped_bytes; /* all mappings, live and cached */

static unsigned bucket_of(uintptr_t start)
{
    return (unsigned)((start / hwt_os_page_size) * 0x9E3779B1u) % HASH_BUCKETS;
}

static struct hwt_large *record_new_locked(void)
{
    struct hwt_large *l = dead_list;
    if (l != NULL) {
        dead_list = l->link[HWT_LARGE_BY_AGE].next;
        return l;
    }
    l = hwt_meta_alloc(sizeof(*l), 64);
    if (l == NULL)
        return NULL;
    l->anext = all_records;
    __atomic_store_n(&all_records, l, __ATOMIC_RELEASE);
    return l;
}

static void hash_insert_locked(struct hwt_large *l)
{
    unsigned b = bucket_of(l->start);
    l->hnext = buckets[b];
    __atomic_store_n(&buckets[b], l, __ATOMIC_RELEASE);
}

static void hash_remove_locked(struct hwt_large *l)
{
    struct hwt_large **pp = &buckets[bucket_of(l->start)];
    while (*pp != l)
        pp = &(*pp)->hnext;
    *pp = l->hnext;
}

/* Ends a record (not in the cache list) for good; the caller unmaps *map, *size once it has
 * dropped the lock. */
static void retire_locked(struct hwt_large *l, uintptr_t *map, size_t *size)
{
    hash_remove_locked(l);
    *map = l->map_start;
    *size = l->map_size;
    __atomic_store_n(&l->state, HWT_LARGE_DEAD, __ATOMIC_RELEASE);
    l->link[HWT_LARGE_BY_AGE].next = dead_list;
    dead_list = l;
    mapped_bytes -= *size;
}

/* Brings [start, start+usable) to tag (zeroing it when zero) and the rest of the mapping
 * to HWT_TAG_FREE, touching only the ranges whose tag changes. */
static void retag_owned(struct hwt_large *l, size_t usable, unsigned tag, bool zero)
{
    if (!l->mte) {
        if (zero)
            memset((void *)l->start, 0, usable);
        l->area = usable;
        return;
    }
    size_t keep = usable < l->area ? usable : l->area;
    if (zero || l->area_tag != tag)
        hwt_tag_range(l->start, keep, tag, zero);
    if (usable > l->area)
        hwt_tag_range(l->start + l->area, usable - l->area, tag, zero);
    else if (usable < l->area && l->area_tag != HWT_TAG_FREE)
        hwt_tag_range(l->start + usable, l->area - usable, HWT_TAG_FREE, false);
    l->area = usable;
    l->area_tag = (uint8_t)tag;
}

/* A free-tagged guard page below the object and at least one guard granule past it
 * (also for page-multiple sizes). */
static size_t map_size_for(size_t size)
{
    return hwt_os_page_size +
           hwt_align_up(hwt_align_up(size, HWT_GRANULE) + HWT_GRANULE, hwt_os_page_size);
}

/* A fresh mapping of need bytes whose second page is aligned to align: over-maps by align
 * and gives the unused head and tail back, so the mapping (and its tagging) stays need
 * bytes whatever the alignment. */
static void *map_aligned(size_t need, size_t align, bool mte)
{
    if (align <= hwt_os_page_size)
        return hwt_os_map(need, mte);
    char *m = hwt_os_map(need + align, mte);
    if (m == NULL)
        return NULL;
    uintptr_t start = hwt_align_up((uintptr_t)m + hwt_os_page_size, align) - hwt_os_page_size;
    if (start > (uintptr_t)m)
        hwt_os_unmap(m, start - (uintptr_t)m);
    uintptr_t end = (uintptr_t)m + need + align;
    if (end > start + need)
        hwt_os_unmap((void *)(start + need), end - (start + need));
    return (void *)start;
}

void *hwt_large_alloc(size_t size, size_t align, bool zero, uint32_t stack)
{
    if (size > hwt_os_memory_bytes || align > hwt_os_memory_bytes)
        return NULL;
    size_t need = map_size_for(size);
    size_t usable = hwt_align_up(size, HWT_GRANULE);
    unsigned order = hwt_sample_order(size);
    bool sampled = hwt_sample_should_tag(order);
    struct hwt_large *l = NULL;

    /* Objects left untagged get memory without PROT_MTE: no tag storage, and no tag-check
     * cost on their accesses (under QEMU the dominant cost of a checked access). */
    bool mte = sampled && hwt_mte_active;

    hwt_lock(&large_lock);
    l = hwt_large_cache_take_locked(need, size, align, mte);
    if (l == NULL) {
        hwt_unlock(&large_lock);
        void *m = map_aligned(need, align, mte);
        if (m == NULL)
            return NULL;
        hwt_lock(&large_lock);
        l = record_new_locked();
        if (l == NULL) {
            hwt_unlock(&large_lock);
            hwt_os_unmap(m, need);
            return NULL;
        }
        mapped_bytes += need;
        l->map_start = (uintptr_t)m;
        l->map_size = need;
        l->start = hwt_align_up((uintptr_t)m + hwt_os_page_size,
                                align < hwt_os_page_size ? hwt_os_page_size : align);
        l->tag = HWT_TAG_UNTAGGED;
        l->sampled = 0;
        /* Fresh pages are tag 0: the object area stays so until retagged below; the rest
         * becomes the free-tagged guard now, in the mapping thread (docs/design.md: QEMU's lazy
         * tag storage). */
        l->area = usable;
        l->area_tag = HWT_TAG_UNTAGGED;
        l->mte = mte;
        if (mte) {
            hwt_tag_range(l->map_start, l->start - l->map_start, HWT_TAG_FREE, false);
            hwt_tag_range(l->start + usable, l->map_start + l->map_size - l->start - usable,
                          HWT_TAG_FREE, false);
        }
        zero = false; /* fresh anonymous memory is zero */
    } else {
        hash_remove_locked(l);
    }
    /* A cached mapping keeps its start, so exclude the tag it had: a stale pointer to it
     * must fault. */
    uint16_t exclude = l->sampled ? HWT_TAG_BIT(l->tag) : 0;
    l->state = HWT_LARGE_LIVE;
    hwt_large_cache_live_locked(l->map_size);
    l->requested = size;
    l->alloc_stack = stack;
    l->free_stack = 0;
    hash_insert_locked(l);
    hwt_unlock(&large_lock);
    hwt_large_cache_taken(l, need, usable);

    unsigned tag = sampled ? hwt_tag_pick(exclude) : HWT_TAG_UNTAGGED;
    retag_owned(l, usable, tag, zero);
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
    hwt_tail_write(ptr, size, zero);
    return ptr;
}

enum hwt_free_check hwt_large_check(const void *ptr, struct hwt_large **out)
{
    uintptr_t addr = mte_heap_addr(ptr);
    if ((addr & (hwt_os_page_size - 1)) != 0)
        return HWT_FREE_NOT_OURS;
    /* Under the lock: a record moving to another chain (reused for another mapping) would
     * lead a lock-free walk astray, and a miss here is reported as an invalid free. */
    hwt_lock(&large_lock);
    struct hwt_large *l = buckets[bucket_of(addr)];
    for (; l != NULL; l = l->hnext) {
        if (l->start == addr)
            break;
    }
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

void hwt_large_free(struct hwt_large *l, uint32_t stack)
{
    struct hwt_large *evicted[HWT_LARGE_EVICT_MAX + 1];
    uintptr_t unmap_start[HWT_LARGE_EVICT_MAX + 1];
    size_t unmap_size[HWT_LARGE_EVICT_MAX + 1];
    struct hwt_large_release released[HWT_LARGE_RELEASE_MAX];
    unsigned nreleased;
    size_t usable = hwt_align_up(l->requested, HWT_GRANULE);

    l->free_stack = stack;
    bool keep = hwt_large_cache_admit(l);
    /* Retag a tagged object free so the old pointer faults; an unsampled one stays tag 0:
     * skipping its tagging is what sampling buys. Kept resident rather than given back: its
     * next user retags it anyway, and a pass of DC GVA costs less than faulting it in (unless
     * its pages were mostly never touched: then admit gave them back, see large_cache.c). */
    if (keep && l->area_tag != HWT_TAG_UNTAGGED) {
        hwt_tag_range(l->start, l->area, HWT_TAG_FREE, false);
        l->area_tag = HWT_TAG_FREE;
    }
    HWT_COUNT(large_frees, 1);
    HWT_COUNT(live_bytes, -(int64_t)usable);

    hwt_lock(&large_lock);
    uint8_t expected = HWT_LARGE_LIVE;
    if (!__atomic_compare_exchange_n(&l->state, &expected, HWT_LARGE_CACHED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED)) {
        hwt_unlock(&large_lock);
        return;
    }
    unsigned n = hwt_large_cache_put_locked(l, keep, evicted, released, &nreleased);
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
        hwt_os_decommit((void *)released[i].start, released[i].size);
    hwt_lock(&large_lock);
    hwt_large_cache_return_locked(released, nreleased);
    hwt_unlock(&large_lock);
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
    retag_owned(l, new_usable, l->tag, false);
    l->requested = new_size;
    return true;
}

bool hwt_large_lookup(uintptr_t addr, struct hwt_object *out)
{
    for (const struct hwt_large *l = __atomic_load_n(&all_records, __ATOMIC_ACQUIRE); l != NULL;
         l = l->anext) {
        uint8_t state = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
        if (state == HWT_LARGE_DEAD || addr < l->map_start || addr >= l->map_start + l->map_size)
            continue;
        out->start = l->start;
        out->requested = l->requested;
        out->size = hwt_align_up(l->requested, HWT_GRANULE);
        out->class_size = 0;
        out->region_size = l->map_start + l->map_size - l->start;
        out->tag = l->tag;
        out->large = true;
        out->live = state == HWT_LARGE_LIVE;
        out->ever_used = true;
        out->sampled = l->sampled != 0;
        out->alloc_stack = l->alloc_stack;
        out->free_stack = state == HWT_LARGE_CACHED ? l->free_stack : 0;
        return true;
    }
    return false;
}

void hwt_large_lock(void)
{
    hwt_lock(&large_lock);
}

void hwt_large_unlock(void)
{
    hwt_unlock(&large_lock);
}

void hwt_large_reset_lock(void)
{
    hwt_lock_reset(&large_lock);
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

size_t hwt_large_cached_resident(void)
{
    hwt_lock(&large_lock);
    size_t r = hwt_large_cache_resident_locked();
    hwt_unlock(&large_lock);
    return r;
}
