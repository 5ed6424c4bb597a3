/* SPDX-License-Identifier: MIT */
/* Faults that are not tag-check faults go to the handler that was there before ours. */
#ifndef HWT_CHAIN_H
#define HWT_CHAIN_H

#include <signal.h>
#include <stdbool.h>

/* Remembers the disposition our handler replaced. */
void hwt_chain_set_previous(const struct sigaction *old);

/* The program's sigaction(SIGSEGV, act, old) while our handler is installed: act becomes
 * what hwt_chain_forward passes non-tag faults to, old what the program would see without
 * us. Returns false when our handler is not installed (the call goes to libc). */
bool hwt_chain_app_sigaction(const struct sigaction *act, struct sigaction *old);

/* True when the SIGSEGV disposition our handler replaced is the default action (or, for a
 * fault the kernel raised, SIG_IGN, which it overrides): nobody in the program takes it.
 * signal-safe */
bool hwt_chain_default_action(void);

/* Passes the signal on as if our handler were not installed: the previous handler runs
 * with its own mask and flags, or the default action is restored. signal-safe */
void hwt_chain_forward(int sig, siginfo_t *info, void *ucontext);

#endif
