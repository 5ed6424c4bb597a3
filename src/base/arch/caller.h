/* SPDX-License-Identifier: MIT */
/* Where a function was called from, read from the registers at its entry: the return
 * address and the caller's frame record. Only meaningful in a function that sets up no
 * frame of its own (a leaf whose every way out is a tail call), where nothing has
 * changed those two registers since the call. */
#ifndef HWT_ARCH_CALLER_H
#define HWT_ARCH_CALLER_H

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
