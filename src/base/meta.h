/* SPDX-License-Identifier: MIT */
/* Metadata memory: zeroed, untagged (never PROT_MTE) pages handed out by a bump
 * allocator. Never freed piecemeal; never malloc. */
#ifndef HWT_META_H
#define HWT_META_H

#include <stddef.h>
#include <stdint.h>

/* Zeroed memory aligned to align (a power of two <= page size); NULL when the OS refuses.
 * Thread-safe (a lock held only for the bump), not signal-safe. */
void *hwt_meta_alloc(size_t size, size_t align);

/* Bytes of metadata mapped so far. */
uint64_t hwt_meta_mapped(void);

/* fork support: held across fork by init.c */
void hwt_meta_lock(void);
void hwt_meta_unlock(void);
void hwt_meta_reset_lock(void);

#endif
