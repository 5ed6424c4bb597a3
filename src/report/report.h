/* SPDX-License-Identifier: MIT */
/* KASAN-format report text (DESIGN.md, Report) from a filled struct hwt_report into a
 * caller's buffer. Pure formatting: no lookups of its own beyond symbolize/depot, no
 * malloc, no stdio. */
#ifndef HWT_REPORT_H
#define HWT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/hwtag.h"
#include "lookup.h"
#include "stackdepot.h"

#define HWT_REPORT_DUMP_ROWS 5

struct hwt_report {
    /* filled in by the detector (fault.c or the free path) */
    enum hwtag_bug_type bug;
    enum hwtag_access_type access;
    bool asynchronous;
    uintptr_t addr;     /* tagged address */
    size_t access_size; /* 0 = unknown */
    unsigned pointer_tag, memory_tag;
    int tid;
    const char *comm;
    uintptr_t stack[HWT_STACK_MAX_FRAMES]; /* access stack, stack[0] = faulting pc */
    unsigned stack_len;
    /* filled in from the heap metadata */
    bool have_object;
    struct hwt_object object;
    /* the pointer's tag is neither the object's nor a neighbour's (invalid-access): the
     * report says the pointer may be stale or corrupt and the stacks are the object's now */
    bool foreign_tag;
    /* registers, when there is a signal context */
    bool have_regs;
    uint64_t regs[31], sp, pc, pstate;
};

/* Formats r into buf; returns the length (truncated to cap-1). signal-safe */
size_t hwt_report_format(const struct hwt_report *r, char *buf, size_t cap);

/* "slab-out-of-bounds", ...; "unknown-crash" for a value outside the enum. signal-safe */
const char *hwt_bug_name(enum hwtag_bug_type bug);

/* Byte distance of addr (tag ignored) from obj's requested region [start, start+requested):
 * negative to the left of it, addr - end to the right, addr - start inside (the caller
 * tells right from inside by comparing addr with the region). signal-safe */
long hwt_report_distance(uintptr_t addr, const struct hwt_object *obj);

#endif
