/* SPDX-License-Identifier: MIT */
/* A heap overflow that reaches the next 16-byte granule: libhwtag must report it. Built
 * without libhwtag; tests/package/run.sh preloads the packaged libhwtag.so.0. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    char *volatile p = malloc(32);
    if (p == NULL)
        return 1;
    printf("buggy: writing one byte past a 32-byte object\n");
    fflush(stdout);
    p[32] = 'x'; /* the bug */
    free(p);
    printf("buggy: not caught\n");
    return 0;
}
