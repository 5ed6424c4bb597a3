/* SPDX-License-Identifier: MIT */
// An overflow in a stripped executable (the script strips it after the build).
#include <stdlib.h>
#include <stdio.h>

__attribute__((noinline)) int parse_fields(const char *line, int *out)
{
    int n = 0;
    for (const char *p = line; *p; p++)
        if (*p == ',')
            out[n++] = (int)(p - line);      /* BUG: 5 commas, room for 4 */
    return n;
}

int main(void)
{
    int *fields = malloc(4 * sizeof(int));
    int n = parse_fields("a,b,c,d,e,f", fields);
    printf("%d\n", n);
    free(fields);
    return 0;
}
