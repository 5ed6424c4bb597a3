/* SPDX-License-Identifier: MIT */
/* Start-up: lazy on the first allocation (which can come before any constructor), with a
 * constructor as backstop for the parts that need a running process; fork handlers. */
#ifndef HWT_INIT_H
#define HWT_INIT_H

extern int hwt_init_done;

void hwt_init_slow(void);

static inline void hwt_init_ensure(void)
{
    if (__builtin_expect(!__atomic_load_n(&hwt_init_done, __ATOMIC_ACQUIRE), 0))
        hwt_init_slow();
}

#endif
