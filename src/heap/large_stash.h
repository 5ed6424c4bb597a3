/* SPDX-License-Identifier: MIT */
/* The type, bounds and operations of a thread's stash of freed untagged mappings, embedded in
 * its cache (tcache.h). Nothing here maps, unmaps or takes the shared cache's lock. */
#ifndef HWT_LARGE_STASH_H
#define HWT_LARGE_STASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"

struct hwt_large;

/* A thread's last few freed untagged mappings, which its next large objects reuse without
 * the shared lock: 2 threads churning 32 KiB..1 MiB objects under QEMU ran at 1.1x the
 * speed of one, queued on that lock three times an operation. The mappings stay in the
 * lookups as freed (a double free is still one). Owned by a thread cache (tcache.h); lock
 * is taken by the owner, and by trim and fork, which reach every thread's stash. */
#define HWT_LARGE_STASH_MAX 8u
#define HWT_LARGE_STASH_BYTES ((size_t)4 << 20)           /* of mappings, at most */
#define HWT_LARGE_STASH_BLOCK (HWT_LARGE_STASH_BYTES / 2) /* a mapping, at most */
struct hwt_large_stash {
    struct hwt_lock lock;
    uint32_t count;
    uint32_t frees; /* frees it took since it last handed a mapping to the shared cache */
    size_t bytes;   /* of the mappings in entries[] */
    struct hwt_large *entries[HWT_LARGE_STASH_MAX]; /* oldest first */
};

/* Whether the freed l, kept (hwt_large_cache_admit), may wait in its thread's stash rather
 * than join the shared cache. Lock not needed (the object is owned). */
bool hwt_large_stash_keeps(const struct hwt_large *l);
/* The stashed mapping large_cache.c picks for a new object of size bytes (need: its mapping
 * size), out of the stash; NULL when none fits. Takes st's lock. */
struct hwt_large *hwt_large_stash_take(struct hwt_large_stash *st, size_t need, size_t size,
                                       size_t align);
/* Puts the freed l into st as its newest; returns how many mappings left st into out[] (at
 * most HWT_LARGE_STASH_MAX) for the caller to hand to the shared cache, the first carrying
 * *frees, the frees st took since its last visit. Takes st's lock. */
unsigned hwt_large_stash_put(struct hwt_large_stash *st, struct hwt_large *l,
                             struct hwt_large **out, unsigned *frees);
/* Takes every mapping out of st into out[] as hwt_large_stash_put does; returns how many. */
unsigned hwt_large_stash_empty(struct hwt_large_stash *st, struct hwt_large **out, unsigned *frees);

#endif
