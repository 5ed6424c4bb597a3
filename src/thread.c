/* SPDX-License-Identifier: MIT */
/* Thread start and exit: creates and retires the thread cache and the alternate signal
 * stack together, so neither the heap nor the report side has to know of the other. */
#include "thread.h"

#include <pthread.h>

#include "altstack.h"

static pthread_key_t exit_key;
static int exit_key_ready;

/* pthread key destructor: runs after the thread's own TLS destructors, which may still
 * have freed memory into the cache. */
static void thread_exit(void *arg)
{
    hwt_tcache_exit(arg);
    hwt_altstack_exit();
}

void hwt_thread_init(void)
{
    if (pthread_key_create(&exit_key, thread_exit) == 0)
        exit_key_ready = 1;
}

struct hwt_tcache *hwt_thread_start(void)
{
    struct hwt_tcache *tc = hwt_tcache_create();
    if (tc == NULL)
        return NULL;
    if (exit_key_ready)
        pthread_setspecific(exit_key, tc);
    /* A thread's first allocation is also where it gets its signal stack. */
    hwt_altstack_init();
    return tc;
}
