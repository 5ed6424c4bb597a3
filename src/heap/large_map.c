/* SPDX-License-Identifier: MIT */
/* The mappings of page-backed objects: where their address space comes from, aligned
 * placement, guard tags and the cut of a mapping taken for a smaller object (large_map.h).
 * It never takes large.c's lock, records, caches or counts a mapping; large.c does. */
#include "large_map.h"

#include "lock.h"

/* Mappings of up to CARVE_MAX bytes are cut, in address order, from a bigger one of their
 * kind (a chunk), so most page-backed objects cost no mmap. Every mmap and munmap takes
 * the kernel's lock over the process's address space for writing, and the other threads'
 * page faults wait on it: natively, 2 threads churning 16 KiB..1 MiB objects (mimalloc's
 * mstress) made 1857 mmap calls and ran 1.5 times tcmalloc's time with less than one CPU
 * busy. Carved pages are never handed out twice: a carved mapping unmapped later leaves a
 * hole for the kernel to reuse. Chunks grow from CHUNK_MIN to CHUNK_MAX bytes, so a
 * program with a few such objects reserves little address space; a chunk's unused end
 * holds no pages, and it is given back when the next chunk replaces it. */
#define CARVE_MAX ((size_t)1 << 20)
#define CHUNK_MIN ((size_t)2 << 20)
#define CHUNK_MAX ((size_t)64 << 20)

struct chunk {
    uintptr_t cur, end; /* the unused end */
    size_t next_size;   /* of the chunk after this one */
};
static struct hwt_lock carve_lock = HWT_LOCK_INIT;
static struct chunk chunks[2]; /* untagged, tagged; under carve_lock */
static bool carve_off;         /* once a chunk was refused (or given back for memory), map each */

/* Makes [cur, end) c's unused end; returns the old one's size, from *old, for the caller to
 * give back once it has dropped the lock. */
static size_t chunk_set_locked(struct chunk *c, uintptr_t cur, uintptr_t end, uintptr_t *old)
{
    *old = c->cur;
    size_t old_size = c->end - c->cur;
    c->cur = cur;
    c->end = end;
    return old_size;
}

/* Replaces c by a new chunk; the caller gives the old unused end back (*old, *old_size). */
static bool chunk_new_locked(struct chunk *c, bool mte, uintptr_t *old, size_t *old_size)
{
    size_t size = c->next_size != 0 ? c->next_size : CHUNK_MIN;
    void *m = hwt_os_map(size, mte);
    if (m == NULL) {
        __atomic_store_n(&carve_off, true, __ATOMIC_RELAXED);
        return false;
    }
    *old_size = chunk_set_locked(c, (uintptr_t)m, (uintptr_t)m + size, old);
    c->next_size = size < CHUNK_MAX ? 2 * size : CHUNK_MAX;
    return true;
}

/* need bytes (a page multiple up to CARVE_MAX) cut from the chunk of their kind; NULL when
 * carving is off or no chunk could be mapped. */
static void *carve(size_t need, bool mte)
{
    if (__atomic_load_n(&carve_off, __ATOMIC_RELAXED))
        return NULL;
    struct chunk *c = &chunks[mte];
    uintptr_t m = 0, old = 0;
    size_t old_size = 0;
    hwt_lock(&carve_lock);
    if (!carve_off && (c->end - c->cur >= need || chunk_new_locked(c, mte, &old, &old_size))) {
        m = c->cur;
        c->cur = m + need;
    }
    hwt_unlock(&carve_lock);
    if (old_size != 0)
        hwt_os_unmap((void *)old, old_size);
    return (void *)m;
}

unsigned hwt_large_map_unused(uintptr_t lo[2], uintptr_t hi[2])
{
    unsigned n = 0;
    if (!hwt_trylock(&carve_lock)) /* a stopped thread holds it: scan them, to be safe */
        return 0;
    for (unsigned k = 0; k < 2; k++) {
        lo[n] = chunks[k].cur;
        hi[n] = chunks[k].end;
        n += lo[n] < hi[n];
    }
    hwt_unlock(&carve_lock);
    return n;
}

size_t hwt_large_map_give_unused(void)
{
    uintptr_t start[2];
    size_t size[2], given = 0;
    hwt_lock(&carve_lock);
    __atomic_store_n(&carve_off, true, __ATOMIC_RELAXED);
    for (unsigned k = 0; k < 2; k++)
        size[k] = chunk_set_locked(&chunks[k], 0, 0, &start[k]);
    hwt_unlock(&carve_lock);
    for (unsigned k = 0; k < 2; k++) {
        if (size[k] != 0)
            hwt_os_unmap((void *)start[k], size[k]);
        given += size[k];
    }
    return given;
}

void hwt_large_map_lock(void)
{
    hwt_lock(&carve_lock);
}

void hwt_large_map_unlock(void)
{
    hwt_unlock(&carve_lock);
}

void hwt_large_map_reset_lock(void)
{
    hwt_lock_reset(&carve_lock);
}

/* Over-maps by align and gives the unused head and tail back, so the mapping (and its
 * tagging) stays need bytes whatever the alignment. */
void *hwt_large_map_aligned(size_t need, size_t align, bool mte)
{
    if (align <= hwt_os_page_size) {
        void *m = need <= CARVE_MAX ? carve(need, mte) : NULL;
        return m != NULL ? m : hwt_os_map(need, mte);
    }
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
