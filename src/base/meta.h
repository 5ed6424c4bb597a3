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

/* The mappings metadata lives in, for the leak check, which must not take them for the
 * program's memory (the first HWT_META_MAX_CHUNKS; in practice all). signal-safe */
#define HWT_META_MAX_CHUNKS 4096u
struct hwt_meta_range {
    uintptr_t lo, hi;
};
const struct hwt_meta_range *hwt_meta_ranges(unsigned *count);

/* Bytes of metadata mapped so far. */
uint64_t hwt_meta_mapped(void);

/* fork support: held across fork by init.c */
void hwt_meta_lock(void);
void hwt_meta_unlock(void);
void hwt_meta_reset_lock(void);

#endif
