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
    hwt_leak_check_fatal();
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

/* LeakSanitizer's names (compiler-rt's lsan_interface.h), with its semantics: the same
 * functions where they mean the same. */
#define LSAN_NAME(target) EXPORT __attribute__((alias(#target)))
LSAN_NAME(hwtag_leak_ignore) void __lsan_ignore_object(const void *p);
LSAN_NAME(hwtag_leak_disable) void __lsan_disable(void);
LSAN_NAME(hwtag_leak_enable) void __lsan_enable(void);
LSAN_NAME(hwtag_leak_register_root) void __lsan_register_root_region(const void *p, size_t size);
LSAN_NAME(hwtag_leak_unregister_root)
void __lsan_unregister_root_region(const void *p, size_t size);
void __lsan_do_leak_check(void);
int __lsan_do_recoverable_leak_check(void);

/* Checks once (later calls do nothing) and ends the process with HWTAG_LEAK_EXITCODE when
 * something leaked; the check at exit does not run again. */
EXPORT void __lsan_do_leak_check(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    hwt_init_ensure();
    hwt_leak_at_exit_done();
    hwt_leak_check_fatal();
}

EXPORT int __lsan_do_recoverable_leak_check(void)
{
    hwt_init_ensure();
    return hwt_leak_check() == HWT_LEAK_FOUND;
}
