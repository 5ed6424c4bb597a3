/* SPDX-License-Identifier: MIT */
/* Stack capture: a bounded frame-record walk for malloc/free, and libunwind from a
 * signal context for the faulting stack. Never calls malloc. */
#ifndef HWT_UNWIND_H
#define HWT_UNWIND_H

#include <stdint.h>

/* Prepares the unwinders (libunwind, stack bounds). Called once at start-up, before
 * any fault can be handled. */
void hwt_unwind_init(void);

/* Return addresses of the caller's callers, starting skip frames above the caller,
 * by walking frame records (x29 chain); bounded and validated so a frame without a
 * record never makes it fault. Returns the number stored. */
unsigned hwt_unwind_fast(uintptr_t *pcs, unsigned max, unsigned skip);

/* The stack of the interrupted code: pcs[0] is the faulting pc. ucontext is the
 * third argument of an SA_SIGINFO handler. signal-safe */
unsigned hwt_unwind_signal(void *ucontext, uintptr_t *pcs, unsigned max);

#endif
