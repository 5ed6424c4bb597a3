/* SPDX-License-Identifier: MIT */
/* The leak check: a conservative, tag-aware mark from the roots at exit or on demand, and
 * the program's controls over it (ignored objects, root regions, disabled regions). */
#ifndef HWT_LEAK_H
#define HWT_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hwt_leak_outcome {
    HWT_LEAK_NONE,    /* checked: nothing leaked */
    HWT_LEAK_FOUND,   /* checked: leaks reported */
    HWT_LEAK_SKIPPED, /* not checked (a thread did not stop, no memory, one already runs) */
};

/* Runs a check now and prints its report (nothing when nothing leaked). Not signal-safe;
 * every other thread is stopped while it marks. */
enum hwt_leak_outcome hwt_leak_check(void);

/* The check at exit (HWTAG_DETECT_LEAKS=on): after the program's atexit handlers and
 * destructors; with leaks it ends the process with HWTAG_LEAK_EXITCODE. */
void hwt_leak_at_exit(void);
/* The check at exit will not run (__lsan_do_leak_check ran one). */
void hwt_leak_at_exit_done(void);
/* Checks now; when something leaked, flushes stdio and ends the process with
 * HWTAG_LEAK_EXITCODE (unless it is 0). */
void hwt_leak_check_fatal(void);

/* The object ptr points to is never reported, and what it points to is reachable. */
bool hwt_leak_ignore(const void *ptr);
/* Allocations of the calling thread between these are never reported (they nest). */
void hwt_leak_disable(void);
void hwt_leak_enable(void);
/* Whether the calling thread is inside hwt_leak_disable. */
bool hwt_leak_disabled(void);
/* [begin, begin + size) is scanned as a root (registered regions may overlap). */
void hwt_leak_register_root(const void *begin, size_t size);
/* Returns false when no such region was registered. */
bool hwt_leak_unregister_root(const void *begin, size_t size);

#endif
