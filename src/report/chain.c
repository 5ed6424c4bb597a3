/* SPDX-License-Identifier: MIT */
/* Chaining to the application's (or the default) SIGSEGV disposition. It decides nothing
 * about tag faults; fault.c calls it only for faults that are not ours. */
#include "chain.h"

#include <string.h>

#include "arch/mte.h"
#include "fault.h"
#include "os.h"

/* The program's SIGSEGV disposition: the one ours replaced, then whatever the program sets
 * through sigaction (interpose.c). A seqlock: the handler copies it out lock-free; writers
 * are serialised by the odd count. */
static struct sigaction previous;
static unsigned previous_seq; /* odd while a writer changes previous */
static bool in_front;         /* our handler is installed: the program's goes behind it */

static void load_previous(struct sigaction *out)
{
    unsigned seq;
    do {
        seq = __atomic_load_n(&previous_seq, __ATOMIC_ACQUIRE);
        memcpy(out, &previous, sizeof(*out));
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while ((seq & 1) != 0 || seq != __atomic_load_n(&previous_seq, __ATOMIC_RELAXED));
}

static void store_previous(const struct sigaction *act)
{
    unsigned seq = __atomic_load_n(&previous_seq, __ATOMIC_RELAXED);
    while ((seq & 1) != 0 || !__atomic_compare_exchange_n(&previous_seq, &seq, seq + 1, true,
                                                          __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        seq = __atomic_load_n(&previous_seq, __ATOMIC_RELAXED);
    memcpy(&previous, act, sizeof(previous));
    __atomic_store_n(&previous_seq, seq + 2, __ATOMIC_RELEASE);
}

void hwt_chain_set_previous(const struct sigaction *old)
{
    store_previous(old);
    __atomic_store_n(&in_front, true, __ATOMIC_RELEASE);
}

bool hwt_chain_app_sigaction(const struct sigaction *act, struct sigaction *old)
{
    if (!__atomic_load_n(&in_front, __ATOMIC_ACQUIRE))
        return false;
    struct sigaction before;
    load_previous(&before);
    if (act != NULL)
        store_previous(act);
    if (old != NULL)
        *old = before;
    return true;
}

static void restore_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    hwt_os_sigaction(sig, &dfl, NULL);
    __atomic_store_n(&in_front, false, __ATOMIC_RELEASE);
}

bool hwt_chain_default_action(void)
{
    struct sigaction act;
    load_previous(&act);
    return !(act.sa_flags & SA_SIGINFO) && (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN);
}

void hwt_chain_forward(int sig, siginfo_t *info, void *ucontext)
{
    struct sigaction act;
    load_previous(&act);
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
    if (act.sa_flags & SA_RESETHAND) {
        /* back to the default for the program; ours stays in front for tag faults */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        store_previous(&dfl);
    }
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
