/* SPDX-License-Identifier: MIT */
/* Where a thread's counters live (its cache, or a shared fallback) and how they add up.
 * Readers may race the owning thread: relaxed atomic loads give whole values. */
#include "counters.h"

#include "tcache.h"

static struct hwt_counters shared_counters; /* threads without a cache */

struct hwt_counters *hwt_counters_self(void)
{
    struct hwt_tcache *tc = hwt_self.tc;
    if (!hwt_tcache_live(tc))
        return &shared_counters;
    return &tc->counters;
}

static uint64_t get(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void hwt_counters_add(struct hwtag_stats *out, const struct hwt_counters *c)
{
    out->small_allocs += get(&c->small_allocs);
    out->large_allocs += get(&c->large_allocs);
    out->large_frees += get(&c->large_frees);
    out->large_tagged += get(&c->large_tagged);
    out->large_skipped += get(&c->large_skipped);
    for (unsigned i = 0; i < HWTAG_MAX_ORDER; i++) {
        out->large_by_order[i] += get(&c->large_by_order[i]);
        out->large_skipped_by_order[i] += get(&c->large_skipped_by_order[i]);
    }
    out->heap_live_bytes += (uint64_t)__atomic_load_n(&c->live_bytes, __ATOMIC_RELAXED);
}

void hwt_counters_sum(struct hwtag_stats *out)
{
    hwt_counters_add(out, &shared_counters);
    hwt_tcache_sum(out);
}
