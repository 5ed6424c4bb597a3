/* SPDX-License-Identifier: MIT */
/* What the allocator knows about any address, for reports: read-only, lock-free
 * lookups over the out-of-band metadata of small slots and large mappings. */
#ifndef HWT_HEAP_H
#define HWT_HEAP_H

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

/* Describes the object whose slot or mapping (including a large object's guard tail)
 * holds addr. Returns false when addr is not in the heap. signal-safe (no locks). */
bool hwt_heap_lookup(uintptr_t addr, struct hwt_object *out);

/* The slot delta slots away from the one holding addr, within the same span
 * (delta may be negative). Returns false past the span's ends or for large objects.
 * signal-safe. */
bool hwt_heap_lookup_neighbor(uintptr_t addr, long delta, struct hwt_object *out);

#endif
