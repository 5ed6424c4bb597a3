/* SPDX-License-Identifier: MIT */
/* Copies a split part. Built with -DHEAP_BUG=1 it has a real heap bug: the copy gets no
 * room for the NUL, and copying a 32-byte string writes one byte past its 32-byte object,
 * into the next 16-byte granule, which MTE catches. Without HEAP_BUG it is clean. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

static char *copy_of(const char *s)
{
#ifdef HEAP_BUG
    char *copy = malloc(strlen(s)); /* the bug: strlen(s) + 1 */
#else
    char *copy = malloc(strlen(s) + 1);
#endif
    if (copy != NULL)
        memcpy(copy, s, strlen(s) + 1);
    return copy;
}

int main(void)
{
    size_t n = 0;
    char **parts = strbuf_split("short,0123456789abcdef0123456789abcdef", ',', &n);
    if (parts == NULL || n != 2)
        return 1;
    char *copy = copy_of(parts[1]);
    if (copy == NULL || strcmp(copy, "0123456789abcdef0123456789abcdef") != 0) {
        fprintf(stderr, "test_copy: wrong copy\n");
        return 1;
    }
    free(copy);
    strbuf_free_split(parts);
    puts("test_copy: ok");
    return 0;
}
