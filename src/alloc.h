/* SPDX-License-Identifier: MIT */
/* The allocator's front end: what interpose.c calls. Sizes and alignments arrive already
 * checked for overflow; errno is the caller's business, but free's (hwt_alloc_free keeps it). */
#ifndef HWT_ALLOC_H
#define HWT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

/* c, in each: where the program called the entry point (unwind.h), where the stack of
 * the allocation or free starts. */

/* align: a power of two (16 = default). NULL only when memory cannot be had. */
void *hwt_alloc(size_t size, size_t align, bool zero, struct hwt_caller c);
/* Validates ptr (double-free and invalid-free are reported) and frees it. */
void hwt_alloc_free(void *ptr, struct hwt_caller c);
/* ptr != NULL, size != 0. NULL when memory cannot be had (ptr untouched) or when ptr was
 * bad (reported; *bad set). */
void *hwt_alloc_realloc(void *ptr, size_t size, bool *bad, struct hwt_caller c);
/* Requested size of a live object (malloc_usable_size), 0 for NULL or anything else. */
size_t hwt_alloc_usable(const void *ptr);
/* Nonzero while the calling thread is inside malloc, free or realloc. signal-safe */
int hwt_alloc_busy(void);

#endif
