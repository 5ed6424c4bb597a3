/* SPDX-License-Identifier: MIT */
/* Per-thread event counters of the allocator, summed on demand for hwtag_get_stats().
 * Counting only: no locks, no allocation. */
#ifndef HWT_COUNTERS_H
#define HWT_COUNTERS_H

#include <stdint.h>

#include "hwtag.h"

struct hwt_counters {
    /* small frees are small_allocs minus the live slots, counted when asked (stats.c) */
    uint64_t small_allocs;
    uint64_t large_allocs, large_frees;
    uint64_t large_tagged, large_skipped;
    uint64_t large_by_order[HWTAG_MAX_ORDER];
    uint64_t large_skipped_by_order[HWTAG_MAX_ORDER];
    /* usable bytes of page-backed objects allocated minus freed by this thread (the small
     * ones are counted from their slot words when asked: hwt_slab_class_usage) */
    int64_t live_bytes;
    struct hwt_counters *all_next; /* every registered set (hwt_counters_register) */
};

/* The calling thread's counters: those bound to it, else a shared fallback (before it has a
 * cache, and after its exit). */
struct hwt_counters *hwt_counters_self(void);

/* Makes c the calling thread's counters; NULL: the shared fallback again. Called by whoever
 * owns the thread's state (tcache.c), when it gives the thread a cache and takes it away. */
void hwt_counters_bind(struct hwt_counters *c);

/* Adds c to the sum for good, once, when its memory is made (it is never unlinked: a set
 * reused by a later thread keeps counting). */
void hwt_counters_register(struct hwt_counters *c);

/* Adds n to a field of counters c. Only the owning thread writes them, each with one aligned
 * store, so a concurrent reader (relaxed atomic loads) sees whole values. */
#define HWT_COUNT_IN(c, field, n) (*(volatile __typeof__((c)->field) *)&(c)->field += (n))
#define HWT_COUNT(field, n) HWT_COUNT_IN(hwt_counters_self(), field, n)

/* Adds c into the totals (summing all threads' counters). */
void hwt_counters_add(struct hwtag_stats *out, const struct hwt_counters *c);

/* Adds every registered set of counters, and those of threads without a cache, into out.
 * Lock-free. */
void hwt_counters_sum(struct hwtag_stats *out);

#endif
