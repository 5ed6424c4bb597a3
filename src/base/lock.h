/* SPDX-License-Identifier: MIT */
/* A small futex lock that never allocates and can be re-initialised in a fork child. */
#ifndef HWT_LOCK_H
#define HWT_LOCK_H

#include <linux/futex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/clock.h"

struct hwt_lock {
    int state; /* 0 free, 1 locked, 2 locked with waiters */
};

#define HWT_LOCK_INIT                                                                              \
    {                                                                                              \
        0                                                                                          \
    }

/* How long a waiter spins before it sleeps, where the clock allows (aarch64). A futex
 * sleep and wake cost microseconds of their own, and under QEMU, where a critical section
 * runs ten times longer or more, the 64 tries below ran out long before the holder was
 * done: two threads churning large objects under QEMU made 0.57 futex calls an operation
 * and ran at half glibc's speed. */
#ifndef HWT_LOCK_SPIN_US
#define HWT_LOCK_SPIN_US 20u
#endif

static inline bool hwt_lock_try_free(struct hwt_lock *l)
{
    int expected = 0;
    return __atomic_load_n(&l->state, __ATOMIC_RELAXED) == 0 &&
           __atomic_compare_exchange_n(&l->state, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static inline void hwt_lock_slow(struct hwt_lock *l)
{
    if (HWT_HAVE_ARCH_CLOCK) {
        uint64_t t0 = hwt_arch_clock();
        uint64_t ticks = hwt_arch_clock_hz() / 1000000u * HWT_LOCK_SPIN_US;
        while (hwt_arch_clock() - t0 < ticks) {
            if (hwt_lock_try_free(l))
                return;
            hwt_arch_spin_hint();
        }
    }
    int c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
    }
}

static inline void hwt_lock(struct hwt_lock *l)
{
    int expected = 0;
    if (__atomic_compare_exchange_n(&l->state, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    for (int spin = 0; spin < 64; spin++) {
        if (hwt_lock_try_free(l))
            return;
    }
    hwt_lock_slow(l);
}

static inline int hwt_trylock(struct hwt_lock *l)
{
    int expected = 0;
    return __atomic_compare_exchange_n(&l->state, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

static inline void hwt_unlock(struct hwt_lock *l)
{
    if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
        syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Raises *mark to at least n: a count of the lock groups (arenas) some thread may have
 * taken a lock in, so that a fork child resets the locks of those alone and never reads
 * the pages of the others, which the parent may never have touched. */
static inline void hwt_lock_mark(unsigned *mark, unsigned n)
{
    unsigned old = __atomic_load_n(mark, __ATOMIC_RELAXED);
    while (old < n &&
           !__atomic_compare_exchange_n(mark, &old, n, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* Frees l whoever holds it (a fork child's only thread). A lock not held is not written: a
 * child's write to a page it shares with its parent costs a copy-on-write fault, and under
 * QEMU each one is a slow host fault. */
static inline void hwt_lock_reset(struct hwt_lock *l)
{
    if (__atomic_load_n(&l->state, __ATOMIC_RELAXED) != 0)
        __atomic_store_n(&l->state, 0, __ATOMIC_RELAXED);
}

#endif
