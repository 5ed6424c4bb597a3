/* SPDX-License-Identifier: MIT */
/* Thread start and exit: creates and retires the thread cache and the alternate signal
 * stack together, so neither the heap nor the report side has to know of the other; and
 * pthread_create's part, which gives the report's thread registry (report/task.c) each
 * thread's creator, creation stack and name. Never allocates. */
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "alloc_stack.h"
#include "altstack.h"
#include "libc_next.h"
#include "task.h"

/* Threads created but not yet running at once, each holding a start block until it runs; a
 * creation past that runs the program's routine directly (the thread goes unregistered). */
#define START_BLOCKS 64u

static pthread_key_t exit_key, task_key;
static int exit_key_ready, task_key_ready;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static void *libc_create; /* create_fn */

/* What the new thread needs, from its creator's call until it runs. */
static struct start_block {
    int busy; /* claimed by a creator, released by the new thread (or the failed creation) */
    uint32_t number;
    void *(*start)(void *);
    void *arg;
} start_blocks[START_BLOCKS];

/* pthread key destructor: runs after the thread's own TLS destructors, which may still
 * have freed memory into the cache. */
static void thread_exit(void *arg)
{
    hwt_tcache_exit(arg);
    hwt_altstack_exit();
}

/* pthread key destructor of a registered thread: it keeps its last name. */
static void task_exit(void *arg)
{
    hwt_task_exit((uint32_t)((uintptr_t)arg - 1));
}

void hwt_thread_init(void)
{
    if (pthread_key_create(&exit_key, thread_exit) == 0)
        exit_key_ready = 1;
    if (pthread_key_create(&task_key, task_exit) == 0)
        task_key_ready = 1;
    hwt_task_init_main((uintptr_t)pthread_self());
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

static struct start_block *claim_block(void)
{
    for (unsigned i = 0; i < START_BLOCKS; i++) {
        int expected = 0;
        if (__atomic_load_n(&start_blocks[i].busy, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&start_blocks[i].busy, &expected, 1, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return &start_blocks[i];
    }
    return NULL;
}

/* The new thread's first code: registers it, then runs the program's routine (a tail call,
 * so its stacks show no frame of ours). */
static void *thread_begin(void *p)
{
    struct start_block *sb = p;
    void *(*start)(void *) = sb->start;
    void *arg = sb->arg;
    uint32_t number = sb->number;
    __atomic_store_n(&sb->busy, 0, __ATOMIC_RELEASE);
    hwt_task_start(number, (uintptr_t)pthread_self());
    if (task_key_ready)
        pthread_setspecific(task_key, (void *)((uintptr_t)number + 1));
    return start(arg);
}

int hwt_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                      void *arg, struct hwt_caller c)
{
    create_fn create = (create_fn)hwt_libc_next_once(&libc_create, "pthread_create");
    if (create == NULL)
        return EAGAIN; /* no libc definition: nothing could create a thread */
    struct start_block *sb = claim_block();
    if (sb == NULL)
        return create(thread, attr, start, arg);
    sb->number = hwt_task_create(hwt_alloc_stack_walk(c));
    sb->start = start;
    sb->arg = arg;
    if (sb->number == HWT_TASK_NONE) {
        __atomic_store_n(&sb->busy, 0, __ATOMIC_RELEASE);
        return create(thread, attr, start, arg);
    }
    uint32_t number = sb->number; /* sb is the new thread's once it runs */
    int rc = create(thread, attr, thread_begin, sb);
    if (rc != 0)
        __atomic_store_n(&sb->busy, 0, __ATOMIC_RELEASE);
    hwt_task_created(number, rc == 0, rc == 0 ? (uintptr_t)*thread : 0);
    return rc;
}

void hwt_thread_after_fork_child(void)
{
    /* threads created but not yet running do not exist in the child */
    for (unsigned i = 0; i < START_BLOCKS; i++)
        __atomic_store_n(&start_blocks[i].busy, 0, __ATOMIC_RELAXED);
    hwt_task_after_fork_child();
}
