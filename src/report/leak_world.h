/* SPDX-License-Identifier: MIT */
/* Stopping every other thread for a leak check without ptrace, and starting them again. */
#ifndef HWT_LEAK_WORLD_H
#define HWT_LEAK_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/thread.h"

/* A stopped thread as its stop handler saw it. */
struct hwt_leak_thread {
    int tid;
    int stopped;                           /* set last by the thread itself */
    uintptr_t sp;                          /* of the interrupted context */
    uintptr_t tp;                          /* its thread pointer */
    uintptr_t regs[HWT_ARCH_CONTEXT_REGS]; /* of the interrupted context */
};

struct hwt_leak_world {
    struct hwt_leak_thread *threads; /* every thread but the caller's: [0, count) */
    unsigned count;
    unsigned stopped;
    int missing_tid;      /* a thread of the program that did not stop (0: none) */
    bool foreign_threads; /* threads of the emulator, which run no program code, were left */
};

/* Notes the threads that run before libhwtag starts (under qemu-user, the emulator's);
 * called at start-up and in a fork child, where only the emulator's can be. */
void hwt_leak_world_note_start(void);

/* Stops every other thread of the process: a real-time signal to each, whose handler
 * records the thread's registers and waits. Returns false (everything running again) when
 * a program thread does not stop within deadline_ms: it blocks the signal, or is stuck.
 * Not signal-safe; never allocates from the heap. */
bool hwt_leak_world_stop(struct hwt_leak_world *w, unsigned deadline_ms);
/* Bytes of the mapping that holds w->threads. */
size_t hwt_leak_world_bytes(void);
/* Lets them all go on; returns when every stopped thread has left its handler. */
void hwt_leak_world_resume(struct hwt_leak_world *w);

#endif
