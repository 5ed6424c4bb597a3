/* SPDX-License-Identifier: MIT */
/* Compare-and-swap of a 64-bit word in one instruction: CASAL (Armv8.1 LSE, which every CPU
 * with MTE has). Only for code that runs where the CPU has it: free's swap in a thread
 * whose cache lacks HWT_TCACHE_LLSC (tcache.h; hwt_os_has_cas tells), where the compiler's
 * builtin is an LL/SC loop, six instructions where this is four. On other architectures
 * the builtin. */
#ifndef HWT_ARCH_CAS_H
#define HWT_ARCH_CAS_H

#include <stdbool.h>
#include <stdint.h>

/* *p = desired if *p == expected, with acquire and release; whether it was. */
static inline __attribute__((always_inline)) bool hwt_arch_cas_lse(uint64_t *p, uint64_t expected,
                                                                   uint64_t desired)
{
#if defined(__aarch64__)
    uint64_t seen = expected;
    __asm__ volatile(".arch_extension lse\n\tcasal %0, %2, [%1]"
                     : "+r"(seen)
                     : "r"(p), "r"(desired)
                     : "memory");
    return seen == expected;
#else
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
#endif
}

#endif
