/* SPDX-License-Identifier: MIT */
/* HWTAG_FAULT: what happens after a report (panic, panic_on_write, report), and whether a
 * report is printed at all. */
#ifndef HWT_MODE_H
#define HWT_MODE_H

#include <stdbool.h>

#include "report.h"

/* Returns true when this report is to be printed (HWTAG_FAULT=report prints only one).
 * signal-safe */
bool hwt_mode_should_print(const struct hwt_report *r);

/* Applies HWTAG_FAULT to a report, printed or not: returns only when the program may go
 * on. signal-safe */
void hwt_mode_after_report(const struct hwt_report *r);

/* Ends the process like abort(): SIGABRT with its default action, whatever the program
 * installed, so the status shows a signal and a core can be written. signal-safe */
__attribute__((noreturn)) void hwt_mode_panic(void);

#endif
