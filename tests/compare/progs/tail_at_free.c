/* SPDX-License-Identifier: MIT */
// A write inside the last 16-byte granule: malloc(13), then p[13]. MTE cannot see it at
// the store (same granule); libhwtag finds it at free through the tail pattern.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

__attribute__((noinline)) char *format_id(unsigned id)
{
    char *p = malloc(13);
    memcpy(p, "ID-0000000000", 13);
    p[3 + id % 10] = '1';
    p[13] = '\0';                        /* BUG: one past the 13 bytes */
    return p;
}

__attribute__((noinline)) void release_id(char *p)
{
    free(p);
}

int main(void)
{
    char *id = format_id(7);
    printf("%.13s\n", id);
    release_id(id);
    return 0;
}
