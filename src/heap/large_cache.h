/* SPDX-License-Identifier: MIT */
/* Private to the large*.c files: the cache of freed mappings (large_cache.c) with its
 * resident-memory budget (large_budget.c). No other file may include it. */
#ifndef HWT_LARGE_CACHE_H
#define HWT_LARGE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "large_record.h"

/* At most this many records leave the cache on one free; the caller retires them and
 * unmaps their mappings once it has dropped the lock. */
#define HWT_LARGE_EVICT_MAX 2u

/* Every _locked function here runs under large.c's lock. */

/* The cached mapping that suits a new object of size bytes (need: its mapping size) best,
 * unlinked from the cache; NULL when none fits. */
struct hwt_large *hwt_large_cache_take_locked(size_t need, size_t size, size_t align, bool mte);
/* Whether all of l's pages are resident (none given back since it was last warm). */
static inline bool hwt_large_cache_warm(const struct hwt_large *l)
{
    return l->resident == l->map_size;
}
/* Which of a stash's n mappings an object of size bytes (need: its mapping size) takes: an
 * index, or n when none fits. */
unsigned hwt_large_cache_stash_pick(struct hwt_large *const *entries, unsigned n, size_t need,
                                    size_t size, size_t align);
/* A mapping of map_size bytes became live (fresh or taken from the cache). */
void hwt_large_cache_live_locked(size_t map_size);
/* Called on free before the object is retagged: whether its mapping may be cached at all;
 * gives the pages of big objects back at once. Lock not needed (the object is owned). */
bool hwt_large_cache_admit(struct hwt_large *l);
/* Called on malloc, outside the lock, once a taken mapping holds an object of usable bytes
 * (need: its mapping size): gives back the pages past it when the mapping was a loose fit.
 * Lock not needed (the object is owned). */
void hwt_large_cache_taken(const struct hwt_large *l, size_t need, size_t usable);
/* At most this many cached mappings give their pages back on one free (the budget below). */
#define HWT_LARGE_RELEASE_MAX 4u

/* The pages a cached mapping gives back: [start, start + size). */
struct hwt_large_release {
    struct hwt_large *l;
    uintptr_t start;
    size_t size;
    bool checked; /* give them back only if most are resident (hwt_large_cache_release) */
    size_t held;  /* filled in by hwt_large_cache_release: bytes still resident */
};

/* The freed l leaves the live bytes and, when kept, joins the cache; the recent peak decays
 * for frees large frees (l's and those a thread's stash took since its last visit); then the
 * budget is enforced. Returns how many records it put into evicted[] (at most HWT_LARGE_EVICT_MAX).
 * Over the resident budget, the oldest warm mappings leave the cache into released[] (at
 * most HWT_LARGE_RELEASE_MAX, their number in *nreleased), already counted as given back:
 * the caller gives their pages back once it has dropped the lock (a system call, which
 * under QEMU took long enough for the other threads' large mallocs and frees to queue on
 * the lock), then hands them to hwt_large_cache_return_locked. Out of the cache meanwhile,
 * no new object can take one. */
unsigned hwt_large_cache_put_locked(struct hwt_large *l, bool keep, unsigned frees,
                                    struct hwt_large **evicted, struct hwt_large_release *released,
                                    unsigned *nreleased);
/* Lock not held. Gives the pages of r back; when r->checked and most of them were never
 * touched, only counts the few that were (r->held) instead: giving back 2 touched pages of a
 * 1 MiB mapping cost a system call, a TLB shootdown with 2 threads and 2 faults at its reuse. */
void hwt_large_cache_release(struct hwt_large_release *r);
/* Puts back, as the oldest, the mappings of released[] whose pages are given back. */
void hwt_large_cache_return_locked(const struct hwt_large_release *released, unsigned n);
/* Out of memory: takes up to max cached mappings out of the cache into out[] (the caller
 * retires and unmaps them); returns how many. */
unsigned hwt_large_cache_evict_locked(struct hwt_large **out, unsigned max);
/* Gives back the pages of every cached mapping; returns the bytes given back. */
size_t hwt_large_cache_trim_locked(void);
/* Bytes of cached mappings still resident (an upper bound: untouched pages count too). */
size_t hwt_large_cache_resident_locked(void);

/* Between large_cache.c and large_budget.c only. */
/* The bytes of kind mte (tagged or not) that cached mappings may keep resident. */
size_t hwt_large_cache_budget_locked(bool mte);
/* A live mapping of map_size bytes was freed; the recent peak decays for frees large frees. */
void hwt_large_cache_unlive_locked(size_t map_size, unsigned frees);
/* Counts the pages of the owned or cached l from its start on as given back (its area becomes
 * empty); returns their bytes, for the caller to give back. */
size_t hwt_large_cache_forget_pages(struct hwt_large *l);
/* Gives the pages of the owned or cached l from its start on back (see
 * hwt_large_cache_forget_pages). */
void hwt_large_cache_give_back(struct hwt_large *l);

#endif
