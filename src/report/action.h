/* SPDX-License-Identifier: MIT */
/* HWTAG_FAULT: what happens after a report (panic, panic_on_write, report), whether a
 * report is printed at all (each distinct bug once, at most HWTAG_MAX_REPORTS), and the
 * count of printed and suppressed reports at exit. */
#ifndef HWT_ACTION_H
#define HWT_ACTION_H

#include <stdbool.h>
#include <stdint.h>

#include "report.h"

/* The dedup key of a bug: its type and its pc (the faulting instruction, or for a bad free
 * the caller of free). Never 0. signal-safe */
uint64_t hwt_action_key(enum hwtag_bug_type bug, uintptr_t pc);

/* Returns true when this report is to be printed: always when the process ends after it;
 * when it goes on, only the first time its key is seen and while fewer than
 * HWTAG_MAX_REPORTS were printed. Counts what it suppresses. Call with the report lock
 * held (one report at a time). signal-safe */
bool hwt_action_should_print(const struct hwt_report *r);

/* Applies HWTAG_FAULT to a report, printed or not: returns only when the program may go
 * on. signal-safe */
void hwt_action_after_report(const struct hwt_report *r);

/* Writes "hwtag: N reports printed, M suppressed as duplicates" to the log when N+M > 0
 * (M includes the distinct bugs over the cap, which get a line of their own before it).
 * Runs at exit by itself. signal-safe */
void hwt_action_summary(void);

/* fork child: the counts start again at 0, the seen bugs stay seen. */
void hwt_action_after_fork_child(void);

/* Ends the process like abort(): SIGABRT with its default action, whatever the program
 * installed, so the status shows a signal and a core can be written. signal-safe */
__attribute__((noreturn)) void hwt_action_panic(void);

#endif
