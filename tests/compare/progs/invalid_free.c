/* SPDX-License-Identifier: MIT */
// Invalid free: the packet's payload pointer (interior) is freed instead of the packet.
#include <stdlib.h>
#include <stdio.h>

struct packet { int len; int flags; char payload[56]; };

__attribute__((noinline)) struct packet *packet_new(void)
{
    struct packet *p = malloc(sizeof *p);
    p->len = 0;
    return p;
}

__attribute__((noinline)) void packet_destroy(char *payload)
{
    free(payload);                   /* BUG: interior pointer */
}

int main(void)
{
    struct packet *p = packet_new();
    packet_destroy(p->payload);
    return 0;
}
