/* SPDX-License-Identifier: MIT */
/* A slot as an object: made live, freed, resized in place, described. */
#ifndef HWT_SLOT_H
#define HWT_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "object.h"
#include "slab.h"
#include "tag.h"
#include "tail.h"

/* The tag policy where the guard words show the slot at its span's edge: the adjacent
 * span's slot word decides (slot.c). */
unsigned hwt_slot_pick_tag_edge(uintptr_t addr);

/* Policy: a random tag other than the slot's previous one (an immediate use-after-free
 * through the old pointer always faults) and those of its live neighbours (a linear
 * overflow always faults). The neighbours' words sit next to the slot's own; a guard word
 * sends the pick to hwt_slot_pick_tag_edge. An unused slot's word reads as tag 0, which
 * is never picked anyway. Tagging must be on. */
static inline __attribute__((always_inline)) unsigned hwt_slot_pick_tag(const struct hwt_slot *slot,
                                                                        uintptr_t addr)
{
    uint64_t left = __atomic_load_n(&slot[-1].word, __ATOMIC_RELAXED);
    uint64_t old = __atomic_load_n(&slot[0].word, __ATOMIC_RELAXED);
    uint64_t right = __atomic_load_n(&slot[1].word, __ATOMIC_RELAXED);
    if (unlikely(((left & (left >> 1)) | (right & (right >> 1))) & 1))
        return hwt_slot_pick_tag_edge(addr); /* HWT_SLOT_EDGE is both state bits */
    uint64_t exclude = (uint64_t)HWT_TAG_BIT(hwt_slot_tag(old)) | HWT_TAG_BIT(HWT_TAG_UNTAGGED) |
                       HWT_TAG_BIT(HWT_TAG_FREE);
    exclude |= (uint64_t)(hwt_slot_state(left) == HWT_SLOT_LIVE) << hwt_slot_tag(left);
    exclude |= (uint64_t)(hwt_slot_state(right) == HWT_SLOT_LIVE) << hwt_slot_tag(right);
    return mte_random_tag_on(exclude);
}

/* Makes the free slot ref a live object of size requested: its tag (tagged), its tags
 * and zeroing, its tail pattern (tail), its slot word. Returns the tagged pointer. Inline:
 * malloc's fast path is this and a cache pop. */
static inline __attribute__((always_inline)) void *hwt_slot_prepare_ref(struct hwt_slab_ref ref,
                                                                        size_t requested, bool zero,
                                                                        uint32_t stack, bool tagged,
                                                                        bool tail)
{
    unsigned tag = HWT_TAG_UNTAGGED;
    size_t usable = hwt_align_up(requested, HWT_GRANULE);
    if (tagged) {
        tag = hwt_slot_pick_tag(ref.slot, ref.addr);
        if (usable != 0)
            mte_store_tags(mte_with_tag(ref.addr, tag), usable, zero);
    } else if (zero) {
        __builtin_memset((void *)ref.addr, 0, usable);
    }
    void *ptr = mte_with_tag(ref.addr, tag);
    if (tail)
        hwt_tail_put(ptr, requested, zero);
    __atomic_store_n(&ref.slot->word, hwt_slot_word(HWT_SLOT_LIVE, tag, requested, stack, 0),
                     __ATOMIC_RELEASE);
    return ptr;
}

/* Makes slot addr of class cls a live object of size requested: picks its tag (policy in
 * slab.c), tags it (zeroing when zero), writes its tail pattern (tail.h), records it.
 * Returns the tagged pointer. */
void *hwt_slot_prepare(uintptr_t addr, size_t requested, bool zero, uint32_t stack);

/* Marks the checked slot freed (atomically: a racing second free gets false), retags it
 * free and records the stack. Returns the untagged slot address or 0 on a lost race. */
uintptr_t hwt_slot_release(struct hwt_span *s, uint32_t idx, uint32_t stack);

/* realloc in place when new_size belongs in the same slot: keeps the tag, tags the grown
 * part or frees the cut tail. Returns false when the object must move. */
bool hwt_slot_resize(struct hwt_span *s, uint32_t idx, size_t new_size);

/* Describes the slot delta slots away from the one holding addr (0: that one) in the same
 * span. Lock-free. signal-safe */
bool hwt_slot_lookup(uintptr_t addr, long delta, struct hwt_object *out);

#endif
