/* SPDX-License-Identifier: MIT */
/* What the signal context says about a tag-check fault: registers, the access's size and
 * direction, and the faulting address with its pointer tag. */
#ifndef HWT_CONTEXT_H
#define HWT_CONTEXT_H

#include <signal.h>
#include <stdint.h>

#include "report.h"

/* Fills r's registers, access and access_size from ucontext (r->asynchronous set by the
 * caller: an asynchronous fault has no faulting instruction). signal-safe */
void hwt_context_describe(struct hwt_report *r, void *ucontext);

/* The faulting address with its pointer tag, recovered from the base register when
 * si_addr lost it. signal-safe */
uintptr_t hwt_context_fault_addr(const siginfo_t *info, void *ucontext);

/* Makes the interrupted code resume with PSTATE.TCO set: the faulting instruction
 * re-executes without a tag check, and so does the rest of the thread's code until its next
 * allocator call, which clears TCO on its way out (docs/design.md, section 5). signal-safe */
void hwt_context_resume_unchecked(void *ucontext);

#endif
