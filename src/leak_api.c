/* SPDX-License-Identifier: MIT */
/* The leak checks' public entry points: hwtag_leak_* and LeakSanitizer's interface names,
 * so that programs calling them through <sanitizer/lsan_interface.h> work unchanged. Built
 * into the libraries only (like interpose.c): the core's tests may run under a sanitizer
 * that defines the same names. No logic of its own. */
#include <stddef.h>
#include <stdlib.h>

#include "entry.h"
#include "hwtag.h"
#include "init.h"
#include "leak.h"
#include "options.h"

EXPORT int hwtag_leak_check(void)
{
    hwt_init_ensure();
    switch (hwt_leak_check()) {
    case HWT_LEAK_FOUND:
        return 1;
    case HWT_LEAK_NONE:
        return 0;
    default:
        return -1;
    }
}

EXPORT void hwtag_leak_check_fatal(void)
{
    hwt_init_ensure();
    if (hwt_leak_check() == HWT_LEAK_FOUND && hwt_opts.leak_exitcode != 0)
        hwt_leak_exit();
}

EXPORT void hwtag_leak_ignore(const void *ptr)
{
    hwt_init_ensure();
    hwt_leak_ignore(ptr);
}

EXPORT void hwtag_leak_disable(void)
{
    hwt_leak_disable();
}

EXPORT void hwtag_leak_enable(void)
{
    hwt_leak_enable();
}

EXPORT void hwtag_leak_register_root(const void *begin, size_t size)
{
    hwt_leak_register_root(begin, size);
}

EXPORT void hwtag_leak_unregister_root(const void *begin, size_t size)
{
    hwt_leak_unregister_root(begin, size);
}

/* LeakSanitizer's names (compiler-rt's lsan_interface.h), with its semantics. */
void __lsan_ignore_object(const void *p);
void __lsan_disable(void);
void __lsan_enable(void);
void __lsan_register_root_region(const void *p, size_t size);
void __lsan_unregister_root_region(const void *p, size_t size);
void __lsan_do_leak_check(void);
int __lsan_do_recoverable_leak_check(void);

EXPORT void __lsan_ignore_object(const void *p)
{
    hwtag_leak_ignore(p);
}

EXPORT void __lsan_disable(void)
{
    hwt_leak_disable();
}

EXPORT void __lsan_enable(void)
{
    hwt_leak_enable();
}

EXPORT void __lsan_register_root_region(const void *p, size_t size)
{
    hwt_leak_register_root(p, size);
}

EXPORT void __lsan_unregister_root_region(const void *p, size_t size)
{
    hwt_leak_unregister_root(p, size);
}

/* Checks once (later calls do nothing) and ends the process with HWTAG_LEAK_EXITCODE when
 * something leaked; the check at exit does not run again. */
EXPORT void __lsan_do_leak_check(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    hwt_init_ensure();
    hwt_leak_at_exit_done();
    if (hwt_leak_check() == HWT_LEAK_FOUND && hwt_opts.leak_exitcode != 0)
        hwt_leak_exit();
}

EXPORT int __lsan_do_recoverable_leak_check(void)
{
    hwt_init_ensure();
    return hwt_leak_check() == HWT_LEAK_FOUND;
}
