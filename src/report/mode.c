/* SPDX-License-Identifier: MIT */
/* The fault modes of HWTAG_FAULT, after the kernel's kasan.fault. Decides and acts; it
 * neither formats nor writes reports. */
#include "mode.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

/* Exit status when abort() itself cannot end the process: 128 + SIGABRT, as a shell shows. */
#define PANIC_EXIT_STATUS 134

/* Set after the first report: with HWTAG_FAULT=report later ones are suppressed. */
static int reported_once;

void hwt_mode_panic(void)
{
    struct sigaction dfl;
    sigset_t set;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGABRT, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGABRT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGABRT);
    _exit(PANIC_EXIT_STATUS);
}

bool hwt_mode_should_print(const struct hwt_report *r)
{
    (void)r;
    if (hwt_opts.fault != HWT_FAULT_REPORT)
        return true;
    return __atomic_exchange_n(&reported_once, 1, __ATOMIC_RELAXED) == 0;
}

void hwt_mode_after_report(const struct hwt_report *r)
{
    switch (hwt_opts.fault) {
    case HWT_FAULT_PANIC_ON_WRITE:
        /* like the kernel, a bad free counts as a write */
        if (r->access != HWTAG_ACCESS_READ)
            hwt_mode_panic();
        break;
    case HWT_FAULT_REPORT:
        break;
    default:
        hwt_mode_panic();
    }
}
