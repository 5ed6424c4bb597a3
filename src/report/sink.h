/* SPDX-License-Identifier: MIT */
/* Where report text goes: stderr, or HWTAG_LOG_PATH ("%p" = pid, reopened in a forked
 * child); and the process name reports print. */
#ifndef HWT_SINK_H
#define HWT_SINK_H

#include <stddef.h>
#include <stdint.h>

/* Reads the process name and opens the log. Once at start-up (tests may repeat it). */
void hwt_sink_init(void);

/* Writes a whole report and counts it. signal-safe */
void hwt_sink_report(const char *text, size_t len);
/* Writes a one-line notice to the report log. signal-safe */
void hwt_sink_notice(const char *msg);

/* The log's descriptor, reopened first in a forked child when the path has "%p": for text
 * that is not a report (the statistics at exit). signal-safe */
int hwt_sink_log_fd(void);

/* The process name, "?" before hwt_sink_init. */
const char *hwt_sink_comm(void);
/* Reports printed so far in this process. */
uint64_t hwt_sink_reports_printed(void);

#endif
