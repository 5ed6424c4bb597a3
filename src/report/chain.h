/* SPDX-License-Identifier: MIT */
/* Faults that are not tag-check faults go to the handler that was there before ours. */
#ifndef HWT_CHAIN_H
#define HWT_CHAIN_H

#include <signal.h>

/* Remembers the disposition our handler replaced. */
void hwt_chain_set_previous(const struct sigaction *old);

/* Passes the signal on as if our handler were not installed: the previous handler runs
 * with its own mask and flags, or the default action is restored. signal-safe */
void hwt_chain_forward(int sig, siginfo_t *info, void *ucontext);

#endif
