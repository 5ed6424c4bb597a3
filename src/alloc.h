/* SPDX-License-Identifier: MIT */
/* The allocator's front end, out of line: what interpose.c calls once alloc_fast.h's inline
 * fast path has not done it, and the general path below that. Arguments arrive checked as
 * the libc names require (overflow, alignment); errno is the front end's business: the
 * program's is kept on success, ENOMEM (glibc's) set on failure, and free keeps it always. */
#ifndef HWT_ALLOC_H
#define HWT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

/* Requests this large can never succeed; they fail before any arithmetic can overflow. */
#define HWT_ALLOC_MAX_REQUEST (SIZE_MAX / 2)

/* c, in each: where the program called the entry point (unwind.h), where the stack of
 * the allocation or free starts. */

/* malloc (zero false) or calloc (true) of size bytes after hwt_alloc_fast_malloc missed:
 * the fast path's other copies, then hwt_alloc. For a tail call from the entry point. */
void *hwt_alloc_malloc(size_t size, bool zero, struct hwt_caller c);
/* align: a power of two; below the granule, the granule. NULL only when memory cannot be
 * had. The general path of every allocation. */
void *hwt_alloc(size_t size, size_t align, bool zero, struct hwt_caller c);
/* free after hwt_alloc_fast_free declined: the fast path's other copies, then the general
 * path, which validates ptr (double-free and invalid-free are reported) and frees it. For a
 * tail call from the entry point. */
void hwt_alloc_free(void *ptr, struct hwt_caller c);
/* ptr != NULL, size != 0. NULL when memory cannot be had (ENOMEM; ptr untouched) or when ptr
 * was bad (reported; EINVAL). */
void *hwt_alloc_realloc(void *ptr, size_t size, struct hwt_caller c);
/* Requested size of a live object (malloc_usable_size), 0 for NULL or anything else. */
size_t hwt_alloc_usable(const void *ptr);
/* The page size, after start-up if it had not run; errno kept. */
size_t hwt_alloc_page_size(void);

#endif
