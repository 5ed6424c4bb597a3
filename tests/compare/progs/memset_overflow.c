/* SPDX-License-Identifier: MIT */
// Overflow inside memset called from a user function: the table is cleared with the size
// in bytes of 18 ints, but only 16 were allocated.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

__attribute__((noinline)) int *table_reset(int *t, size_t entries)
{
    memset(t, 0, entries * sizeof *t);   /* BUG: 72 bytes into 64 */
    return t;
}

int main(int argc, char **argv)
{
    int *t = malloc(16 * sizeof(int));
    table_reset(t, 18 + (argc > 5));
    printf("%d\n", t[0]);
    free(t);
    return 0;
}
