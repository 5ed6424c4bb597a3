/* SPDX-License-Identifier: MIT */
/* A slot as an object: made live, freed, resized in place, described. Every granule of a
 * slot outside its live object's usable bytes has HWT_TAG_FREE (spans start so; malloc
 * tags only the usable bytes, free and shrink retag what they give up), so a free may
 * retag past the usable bytes up to the slot's end. */
#ifndef HWT_SLOT_H
#define HWT_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "arch/mte_range.h"
#include "arch/opaque.h"
#include "check.h"
#include "history.h"
#include "object.h"
#include "slab.h"
#include "tag.h"
#include "tail.h"

/* Word of the slot holding the untagged address addr, a neighbour of a slot; 0 (unused)
 * where no slot is: no span, a span being made, a span's free tail. An address past its
 * region's edge may read a word of the region sharing its top-level entry instead
 * (hwt_slab_span_in), which only keeps one more tag from the pick: the check against the
 * span cost 1.2 instructions a pair at 4000 B, where half the slots are at an edge.
 * Lock-free. */
static inline __attribute__((always_inline)) uint64_t hwt_slot_word_at(uintptr_t addr)
{
    const struct hwt_span *s = hwt_slab_span_in(hwt_slab_regmap, addr);
    if (s == NULL || s->slot_size == 0)
        return 0;
    uint32_t idx = hwt_slab_index(s, addr);
    if (idx >= s->nslots)
        return 0;
    return __atomic_load_n(&s->slots[idx].word, __ATOMIC_RELAXED);
}

/* Policy: a random tag other than the slot's previous one (an immediate use-after-free
 * through the old pointer always faults) and those of its neighbours (a linear overflow
 * always faults): the tags their slot words hold, live or not (a freed neighbour's memory
 * has HWT_TAG_FREE, so excluding its old tag only narrows the choice, to 11 tags at
 * worst). The neighbours' words sit next to the slot's own; a guard word (the slot is at
 * its span's edge; one test of both words for its bit 63) sends that side to the adjacent
 * span. An unused slot's word reads as
 * tag 0, which is never picked anyway. Returns the slot's address with the new tag, and
 * in *old the slot's word. Tagging must be on. */
static inline __attribute__((always_inline)) uintptr_t hwt_slot_pick_tag(struct hwt_slab_ref ref,
                                                                         uint64_t *old_word)
{
    /* the left and own words in one load pair; the right one volatile, as a relaxed
     * atomic load (aligned, read once): GCC builds each atomic load's address in a register
     * of its own, an instruction more */
    const volatile uint64_t *words = &ref.slot->word;
    uint64_t left, old;
    hwt_arch_load_pair(&ref.slot[-1].word, &left, &old);
    uint64_t right = words[1];
    /* 0 and HWT_TAG_FREE are outside the process's include mask (HWT_TAG_INCLUDE_MASK,
     * set with the tag-check mode), which IRG never leaves: two instructions fewer. So is
     * a guard word's tag, 0: the adjacent span's neighbour is added to the guard's bit. */
    _Static_assert(((HWT_SLOT_EDGE_WORD >> HWT_SLOT_TAG_SHIFT) & (HWT_TAG_COUNT - 1)) == 0,
                   "a guard word's tag is 0");
    uint64_t exclude =
        hwt_slab_slot_tag_bit(old) | hwt_slab_slot_tag_bit(left) | hwt_slab_slot_tag_bit(right);
    if (unlikely((left | right) & HWT_SLOT_EDGE_BIT)) {
        if (left & HWT_SLOT_EDGE_BIT)
            exclude |= hwt_slab_slot_tag_bit(hwt_slot_word_at(ref.addr - HWT_GRANULE));
        if (right & HWT_SLOT_EDGE_BIT)
            /* the slot size from the span here, not a table load on every malloc */
            exclude |= hwt_slab_slot_tag_bit(hwt_slot_word_at(
                ref.addr + hwt_slab_span_in(hwt_slab_regmap, ref.addr)->slot_size));
    }
    *old_word = old;
    return mte_random_tagged(ref.addr, exclude);
}

/* Tags (and zeroes when zero) the usable bytes of a fresh object in a slot of *slot_size
 * bytes; lut: its size's lut entry, whose plan is for that class, or 0 (no plan); *dc_block:
 * the DC G(Z)VA block size (a thread cache's copy). All three are used only where they
 * serve, for more than four granules: ahead of that (the compiler hoisted their loads and
 * the plan's shift), they cost every small malloc instructions. */
