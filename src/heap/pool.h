/* SPDX-License-Identifier: MIT */
/* Pool objects: granule-aligned sub-ranges of a live heap object that a program's own
 * pool allocator tags and frees through hwtag_pool_alloc/hwtag_pool_free, and the small
 * out-of-band record of them that reports describe them from. */
#ifndef HWT_POOL_H
#define HWT_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object.h"

/* What hwt_pool_free found. */
enum hwt_pool_verdict {
    HWT_POOL_OK,      /* retagged free */
    HWT_POOL_EINVAL,  /* misaligned or empty range: nothing done, nothing to report */
    HWT_POOL_DOUBLE,  /* the range is already pool-freed: report a double-free */
    HWT_POOL_INVALID, /* not one pool object of a live heap object: report an invalid-free */
};

/* Gives [block+offset, +size) of the live heap object block (as malloc returned it) a
 * fresh tag, unlike both neighbouring granules', the range's previous one, block's own,
 * 0 and 15, and returns the pointer with that tag. offset and size multiples of 16,
 * size > 0, offset + size <= the object's requested size; else NULL. stack: the caller's
 * depot id. Call with TCO set. Not signal-safe. */
void *hwt_pool_alloc(const void *block, size_t offset, size_t size, uint32_t stack);

/* Retags [ptr, ptr+size) with the free tag 15 after checking that every granule still
 * carries ptr's tag, and records the free. Call with TCO set. Not signal-safe. */
enum hwt_pool_verdict hwt_pool_free(const void *ptr, size_t size, uint32_t stack);

/* The pool object of heap object parent that pointer_tag belongs to, nearest to addr
 * first, described as an object (start, size, tag, live, stacks; large and class_size are
 * parent's). Records of an earlier life of parent's memory never match. Returns false when
 * none does, or when the table is busy for too long. signal-safe (try-lock, no malloc) */
bool hwt_pool_describe(uintptr_t addr, unsigned pointer_tag, const struct hwt_object *parent,
                       struct hwt_object *out);

/* fork support: held across fork by init.c */
void hwt_pool_lock(void);
void hwt_pool_unlock(void);
void hwt_pool_reset_lock(void);

#endif
