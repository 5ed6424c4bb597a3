/* SPDX-License-Identifier: MIT */
/* Per-thread event counters, summed on demand for hwtag_get_stats(). */
#ifndef HWT_STATS_H
#define HWT_STATS_H

#include <stdint.h>

#include "hwtag.h"

/* Totals over all threads and the back ends' gauges. */
void hwt_stats_collect(struct hwtag_stats *out);
void hwt_stats_print(int fd);

#endif
