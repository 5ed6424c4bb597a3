/* SPDX-License-Identifier: MIT */
/* Stack depot: each distinct (thread, stack) stored once, its frames once for all threads,
 * referenced by a 20-bit id.
 * Bounded memory from meta.c, lock-free lookups; never calls malloc. */
#ifndef HWT_STACKDEPOT_H
#define HWT_STACKDEPOT_H

#include <stdint.h>

#include "stackdepot_limits.h"

/* Returns the id of (tid, pcs[0..n)), storing it on first sight; 0 when the depot is
 * full or n == 0. Lock-free; safe to call from malloc/free on any thread. */
uint32_t hwt_stackdepot_put(uint32_t tid, const uintptr_t *pcs, unsigned n);

/* A thread's cache of the depot's frame records it found or stored last: 64-bit hash of the
 * frames -> record id. A stack is stored as the records of its first 4 frames and of the
 * rest, and a record is shared by many stacks (the same call site under other callers), so
 * a put whose parts the cache holds walks no bucket chain and decodes no record (python3
 * start-up: 7 in 10 parts found here). Owned by one thread; all zero is empty. */
#define HWT_STACKDEPOT_CACHE_SLOTS 256u /* a power of two; 4 KiB */
struct hwt_stackdepot_cache {
    struct {
        uint64_t key;
        uint64_t id;
    } slot[HWT_STACKDEPOT_CACHE_SLOTS];
};

/* hwt_stackdepot_put through the calling thread's cache (NULL: none), of a stack cut after
 * pcs[n - 1] with more frames not kept (0: none; part of what makes the stack distinct). */
uint32_t hwt_stackdepot_put_cached(struct hwt_stackdepot_cache *cache, uint32_t tid,
                                   const uintptr_t *pcs, unsigned n, unsigned more);

/* Copies up to max frames of stack id into pcs and its thread id into *tid.
 * Returns the frame count, 0 for an unknown id. signal-safe */
unsigned hwt_stackdepot_get(uint32_t id, uint32_t *tid, uintptr_t *pcs, unsigned max);

/* The frames stack id left out past its last (the more of its put); 0 for an unknown id.
 * signal-safe */
unsigned hwt_stackdepot_more(uint32_t id);

/* Counters for stats: distinct stacks stored and bytes used. */
void hwt_stackdepot_usage(uint64_t *stacks, uint64_t *bytes);

#endif