static inline __attribute__((always_inline)) void hwt_slot_tag_fresh(void *tagged, size_t usable,
                                                                     bool zero, uint32_t lut,
                                                                     const uint32_t *slot_size,
                                                                     const uint16_t *dc_block)
{
    if (likely(usable <= 4 * HWT_GRANULE)) {
        mte_store_tags_on(tagged, usable, zero);
        return;
    }
    /* here, not hoisted onto the small sizes' path */
    unsigned b = hwt_arch_shr16_here(lut);
    _Static_assert(HWT_LUT_PLAN(UINT32_C(0xffff0000)) == 0xffff, "the plan is the top half");
    unsigned blocks = HWT_PLAN_BLOCKS(b);
    if (likely(blocks != 0)) {
        hwt_arch_loads_here();
        mte_store_tags_blocks_on(tagged, blocks, HWT_PLAN_REST(b), *dc_block, zero);
        return;
    }
    /* with no blocks, only HWT_PLAN_GRANULES is nonzero: one test */
    if (likely(b != 0)) {
        mte_store_tags_granules_on(tagged, usable, zero);
        return;
    }
    hwt_arch_loads_here();
    mte_store_tags_within_on(tagged, usable, zero, *slot_size, *dc_block);
}

/* Retags the usable bytes of a freed object at addr (untagged) in a slot of span s with
 * HWT_TAG_FREE. Past four granules, a slot of whole DC G(Z)VA blocks (*dc_block bytes)
 * gets them all, as the kernel poisons a freed object's whole slot: its bytes past usable
 * have HWT_TAG_FREE already, and the count is the span's, with no arithmetic on the size.
 * A slot smaller than a block: granule stores alone. Another slot: the range worked out
 * with its size. The span, not its fields, goes out of sight: its address is in a register
 * already, where a field's would be formed in one; hoisted, the loads cost every small free
 * instructions. */
static inline __attribute__((always_inline)) void hwt_slot_tag_freed(uintptr_t addr, size_t usable,
                                                                     const struct hwt_span *s,
                                                                     const uint16_t *dc_block)
{
    void *p = mte_with_tag(addr, HWT_TAG_FREE);
    if (likely(usable <= 4 * HWT_GRANULE)) {
        mte_store_tags_on(p, usable, 0);
        return;
    }
    hwt_arch_opaque(s);
    unsigned blocks = s->slot_blocks;
    if (likely(blocks != 0)) {
        hwt_arch_loads_here();
        mte_store_tags_blocks_on(p, blocks, 0, *dc_block, 0);
        return;
    }
    if (likely(s->granule_slots)) {
        mte_store_tags_granules_on(p, usable, 0);
        return;
    }
    hwt_arch_loads_here();
    mte_store_tags_upto_on(p, usable, s->slot_size, *dc_block);
}

/* Makes the free slot ref (*slot_size bytes) a live object of size requested: its tag
 * (tagged), its tags and zeroing (by lut and *dc_block: see hwt_slot_tag_fresh), its tail
 * pattern (tail: the key, NULL for none), its slot word. history: NULL, or (tagged only) a cursor
 * with an entry left, where the object the slot's word described goes when it was one freed (the
 * history ring's slot entries). Returns the tagged pointer. Inline: malloc's fast path is this and
 * a cache pop. */
static inline __attribute__((always_inline)) void *
hwt_slot_prepare_ref(struct hwt_slab_ref ref, size_t requested, bool zero, uint32_t stack,
                     bool tagged, const struct hwt_tail_key *tail, uint32_t lut,
                     const uint32_t *slot_size, const uint16_t *dc_block,
                     struct hwt_history_cursor *history)
{
    uintptr_t tagged_addr = ref.addr;
    size_t usable = hwt_align_up(requested, HWT_GRANULE);
    if (tagged) {
        uint64_t old;
        tagged_addr = hwt_slot_pick_tag(ref, &old);
        /* before the word changes: a report finds the object in one or the other */
        /* a slot that is made live is unused or freed: one bit test tells them apart */
        _Static_assert(HWT_SLOT_UNUSED == 0 && HWT_SLOT_FREED == 2, "only freed has bit 1");
        if (history != NULL && likely(old & (uint64_t)HWT_SLOT_FREED << HWT_SLOT_STATE_SHIFT))
            hwt_history_put_slot_claimed(history, ref.addr, old);
        if (usable != 0)
            hwt_slot_tag_fresh((void *)tagged_addr, usable, zero, lut, slot_size, dc_block);
    } else if (zero) {
        __builtin_memset((void *)ref.addr, 0, usable);
    }
    void *ptr = (void *)tagged_addr;
    /* a slot's address in a bin or from a span carries no tag (free pushes the address
     * it checked against the span's): untagged, the word's tag is 0 without reading it */
    unsigned tag = tagged ? mte_ptr_tag(ptr) : 0;
    if (tail != NULL)
        hwt_tail_put(tail, ptr, requested, zero);
    __atomic_store_n(&ref.slot->word, hwt_slab_slot_word(HWT_SLOT_LIVE, tag, requested, stack, 0),
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
