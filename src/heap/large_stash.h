/* SPDX-License-Identifier: MIT */
/* The type and bounds of a thread's stash of freed untagged mappings, embedded in its cache
 * (tcache.h). Types only: nothing here maps, unmaps or takes the shared cache's lock. */
#ifndef HWT_LARGE_STASH_H
#define HWT_LARGE_STASH_H

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

#endif
