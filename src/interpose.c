/* SPDX-License-Identifier: MIT */
/* The only definitions of the malloc family, sigaction and the hwtag_* API (glibc's
 * statistics calls are introspect.c's). Each glibc-compatible choice for bad requests is
 * noted where it is made; the work is the front end's (alloc_fast.h inline, then alloc.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "alloc_fast.h"
#include "alloc_stack.h"
#include "callback.h"
#include "fault.h"
#include "options.h"
#include "pool.h"
#include "stackdepot.h"
#include "unwind.h"
#include "arch/mte.h"
#include "chain.h"
#include "hwtag.h"
#include "entry.h"
#include "init.h"
#include "os.h"
#include "stats.h"
#include "task.h"
#include "thread.h"
#include "trim.h"
#include "libc_next.h"

/* malloc and free for the program's call at c. Entry points that malloc or free on the
 * program's behalf (realloc, the sized frees) inline them with their own caller, so that
 * no frame of the library's is in the stack they record, whatever the compiler makes of a
 * call between two entry points. */
static inline __attribute__((always_inline)) void *malloc_from(size_t size, struct hwt_caller c)
{
    void *fast = hwt_alloc_fast_malloc(size, false, c, 0);
    if (likely(fast != NULL))
        return fast;
    return hwt_alloc_malloc(size, false, c); /* glibc: malloc(SIZE_MAX) -> NULL, ENOMEM */
}

static inline __attribute__((always_inline)) void free_from(void *ptr, struct hwt_caller c)
{
    if (likely(hwt_alloc_fast_free(ptr, c, 0)))
        return;
    hwt_alloc_free(ptr, c); /* keeps errno, as POSIX.1-2024 asks of free */
}

/* Frameless where arch/caller.h allows: the caller is read from the registers only on the
 * ways that use it (a stack walk, the general path), not on the fast path without stacks. */
#if HWT_ARCH_HAVE_FRAMELESS
#define LEAF_REGS HWT_ALLOC_CALLER_REGS
#else
#define LEAF_REGS 0u
#endif

LEAF_ENTRY void *malloc(size_t size)
{
    struct hwt_caller none = {0, 0};
    void *fast = hwt_alloc_fast_malloc(size, false, LEAF_REGS ? none : LEAF_CALLER(), LEAF_REGS);
    if (likely(fast != NULL))
        return fast;
    return hwt_alloc_malloc(size, false, LEAF_CALLER_HERE()); /* glibc: malloc(SIZE_MAX) -> NULL */
}

LEAF_ENTRY void free(void *ptr)
{
    struct hwt_caller none = {0, 0};
    if (likely(hwt_alloc_fast_free(ptr, LEAF_REGS ? none : LEAF_CALLER(), LEAF_REGS)))
        return;
    hwt_alloc_free(ptr, LEAF_CALLER_HERE()); /* keeps errno, as POSIX.1-2024 asks of free */
}

/* Not frameless: its inlined fast path of the allocator alone zeroes with a call. */
EXPORT void *calloc(size_t n, size_t size)
{
    struct hwt_caller c = ENTRY_CALLER();
    /* the product's high half tested itself: GCC's __builtin_mul_overflow left a dead
     * conditional set of the flag behind on the way on, two instructions a calloc */
    unsigned __int128 product = (unsigned __int128)n * size;
    if (unlikely((uint64_t)(product >> 64) != 0)) {
        errno = ENOMEM; /* glibc: overflow -> NULL, ENOMEM */
        return NULL;
    }
    size_t total = (size_t)product;
    void *fast = hwt_alloc_fast_malloc(total, true, c, 0);
    if (likely(fast != NULL))
        return fast;
    return hwt_alloc_malloc(total, true, c);
}

static inline __attribute__((always_inline)) void *realloc_from(void *ptr, size_t size,
                                                                struct hwt_caller c)
{
    if (ptr == NULL)
        return malloc_from(size, c);
    if (size == 0) {
        free_from(ptr, c); /* glibc: realloc(p, 0) frees p and returns NULL */
        return NULL;
    }
    /* too large: ENOMEM, the old block untouched; a bad ptr: reported, then EINVAL */
    return hwt_alloc_realloc(ptr, size, c);
}

EXPORT void *realloc(void *ptr, size_t size)
{
    return realloc_from(ptr, size, ENTRY_CALLER());
}

EXPORT void *reallocarray(void *ptr, size_t n, size_t size)
{
    size_t total;
    if (unlikely(__builtin_mul_overflow(n, size, &total))) {
        errno = ENOMEM; /* glibc: overflow -> NULL, ENOMEM, ptr untouched */
        return NULL;
    }
    return realloc_from(ptr, total, ENTRY_CALLER());
}

static bool valid_alignment(size_t align)
{
    return align != 0 && (align & (align - 1)) == 0;
}

/* An object aligned to align, a power of two: up to 16, every object is, and malloc's way
 * (its fast path included) serves it. */
static inline __attribute__((always_inline)) void *aligned_to(size_t align, size_t size,
                                                              struct hwt_caller c)
{
    return align <= HWT_GRANULE ? malloc_from(size, c) : hwt_alloc(size, align, false, c);
}

/* glibc 2.36's memalign and aligned_alloc: an alignment that is not a power of two is
 * rounded up to the next one; beyond the largest power of two, EINVAL. */
