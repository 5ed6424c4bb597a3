/* SPDX-License-Identifier: MIT */
/* The frame table of the stack depot: the addresses, their 256 MiB windows and the open-addressed
 * index from an address to its entry, filled lock-free. It never codes or stores records. */
#include "stackdepot_frame.h"

#include "meta.h"

#define HWT_DEPOT_PC_SLOTS (1u << 14) /* open addressing over it, power of two; 32 KiB */
#define HWT_DEPOT_PC_PROBES 32u

_Static_assert(HWT_DEPOT_PCS < UINT16_MAX, "a frame slot holds an index + 1 in 16 bits");

uint32_t *hwt_stackdepot_frame_pcs;
uint64_t hwt_stackdepot_frame_windows[DEPOT_WINDOWS];
static uint16_t *depot_pc_slots; /* index + 1 of a frame table entry, 0 = empty; atomic */
static uint32_t depot_pc_count;  /* frame table indexes handed out; may pass the end */

bool hwt_stackdepot_frame_init(void)
{
    hwt_stackdepot_frame_pcs = hwt_meta_alloc(HWT_DEPOT_PCS * sizeof(uint32_t), sizeof(uint32_t));
    depot_pc_slots = hwt_meta_alloc(HWT_DEPOT_PC_SLOTS * sizeof(uint16_t), sizeof(uint16_t));
    return hwt_stackdepot_frame_pcs != NULL && depot_pc_slots != NULL;
}

/* The entry of pc, claiming a window for it when it is in none yet; false when all are
 * taken. Windows are published (release) before an entry names them, and records reach
 * entries through their own release publication. */
static bool pc_entry(uint64_t pc, uint32_t *e)
{
    uint64_t win = (pc >> DEPOT_WINDOW_SHIFT) + 1;
    for (unsigned i = 0; i < DEPOT_WINDOWS; i++) {
        uint64_t w = __atomic_load_n(&hwt_stackdepot_frame_windows[i], __ATOMIC_ACQUIRE);
        if (w == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&hwt_stackdepot_frame_windows[i], &zero, win, false,
                                             __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
                w = zero; /* another thread took it: maybe for this window */
            else
                w = win;
        }
        if (w == win) {
            *e = i << DEPOT_WINDOW_SHIFT | (uint32_t)(pc & ((1u << DEPOT_WINDOW_SHIFT) - 1));
            return true;
        }
    }
    return false;
}

static uint32_t pc_slot_of(uint64_t pc)
{
    return (uint32_t)((pc * 0x9e3779b97f4a7c15u) >> 40);
}

/* Two threads adding the same pc meet at its slot: the loser uses the winner's index and keeps
 * its own for the next slot it probes (an index is lost only when the probes run out). */
long hwt_stackdepot_frame_index(uint64_t pc)
{
    uint32_t slot = pc_slot_of(pc);
    uint16_t mine = 0; /* index + 1 claimed by this call */
    uint32_t entry_of_pc;

    if (!pc_entry(pc, &entry_of_pc))
        return -1;

    for (unsigned probe = 0; probe < HWT_DEPOT_PC_PROBES; probe++, slot++) {
        uint16_t *entry = &depot_pc_slots[slot & (HWT_DEPOT_PC_SLOTS - 1)];
        uint16_t e = __atomic_load_n(entry, __ATOMIC_ACQUIRE);
        if (e == 0) {
            if (mine == 0) {
                if (__atomic_load_n(&depot_pc_count, __ATOMIC_RELAXED) >= HWT_DEPOT_PCS)
                    return -1;
                uint32_t claim = __atomic_fetch_add(&depot_pc_count, 1, __ATOMIC_RELAXED);
                if (claim >= HWT_DEPOT_PCS)
                    return -1;
                mine = (uint16_t)(claim + 1);
                hwt_stackdepot_frame_pcs[mine - 1] = entry_of_pc;
            }
            if (__atomic_compare_exchange_n(entry, &e, mine, false, __ATOMIC_RELEASE,
                                            __ATOMIC_ACQUIRE))
                return (long)mine - 1;
        }
        if (hwt_stackdepot_frame_pcs[e - 1] == entry_of_pc)
            return (long)e - 1;
    }
    return -1;
}

size_t hwt_stackdepot_frame_bytes(void)
{
    uint64_t pcs = __atomic_load_n(&depot_pc_count, __ATOMIC_RELAXED);
    if (pcs > HWT_DEPOT_PCS)
        pcs = HWT_DEPOT_PCS;
    return pcs * sizeof(uint32_t) + HWT_DEPOT_PC_SLOTS * sizeof(uint16_t);
}
