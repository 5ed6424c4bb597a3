/* SPDX-License-Identifier: MIT */
/* A thread's busy flag: set while it runs malloc, free or realloc, so that a signal handler's
 * call into them aborts instead of reusing what the interrupted call holds. It does not
 * decide what the calls do; the inline fast paths (alloc_fast.h) set the flag themselves. */
#ifndef HWT_BUSY_H
#define HWT_BUSY_H

#include "tcache.h"

/* Writes one line and aborts: a call re-entered from a signal handler. */
__attribute__((noreturn)) void hwt_busy_reentered(void);

/* Marks the thread busy; a call made while it was already busy is a re-entry. */
static inline __attribute__((always_inline)) void hwt_busy_enter(void)
{
    if (__builtin_expect(hwt_self.busy != 0, 0))
        hwt_busy_reentered();
    hwt_self.busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Marks the thread idle again, after mte_tco_clear has run (so a report's HWT_TCACHE_RESUME
 * is spent). */
static inline __attribute__((always_inline)) void hwt_busy_leave(void)
{
    hwt_self.flags &= ~(uint32_t)HWT_TCACHE_RESUME;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hwt_self.busy = 0;
}

/* Nonzero while the calling thread is inside malloc, free or realloc. signal-safe */
static inline int hwt_busy_now(void)
{
    return hwt_self.busy;
}

#endif
