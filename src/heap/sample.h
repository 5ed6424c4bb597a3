/* SPDX-License-Identifier: MIT */
/* Which large allocations get tagged: 1 of every HWTAG_SAMPLE allocations of order >=
 * HWTAG_SAMPLE_ORDER, counted per thread (the kernel's per-CPU skip counter). */
#ifndef HWT_SAMPLE_H
#define HWT_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

/* Page order of a large allocation of size bytes: log2 of its page count, rounded up. */
unsigned hwt_sample_order(size_t size);

/* The decision for one allocation of the given order; made once, remembered by the caller. */
bool hwt_sample_should_tag(unsigned order);

/* Resets the calling thread's countdown (tests; a new thread starts at the reset state). */
void hwt_sample_reset_thread(void);

#endif
