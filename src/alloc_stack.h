/* SPDX-License-Identifier: MIT */
/* The general paths' capture of an allocation's or free's stack: the fast paths' hashing
 * walk and the thread's cache of recent stacks first, then a walk that stores the frames in
 * the stack depot. It must not allocate nor touch the object being allocated or freed. */
#ifndef HWT_ALLOC_STACK_H
#define HWT_ALLOC_STACK_H

#include <stdint.h>

#include "alloc_fast.h"
#include "check.h"
#include "options.h"
#include "tcache.h"
#include "unwind.h"

/* Depot id of pcs[0..n) (more: frames past them left out), a stack the thread's cache of
 * recent stacks does not hold (key: their hash), which then holds it. tc live. The cache
 * keys a stack by its kept frames: a later stack with those frames and another count of
 * frames left out gets the first one's id. */
uint32_t hwt_alloc_stack_add(struct hwt_tcache *tc, const uintptr_t *pcs, unsigned n, unsigned more,
                             uint64_t key);

/* Depot id of pcs[0..n) (more: as for hwt_alloc_stack_add), through the thread's cache of
 * recent stacks (key: their hash). */
uint32_t hwt_alloc_stack_id(struct hwt_tcache *tc, const uintptr_t *pcs, unsigned n, unsigned more,
                            uint64_t key);

/* Depot id of the stack from c, an entry point's caller, for a record outside the malloc
 * family (a pool's, a thread's creation): walked and stored without the thread's cache of
 * recent stacks; 0 when stacks are off. */
uint32_t hwt_alloc_stack_walk(struct hwt_caller c);

/* Stack of the current malloc/free from c, the entry point's caller (alloc.h),
 * deduplicated; 0 when stacks are off. */
static inline __attribute__((always_inline)) uint32_t hwt_alloc_stack_capture(struct hwt_tcache *tc,
                                                                              struct hwt_caller c)
{
    if (hwt_opts.stacktrace != HWT_ON)
        return 0;
    /* First the fast paths' walk, which only hashes: a stack the thread's cache holds (the
     * common case: large objects, and small ones past an empty or full bin, come from the
     * same few call sites) then costs no copy of its frames and no look-up of the stack's
     * bounds, which is most of a large malloc+free's cost with stacks.
     * On a miss (or after the fast path's, noted) the same walk again, storing the frames:
     * hwt_unwind_caller's general walk would look the bounds up again, and misses are common at
     * start-up. A caller on another stack than the thread's own (a signal's alternate stack, a
     * coroutine) takes that one, which finds its bounds. */
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
    unsigned depth = hwt_opts.stack_depth;
    uint64_t key;
    unsigned n, more;
    uint64_t id;
    if (likely(hwt_tcache_live(tc))) {
        /* A fast path of this call has just walked and missed (hwt_alloc_fast_stack_missed):
         * straight to the walk that stores. Taken once: a later call from the same frame
         * may have other callers above it. A stale note (its general path did not capture,
         * as free(NULL)'s) costs one depot look-up, never a wrong stack: the walk below
         * finds the frames itself. */
        bool missed = c.pc == tc->stack_missed_pc && c.fp == tc->stack_missed_fp;
        if (missed)
            tc->stack_missed_pc = tc->stack_missed_fp = 0;
        /* the default depth's walk unrolled with its constant bound, as the fast paths' */
        if (!missed && (depth == HWT_STACK_DEFAULT_DEPTH
                            ? hwt_alloc_fast_stack(tc, c, HWT_STACK_DEFAULT_DEPTH, &id)
                            : hwt_alloc_fast_stack(tc, c, depth, &id)))
            return (uint32_t)id;
        if (likely(c.fp >= tc->stack_lo && c.fp < tc->stack_last)) {
            /* the key the fast walk just missed with: no second look in the cache */
            hwt_unwind_caller_walk(c, tc->stack_lo, tc->stack_last, depth, tc->stack_key_constants,
                                   &key, pcs, &n, &more);
            return hwt_alloc_stack_add(tc, pcs, n, more, key);
        }
    }
    /* keyed with the cache's seed (tcache.c, fresh_stack_seed), as the fast paths key: a
     * caller without frame records (code built without frame pointers) is then found by
     * them next time, and no stack the cache kept for an earlier owner is found */
    n = hwt_unwind_caller(c, pcs, depth,
                          hwt_tcache_live(tc) ? tc->stack_key_constants[0] : HWT_UNWIND_KEY_SEED,
                          &key, &more);
    return hwt_alloc_stack_id(tc, pcs, n, more, key);
}

#endif
