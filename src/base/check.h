/* SPDX-License-Identifier: MIT */
/* Internal consistency checks in three tiers (HWT_CHECK always, HWT_DCHECK at
 * HWTAG_DEBUG >= 1, heap walks at HWTAG_DEBUG >= 2) and branch hints. Must not pull in
 * anything that allocates or any libc malloc name. */
#ifndef HWT_CHECK_H
#define HWT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef HWTAG_DEBUG
#define HWTAG_DEBUG 0
#endif

/* Writes "hwtag: internal error: <msg> (<file>:<line>)" and traps. signal-safe */
__attribute__((noreturn, cold)) void hwt_check_fail(const char *msg, const char *file, int line);

#define HWT_CHECK(cond)                                                                            \
    do {                                                                                           \
        if (unlikely(!(cond)))                                                                     \
            hwt_check_fail(#cond, __FILE__, __LINE__);                                             \
    } while (0)

#if HWTAG_DEBUG >= 1
#define HWT_DCHECK(cond) HWT_CHECK(cond)
#else
#define HWT_DCHECK(cond) ((void)sizeof(cond))
#endif

/* Whether the expensive heap walks of HWTAG_DEBUG=2 run. */
#define HWT_HEAP_WALKS (HWTAG_DEBUG >= 2)

#endif
