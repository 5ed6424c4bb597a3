/* SPDX-License-Identifier: MIT */
/* Spans: their metadata, the husks of spans whose range went to another class, setting a
 * span up on a range, and cutting a released range up for another class. It never decides
 * which span to use or keep: that is the central lists' policy (slab.c). */
#ifndef HWT_SLAB_SPAN_H
#define HWT_SLAB_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/opaque.h"
#include "slab_region.h"
#include "slab_slot.h"

#define HWT_SPAN_LINE 64u /* cache line size assumed for struct hwt_span's layout */

/* One cache line: the fields every free reads, fixed while the span has its range, and those
 * the central lists write under their lock. Refills and drains meet the transfer caches
 * first, so a span's own fields are written seldom, and a line of its own for them cost 64
 * bytes a span (python3 start-up: 825 spans, 52 KiB). */
struct hwt_span {
    uintptr_t base;               /* untagged, aligned to span_size */
    struct hwt_slot *slots;       /* nslots words, an HWT_SLOT_EDGE word before and after;
                                   * next to base: free reads both with one load pair */
    uint64_t *free_bits;          /* 1 = available in the span; central lock */
    struct hwt_span *next, *prev; /* central lists; central lock */
    /* nslots * slot_size: the bytes from base the slots cover (0 while the span is made);
     * next to slot_recip: free reads both with one load pair (hwt_slab_index_exact) */
    uint32_t slots_bytes;
    uint32_t slot_recip; /* 2^32 / slot_size rounded up, for division-free slot indexes */
    /* the offset of its class's bin in a thread cache (struct hwt_tcache): free forms the
     * bin's address with one add, where the class took a shift and two adds */
    uint16_t bin_offset;
    uint16_t slot_size; /* bytes */
    /* DC G(Z)VA blocks a slot has when its size is a multiple of the block (every slot then
     * starts on one), else 0: free retags such a slot's blocks whole */
    uint16_t slot_blocks;
    uint16_t nslots;
    uint16_t nfree; /* slots available in the span (free_bits set); central lock */
    uint8_t cls;
    uint8_t granule_slots; /* 1: slots smaller than a block, retagged with granule stores */
    uint8_t arena;         /* whose central lists it is on (HWT_ARENAS) */
    uint8_t list;          /* which central list holds it; central lock */
    uint8_t span_shift;    /* its size is 1 << span_shift bytes (hwt_span_bytes) */
};
_Static_assert(sizeof(struct hwt_span) <= HWT_SPAN_LINE, "a span's metadata is one line");
/* The largest span, and its most slots (16-byte slots), fit nslots and nfree */
#define HWT_SPAN_MAX (128u * 1024u)
_Static_assert(HWT_SPAN_MAX / 16u <= UINT16_MAX, "a span's slot count fits 16 bits");
_Static_assert(HWT_SMALL_MAX <= UINT16_MAX, "a slot's size fits 16 bits");

/* Where a thread cache's bins start in it (struct hwt_tcache, whose header checks this):
 * a span's bin_offset is this plus 16 bytes a class. */
#define HWT_SPAN_BINS_AT 8288u

/* The span's size in bytes. */
static inline size_t hwt_span_bytes(const struct hwt_span *s)
{
    return (size_t)1 << s->span_shift;
}

static inline uint32_t hwt_slab_index(const struct hwt_span *s, uintptr_t addr)
{
    return (uint32_t)(((addr - s->base) * (uint64_t)s->slot_recip) >> 32);
}

/* Whether the untagged addr is the start of one of s's slots, and then its index in *idx:
 * two compares, no multiply back. With off = addr - base < slots_bytes (so off < 2^17) and
 * r = slot_recip = 2^32 / slot_size rounded up, r * slot_size = 2^32 + e with e < slot_size:
 * off = k * slot_size gives off * r = k * 2^32 + k * e, whose low half k * e < off < 2^17;
 * off = k * slot_size + d, 0 < d < slot_size, adds d * r, which is at least r >= 2^18 (slot
 * sizes are at most 2^14) and keeps the low half below 2^32 ((k + 1) * e < 2^17 < r). So the
 * high half is k either way, and the low half tells a slot's start from inside a slot. An
 * address outside the slots, or in another region sharing the page map's entry, fails the
 * first compare. Inline: every free starts here. */
