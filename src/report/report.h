/* SPDX-License-Identifier: MIT */
/* KASAN-format report text (docs/design.md, Report) from a filled struct hwt_report into
 * a caller's buffer. Formatting only: everything but symbol names is gathered into the
 * struct beforehand (infer.c); no heap lookups, no malloc, no stdio. */
#ifndef HWT_REPORT_H
#define HWT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "hwtag.h"
#include "object.h"
#include "stackdepot.h"
#include "task.h"

#define HWT_REPORT_DUMP_ROWS 5
#define HWT_REPORT_ROW_GRANULES 16u
#define HWT_REPORT_ROW_BYTES (HWT_REPORT_ROW_GRANULES * HWT_GRANULE)
#define HWT_REPORT_DUMP_GRANULES (HWT_REPORT_DUMP_ROWS * HWT_REPORT_ROW_GRANULES)
#define HWT_REPORT_TAG_UNKNOWN 0xffu /* no heap memory known there: printed "??" */

/* A stack from the depot, copied out for formatting. */
struct hwt_report_stack {
    uint32_t tid;
    unsigned len;  /* 0: not available */
    unsigned more; /* frames past pcs[len - 1] the capture left out (HWTAG_STACK_DEPTH) */
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
};

#define HWT_REPORT_THREADS 8 /* threads described, with their creators */

/* A thread of the report (task.c's registry): T<number>, created by T<parent> there. */
struct hwt_report_thread {
    uint32_t number, parent;
    int tid, tid_before_fork;        /* stacks recorded before a fork carry the second (0: none) */
    char name[HWT_TASK_NAME_CAP];    /* "" when it has no name of its own */
    struct hwt_report_stack created; /* tid: the creator's */
};

struct hwt_report {
    /* filled in by the detector (fault.c: the handler or the free path; context.c) */
    enum hwtag_bug_type bug;
    enum hwtag_access_type access;
    bool asynchronous;
    bool tag_fault;     /* a synchronous tag-check fault: addr's page is tagged memory */
    uintptr_t addr;     /* tagged address */
    size_t access_size; /* 0 = unknown */
    unsigned pointer_tag, memory_tag;
    int tid;
    const char *comm;
    /* the fault is inside a checked C library routine (src/libcall.c): the access is the
     * call's range [call_addr, call_addr + call_size) (tagged), addr its first bad byte */
    const char *call_name;
    uintptr_t call_addr;
    size_t call_size;
    bool symbolize; /* ask the external symbolizer for lines (fault.c: HWTAG_SYMBOLIZE) */
    uintptr_t stack[HWT_STACK_MAX_FRAMES]; /* access stack, stack[0] = faulting pc */
    unsigned stack_len;
    unsigned stack_more; /* frames of the access stack past stack[stack_len - 1] */
    /* filled in by hwt_infer_bug from the heap metadata (or by fault.c for a bad free) */
    bool have_object;
    struct hwt_object object;
    /* the pointer's tag is neither the object's nor a neighbour's (invalid-access): the
     * report says the pointer may be stale or corrupt and the stacks are the object's now */
    bool foreign_tag;
    bool history_off; /* HWTAG_STACKTRACE=off: no history ring to name a stale pointer's object */
    /* a write into the tail past the requested size (heap/tail.h), found by free or
     * realloc of tail_ptr: offsets [tail_first, tail_last] of the object changed */
    bool tail_overwritten, tail_at_realloc;
    uintptr_t tail_ptr;
    unsigned tail_len, tail_first, tail_last;
    uint8_t tail_expected[HWT_GRANULE], tail_found[HWT_GRANULE];
    /* the pointer's tag is a pool object's (hwtag_pool_alloc): object describes that pool
     * object and pool_parent the heap object it lies in */
    bool in_pool;
    struct hwt_object pool_parent;
    /* filled in by hwt_infer_gather: the object's stacks and the tag rows */
    struct hwt_report_stack alloc_stack, free_stack;
    uintptr_t dump_start; /* first granule of the first row */
    uint8_t dump_tags[HWT_REPORT_DUMP_GRANULES];
    /* filled in by hwt_infer_gather: the threads the stacks above ran in, and their
     * creators up to the main thread */
    struct hwt_report_thread threads[HWT_REPORT_THREADS];
    unsigned nthreads;
    /* registers, when there is a signal context */
    bool have_regs;
    uint64_t regs[31], sp, pc, pstate;
};

/* Formats r into buf; returns the length (truncated to cap-1). signal-safe */
size_t hwt_report_format(const struct hwt_report *r, char *buf, size_t cap);

/* "slab-out-of-bounds", ...; "unknown-crash" for a value outside the enum. signal-safe */
const char *hwt_report_bug_name(enum hwtag_bug_type bug);

/* Byte distance of addr (tag ignored) from obj's requested region [start, start+requested):
 * negative to the left of it, addr - end to the right, addr - start inside (the caller
 * tells right from inside by comparing addr with the region). signal-safe */
long hwt_report_distance(uintptr_t addr, const struct hwt_object *obj);

#endif
