/* SPDX-License-Identifier: MIT */
/* Regions of address space reserved on demand, the page maps from an address to its span,
 * carving span ranges and giving a whole region back. It never reads or writes a span's
 * metadata, and never takes a central lock. */
#include "slab_region.h"

#include "align.h"
#include "lock.h"
#include "meta.h"
#include "os.h"

/* Regions are committed whole (slab_region.h): under QEMU a reserved PROT_NONE rest costs
 * every fork, and natively an untouched committed page costs nothing */
#define COMMIT_STEP HWT_REGION_SIZE

/* Lock order: a central lock, then heap_lock, then the metadata lock. */
static struct hwt_lock heap_lock = HWT_LOCK_INIT;
struct hwt_region hwt_slab_regions[HWT_MAX_REGIONS];
uint32_t hwt_slab_region_count;
struct hwt_span **hwt_slab_regmap[(size_t)1 << HWT_REGMAP_BITS];
/* The region new spans are carved from, NULL before the first; heap_lock */
static struct hwt_region *current;

/* A slot of the region table for a new region: one whose region was given back (its page
 * map all NULL), else the next unused one; NULL when the table is full. */
static struct hwt_region *region_slot_locked(void)
{
    for (uint32_t i = 0; i < hwt_slab_region_count; i++)
        if (hwt_slab_regions[i].base == HWT_REGION_DEAD)
            return &hwt_slab_regions[i];
    return hwt_slab_region_count < HWT_MAX_REGIONS ? &hwt_slab_regions[hwt_slab_region_count]
                                                   : NULL;
}

/* Address space for a region whose top-level entry no other region holds; NULL when out of
 * address space. A reservation whose entry is taken (an address 256 GiB apart from a
 * region's) is kept while the next is made, so each try lands elsewhere. */
static void *region_reserve_locked(void)
{
    enum { TRIES = 16 };
    void *taken[TRIES];
    void *base = NULL;
    unsigned n = 0;
    while (n < TRIES) {
        base = hwt_os_reserve(HWT_REGION_SIZE, HWT_REGION_SIZE);
        if (base == NULL || hwt_slab_regmap[HWT_REGMAP_INDEX(base)] == NULL)
            break;
        taken[n++] = base;
        base = NULL;
    }
    while (n > 0)
        hwt_os_unmap(taken[--n], HWT_REGION_SIZE);
    return base;
}

static struct hwt_region *region_new_locked(void)
{
    struct hwt_region *r = region_slot_locked();
    if (r == NULL)
        return NULL;
    bool fresh = r == &hwt_slab_regions[hwt_slab_region_count];
    void *base = region_reserve_locked();
    struct hwt_span **map =
        fresh ? hwt_meta_alloc((HWT_REGION_SIZE / HWT_MAP_PAGE) * sizeof(*map), 64) : r->pagemap;
    if (base == NULL || map == NULL) {
        if (base != NULL)
            hwt_os_unmap(base, HWT_REGION_SIZE);
        return NULL;
    }
    r->cursor = r->committed = (uintptr_t)base;
    r->pagemap = map;
    __atomic_store_n(&r->base, (uintptr_t)base, __ATOMIC_RELEASE);
    __atomic_store_n(&hwt_slab_regmap[HWT_REGMAP_INDEX(base)], map, __ATOMIC_RELEASE);
    if (fresh)
        __atomic_store_n(&hwt_slab_region_count, hwt_slab_region_count + 1, __ATOMIC_RELEASE);
    current = r;
    return r;
}

static uintptr_t carve_locked(size_t span_size)
{
    struct hwt_region *r = current;
    uintptr_t base = r != NULL ? hwt_align_up(r->cursor, span_size) : 0;
    if (r == NULL || base + span_size > r->base + HWT_REGION_SIZE) {
        r = region_new_locked();
        if (r == NULL)
            return 0;
        base = hwt_align_up(r->cursor, span_size);
    }
    if (base + span_size > r->committed) {
        uintptr_t end = hwt_align_up(base + span_size, COMMIT_STEP);
        if (end > r->base + HWT_REGION_SIZE)
            end = r->base + HWT_REGION_SIZE;
        if (!hwt_os_commit((void *)r->committed, end - r->committed, true))
            return 0;
        __atomic_store_n(&r->committed, end, __ATOMIC_RELEASE);
    }
    r->cursor = base + span_size;
    return base;
}

uintptr_t hwt_slab_region_carve(size_t span_size)
{
    hwt_lock(&heap_lock);
    uintptr_t base = carve_locked(span_size);
    hwt_unlock(&heap_lock);
    return base;
}

void hwt_slab_region_map(uintptr_t base, size_t size, struct hwt_span *s)
{
    /* base is a region's: its top-level entry is that region's page map */
    struct hwt_span **map = hwt_slab_regmap[HWT_REGMAP_INDEX(base)];
    for (uintptr_t p = base; p < base + size; p += HWT_MAP_PAGE)
        __atomic_store_n(&map[(p >> HWT_MAP_SHIFT) & (HWT_REGION_SIZE / HWT_MAP_PAGE - 1)], s,
                         __ATOMIC_RELEASE);
}

void hwt_slab_region_spans(const struct hwt_region *r, uintptr_t end,
                           void (*fn)(struct hwt_span *s, void *arg), void *arg)
{
    struct hwt_span *last = NULL;
    for (uintptr_t p = r->base; p < end; p += HWT_MAP_PAGE) {
        struct hwt_span *s =
            __atomic_load_n(&r->pagemap[(p - r->base) >> HWT_MAP_SHIFT], __ATOMIC_ACQUIRE);
        if (s == NULL || s == last)
            continue;
        last = s;
        fn(s, arg);
    }
}

void hwt_slab_region_retire(struct hwt_region *r)
{
    hwt_slab_region_map(r->base, r->committed - r->base, NULL);
    __atomic_store_n(&hwt_slab_regmap[HWT_REGMAP_INDEX(r->base)], NULL, __ATOMIC_RELEASE);
    hwt_os_unmap((void *)r->base, HWT_REGION_SIZE);
    if (current == r)
        current = NULL;
    r->cursor = r->committed = HWT_REGION_DEAD;
    __atomic_store_n(&r->base, HWT_REGION_DEAD, __ATOMIC_RELEASE);
}

void hwt_slab_region_lock(void)
{
    hwt_lock(&heap_lock);
}

void hwt_slab_region_unlock(void)
{
    hwt_unlock(&heap_lock);
}

void hwt_slab_region_reset_lock(void)
{
    hwt_lock_reset(&heap_lock);
}
