/* SPDX-License-Identifier: MIT */
/* From a faulting address to what the report says about it: the bug type and the object
 * from the heap's metadata, then the stacks and the tag rows, all before formatting. */
#ifndef HWT_INFER_H
#define HWT_INFER_H

#include "report.h"

/* Fills r->bug, r->have_object, r->object and r->foreign_tag from r->addr and
 * r->pointer_tag (a synchronous tag-check fault). signal-safe (lock-free lookups) */
void hwt_infer_bug(struct hwt_report *r);

/* When r->object is a live heap object and r->pointer_tag belongs to one of its pool
 * objects, makes r->object that pool object (r->in_pool, r->pool_parent). Returns whether
 * it did. signal-safe (a bounded try-lock) */
bool hwt_infer_pool(struct hwt_report *r);

/* Refines a bad free of a live object through a pointer with another tag (filled in by
 * fault.c): invalid-free with the foreign-tag explanation unless the history shows a
 * stale pointer to an object freed before. signal-safe */
void hwt_infer_bad_free(struct hwt_report *r);

/* Fills r's allocation and free stacks from the depot, for faults with an address the tag
 * rows around it, and the threads of the stacks with their creators (task.c). Call once
 * the object is known. signal-safe */
void hwt_infer_gather(struct hwt_report *r);

#endif
