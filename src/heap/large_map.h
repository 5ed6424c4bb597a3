/* SPDX-License-Identifier: MIT */
/* Private to large.c and large_map.c: a page-backed object's mapping (its size, its aligned
 * placement, its guard tags, the cut of a loose fit) and the retagging of its object area.
 * Nothing here takes large.c's lock, records, caches or counts a mapping: large.c does. */
#ifndef HWT_LARGE_MAP_H
#define HWT_LARGE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "align.h"
#include "arch/mte.h"
#include "large_record.h"
#include "os.h"
#include "tag.h"

/* A free-tagged guard page below the object and at least one guard granule past it
 * (also for page-multiple sizes). */
static inline size_t hwt_large_map_size(size_t size)
{
    return hwt_os_page_size +
           hwt_align_up(hwt_align_up(size, HWT_GRANULE) + HWT_GRANULE, hwt_os_page_size);
}

/* Brings [start, start+usable) to tag (zeroing it when zero) and the rest of the mapping
 * to HWT_TAG_FREE, touching only the ranges whose tag changes. The object is owned. Inline:
 * every large malloc runs it. */
static inline void hwt_large_map_retag(struct hwt_large *l, size_t usable, unsigned tag, bool zero)
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

/* A fresh mapping of need bytes whose second page is aligned to align, all zero; NULL when
 * the OS refuses memory. */
void *hwt_large_map_aligned(size_t need, size_t align, bool mte);
/* The unused ends of the chunks mappings are carved from, as [lo[i], hi[i]): their count,
 * 0 when another thread holds the carving lock (the leak check's world may be stopped
 * anywhere: it try-locks). */
unsigned hwt_large_map_unused(uintptr_t lo[2], uintptr_t hi[2]);
/* Out of memory: gives the chunks' unused ends back and maps each mapping from now on;
 * returns the bytes given back. */
size_t hwt_large_map_give_unused(void);
/* The carving lock, for fork (taken before large.c's lock, never under it). */
void hwt_large_map_lock(void);
void hwt_large_map_unlock(void);
void hwt_large_map_reset_lock(void);
/* Fills the new record l for the fresh mapping m of need bytes holding an object of usable
 * bytes, and tags its guards free. Its state and the lookups are the caller's. */
void hwt_large_map_place(struct hwt_large *l, void *m, size_t need, size_t usable, size_t align,
                         bool mte);
/* Cuts the end of the taken mapping l past what an object of usable bytes needs (its guard
 * granule, to a page); returns the bytes cut (0: none), which the caller unmaps from *cut
 * once it has dropped the lock. Lookups without the lock see either size, and both hold the
 * object. */
size_t hwt_large_map_shrink(struct hwt_large *l, size_t usable, uintptr_t *cut);

#endif
