/* SPDX-License-Identifier: MIT */
/* Shared constants, checks and small helpers of the allocator core.
 * Must not pull in anything that allocates or any libc malloc name. */
#ifndef HWT_CHECK_H
#define HWT_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define HWT_GRANULE 16u /* bytes covered by one MTE tag */
#define HWT_GRANULE_SHIFT 4u
#define HWT_TAG_BITS 4u
#define HWT_TAG_COUNT 16u
#define HWT_TAG_UNTAGGED 0u /* memory left untagged: sampled-out or native */
#define HWT_TAG_FREE 15u    /* freed slots and guards; no live pointer has it */
/* irg may pick from tags 1..14: 0 and HWT_TAG_FREE are reserved. */
#define HWT_TAG_INCLUDE_MASK 0x7ffeu

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

static inline uintptr_t hwt_align_up(uintptr_t v, uintptr_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static inline uintptr_t hwt_align_down(uintptr_t v, uintptr_t a)
{
    return v & ~(a - 1);
}

#endif
