/* SPDX-License-Identifier: MIT */
/* A tag-check fault inside one of the C library's string and memory routines, called
 * through libhwtag's checked version (src/libcall.c): the access is the whole call's. */
#ifndef HWT_CALL_ACCESS_H
#define HWT_CALL_ACCESS_H

#include <stdbool.h>

#include "libc.h"
#include "report.h"

/* When the recorded call is the one r's stack is in (its return address among the
 * innermost frames of r->stack) and r's fault (r->addr, r->access from the instruction)
 * lies in one of the ranges it reads or writes, makes r's access that range: r->call_name,
 * r->call_addr and r->call_size for the access line, r->access its direction, and r->addr the
 * range's first bad byte (the end of the object the range starts in, or the first granule of
 * another tag), with r->pointer_tag and r->memory_tag. Returns whether it did. Runs in
 * the fault handler with tag checks off (TCO). signal-safe */
bool hwt_call_access_describe(struct hwt_report *r, const struct hwt_libc_call *call);

#endif
