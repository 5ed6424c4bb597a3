/* SPDX-License-Identifier: MIT */
/* The out-of-line half of the general paths' stack capture (alloc_stack.h): a stack the
 * thread's cache of recent stacks missed, stored in the depot and cached. It must not walk
 * the stack itself; the caller's inline capture has already done so. */
#include "alloc_stack.h"

#include "options.h"
#include "os.h"
#include "stackdepot.h"

uint32_t hwt_alloc_stack_add(struct hwt_tcache *tc, const uintptr_t *pcs, unsigned n, unsigned more,
                             uint64_t key)
{
    uint32_t id = hwt_stackdepot_put_cached(&tc->depot_cache, tc->tid, pcs, n, more);
    if (id != 0)
        hwt_tcache_stack_put(tc, key, id);
    return id;
}

uint32_t hwt_alloc_stack_id(struct hwt_tcache *tc, const uintptr_t *pcs, unsigned n, unsigned more,
                            uint64_t key)
{
    if (unlikely(!hwt_tcache_live(tc)))
        return hwt_stackdepot_put_cached(NULL, (uint32_t)hwt_os_gettid(), pcs, n, more);
    uint64_t id;
    if (hwt_tcache_stack_find(tc, key, &id))
        return (uint32_t)id;
    return hwt_alloc_stack_add(tc, pcs, n, more, key);
}

uint32_t hwt_alloc_stack_walk(struct hwt_caller c)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
    unsigned more;
    if (hwt_opts.stacktrace != HWT_ON)
        return 0;
    unsigned n = hwt_unwind_caller(c, pcs, hwt_opts.stack_depth, HWT_UNWIND_KEY_SEED, NULL, &more);
    return hwt_stackdepot_put_cached(NULL, (uint32_t)hwt_os_gettid(), pcs, n, more);
}
