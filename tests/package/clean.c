/* SPDX-License-Identifier: MIT */
/* A correct program that exercises the malloc family: under the packaged libhwtag.so.0 it
 * must run to the end with no report. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    enum { N = 512 };
    static char *ptrs[N];
    size_t i, total = 0;

    for (i = 0; i < N; i++) {
        size_t size = 1 + (i * 37) % 3000 + (i % 64 == 0 ? 70000 : 0);
        ptrs[i] = i % 3 ? malloc(size) : calloc(1, size);
        if (ptrs[i] == NULL)
            return 1;
        memset(ptrs[i], (int)i, size);
        total += malloc_usable_size(ptrs[i]);
    }
    for (i = 0; i < N; i += 2) {
        char *q = realloc(ptrs[i], 100 + i);
        if (q == NULL)
            return 1;
        ptrs[i] = q;
    }
    void *aligned = NULL;
    if (posix_memalign(&aligned, 256, 1000) != 0 || ((size_t)aligned & 255) != 0)
        return 1;
    free(aligned);
    for (i = 0; i < N; i++)
        free(ptrs[i]);
    char *s = strdup("clean");
    printf("%s: ok (%zu usable bytes)\n", s, total);
    free(s);
    return 0;
}
