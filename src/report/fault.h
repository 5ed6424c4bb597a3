/* SPDX-License-Identifier: MIT */
/* The SIGSEGV handler and the reporting entry points used by free/realloc. */
#ifndef HWT_FAULT_H
#define HWT_FAULT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwtag.h"

/* Linux's MTE fault codes and sigaction flag, for C libraries whose headers predate them. */
#ifndef SEGV_MTEAERR
#define SEGV_MTEAERR 8
#endif
#ifndef SEGV_MTESERR
#define SEGV_MTESERR 9
#endif
#ifndef SA_EXPOSE_TAGBITS
#define SA_EXPOSE_TAGBITS 0x00000800
#endif

/* Installs the handler (SA_SIGINFO|SA_ONSTACK|SA_EXPOSE_TAGBITS), remembering the
 * previous disposition for faults that are not ours; also opens HWTAG_LOG_PATH and gives
 * the calling thread its signal stack.
 * Called once at start-up; tests may call it again to re-install it. */
void hwt_fault_install(void);

/* A bad free/realloc seen by the allocator (HWTAG_BUG_DOUBLE_FREE or _INVALID_FREE):
 * reports it with the current stack and applies HWTAG_FAULT. Returns only when the
 * program may go on (HWTAG_FAULT=report); the caller then leaves the object alone. */
void hwt_fault_bad_free(enum hwtag_bug_type bug, const void *ptr);

/* The tail past the requested size of the live object at ptr no longer holds its check
 * pattern (heap/tail.h), found by free or realloc: reports it as an out-of-bounds write
 * and applies HWTAG_FAULT. Returns only when the program may go on. */
void hwt_fault_tail(const void *ptr, size_t requested, bool at_realloc);

#endif
