/* SPDX-License-Identifier: MIT */
/* Regions: the address space spans are carved from, the page maps that find a span from an
 * address, and giving a region back. It never looks inside a span. */
#ifndef HWT_SLAB_REGION_H
#define HWT_SLAB_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "size_class.h"

struct hwt_span;

/* Spans are carved from regions of HWT_REGION_SIZE bytes reserved on demand, each aligned
 * to its size, so one shift finds a region's page map in hwt_slab_regmap and one more the
 * span. The page map has an entry per HWT_MAP_PAGE bytes whatever the OS page size: the
 * smallest span, since every span is aligned to its size (an entry per 4 KiB cost python3
 * start-up 24 KiB more). Regions are small and the top level short because under QEMU a
 * fork costs in proportion to the address space mapped, reserved or not: 64 MiB regions and
 * a top level for all 2^48 bytes (32 MiB of .bss) took a fork+exit 508 page faults where
 * glibc's malloc takes 367. A region is committed whole at its first span: 16 MiB regions
 * left 12 MiB reserved PROT_NONE, 34 faults a fork of a small program. Untouched .bss costs
 * none (a 1 MiB top level measured the same as 256 KiB). */
#define HWT_REGION_SHIFT 22u
#define HWT_REGION_SIZE ((size_t)1 << HWT_REGION_SHIFT)
#define HWT_MAX_REGIONS 16384u /* 64 GiB of small objects */
#define HWT_MAP_SHIFT 14u
#define HWT_MAP_PAGE ((size_t)1 << HWT_MAP_SHIFT)
_Static_assert(HWT_MAP_PAGE == HWT_SPAN_MIN, "a page map entry per smallest span");
/* The top level has an entry per HWT_REGION_SIZE bytes of address space, taken modulo
 * 2^(HWT_REGION_SHIFT + HWT_REGMAP_BITS) bytes (256 GiB): addresses that far apart share an
 * entry. A new region never takes an entry another region holds (slab_region.c), so the
 * entry of an address names the one region it can lie in, or a region it does not lie in.
 * The fast path checks the address against the slot it finds anyway; hwt_slab_span_of
 * checks it against the span. */
#define HWT_REGMAP_BITS 16u
#define HWT_REGMAP_INDEX(addr)                                                                     \
    (((uintptr_t)(addr) >> HWT_REGION_SHIFT) & (((uintptr_t)1 << HWT_REGMAP_BITS) - 1))

struct hwt_region {
    uintptr_t base;            /* HWT_REGION_SIZE bytes reserved */
    uintptr_t cursor;          /* next free byte; heap lock */
    uintptr_t committed;       /* end of the committed (read-write, PROT_MTE) prefix */
    struct hwt_span **pagemap; /* per HWT_MAP_PAGE: its span, NULL = none */
};

extern struct hwt_region hwt_slab_regions[HWT_MAX_REGIONS];
extern uint32_t hwt_slab_region_count; /* published with release after the region is set up */
/* Per 2^HWT_REGION_SHIFT bytes of address space, modulo 2^HWT_REGMAP_BITS: the page map of
 * the region there, or NULL. In .bss (512 KiB). */
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

/* Span the page maps name for addr (untagged), from regmap (hwt_slab_regmap, or a copy
 * of its address the caller has at hand): the span holding addr, NULL when none, or, for an
 * address outside every region, maybe a span of the region sharing its top-level entry.
 * The caller compares addr with the slot it finds. Lock-free: the maps and the span are
 * published with release stores and reached here through the loaded pointers (address
 * dependencies), so relaxed loads see them whole. The loads are volatile ones, as relaxed
 * atomic ones are (aligned pointers, each read once): GCC forms each atomic load's address
 * in a register of its own, where a volatile load takes the index in the instruction,
 * one instruction a level. Inline: every free starts here. signal-safe */
static inline __attribute__((always_inline)) struct hwt_span *
hwt_slab_span_in(struct hwt_span **const *regmap, uintptr_t addr)
{
    struct hwt_span **map = ((struct hwt_span * *const volatile *)regmap)[HWT_REGMAP_INDEX(addr)];
    if (map == NULL)
        return NULL;
    return ((struct hwt_span *const volatile *)
                map)[(addr >> HWT_MAP_SHIFT) & (HWT_REGION_SIZE / HWT_MAP_PAGE - 1)];
}

/* The base of a region slot whose region was given back (hwt_slab_region_retire): no user
 * address lies there, so no lookup finds it. */
#define HWT_REGION_DEAD ((uintptr_t)0 - HWT_REGION_SIZE)

/* Address space for a span of span_size bytes, committed; 0 when out of memory. Takes the
 * region lock. */
uintptr_t hwt_slab_region_carve(size_t span_size);
/* Points the page map entries of [base, base + size) at s (NULL: no span there). */
void hwt_slab_region_map(uintptr_t base, size_t size, struct hwt_span *s);
/* Calls fn for each span the page map of r names below end, once each (a span's entries are
 * consecutive). Lock-free reads of the map: exact when nothing changes it, best effort
 * otherwise. signal-safe */
void hwt_slab_region_spans(const struct hwt_region *r, uintptr_t end,
                           void (*fn)(struct hwt_span *s, void *arg), void *arg);
/* Gives r's address space back; its page map forgets every span, and the table slot waits for
 * a new region. The caller has made every span of r a husk; every lock held. */
void hwt_slab_region_retire(struct hwt_region *r);
/* The region lock (heap_lock), for fork and the out-of-memory give-back (after the central locks).
 */
void hwt_slab_region_lock(void);
void hwt_slab_region_unlock(void);
void hwt_slab_region_reset_lock(void);

#endif
