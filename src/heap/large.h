/* SPDX-License-Identifier: MIT */
/* Page-backed objects: one mapping each with a guard tail tagged free, a bounded cache
 * of freed mappings (kept tagged free, so a use after free faults), sampling per sample.c. */
#ifndef HWT_LARGE_H
#define HWT_LARGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "large_stash.h"
#include "object.h"

struct hwt_large;

/* A live page-backed object with its tail pattern written (tail.h); NULL (errno untouched)
 * when the OS refuses memory. stash: the calling thread's, or NULL. */
void *hwt_large_alloc(size_t size, size_t align, bool zero, uint32_t stack,
                      struct hwt_large_stash *stash);
enum hwt_free_check hwt_large_check(const void *ptr, struct hwt_large **out);
void hwt_large_free(struct hwt_large *l, uint32_t stack, struct hwt_large_stash *stash);
/* Hands every mapping of stash to the shared cache (thread exit, trim, a fork child
 * adopting a thread that did not survive). Takes stash's lock, then the shared one. */
void hwt_large_stash_flush(struct hwt_large_stash *stash);
size_t hwt_large_requested(const struct hwt_large *l);
/* The tagged size: the requested size rounded up to the granule. */
size_t hwt_large_usable(const struct hwt_large *l);
/* realloc in place when new_size still fits the mapping sensibly; false: move it. */
bool hwt_large_resize(struct hwt_large *l, size_t new_size);
bool hwt_large_lookup(uintptr_t addr, struct hwt_object *out);
/* Calls fn for every live page-backed object, in no particular order. Lock-free reads
 * of the records: exact when every other thread is stopped, best effort otherwise.
 * Never allocates. signal-safe */
void hwt_large_walk_live(void (*fn)(const struct hwt_object *obj, void *arg), void *arg);

void hwt_large_lock(void);
void hwt_large_unlock(void);
void hwt_large_reset_lock(void);
uint64_t hwt_large_mapped(void);
/* Gives the pages of every cached mapping back to the OS; returns the bytes given back. */
size_t hwt_large_trim(void);
/* Out of memory: unmaps every cached mapping (stashes not included: hwt_large_stash_flush
 * first); returns the bytes of address space given back. */
size_t hwt_large_unmap_cached(void);
/* Bytes of cached (freed) mappings still counted resident: at most the cache's budget. */
size_t hwt_large_cached_resident(void);

#endif
