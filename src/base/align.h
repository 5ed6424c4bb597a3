/* SPDX-License-Identifier: MIT */
/* Power-of-two rounding of addresses and sizes. */
#ifndef HWT_ALIGN_H
#define HWT_ALIGN_H

#include <stdint.h>

static inline uintptr_t hwt_align_up(uintptr_t v, uintptr_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static inline uintptr_t hwt_align_down(uintptr_t v, uintptr_t a)
{
    return v & ~(a - 1);
}

#endif
