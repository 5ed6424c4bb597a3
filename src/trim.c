/* SPDX-License-Identifier: MIT */
/* Trimming across both back ends: the kept empty spans and the cached large mappings give
 * their pages back. Policy only; each back end releases its own pages. */
#include "trim.h"

#include "large.h"
#include "slab.h"
#include "tcache.h"
#include "transfer.h"

size_t hwt_trim_for_memory(struct hwt_tcache *tc)
{
    if (hwt_tcache_live(tc))
        hwt_tcache_flush(tc); /* its slots may be all that keeps a span from being empty */
    hwt_transfer_flush();
    hwt_tcache_flush_large();
    hwt_slab_trim(); /* empty spans released, so that whole regions may go */
    return hwt_large_unmap_cached() + hwt_slab_unmap_free_regions();
}

size_t hwt_trim(void)
{
    hwt_transfer_flush();     /* its slots may be all that keeps a span from being empty */
    hwt_tcache_flush_large(); /* the threads' warm mappings, for the cache to give back */
    return hwt_slab_trim() + hwt_large_trim();
}
