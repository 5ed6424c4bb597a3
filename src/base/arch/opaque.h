/* SPDX-License-Identifier: MIT */
/* Values the compiler must treat as unknown: the fast paths' ways of steering GCC's code
 * generation (an address formed once, a load or shift it must not hoist). No instructions
 * of their own but the scaled adds of the index helpers and the shift of
 * hwt_arch_shr16_here, each one the code would have had anyway. */
#ifndef HWT_ARCH_OPAQUE_H
#define HWT_ARCH_OPAQUE_H

#include <stdint.h>

/* x, as a value the compiler can no longer see into (nor prove anything of): no code. */
#define hwt_arch_opaque(x) __asm__("" : "+r"(x))

/* hwt_arch_opaque pinned where it stands: what is derived from x after it is computed
 * after it, so not ahead of a branch that it follows. No code. */
#define hwt_arch_opaque_here(x) __asm__ volatile("" : "+r"(x))

/* A thread-local variable's address x, kept in the register it was formed in. On aarch64
 * GCC formed &hwt_self again (thread pointer plus offset) at the tagged fast paths' end,
 * for the store that clears busy, having given its register to other values: with the
 * address opaque it keeps it, two instructions fewer a malloc+free. Elsewhere no code:
 * x86_64 reaches thread-locals through %fs with no address formed. */
#if defined(__aarch64__)
#define hwt_arch_tls_kept(x) hwt_arch_opaque(x)
#else
#define hwt_arch_tls_kept(x) ((void)0)
#endif

/* base + ((e & 0xff) << 4): the 16-byte entry indexed by e's low byte. On aarch64 one add
 * of the zero-extended byte, scaled (GCC extracted and shifted the byte first). */
static inline __attribute__((always_inline)) void *hwt_arch_index16_low8(void *base, uint32_t e)
{
    char *p;
#if defined(__aarch64__)
    __asm__("add %0, %1, %w2, uxtb #4" : "=r"(p) : "r"(base), "r"(e));
#else
    p = (char *)base + ((uintptr_t)(e & 0xffu) << 4);
#endif
    return p;
}

/* p[0] and p[1], two aligned words, each read whole as a relaxed atomic load reads it (for
 * words other threads change with atomics), in one load pair on aarch64 (each of its two
 * loads single-copy atomic): GCC makes two loads of two volatile or atomic reads, and
 * split even plain ones at times. Not volatile: GCC may schedule it, which saved one
 * instruction more. */
static inline __attribute__((always_inline)) void hwt_arch_load_pair(const uint64_t *p, uint64_t *a,
                                                                     uint64_t *b)
{
#if defined(__aarch64__)
    __asm__("ldp %0, %1, %2" : "=r"(*a), "=r"(*b) : "Ump"(*(const uint64_t(*)[2])p));
#else
    *a = __atomic_load_n(&p[0], __ATOMIC_RELAXED);
    *b = __atomic_load_n(&p[1], __ATOMIC_RELAXED);
#endif
}

/* p[0] = a, p[1] = b in one store pair on aarch64, whatever addressing GCC picks for the
 * two (with a register offset for the first it made two stores). */
static inline __attribute__((always_inline)) void hwt_arch_store_pair(uint64_t *p, uint64_t a,
                                                                      uint64_t b)
{
#if defined(__aarch64__)
    __asm__("stp %1, %2, %0" : "=Ump"(*(uint64_t(*)[2])p) : "r"(a), "r"(b));
#else
    p[0] = a;
    p[1] = b;
#endif
}

/* Moves *top down by a 16-byte entry and reads the entry there into a and b: one load
 * pair with writeback on aarch64, where GCC made a load pair and a subtraction. */
static inline __attribute__((always_inline)) void hwt_arch_pop16(void **top, uint64_t *a,
                                                                 uint64_t *b)
{
#if defined(__aarch64__)
    __asm__("ldp %1, %2, [%0, #-16]!"
            : "+r"(*top), "=r"(*a), "=r"(*b)
            : "m"(*(const uint64_t(*)[2])((char *)*top - 16)));
#else
    const uint64_t *e = (const uint64_t *)((char *)*top - 16);
    *a = e[0];
    *b = e[1];
    *top = (char *)*top - 16;
#endif
}

/* Writes a and b as the 16-byte entry at *top and moves *top past it: one store pair with
 * writeback on aarch64, where GCC made a store pair and an addition. */
static inline __attribute__((always_inline)) void hwt_arch_push16(void **top, uint64_t a,
                                                                  uint64_t b)
{
#if defined(__aarch64__)
    __asm__("stp %2, %3, [%0], #16" : "+r"(*top), "=m"(*(uint64_t(*)[2]) * top) : "r"(a), "r"(b));
#else
    uint64_t *e = (uint64_t *)*top;
    e[0] = a;
    e[1] = b;
    *top = e + 2;
#endif
}

/* Loads after this point stay after it: GCC does not move them ahead of a branch that this
 * follows. No code (a compiler barrier), and unlike hwt_arch_opaque of the address, no
 * address formed for the load. */
#define hwt_arch_loads_here() __asm__ volatile("" : : : "memory")

/* x >> 16, computed here: not ahead of a branch that this follows (GCC hoisted the shift
 * out of the branch that uses it, onto every path). One instruction on aarch64. */
static inline __attribute__((always_inline)) uint32_t hwt_arch_shr16_here(uint32_t x)
{
    uint32_t r;
#if defined(__aarch64__)
    __asm__ volatile("lsr %w0, %w1, #16" : "=r"(r) : "r"(x));
#else
    r = x;
    hwt_arch_opaque_here(r);
    r >>= 16;
#endif
    return r;
}

#endif
