/* SPDX-License-Identifier: MIT */
/* A program that leaks one object from a thread and exits through exit(0): the check at
 * exit must find it (under strace -f too, which a ptrace-based checker cannot share). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *keep_global;
void *volatile passing; /* stores the compiler must keep: the allocation is not dead */

static __attribute__((noinline)) void *leak_in_thread(void *arg)
{
    char *p = malloc(4242);
    memset(p, 'Z', 4242);
    passing = p;
    passing = NULL;
    return arg;
}

int main(void)
{
    pthread_t t;
    keep_global = malloc(100); /* reachable: not a leak */
    pthread_create(&t, NULL, leak_in_thread, NULL);
    pthread_join(t, NULL);
    puts("leaky: done");
    return 0;
}
