/* SPDX-License-Identifier: MIT */
/* The stack depot's frame table: each distinct return address once, so that a record codes a
 * frame as a small index. It never codes or stores records (stackdepot_code.c, stackdepot.c). */
#ifndef HWT_STACKDEPOT_FRAME_H
#define HWT_STACKDEPOT_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The frame table: each distinct return address once, so that a frame costs the varint of its
 * index (2 bytes for the first 8192 addresses) instead of 8 bytes. python3 start-up stores 39k
 * stacks over 6.6k distinct addresses. Once full, new addresses are coded as deltas.
 * An entry is 32 bits: the index of the address's 256 MiB window (its bits 28 and up, one of
 * DEPOT_WINDOWS kept as they come) and its offset in it. Code is loaded in a few such windows
 * (the program, the libraries next to each other); an address in none of them is coded as a
 * delta, as when the table is full. 8 bytes an entry cost python3 start-up 26 KiB more. */
#define HWT_DEPOT_PCS 12288u /* 48 KiB, filled in order */
#define DEPOT_WINDOW_SHIFT 28u
#define DEPOT_WINDOWS 16u /* 2^(32 - DEPOT_WINDOW_SHIFT) */

extern uint32_t *hwt_stackdepot_frame_pcs; /* the frame table, by index (window, offset) */
extern uint64_t hwt_stackdepot_frame_windows[DEPOT_WINDOWS]; /* (address >> shift) + 1, 0 = free */

/* The address of frame table entry index (below HWT_DEPOT_PCS). An entry not yet written reads
 * as a made-up address, which only a damaged id can reach. Inline: record matching decodes
 * frames on every depot lookup. signal-safe */
static inline uint64_t hwt_stackdepot_frame_pc(uint32_t index)
{
    uint32_t e = hwt_stackdepot_frame_pcs[index];
    return (__atomic_load_n(&hwt_stackdepot_frame_windows[e >> DEPOT_WINDOW_SHIFT],
                            __ATOMIC_RELAXED) -
            1) << DEPOT_WINDOW_SHIFT |
           (e & ((1u << DEPOT_WINDOW_SHIFT) - 1));
}

/* Reserves the table from meta.c, once, from the depot's set-up; false when out of memory. */
bool hwt_stackdepot_frame_init(void);
/* Index of pc in the frame table, adding it when there is room; -1 when it has none. */
long hwt_stackdepot_frame_index(uint64_t pc);
/* Bytes the table uses, for stats. */
size_t hwt_stackdepot_frame_bytes(void);

#endif
