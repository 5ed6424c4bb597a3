/* SPDX-License-Identifier: MIT */
/* libhwtag public API: version, statistics, the report callback and pool tagging. The malloc family
 * itself is the standard one (stdlib.h, malloc.h). */
#ifndef HWTAG_H
#define HWTAG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWTAG_VERSION_MAJOR 0
#define HWTAG_VERSION_MINOR 1
#define HWTAG_VERSION_PATCH 0

/* "0.1.0" */
const char *hwtag_version(void);

enum hwtag_bug_type {
    HWTAG_BUG_INVALID_ACCESS = 0,
    HWTAG_BUG_SLAB_OUT_OF_BOUNDS,
    HWTAG_BUG_SLAB_USE_AFTER_FREE,
    HWTAG_BUG_OUT_OF_BOUNDS,
    HWTAG_BUG_USE_AFTER_FREE,
    HWTAG_BUG_DOUBLE_FREE,
    HWTAG_BUG_INVALID_FREE,
};

enum hwtag_access_type { HWTAG_ACCESS_READ, HWTAG_ACCESS_WRITE, HWTAG_ACCESS_FREE };

/* What a report says, for test harnesses and embedders. Valid only during the callback. */
struct hwtag_report_info {
    enum hwtag_bug_type bug_type;
    const char *bug_name; /* "slab-out-of-bounds", ... */
    enum hwtag_access_type access;
    uintptr_t addr;     /* faulting address with its pointer tag */
    size_t access_size; /* 0 when the instruction could not be decoded */
    unsigned pointer_tag;
    unsigned memory_tag;
    int asynchronous;        /* SEGV_MTEAERR: no address or object known */
    int sampled_out;         /* the object involved was left untagged by sampling */
    uintptr_t object_start;  /* 0 when no object is known */
    size_t object_size;      /* usable size */
    size_t object_requested; /* requested size */
    size_t object_class;     /* size class, 0 for large objects */
    long distance;    /* bytes from the region [start, start+requested): <0 left, >=0 right, inside
                         when within */
    const char *text; /* the full report text */
    size_t text_len;
};

/* Called after the report text is written, in the faulting thread, possibly inside the
 * SIGSEGV handler: the callback must be async-signal-safe. NULL removes it. */
typedef void (*hwtag_report_callback)(const struct hwtag_report_info *info, void *arg);
void hwtag_set_report_callback(hwtag_report_callback cb, void *arg);

/* Pool allocators (arenas, free lists, object caches) carving objects out of one heap
 * object. The rules (README, API; docs/design.md, section 4):
 * - block is a live heap object as malloc & co returned it (its tag included); offset and
 *   size are multiples of HWTAG_GRANULE, size > 0, offset + size <= the size requested
 *   for block. Otherwise hwtag_pool_alloc returns NULL with errno EINVAL.
 * - hwtag_pool_alloc gives [block+offset, +size) a fresh tag, never the one of the
 *   granule before or after it, the range's previous one, block's own, 0 or 15, and
 *   returns the pointer with that tag: overflows into a neighbouring pool object or into
 *   the rest of block fault, and the report names the pool object's bounds.
 * - hwtag_pool_free(ptr, size) takes a pointer hwtag_pool_alloc returned and its size,
 *   and retags the range with the free tag 15: a later access through ptr faults as a
 *   use after free. A range that is already freed is reported as a double-free, one that
 *   is not a pool object of a live heap object as an invalid-free; a misaligned or empty
 *   one sets errno to EINVAL. Nothing is changed in those cases.
 * - A freed pool range carries tag 15, which no pointer has: the pool must keep its own
 *   bookkeeping (free lists) outside the ranges it frees, or write it before the free.
 * - Freeing (or reallocating) block itself drops its pool records and retags the whole
 *   object free, as any free does; pool pointers into it then fault as use after free.
 * - Without MTE, or in an object left untagged by sampling, the calls check their
 *   arguments and return block + offset untagged. */
#define HWTAG_GRANULE 16
void *hwtag_pool_alloc(void *block, size_t offset, size_t size);
void hwtag_pool_free(void *ptr, size_t size);

#define HWTAG_MAX_ORDER 32

struct hwtag_stats {
    uint64_t small_allocs, small_frees;               /* slab objects */
    uint64_t large_allocs, large_frees;               /* page-backed objects */
    uint64_t large_tagged, large_skipped;             /* sampling decisions */
    uint64_t large_by_order[HWTAG_MAX_ORDER];         /* large allocations by page order */
    uint64_t large_skipped_by_order[HWTAG_MAX_ORDER]; /* of those, left untagged */
    uint64_t heap_mapped_bytes;                       /* spans + large mappings, from the OS */
    uint64_t heap_live_bytes;                         /* usable bytes of live objects */
    uint64_t meta_bytes;                              /* out-of-band metadata mapped */
    uint64_t depot_stacks, depot_bytes;               /* stack depot */
    uint64_t reports;                                 /* reports printed */
    int mte_active;                                   /* tag checks are on */
};

/* Fills *out (size = sizeof(struct hwtag_stats), for compatibility). Counters are
 * approximate while other threads allocate. Returns 0, or -1 when size is too small. */
int hwtag_get_stats(struct hwtag_stats *out, size_t size);

/* Writes a human-readable statistics summary to fd. */
void hwtag_print_stats(int fd);

/* Leak detection (the check itself runs at exit with HWTAG_DETECT_LEAKS=on, or now):
 * - hwtag_leak_check() checks now and prints a report when something leaked; returns 1
 *   when it did, 0 when nothing leaked, -1 when it could not check (a thread that does
 *   not stop, no memory). hwtag_leak_check_fatal() ends the process with
 *   HWTAG_LEAK_EXITCODE when leaks are found, like the check at exit.
 * - hwtag_leak_ignore(ptr): the object at ptr (its start) is never reported, and what it
 *   points to is reachable.
 * - hwtag_leak_disable() / hwtag_leak_enable(): objects the calling thread allocates in
 *   between are never reported; the calls nest.
 * - hwtag_leak_register_root(begin, size) / hwtag_leak_unregister_root(begin, size): the
 *   region is scanned for pointers like a global. LeakSanitizer's interface names
 *   (__lsan_ignore_object, __lsan_disable, ...) are exported too. */
int hwtag_leak_check(void);
void hwtag_leak_check_fatal(void);
void hwtag_leak_ignore(const void *ptr);
void hwtag_leak_disable(void);
void hwtag_leak_enable(void);
void hwtag_leak_register_root(const void *begin, size_t size);
void hwtag_leak_unregister_root(const void *begin, size_t size);

#ifdef __cplusplus
}
#endif

#endif
