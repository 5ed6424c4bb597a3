/* SPDX-License-Identifier: MIT */
/* An in-place heapsort for the tables of a leak check (objects, ranges, report groups): no
 * allocation, no recursion, O(n log n). Inline, so each table gets a copy specialised for
 * its element size and order (a generic copy swapped through memcpy and called the order
 * through a pointer at every step). Not for the allocation paths. */
#ifndef HWT_SORT_H
#define HWT_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Largest element hwt_sort swaps. */
#define HWT_SORT_MAX_SIZE 64u

static inline __attribute__((always_inline)) void hwt_sort_swap(char *a, char *b, size_t size)
{
    char t[HWT_SORT_MAX_SIZE];
    memcpy(t, a, size);
    memcpy(a, b, size);
    memcpy(b, t, size);
}

static inline __attribute__((always_inline)) void
hwt_sort_sift(char *a, size_t root, size_t n, size_t size, bool (*less)(const void *, const void *))
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && less(a + child * size, a + (child + 1) * size))
            child++;
        if (!less(a + root * size, a + child * size))
            return;
        hwt_sort_swap(a + root * size, a + child * size, size);
    }
}

/* Sorts n elements of size bytes (at most HWT_SORT_MAX_SIZE) at base so that no element is
 * less than the one before it. */
static inline __attribute__((always_inline)) void
hwt_sort(void *base, size_t n, size_t size, bool (*less)(const void *a, const void *b))
{
    char *a = base;
    for (size_t i = n / 2; i-- > 0;)
        hwt_sort_sift(a, i, n, size, less);
    for (size_t end = n; end > 1; end--) {
        hwt_sort_swap(a, a + (end - 1) * size, size);
        hwt_sort_sift(a, 0, end - 1, size, less);
    }
}

#endif
