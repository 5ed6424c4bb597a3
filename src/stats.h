/* SPDX-License-Identifier: MIT */
/* Per-thread event counters, summed on demand for hwtag_get_stats(). */
#ifndef HWT_STATS_H
#define HWT_STATS_H

#include <stdint.h>

#include "hwtag.h"

/* Totals over all threads and the back ends' gauges. */
void hwt_stats_collect(struct hwtag_stats *out);
void hwt_stats_print(int fd);
/* HWTAG_PRINT_STATS=on: one line naming the task, then hwt_stats_print, to the report log
 * (HWTAG_LOG_PATH or stderr). Never allocates. */
void hwt_stats_print_at_exit(void);

#endif
