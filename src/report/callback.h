/* SPDX-License-Identifier: MIT */
/* The public report callback (hwtag_set_report_callback): stored and called here. */
#ifndef HWT_CALLBACK_H
#define HWT_CALLBACK_H

#include <stddef.h>

#include "hwtag.h"
#include "report.h"

/* Publishes cb with its arg; NULL removes it. Safe against a concurrent report. */
void hwt_callback_set(hwtag_report_callback cb, void *arg);

/* Calls the callback, if any, with r and its printed text. signal-safe (the callback's own
 * code is the application's responsibility) */
void hwt_callback_invoke(const struct hwt_report *r, const char *text, size_t len);

#endif