static inline __attribute__((always_inline)) bool
hwt_slab_index_exact(const struct hwt_span *s, uintptr_t base, uintptr_t addr, uint32_t *idx)
{
    _Static_assert(HWT_SMALL_MAX <= (1u << 14) && HWT_SPAN_MAX <= (1u << 17),
                   "the low half of an exact multiple stays below 2^17, of any other 2^18");
    /* both loaded ahead of the first compare (one load pair), as 64-bit values (the
     * multiply then needs no zero-extension) */
    uint64_t bytes = s->slots_bytes, recip = s->slot_recip;
    hwt_arch_opaque(bytes);
    hwt_arch_opaque(recip);
    uintptr_t off = addr - base;
    if (off >= bytes)
        return false;
    uint64_t prod = off * recip;
    *idx = (uint32_t)(prod >> 32);
    /* one compare with the low half shifted (a compare with 2^17 took a constant) */
    return ((uint32_t)prod >> 17) == 0;
}

/* The span holding addr (untagged), NULL when none: hwt_slab_span_in of hwt_slab_regmap,
 * and the address within what it finds (an address outside every region may find a span of
 * the region sharing its top-level entry). signal-safe */
static inline __attribute__((always_inline)) struct hwt_span *hwt_slab_span_of(uintptr_t addr)
{
    struct hwt_span *s = hwt_slab_span_in(hwt_slab_regmap, addr);
    return s != NULL && addr - s->base < hwt_span_bytes(s) ? s : NULL;
}

/* Which central list holds a span (struct hwt_span.list). */
enum hwt_slab_span_list {
    HWT_SPAN_LIST_NONE,
    HWT_SPAN_LIST_PARTIAL,
    HWT_SPAN_LIST_EMPTY,
    HWT_SPAN_LIST_RELEASED
};

/* Central lists: pushes s on the list at head, which is the one `which` names. Caller holds
 * the list's lock. */
static inline void hwt_slab_span_push(struct hwt_span **head, struct hwt_span *s, uint8_t which)
{
    s->prev = NULL;
    s->next = *head;
    if (*head != NULL)
        (*head)->prev = s;
    *head = s;
    s->list = which;
}

static inline void hwt_slab_span_unlink(struct hwt_span **head, struct hwt_span *s)
{
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        *head = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->list = HWT_SPAN_LIST_NONE;
}

/* Frees the husk list's lock in a fork child (a signal handler's fork may have interrupted
 * its holder; the list stays whole at every step). */
void hwt_slab_span_reset_lock(void);

/* A new span of cls for arena, carved from a region and tagged free before anyone else can
 * see it: QEMU loses tags when two threads first tag a fresh page at once (docs/design.md).
 * NULL when out of memory; *no_space then says whether the address space ran out (the
 * metadata was kept for the next span of cls). */
struct hwt_span *hwt_slab_span_new(unsigned arena, unsigned cls, bool *no_space);
/* Cuts victim, a released span of another class at least as big as a span of cls (its pages
 * already given back), into spans of cls for arena: the first is returned, tagged free; the
 * others are pushed on released, untagged. victim's metadata becomes a husk. The caller
 * holds the lock of released's list. */
struct hwt_span *hwt_slab_span_cut(struct hwt_span *victim, unsigned arena, unsigned cls,
                                   struct hwt_span **released);
/* Keeps s's metadata for the next span of its class (s's range is no longer mapped). */
void hwt_slab_span_husk(struct hwt_span *s);

/* The heap walk of HWTAG_DEBUG=2, run on a span after every central take and give: its
 * bitmap counts nfree available slots and none of them is live. Central lock held. */
bool hwt_slab_span_consistent(const struct hwt_span *s);

#endif