static inline __attribute__((always_inline)) void *aligned_any(size_t align, size_t size,
                                                               struct hwt_caller c)
{
    if (unlikely(align > HWT_ALLOC_MAX_REQUEST + 1)) {
        errno = EINVAL;
        return NULL;
    }
    if (!valid_alignment(align))
        align = align <= HWT_GRANULE ? HWT_GRANULE : (size_t)2 << (63 - __builtin_clzll(align));
    return aligned_to(align, size, c);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    /* POSIX: a power of two multiple of sizeof(void *), else EINVAL; *out untouched */
    if (!valid_alignment(align) || align % sizeof(void *) != 0)
        return EINVAL;
    /* glibc sets errno to ENOMEM too on failure; on success it is left alone */
    void *p = aligned_to(align, size, ENTRY_CALLER());
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
    /* glibc 2.36 is memalign here: C11's size rule (a multiple of align) is not enforced */
    return aligned_any(align, size, ENTRY_CALLER());
}

EXPORT void *memalign(size_t align, size_t size)
{
    return aligned_any(align, size, ENTRY_CALLER());
}

EXPORT void *valloc(size_t size)
{
    return hwt_alloc(size, hwt_alloc_page_size(), false, ENTRY_CALLER());
}

EXPORT void *pvalloc(size_t size)
{
    size_t page = hwt_alloc_page_size();
    if (size > HWT_ALLOC_MAX_REQUEST) {
        errno = ENOMEM;
        return NULL;
    }
    /* glibc: rounds up to whole pages; pvalloc(0) gives one page */
    return hwt_alloc(hwt_align_up(size == 0 ? 1 : size, page), page, false, ENTRY_CALLER());
}

EXPORT size_t malloc_usable_size(void *ptr)
{
    int saved = errno;
    size_t n = hwt_alloc_usable(ptr);
    errno = saved;
    return n;
}

/* C23 declares these in <stdlib.h>; glibc 2.36's headers predate them. */
void free_sized(void *ptr, size_t size);
void free_aligned_sized(void *ptr, size_t align, size_t size);

/* C23's sized frees: the size is a promise the program makes; libhwtag frees as free()
 * does (a newer libc would otherwise receive our pointers). */
EXPORT void free_sized(void *ptr, size_t size)
{
    (void)size;
    free_from(ptr, ENTRY_CALLER());
}

EXPORT void free_aligned_sized(void *ptr, size_t align, size_t size)
{
    (void)align;
    (void)size;
    free_from(ptr, ENTRY_CALLER());
}

/* Gives every free page back to the OS: empty spans and the pages of cached large
 * mappings. Returns 1 when memory was released, as glibc does. pad is not needed: nothing
 * here sits at a heap top. */
EXPORT int malloc_trim(size_t pad)
{
    (void)pad;
    int saved = errno;
    hwt_init_ensure();
    int released = hwt_trim() > 0;
    errno = saved;
    return released;
}

/* The tuning knobs whose meaning libhwtag's own policy already covers are accepted and
 * ignored (1); the others (M_CHECK_ACTION, M_PERTURB, unknown ones) are refused (0). */
EXPORT int mallopt(int param, int value)
{
    (void)value;
    switch (param) {
    case M_TRIM_THRESHOLD:
    case M_TOP_PAD:
    case M_MMAP_THRESHOLD:
    case M_MMAP_MAX:
    case M_ARENA_TEST:
    case M_ARENA_MAX:
    case M_MXFAST:
        return 1;
    default:
        return 0;
    }
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

EXPORT void *hwtag_pool_alloc(void *block, size_t offset, size_t size)
{
    hwt_init_ensure();
    mte_tco_set();
    void *p = hwt_pool_alloc(block, offset, size, hwt_alloc_stack_walk(ENTRY_CALLER()));
    mte_tco_clear();
    if (p == NULL)
        errno = EINVAL;
    return p;
}

EXPORT void hwtag_pool_free(void *ptr, size_t size)
{
    hwt_init_ensure();
    mte_tco_set();
    enum hwt_pool_verdict v = hwt_pool_free(ptr, size, hwt_alloc_stack_walk(ENTRY_CALLER()));
    if (v == HWT_POOL_DOUBLE || v == HWT_POOL_INVALID)
        hwt_fault_bad_free(v == HWT_POOL_DOUBLE ? HWTAG_BUG_DOUBLE_FREE : HWTAG_BUG_INVALID_FREE,
                           ptr);
    mte_tco_clear();
    if (v == HWT_POOL_EINVAL)
        errno = EINVAL;
}

/* The program's SIGSEGV handler goes behind ours, so that a tag-check fault is reported in
 * a program that installs one (gawk, through libsigsegv), and every other fault reaches it
 * as if we were not there (chain.c). Other signals, and SIGSEGV before our handler is in
 * place, go straight to libc. */
EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig == SIGSEGV && hwt_chain_app_sigaction(act, old))
        return 0;
    return hwt_os_sigaction(sig, act, old);
}

/* Threads: libc's pthread_create, with the new thread's creator, creation stack and names
 * kept for reports ("Thread T1 "name" created by T0 here:"). An error is libc's. */
EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                          void *arg)
{
    hwt_init_ensure();
    return hwt_thread_create(thread, attr, start, arg, ENTRY_CALLER());
}

/* A thread's name is kept when it is given, so a report names a thread that is gone. */
EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
    static void *libc_setname;
    int (*setname)(pthread_t, const char *) =
        (int (*)(pthread_t, const char *))hwt_libc_next_once(&libc_setname, "pthread_setname_np");
    if (setname == NULL)
        return ENOSYS;
    int rc = setname(thread, name);
    if (rc == 0)
        hwt_task_named((uintptr_t)thread, name);
    return rc;
}
