/* SPDX-License-Identifier: MIT */
/* Small objects: spans of equal slots carved from PROT_MTE regions, slot state kept out
 * of band, central per-class free lists behind a lock. */
#ifndef HWT_SLAB_H
#define HWT_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "object.h"
#include "size_class.h"
#include "stackdepot.h"

#define HWT_SPAN_LINE 64u /* cache line size assumed for struct hwt_span's layout */

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

/* One cache line: the fields every free reads, fixed while the span has its range, and those
 * the central lists write under their lock. Refills and drains meet the transfer caches
 * first, so a span's own fields are written seldom, and a line of its own for them cost 64
 * bytes a span (python3 start-up: 825 spans, 52 KiB). */
struct hwt_span {
    uintptr_t base;               /* untagged, aligned to span_size */
    uint64_t *free_bits;          /* 1 = available in the span; central lock */
    struct hwt_slot *slots;       /* nslots words, an HWT_SLOT_EDGE word before and after */
    struct hwt_span *next, *prev; /* central lists; central lock */
    uint32_t span_size;           /* bytes */
    uint32_t slot_size;           /* bytes */
    uint32_t nslots;
    uint32_t slot_recip; /* 2^32 / slot_size rounded up, for division-free slot indexes */
    uint32_t nfree;      /* slots available in the span (free_bits set); central lock */
    uint16_t cls;
    uint8_t arena; /* whose central lists it is on (HWT_ARENAS) */
    uint8_t list;  /* which central list holds it; central lock */
};
_Static_assert(sizeof(struct hwt_span) <= HWT_SPAN_LINE, "a span's metadata is one line");

void hwt_slab_init(void);

/* A free slot as the thread caches hold it: its untagged address and its slot word, so a
 * malloc from the cache needs no lookup. */
struct hwt_slab_ref {
    uintptr_t addr;
    struct hwt_slot *slot;
};

/* Spans are carved from regions of HWT_REGION_SIZE bytes reserved on demand, each aligned
 * to its size, so one shift finds a region's page map in hwt_slab_regmap and one more the
 * span. The page map has an entry per HWT_MAP_PAGE bytes whatever the OS page size: the
 * smallest span, since every span is aligned to its size (an entry per 4 KiB cost python3
 * start-up 24 KiB more). */
#define HWT_REGION_SHIFT 26u
#define HWT_REGION_SIZE ((size_t)1 << HWT_REGION_SHIFT)
#define HWT_MAX_REGIONS 1024u
#define HWT_MAP_SHIFT 14u
#define HWT_MAP_PAGE ((size_t)1 << HWT_MAP_SHIFT)
_Static_assert(HWT_MAP_PAGE == HWT_SPAN_MIN, "a page map entry per smallest span");
#define HWT_REGMAP_BITS (48u - HWT_REGION_SHIFT) /* user addresses below 2^48 */

struct hwt_region {
    uintptr_t base;            /* HWT_REGION_SIZE bytes reserved */
    uintptr_t cursor;          /* next free byte; heap lock */
    uintptr_t committed;       /* end of the committed (read-write, PROT_MTE) prefix */
    struct hwt_span **pagemap; /* per HWT_MAP_PAGE: its span, NULL = none */
};

extern struct hwt_region hwt_slab_regions[HWT_MAX_REGIONS];
extern uint32_t hwt_slab_region_count; /* published with release after the region is set up */
/* Per 2^HWT_REGION_SHIFT bytes of address space: that region's page map, or NULL. In .bss
 * (32 MiB of address space, a page of it touched per 512 regions' worth of addresses). */
extern struct hwt_span **hwt_slab_regmap[(size_t)1 << HWT_REGMAP_BITS];

/* Region holding addr, NULL when none. Lock-free. signal-safe */
static inline struct hwt_region *hwt_slab_region_of(uintptr_t addr)
{
    uint32_t n = __atomic_load_n(&hwt_slab_region_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        if (addr - hwt_slab_regions[i].base < HWT_REGION_SIZE)
            return &hwt_slab_regions[i];
    }
    return NULL;
}

/* Span holding addr (untagged), NULL when none. Lock-free: the maps and the span are
 * published with release stores and reached here through the loaded pointers (address
 * dependencies), so relaxed loads see them whole. Inline: every free starts here.
 * signal-safe */
static inline __attribute__((always_inline)) struct hwt_span *hwt_slab_span_of(uintptr_t addr)
{
    /* Bits above 2^48 wrap around: such an address can never equal a slot's (the callers
     * check), whichever span it finds. */
    uintptr_t top = (addr >> HWT_REGION_SHIFT) & (((uintptr_t)1 << HWT_REGMAP_BITS) - 1);
    struct hwt_span **map = __atomic_load_n(&hwt_slab_regmap[top], __ATOMIC_RELAXED);
    if (map == NULL)
        return NULL;
    return __atomic_load_n(&map[(addr >> HWT_MAP_SHIFT) & (HWT_REGION_SIZE / HWT_MAP_PAGE - 1)],
                           __ATOMIC_RELAXED);
}

static inline uint32_t hwt_slab_index(const struct hwt_span *s, uintptr_t addr)
{
    return (uint32_t)(((addr - s->base) * (uint64_t)s->slot_recip) >> 32);
}

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
size_t hwt_slab_requested(const struct hwt_span *s, uint32_t idx);
/* Usable size of a live small object (its requested size rounded up to the granule). */
size_t hwt_slab_usable(const struct hwt_span *s, uint32_t idx);

/* Per size class: spans, committed span bytes, live slots, slots free in their spans
 * (the rest of the slots sit in thread and transfer caches). A lock-free walk, for statistics. */
struct hwt_class_usage {
    uint64_t spans, span_bytes, live_slots, free_in_span;
    uint64_t live_bytes; /* usable bytes of the live slots */
};
void hwt_slab_class_usage(struct hwt_class_usage *out);

/* The heap walk of HWTAG_DEBUG=2, run on a span after every central take and give: its
 * bitmap counts nfree available slots and none of them is live. Central lock held. */
bool hwt_slab_span_consistent(const struct hwt_span *s);

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
