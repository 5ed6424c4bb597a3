/* SPDX-License-Identifier: MIT */
/* The only definitions of the malloc family and the hwtag_* API. Each glibc-compatible
 * choice for bad requests is noted where it is made. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "arch/mte.h"
#include "callback.h"
#include "hwtag.h"
#include "init.h"
#include "os.h"
#include "stats.h"

#define EXPORT __attribute__((visibility("default")))

/* Requests this large can never succeed; fail before any arithmetic can overflow. */
#define MAX_REQUEST (SIZE_MAX / 2)

EXPORT void *malloc(size_t size)
{
    if (unlikely(size > MAX_REQUEST)) {
        errno = ENOMEM; /* glibc: malloc(SIZE_MAX) -> NULL, ENOMEM */
        return NULL;
    }
    void *p = hwt_alloc(size, HWT_GRANULE, false);
    if (unlikely(p == NULL))
        errno = ENOMEM;
    return p;
}

EXPORT void free(void *ptr)
{
    hwt_alloc_free(ptr);
    /* not a tail call: hwt_alloc_free's stack capture skips exactly this frame */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

EXPORT void *calloc(size_t n, size_t size)
{
    size_t total;
    if (unlikely(__builtin_mul_overflow(n, size, &total) || total > MAX_REQUEST)) {
        errno = ENOMEM; /* glibc: overflow -> NULL, ENOMEM */
        return NULL;
    }
    void *p = hwt_alloc(total, HWT_GRANULE, true);
    if (unlikely(p == NULL))
        errno = ENOMEM;
    return p;
}

EXPORT void *realloc(void *ptr, size_t size)
{
    if (ptr == NULL)
        return malloc(size);
    if (size == 0) {
        free(ptr); /* glibc: realloc(p, 0) frees p and returns NULL */
        return NULL;
    }
    if (unlikely(size > MAX_REQUEST)) {
        errno = ENOMEM; /* the old block is left untouched */
        return NULL;
    }
    bool bad;
    void *p = hwt_alloc_realloc(ptr, size, &bad);
    if (unlikely(p == NULL))
        errno = bad ? EINVAL : ENOMEM;
    return p;
}

EXPORT void *reallocarray(void *ptr, size_t n, size_t size)
{
    size_t total;
    if (unlikely(__builtin_mul_overflow(n, size, &total))) {
        errno = ENOMEM; /* glibc: overflow -> NULL, ENOMEM, ptr untouched */
        return NULL;
    }
    return realloc(ptr, total);
}

static bool valid_alignment(size_t align)
{
    return align != 0 && (align & (align - 1)) == 0;
}

static void *aligned(size_t align, size_t size)
{
    if (unlikely(size > MAX_REQUEST || align > MAX_REQUEST)) {
        errno = ENOMEM;
        return NULL;
    }
    if (align < HWT_GRANULE)
        align = HWT_GRANULE;
    void *p = hwt_alloc(size, align, false);
    if (unlikely(p == NULL))
        errno = ENOMEM;
    return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    /* POSIX: a power of two multiple of sizeof(void *), else EINVAL; *out untouched */
    if (!valid_alignment(align) || align % sizeof(void *) != 0)
        return EINVAL;
    int saved = errno;
    void *p = aligned(align, size);
    if (p == NULL) {
        errno = saved;
        return ENOMEM;
    }
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    /* glibc 2.36 accepts any power of two; others get EINVAL */
    if (!valid_alignment(align)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, size);
}

EXPORT void *memalign(size_t align, size_t size)
{
    if (!valid_alignment(align)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, size);
}

EXPORT void *valloc(size_t size)
{
    hwt_init_ensure();
    return aligned(hwt_os_page_size, size);
}

EXPORT void *pvalloc(size_t size)
{
    hwt_init_ensure();
    if (size > MAX_REQUEST) {
        errno = ENOMEM;
        return NULL;
    }
    /* glibc: rounds up to whole pages; pvalloc(0) gives one page */
    size_t rounded = hwt_align_up(size == 0 ? 1 : size, hwt_os_page_size);
    return aligned(hwt_os_page_size, rounded);
}

EXPORT size_t malloc_usable_size(void *ptr)
{
    return hwt_alloc_usable(ptr);
}

EXPORT const char *hwtag_version(void)
{
    return HWTAG_VERSION_STRING; /* project(VERSION) in CMakeLists.txt, the one place */
}

EXPORT int hwtag_get_stats(struct hwtag_stats *out, size_t size)
{
    if (out == NULL || size < sizeof(*out))
        return -1;
    hwt_init_ensure();
    hwt_stats_collect(out);
    return 0;
}

EXPORT void hwtag_print_stats(int fd)
{
    hwt_init_ensure();
    hwt_stats_print(fd);
}

EXPORT void hwtag_set_report_callback(hwtag_report_callback cb, void *arg)
{
    hwt_callback_set(cb, arg);
}
