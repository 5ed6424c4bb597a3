/* SPDX-License-Identifier: MIT */
/* Where a function was called from, read from the registers at its entry: the return
 * address and the caller's frame record. Only meaningful in a function that sets up no
 * frame of its own (a leaf whose every way out is a tail call), where nothing has
 * changed those two registers since the call. */
#ifndef HWT_ARCH_CALLER_H
#define HWT_ARCH_CALLER_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__aarch64__) && defined(__OPTIMIZE__)
/* 1 where frameless entry points can read their caller from x30 and x29: functions that
 * carry HWT_ARCH_FRAMELESS in a file compiled with -momit-leaf-frame-pointer (the build
 * sets it for interpose.c; a target attribute instead would keep gcc from inlining the
 * fast path's helpers into them). Without optimisation a leaf still gets a frame. */
#define HWT_ARCH_HAVE_FRAMELESS 1
#define HWT_ARCH_FRAMELESS __attribute__((noinline))
/* Not volatile, so the compiler may place the two moves where it likes (gcc puts them at
 * the entry, one instruction each): nothing in a frameless leaf writes x30 or x29, so any
 * place reads the same. */
static inline __attribute__((always_inline)) void hwt_arch_entry_caller(uintptr_t *pc,
                                                                        uintptr_t *fp)
{
    __asm__("mov %0, x30" : "=r"(*pc));
    __asm__("mov %0, x29" : "=r"(*fp));
}
/* The same, read where it is written: volatile, so the compiler keeps the two moves on the
 * way that needs them (a fast path's stack walk, a tail call to the general path) instead of
 * at the entry, where the ways without stacks would pay for them too. */
static inline __attribute__((always_inline)) void hwt_arch_entry_caller_here(uintptr_t *pc,
                                                                             uintptr_t *fp)
{
    __asm__ volatile("mov %0, x30" : "=r"(*pc));
    __asm__ volatile("mov %0, x29" : "=r"(*fp));
}
/* The first step of a fast path's stack walk in a frameless entry point, on x30 and x29 in
 * place: copied out first (hwt_arch_entry_caller_here), each cost a move a walk. Nothing
 * in such a function writes either register, as above. key * mul + x30 (the walk's mix,
 * unwind.h). */
static inline __attribute__((always_inline)) uint64_t hwt_arch_entry_mix_pc(uint64_t key,
                                                                            uint64_t mul)
{
    uint64_t k;
    __asm__("madd %0, %1, %2, x30" : "=r"(k) : "r"(key), "r"(mul));
    return k;
}
/* Whether x29 lies in [lo, last). */
static inline __attribute__((always_inline)) bool hwt_arch_entry_fp_within(uintptr_t lo,
                                                                           uintptr_t last)
{
    bool in;
    __asm__("cmp x29, %1\n\tccmp x29, %2, #2, hs" : "=@cclo"(in) : "r"(lo), "r"(last));
    return in;
}
/* The frame record at x29, its two words in one load pair; only once x29 is known to lie
 * in the stack (volatile: never ahead of that test). */
static inline __attribute__((always_inline)) void hwt_arch_entry_record(uintptr_t *next,
                                                                        uintptr_t *pc)
{
    __asm__ volatile("ldp %0, %1, [x29]" : "=r"(*next), "=r"(*pc) : : "memory");
}
/* Whether next lies above x29 and at most at last. */
static inline __attribute__((always_inline)) bool hwt_arch_entry_link_ok(uintptr_t next,
                                                                         uintptr_t last)
{
    bool ok;
    __asm__("cmp x29, %1\n\tccmp %2, %1, #0, lo" : "=@cchs"(ok) : "r"(next), "r"(last));
    return ok;
}
/* Stores the return address at *out, for a frameless function (__builtin_return_address
 * would make gcc set up a frame): one store of x30, where reading it into a variable first
 * took a move (each checked string routine's record). */
static inline __attribute__((always_inline)) void hwt_arch_entry_return_to(uintptr_t *out)
{
    __asm__ volatile("str x30, %0" : "=m"(*out));
}
#else
#define HWT_ARCH_HAVE_FRAMELESS 0
#define HWT_ARCH_FRAMELESS __attribute__((noinline))
#define hwt_arch_entry_return_to(out) (*(out) = (uintptr_t)__builtin_return_address(0))
#endif

#endif
