/* SPDX-License-Identifier: MIT */
/* The cost of libhwtag's checked string routines: N rounds of one memcpy of 32 bytes, one
 * strlen of a 20-byte string and one memset of 64 bytes, on heap buffers. Run it with 0
 * and with N rounds under insncount; the difference over 3N is the cost of one call
 * (docs/performance.md, section 9). Built with -fno-builtin so each call is a call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100000;
    char *dst = malloc(256), *src = malloc(256);
    size_t total = 0;

    if (dst == NULL || src == NULL)
        return 1;
    memset(src, 'x', 255);
    src[20] = '\0';
    for (long i = 0; i < rounds; i++) {
        memcpy(dst, src + (i & 7), 32);
        total += strlen(src);
        memset(dst + 64, (int)i, 64);
    }
    printf("%zu %d\n", total, dst[70]);
    free(dst);
    free(src);
    return 0;
}
