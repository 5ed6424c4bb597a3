/* SPDX-License-Identifier: MIT */
/* Owns the alternate signal stacks: one per thread that allocated, a free list of those
 * left by exited threads. Never takes a lock it could find held after fork. */
#include "altstack.h"

#include <signal.h>
#include <string.h>

#include "arch/mte.h"
#include "lock.h"
#include "meta.h"

/* libunwind and the symbolizer run on this stack; 64 KiB leaves them ample room. */
#define ALT_STACK_SIZE (64u * 1024u)

/* Alternate signal stacks of exited threads, linked through their first word. */
static struct hwt_lock stacks_lock = HWT_LOCK_INIT;
static void *free_stacks;
static __thread void *thread_stack;

void hwt_altstack_init(void)
{
    stack_t cur, ss;

    if (thread_stack != NULL || sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return;
    void *mem = NULL;
    /* try-lock: after a fork in the middle of a push or pop, take fresh memory instead */
    if (hwt_trylock(&stacks_lock)) {
        mem = free_stacks;
        if (mem != NULL)
            memcpy(&free_stacks, mem, sizeof(void *));
        hwt_unlock(&stacks_lock);
    }
    if (mem == NULL)
        mem = hwt_meta_alloc(ALT_STACK_SIZE, HWT_GRANULE);
    if (mem == NULL)
        return;
    ss.ss_sp = mem;
    ss.ss_size = ALT_STACK_SIZE;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0) {
        thread_stack = mem;
        hwt_altstack_exit();
        return;
    }
    thread_stack = mem;
}

void hwt_altstack_exit(void)
{
    void *mem = thread_stack;
    stack_t ss, cur;

    if (mem == NULL)
        return;
    /* Only give it back when it is ours and not in use (never on the stack itself). */
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == mem) {
        if (cur.ss_flags & SS_ONSTACK)
            return;
        memset(&ss, 0, sizeof(ss));
        ss.ss_flags = SS_DISABLE;
        if (sigaltstack(&ss, NULL) != 0)
            return;
    }
    thread_stack = NULL;
    hwt_lock(&stacks_lock);
    memcpy(mem, &free_stacks, sizeof(void *));
    free_stacks = mem;
    hwt_unlock(&stacks_lock);
}
