/* SPDX-License-Identifier: MIT */
/* strbuf_append grows the buffer through realloc: clean. */
#include <stdio.h>
#include <string.h>

#include "strbuf.h"

int main(void)
{
    struct strbuf sb = {0};
    for (int i = 0; i < 1000; i++) {
        if (strbuf_append(&sb, "0123456789") != 0)
            return 1;
    }
    if (sb.len != 10000 || strlen(sb.data) != 10000 || memcmp(sb.data + 9990, "0123456789", 10)) {
        fprintf(stderr, "test_append: wrong contents\n");
        return 1;
    }
    strbuf_release(&sb);
    puts("test_append: ok");
    return 0;
}
