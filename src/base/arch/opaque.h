/* SPDX-License-Identifier: MIT */
/* Values the compiler must treat as unknown: the fast paths' ways of steering GCC's code
 * generation (an address formed once, a load it must not hoist). No instructions of their
 * own but the one scaled add of hwt_arch_index16. */
#ifndef HWT_ARCH_OPAQUE_H
#define HWT_ARCH_OPAQUE_H

#include <stdint.h>

/* x, as a value the compiler can no longer see into (nor prove anything of): no code. */
#define hwt_arch_opaque(x) __asm__("" : "+r"(x))

/* hwt_arch_opaque pinned where it stands: what is derived from x after it is computed
 * after it, so not ahead of a branch that it follows. No code. */
#define hwt_arch_opaque_here(x) __asm__ volatile("" : "+r"(x))

/* base + (i << 4), the address of a 16-byte entry, formed in a register the compiler
 * cannot see into, so that an access to the entry's two words is one load or store pair
 * at that address. On aarch64 one add of the zero-extended, scaled index (GCC
 * zero-extended and shifted first). */
static inline __attribute__((always_inline)) void *hwt_arch_index16(void *base, uint32_t i)
{
    char *e;
#if defined(__aarch64__)
    __asm__("add %0, %1, %w2, uxtw #4" : "=r"(e) : "r"(base), "r"(i));
#else
    e = (char *)base + ((uintptr_t)i << 4);
    hwt_arch_opaque(e);
#endif
    return e;
}

#endif
