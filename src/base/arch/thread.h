/* SPDX-License-Identifier: MIT */
/* A thread's own registers as a leak check needs them: the thread pointer (where its TCB
 * and static TLS are) and the general registers of an interrupted context. Nothing else. */
#ifndef HWT_ARCH_THREAD_H
#define HWT_ARCH_THREAD_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

/* General registers of a ucontext (x0-x30 and sp; on x86_64 the gregs). */
#if defined(__aarch64__)
#define HWT_ARCH_CONTEXT_REGS 32u
#else
#define HWT_ARCH_CONTEXT_REGS ((unsigned)NGREG)
#endif

/* The calling thread's thread pointer (TPIDR_EL0, or the fs base on x86_64). signal-safe */
static inline uintptr_t hwt_arch_thread_pointer(void)
{
    uintptr_t tp;
#if defined(__aarch64__)
    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
#elif defined(__x86_64__)
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
#else
    tp = 0;
#endif
    return tp;
}

/* Copies the general registers of the interrupted context into regs
 * (HWT_ARCH_CONTEXT_REGS words) and returns its stack pointer. signal-safe */
static inline uintptr_t hwt_arch_context_regs(const void *ucontext, uintptr_t *regs)
{
    const ucontext_t *uc = ucontext;
#if defined(__aarch64__)
    for (unsigned i = 0; i < 31; i++)
        regs[i] = uc->uc_mcontext.regs[i];
    regs[31] = uc->uc_mcontext.sp;
    return uc->uc_mcontext.sp;
#elif defined(__x86_64__)
    for (unsigned i = 0; i < HWT_ARCH_CONTEXT_REGS; i++)
        regs[i] = (uintptr_t)uc->uc_mcontext.gregs[i];
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#else
    (void)uc;
    (void)regs;
    return 0;
#endif
}

#endif
