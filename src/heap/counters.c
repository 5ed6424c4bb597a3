/* SPDX-License-Identifier: MIT */
/* Where a thread's counters live (the set bound to it, or a shared fallback) and how they add
 * up. Knows nothing of what holds a set: readers may race the owning thread, and relaxed
 * atomic loads give whole values. */
#include "counters.h"

static struct hwt_counters shared_counters; /* threads without a cache */
/* the calling thread's set; NULL: shared_counters */
static __thread struct hwt_counters *bound __attribute__((tls_model("initial-exec")));
static struct hwt_counters *all_counters; /* published with release; never unlinked */

struct hwt_counters *hwt_counters_self(void)
{
    struct hwt_counters *c = bound;
    return c != NULL ? c : &shared_counters;
}

void hwt_counters_bind(struct hwt_counters *c)
{
    bound = c;
}

void hwt_counters_register(struct hwt_counters *c)
{
    struct hwt_counters *head = __atomic_load_n(&all_counters, __ATOMIC_RELAXED);
    do
        c->all_next = head;
    while (!__atomic_compare_exchange_n(&all_counters, &head, c, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
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
    for (const struct hwt_counters *c = __atomic_load_n(&all_counters, __ATOMIC_ACQUIRE); c != NULL;
         c = c->all_next)
        hwt_counters_add(out, c);
}
