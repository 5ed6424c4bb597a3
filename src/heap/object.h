/* SPDX-License-Identifier: MIT */
/* The heap's description of one object, shared by both back ends (slab.c, large.c) and
 * read by the report side; and the verdict on a pointer handed to free. Types only. */
#ifndef HWT_OBJECT_H
#define HWT_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hwt_object {
    uintptr_t start;      /* untagged address of the object (slot or mapping start) */
    size_t size;          /* usable (tagged) size: class size for slots */
    size_t requested;     /* what the program asked for (valid for live and freed) */
    size_t class_size;    /* slot size for small objects, 0 for large ones */
    size_t region_size;   /* slot size, or the whole mapping for a large object */
    unsigned tag;         /* live: its tag; freed: the tag it had while live */
    bool large;           /* page-backed (mmap) object */
    bool live;            /* allocated now */
    bool ever_used;       /* has been allocated at least once */
    bool sampled;         /* tagged (false: left untagged by HWTAG_SAMPLE) */
    uint32_t alloc_stack; /* stack depot ids, 0 = none */
    uint32_t free_stack;
};

/* Result of checking a pointer passed to free/realloc. */
enum hwt_free_check { HWT_FREE_OK, HWT_FREE_NOT_OURS, HWT_FREE_INVALID, HWT_FREE_DOUBLE };

#endif
