/* SPDX-License-Identifier: MIT */
// Overflow inside memcpy called from a user function: 80 bytes into a 64-byte record.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define RECORD 64

__attribute__((noinline)) char *record_copy(const char *src, size_t len)
{
    char *dst = malloc(RECORD);
    memcpy(dst, src, len);           /* BUG: len 80 > RECORD */
    return dst;
}

int main(int argc, char **argv)
{
    char src[128];
    memset(src, 'x', sizeof src);
    char *r = record_copy(src, 80 + (argc > 5));
    printf("%c\n", r[0]);
    free(r);
    return 0;
}
