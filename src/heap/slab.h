/* SPDX-License-Identifier: MIT */
/* Small objects: spans of equal slots carved from PROT_MTE regions, slot state kept out
 * of band, central per-class free lists behind a lock. */
#ifndef HWT_SLAB_H
#define HWT_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "align.h"
#include "arch/mte.h"
#include "object.h"
#include "size_class.h"
#include "slab_region.h"
#include "slab_slot.h"
#include "slab_span.h"

void hwt_slab_init(void);

/* A free slot as the thread caches hold it: its untagged address and its slot word, so a
 * malloc from the cache needs no lookup. */
struct hwt_slab_ref {
    uintptr_t addr;
    struct hwt_slot *slot;
};

/* Central lists come in HWT_ARENAS sets, each with spans of its own, and a thread cache
 * takes from one (glibc's arenas): two threads churning objects of one class then take
 * their slots from different spans, so their slot words and objects share no cache line,
 * and their refills share no lock. A slot goes back to its own span's arena whoever frees
 * it. */
#define HWT_ARENAS 4u

/* A class that churns spans keeps them committed up to the most it had in use within the
 * last one to two windows of this many span events (a span taken into use or emptied): a
 * few seconds of the busiest churn measured natively (xmalloc-test: 4096 events left it
 * giving back 3000 spans a second, 65536 events 90). A program that stops churning gets the
 * pages back as its later events close the windows, or at once from malloc_trim. */
#define HWT_SLAB_PEAK_WINDOW 65536u
/* ... and keeps at most this many bytes of them empty, per class and arena */
#define HWT_SLAB_KEEP_CHURN_MAX_BYTES ((size_t)32 << 20)

/* At most this many bytes of spans wait retired (slab.c, RETIRE_TICK_MS) in all; past it an
 * emptied span goes back at once, so a program that frees much and then stops allocating
 * (no tick comes) holds at most this much more than before. */
#define HWT_SLAB_RETIRE_MAX_BYTES ((size_t)16 << 20)
/* Ages the retired spans (slab.c, RETIRE_TICK_MS), locks not held: in each class whose lock
 * it gets, those retired before the last tick go back, and the others wait for the next. */
void hwt_slab_tick(void);
/* Takes up to n available slots of class cls from arena's spans into out (untagged
 * addresses; memory tag HWT_TAG_FREE). Returns how many; 0 when out of memory. */
unsigned hwt_slab_take(unsigned arena, unsigned cls, struct hwt_slab_ref *out, unsigned n);
/* Gives slots (already retagged free) back to their spans. */
void hwt_slab_give(unsigned cls, const struct hwt_slab_ref *slots, unsigned n);
/* Fork child only: gives back a slot from a dead thread's bin after checking that it is
 * really out of its span and not live (the bin may have been mid-update); false when
 * the entry was dropped. */
bool hwt_slab_give_adopted(unsigned cls, uintptr_t addr);

/* Validates ptr as a live small object without changing anything. Inline: every free
 * and realloc starts here. */
static inline enum hwt_free_check hwt_slab_check(const void *ptr, struct hwt_span **span_out,
                                                 uint32_t *idx_out)
{
    uintptr_t addr = mte_heap_addr(ptr);
    *span_out = NULL;
    *idx_out = 0;
    struct hwt_span *s = hwt_slab_span_of(addr);
    if (s == NULL)
        return hwt_slab_region_of(addr) != NULL ? HWT_FREE_INVALID : HWT_FREE_NOT_OURS;
    uint32_t idx = hwt_slab_index(s, addr);
    if (idx >= s->nslots || s->base + (uintptr_t)idx * s->slot_size != addr)
        return HWT_FREE_INVALID;
    uint64_t w = hwt_slab_slot_load(&s->slots[idx]);
    unsigned state = hwt_slab_slot_state(w);
    *span_out = s;
    *idx_out = idx;
    if (state == HWT_SLOT_UNUSED)
        return HWT_FREE_INVALID;
    if (state != HWT_SLOT_LIVE)
        return HWT_FREE_DOUBLE;
    /* A stale pointer to a slot that was freed and reused carries the old tag. */
    if (hwt_mte_active && mte_ptr_tag(ptr) != hwt_slab_slot_tag(w))
        return HWT_FREE_DOUBLE;
    return HWT_FREE_OK;
}

/* Requested size of the slot's last object. */
static inline size_t hwt_slab_requested(const struct hwt_span *s, uint32_t idx)
{
    return hwt_slab_slot_requested(hwt_slab_slot_load(&s->slots[idx]));
}

/* Usable size of a live small object (its requested size rounded up to the granule). */
static inline size_t hwt_slab_usable(const struct hwt_span *s, uint32_t idx)
{
    return hwt_align_up(hwt_slab_requested(s, idx), HWT_GRANULE);
}

/* Per size class: spans, committed span bytes, live slots, slots free in their spans
 * (the rest of the slots sit in thread and transfer caches). A lock-free walk, for statistics. */
struct hwt_class_usage {
    uint64_t spans, span_bytes, live_slots, free_in_span;
    uint64_t live_bytes; /* usable bytes of the live slots */
};
void hwt_slab_class_usage(struct hwt_class_usage *out);

/* Calls fn for every live small object, in no particular order. Lock-free reads of the
 * slot words: exact when every other thread is stopped, best effort otherwise. Never
 * allocates. signal-safe */
void hwt_slab_walk_live(void (*fn)(const struct hwt_object *obj, void *arg), void *arg);

/* Out of memory: gives back the address space of every region whose spans are all fully
 * free and released (hwt_slab_trim first); returns its bytes. */
size_t hwt_slab_unmap_free_regions(void);
void hwt_slab_lock_all(void);
void hwt_slab_unlock_all(void);
void hwt_slab_reset_locks(void);
uint64_t hwt_slab_mapped(void);
/* Gives the pages of the kept empty spans back to the OS; returns the bytes given back. */
size_t hwt_slab_trim(void);

#endif
