/* SPDX-License-Identifier: MIT */
/* sort.h's heapsort: the elements are swapped through a stack buffer. Never allocates. */
#include "sort.h"

#include <string.h>

static void swap(char *a, char *b, size_t size)
{
    char t[HWT_SORT_MAX_SIZE];
    memcpy(t, a, size);
    memcpy(a, b, size);
    memcpy(b, t, size);
}

static void sift_down(char *a, size_t root, size_t n, size_t size,
                      bool (*less)(const void *, const void *))
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && less(a + child * size, a + (child + 1) * size))
            child++;
        if (!less(a + root * size, a + child * size))
            return;
        swap(a + root * size, a + child * size, size);
    }
}

void hwt_sort(void *base, size_t n, size_t size, bool (*less)(const void *a, const void *b))
{
    char *a = base;
    for (size_t i = n / 2; i-- > 0;)
        sift_down(a, i, n, size, less);
    for (size_t end = n; end > 1; end--) {
        swap(a, a + (end - 1) * size, size);
        sift_down(a, 0, end - 1, size, less);
    }
}
