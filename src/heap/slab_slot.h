/* SPDX-License-Identifier: MIT */
/* The out-of-band slot word of a small object: its bit layout and its accessors. Layout
 * only: it knows nothing of spans, lists or regions. */
#ifndef HWT_SLAB_SLOT_H
#define HWT_SLAB_SLOT_H

#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "stackdepot.h"

/* HWT_SLOT_EDGE marks the two guard words around a span's slot words (slots[-1] and
 * slots[nslots]): a neighbour read that finds it must look past the span (slot.c). */
enum hwt_slab_slot_state {
    HWT_SLOT_UNUSED = 0,
    HWT_SLOT_LIVE = 1,
    HWT_SLOT_FREED = 2,
    HWT_SLOT_EDGE = 3
};

/* Out-of-band state of one slot: one 64-bit word, changed with atomics, 8 bytes a slot
 * with the stacks (glibc spends 8 bytes of header on each chunk):
 *   bits  0-3  tag: live, the object's; freed, the tag it had (never the next one)
 *   bits  4-5  zero, so that a shift by the word (modulo 64) is a shift by its tag: the
 *              tag policy's exclusion mask is one shift a word (slot.h)
 *   bits  6-7  state (enum hwt_slab_slot_state)
 *   bits  8-22 requested size of the last allocation (<= HWT_SMALL_MAX)
 *   bits 23-42 stack-depot id of the last allocation (HWT_STACKDEPOT_ID_BITS)
 *   bits 43-62 stack-depot id of the last free; 0 while live (every word that makes a slot
 *              live or resizes it writes 0 there), so a free only adds its own
 *   bit  63    zero, but in the guard words (HWT_SLOT_EDGE_WORD) */
struct hwt_slot {
    uint64_t word;
};

#define HWT_SLOT_TAG_SHIFT 0u
#define HWT_SLOT_STATE_SHIFT 6u
#define HWT_SLOT_REQ_SHIFT 8u
#define HWT_SLOT_REQ_MASK 0x7fffu
#define HWT_SLOT_ALLOC_SHIFT 23u
#define HWT_SLOT_FREE_SHIFT 43u
/* A guard word: state HWT_SLOT_EDGE and bit 63, which no other word sets (the free stack
 * ends at bit 62), so that one sign test of two words ORed finds either guard (slot.h). */
#define HWT_SLOT_EDGE_BIT (UINT64_C(1) << 63)
#define HWT_SLOT_EDGE_WORD ((uint64_t)HWT_SLOT_EDGE << HWT_SLOT_STATE_SHIFT | HWT_SLOT_EDGE_BIT)
#define HWT_SLOT_STACK_MASK ((UINT64_C(1) << HWT_STACKDEPOT_ID_BITS) - 1)

static inline uint64_t hwt_slab_slot_load(const struct hwt_slot *slot)
{
    return __atomic_load_n(&slot->word, __ATOMIC_ACQUIRE);
}

static inline unsigned hwt_slab_slot_state(uint64_t w)
{
    return (unsigned)(w >> HWT_SLOT_STATE_SHIFT) & 3u;
}

static inline unsigned hwt_slab_slot_tag(uint64_t w)
{
    return (unsigned)(w >> HWT_SLOT_TAG_SHIFT) & (HWT_TAG_COUNT - 1);
}

/* 1 << the word's tag: the shift takes the word's low 6 bits, tag and two zero bits (no
 * instruction to extract the tag first). */
_Static_assert(HWT_SLOT_TAG_SHIFT == 0 && HWT_SLOT_STATE_SHIFT == 6,
               "bits 0-5 of a slot word are its tag and two zero bits");
_Static_assert(HWT_SLOT_FREE_SHIFT + HWT_STACKDEPOT_ID_BITS <= 63,
               "the free stack fits below bit 63");
static inline uint64_t hwt_slab_slot_tag_bit(uint64_t w)
{
    return UINT64_C(1) << (w & 63u);
}

static inline size_t hwt_slab_slot_requested(uint64_t w)
{
    return (size_t)(w >> HWT_SLOT_REQ_SHIFT) & HWT_SLOT_REQ_MASK;
}

static inline uint32_t hwt_slab_slot_alloc_stack(uint64_t w)
{
    return (uint32_t)((w >> HWT_SLOT_ALLOC_SHIFT) & HWT_SLOT_STACK_MASK);
}

static inline uint32_t hwt_slab_slot_free_stack(uint64_t w)
{
    return (uint32_t)((w >> HWT_SLOT_FREE_SHIFT) & HWT_SLOT_STACK_MASK);
}

static inline uint64_t hwt_slab_slot_word(unsigned state, unsigned tag, size_t requested,
                                          uint32_t alloc_stack, uint32_t free_stack)
{
    return (uint64_t)state << HWT_SLOT_STATE_SHIFT | (uint64_t)tag << HWT_SLOT_TAG_SHIFT |
           (uint64_t)(requested & HWT_SLOT_REQ_MASK) << HWT_SLOT_REQ_SHIFT |
           (uint64_t)(alloc_stack & HWT_SLOT_STACK_MASK) << HWT_SLOT_ALLOC_SHIFT |
           (uint64_t)(free_stack & HWT_SLOT_STACK_MASK) << HWT_SLOT_FREE_SHIFT;
}

#endif
