/* SPDX-License-Identifier: MIT */
/* A thread's life as the library sees it: at its first allocation it gets a cache and an
 * alternate signal stack; at its exit both go back for reuse. The one owner of both. */
#ifndef HWT_THREAD_H
#define HWT_THREAD_H

#include <pthread.h>

#include "tcache.h"
#include "unwind.h"

/* Once at start-up: registers the exit destructors; the calling (main) thread is T0. */
void hwt_thread_init(void);

/* The calling thread's first allocation: its cache (NULL when none can be had) and its
 * signal stack. */
struct hwt_tcache *hwt_thread_start(void);

/* pthread_create for the program (interpose.c), called from c once the library is
 * initialised: libc's, with the new thread's creator, creation stack and later its name
 * kept in the report's thread registry. */
int hwt_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                      void *arg, struct hwt_caller c);

/* In a fork child: the threads that did not survive the fork. */
void hwt_thread_after_fork_child(void);

#endif
