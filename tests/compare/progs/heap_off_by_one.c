/* SPDX-License-Identifier: MIT */
// Heap overflow by one in a loop: `<=` instead of `<` while filling a buffer.
#include <stdlib.h>
#include <stdio.h>

__attribute__((noinline)) void fill_buffer(char *buf, int n)
{
    for (int i = 0; i <= n; i++)     /* BUG: writes buf[n] */
        buf[i] = (char)('a' + i % 26);
}

int main(void)
{
    int n = 32;
    char *buf = malloc(n);
    fill_buffer(buf, n);
    printf("%c\n", buf[0]);
    free(buf);
    return 0;
}
