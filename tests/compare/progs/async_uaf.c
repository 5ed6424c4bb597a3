/* SPDX-License-Identifier: MIT */
// A use-after-free write; libhwtag runs it with HWTAG_MODE=async, ASan and HWASan as is.
#include <stdlib.h>
#include <stdio.h>

struct session { int id; int refs; char user[24]; };

__attribute__((noinline)) struct session *session_open(int id)
{
    struct session *s = malloc(sizeof *s);
    s->id = id;
    s->refs = 1;
    return s;
}

__attribute__((noinline)) void session_close(struct session *s)
{
    free(s);
}

__attribute__((noinline)) void session_touch(struct session *s)
{
    s->refs++;                           /* BUG: s was closed */
}

int main(void)
{
    struct session *s = session_open(7);
    session_close(s);
    session_touch(s);
    printf("done\n");
    return 0;
}
