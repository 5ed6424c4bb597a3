/* SPDX-License-Identifier: MIT */
/* A thread's busy flag: the re-entry abort. It never allocates. */
#include "busy.h"

#include <stdlib.h>

#include "os.h"

__attribute__((noinline, cold, noreturn)) void hwt_busy_reentered(void)
{
    static const char msg[] =
        "hwtag: malloc re-entered from a signal handler (a handler that interrupted "
        "malloc/free/realloc called one of them; that is not async-signal-safe): aborting\n";
    hwt_os_write_all(2, msg, sizeof(msg) - 1);
    abort();
}
