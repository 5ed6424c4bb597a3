/* SPDX-License-Identifier: MIT */
/* A thread's life as the library sees it: at its first allocation it gets a cache and an
 * alternate signal stack; at its exit both go back for reuse. The one owner of both. */
#ifndef HWT_THREAD_H
#define HWT_THREAD_H

#include "tcache.h"

/* Once at start-up: registers the exit destructor. */
void hwt_thread_init(void);

/* The calling thread's first allocation: its cache (NULL when none can be had) and its
 * signal stack. */
struct hwt_tcache *hwt_thread_start(void);

#endif
