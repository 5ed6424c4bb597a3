/* SPDX-License-Identifier: MIT */
/* The mappings of page-backed objects: aligned placement, guard tags and the cut of a
 * mapping taken for a smaller object (large_map.h). It never takes the lock, records,
 * caches or counts a mapping; large.c does. */
#include "large_map.h"

/* Over-maps by align and gives the unused head and tail back, so the mapping (and its
 * tagging) stays need bytes whatever the alignment. */
void *hwt_large_map_aligned(size_t need, size_t align, bool mte)
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

void hwt_large_map_place(struct hwt_large *l, void *m, size_t need, size_t usable, size_t align,
                         bool mte)
{
    l->map_start = (uintptr_t)m;
    l->map_size = need;
    __atomic_store_n(&l->start,
                     hwt_align_up((uintptr_t)m + hwt_os_page_size,
                                  align < hwt_os_page_size ? hwt_os_page_size : align),
                     __ATOMIC_RELAXED);
    l->tag = HWT_TAG_UNTAGGED;
    l->sampled = 0;
    /* Fresh pages are tag 0: the object area stays so until retagged; the rest becomes the
     * free-tagged guard now, in the mapping thread (docs/design.md: QEMU's lazy tag
     * storage). */
    l->area = usable;
    l->area_tag = HWT_TAG_UNTAGGED;
    l->mte = mte;
    if (mte) {
        hwt_tag_range(l->map_start, l->start - l->map_start, HWT_TAG_FREE, false);
        hwt_tag_range(l->start + usable, l->map_start + l->map_size - l->start - usable,
                      HWT_TAG_FREE, false);
    }
}

size_t hwt_large_map_shrink(struct hwt_large *l, size_t usable, uintptr_t *cut)
{
    size_t keep = (l->start - l->map_start) + hwt_align_up(usable + HWT_GRANULE, hwt_os_page_size);
    if (keep >= l->map_size)
        return 0;
    size_t cut_size = l->map_size - keep;
    *cut = l->map_start + keep;
    __atomic_store_n(&l->map_size, keep, __ATOMIC_RELEASE);
    size_t room = keep - (l->start - l->map_start);
    if (l->area > room)
        l->area = room;
    if (l->resident > keep)
        l->resident = keep;
    return cut_size;
}
