/* SPDX-License-Identifier: MIT */
/* Chaining to the application's (or the default) SIGSEGV disposition. It decides nothing
 * about tag faults; fault.c calls it only for faults that are not ours. */
#include "chain.h"

#include <string.h>

#include "arch/mte.h"
#include "fault.h"

static struct sigaction previous; /* disposition before ours */

void hwt_chain_set_previous(const struct sigaction *old)
{
    previous = *old;
}

static void restore_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

void hwt_chain_forward(int sig, siginfo_t *info, void *ucontext)
{
    struct sigaction act = previous;
    bool user_sent = info->si_code <= 0;

    if (!(act.sa_flags & SA_SIGINFO) && (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN)) {
        if (act.sa_handler == SIG_IGN && user_sent)
            return;
        /* Default action: restore it; a real fault re-executes and kills, a sent signal is
         * re-sent (it stays blocked until this handler returns). */
        restore_default(sig);
        if (user_sent)
            raise(sig);
        return;
    }

    /* Run the old handler with the mask and flags it asked for. */
    sigset_t mask, saved;
    sigprocmask(SIG_SETMASK, NULL, &saved);
    mask = saved;
    for (int s = 1; s < NSIG; s++)
        if (sigismember(&act.sa_mask, s) == 1)
            sigaddset(&mask, s);
    if (act.sa_flags & SA_NODEFER)
        sigdelset(&mask, sig);
    if (act.sa_flags & SA_RESETHAND)
        restore_default(sig);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (act.sa_flags & SA_SIGINFO) {
        siginfo_t copy = *info;
        /* kernel-generated faults only: for sent signals the field holds pid and uid */
        if (!(act.sa_flags & SA_EXPOSE_TAGBITS) && !user_sent)
            copy.si_addr = (void *)mte_untag(info->si_addr);
        act.sa_sigaction(sig, &copy, ucontext);
    } else {
        act.sa_handler(sig);
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
}
