/* SPDX-License-Identifier: MIT */
/* strbuf_split: clean. */
#include <stdio.h>
#include <string.h>

#include "strbuf.h"

int main(void)
{
    size_t n = 0;
    char **parts = strbuf_split("alpha,beta,,gamma", ',', &n);
    if (parts == NULL || n != 4 || strcmp(parts[0], "alpha") || strcmp(parts[1], "beta") ||
        strcmp(parts[2], "") || strcmp(parts[3], "gamma") || parts[4] != NULL) {
        fprintf(stderr, "test_split: wrong parts\n");
        return 1;
    }
    strbuf_free_split(parts);
    puts("test_split: ok");
    return 0;
}
