/* SPDX-License-Identifier: MIT */
/* A cheap clock shared by all cores: the generic timer's virtual count on aarch64 (one
 * instruction; 1 GHz on Armv8.6 timers, 62.5 MHz or so before and under QEMU). */
#ifndef HWT_ARCH_CLOCK_H
#define HWT_ARCH_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__aarch64__)
#define HWT_HAVE_ARCH_CLOCK 1
static inline uint64_t hwt_arch_clock(void)
{
    uint64_t t;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(t));
    return t;
}

/* Ticks per second of hwt_arch_clock. */
static inline uint64_t hwt_arch_clock_hz(void)
{
    uint64_t f;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
    return f;
}
#else
#define HWT_HAVE_ARCH_CLOCK 0
static inline uint64_t hwt_arch_clock(void)
{
    return 0;
}

static inline uint64_t hwt_arch_clock_hz(void)
{
    return 0;
}
#endif

/* A hint in a spin-wait loop (the core may give its pipeline to a sibling thread); only
 * spun on where the clock is there. */
static inline void hwt_arch_spin_hint(void)
{
#if defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

#endif
