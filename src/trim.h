/* SPDX-License-Identifier: MIT */
/* malloc_trim: every free page of the heap back to the OS. */
#ifndef HWT_TRIM_H
#define HWT_TRIM_H

#include <stddef.h>

/* Returns the bytes given back. */
size_t hwt_trim(void);

struct hwt_tcache;
/* The OS refused memory: every cache gives back what it holds (the calling thread's cache
 * tc, the transfer caches, every thread's large stash), cached page-backed mappings are
 * unmapped and slab regions with nothing in use give their address space back. Returns the
 * bytes of address space given back. Other threads' small-object caches stay as they
 * are: only their owners may touch them. */
size_t hwt_trim_for_memory(struct hwt_tcache *tc);

#endif
