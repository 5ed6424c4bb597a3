/* SPDX-License-Identifier: MIT */
/* An in-place heapsort for the tables of a leak check (objects, ranges, report groups): no
 * allocation, no recursion, O(n log n). Not for the allocation paths. */
#ifndef HWT_SORT_H
#define HWT_SORT_H

#include <stdbool.h>
#include <stddef.h>

/* Largest element hwt_sort swaps. */
#define HWT_SORT_MAX_SIZE 64u

/* Sorts n elements of size bytes (at most HWT_SORT_MAX_SIZE) at base so that no element is
 * less than the one before it. */
void hwt_sort(void *base, size_t n, size_t size, bool (*less)(const void *a, const void *b));

#endif
