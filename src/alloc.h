/* SPDX-License-Identifier: MIT */
/* The allocator's front end: what interpose.c calls. Sizes and alignments arrive already
 * checked for overflow; errno is the caller's business. */
#ifndef HWT_ALLOC_H
#define HWT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fp, in each: the frame record of the entry point the program called
 * (__builtin_frame_address(0) there, which must still be running: it does not tail-call
 * these), where the stack of the allocation or free starts. */

/* align: a power of two (16 = default). NULL only when memory cannot be had. */
void *hwt_alloc(size_t size, size_t align, bool zero, uintptr_t fp);
/* Validates ptr (double-free and invalid-free are reported) and frees it. */
void hwt_alloc_free(void *ptr, uintptr_t fp);
/* ptr != NULL, size != 0. NULL when memory cannot be had (ptr untouched) or when ptr was
 * bad (reported; *bad set). */
void *hwt_alloc_realloc(void *ptr, size_t size, bool *bad, uintptr_t fp);
/* Requested size of a live object (malloc_usable_size), 0 for NULL or anything else. */
size_t hwt_alloc_usable(const void *ptr);
/* Nonzero while the calling thread is inside malloc, free or realloc. signal-safe */
int hwt_alloc_busy(void);

#endif
