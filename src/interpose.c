/* SPDX-License-Identifier: MIT */
/* The only definitions of the malloc family and the hwtag_* API. Each glibc-compatible
 * choice for bad requests is noted where it is made. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "alloc_fast.h"
#include "arch/caller.h"
#include "arch/mte.h"
#include "callback.h"
#include "chain.h"
#include "hwtag.h"
#include "init.h"
#include "fault.h"
#include "options.h"
#include "os.h"
#include "fmt.h"
#include "pool.h"
#include "stackdepot.h"
#include "unwind.h"
#include "stats.h"
#include "trim.h"

#define EXPORT __attribute__((visibility("default")))

/* Frames kept of a pool allocation or free, as of malloc's. */
#define POOL_STACK_FRAMES 12u

/* Where the program called the entry point, from its frame record: the stack it records
 * starts there (alloc.h). For entry points that set up a frame. */
#define ENTRY_CALLER() hwt_caller_of_record((uintptr_t)__builtin_frame_address(0))

/* malloc and free: frameless where the architecture allows (arch/caller.h). Their
 * fast paths are inline and make no call, and every other way out is a tail call, so they
 * set up no frame record and save no register; their caller is read from the registers. */
#define LEAF_ENTRY EXPORT HWT_ARCH_FRAMELESS
#if HWT_ARCH_HAVE_FRAMELESS
static inline __attribute__((always_inline)) struct hwt_caller leaf_caller(void)
{
    struct hwt_caller c;
    hwt_arch_entry_caller(&c.pc, &c.fp);
    return c;
}
#define LEAF_CALLER() leaf_caller()
#else
#define LEAF_CALLER() ENTRY_CALLER()
#endif

LEAF_ENTRY void *malloc(size_t size)
{
    struct hwt_caller c = LEAF_CALLER();
    void *fast = hwt_alloc_fast_malloc(size, false, c);
    if (likely(fast != NULL))
        return fast;
    return hwt_alloc_malloc(size, false, c); /* glibc: malloc(SIZE_MAX) -> NULL, ENOMEM */
}

LEAF_ENTRY void free(void *ptr)
{
    struct hwt_caller c = LEAF_CALLER();
    if (likely(hwt_alloc_fast_free(ptr, c)))
        return;
    hwt_alloc_free(ptr, c); /* keeps errno, as POSIX.1-2024 asks of free */
}

/* Not frameless: its inlined fast path of the allocator alone zeroes with a call. */
EXPORT void *calloc(size_t n, size_t size)
{
    struct hwt_caller c = ENTRY_CALLER();
    size_t total;
    if (unlikely(__builtin_mul_overflow(n, size, &total))) {
        errno = ENOMEM; /* glibc: overflow -> NULL, ENOMEM */
        return NULL;
    }
    void *fast = hwt_alloc_fast_malloc(total, true, c);
    if (likely(fast != NULL))
        return fast;
    return hwt_alloc_malloc(total, true, c);
}

EXPORT void *realloc(void *ptr, size_t size)
{
    if (ptr == NULL)
        return malloc(size);
    if (size == 0) {
        free(ptr); /* glibc: realloc(p, 0) frees p and returns NULL */
        return NULL;
    }
    /* too large: ENOMEM, the old block untouched; a bad ptr: reported, then EINVAL */
    return hwt_alloc_realloc(ptr, size, ENTRY_CALLER());
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
    return hwt_alloc(size, align, false, c);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    /* POSIX: a power of two multiple of sizeof(void *), else EINVAL; *out untouched */
    if (!valid_alignment(align) || align % sizeof(void *) != 0)
        return EINVAL;
    /* glibc sets errno to ENOMEM too on failure; on success it is left alone */
    void *p = hwt_alloc(size, align, false, ENTRY_CALLER());
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
    free(ptr);
}

EXPORT void free_aligned_sized(void *ptr, size_t align, size_t size)
{
    (void)align;
    (void)size;
    free(ptr);
}

/* glibc's introspection calls, answered from libhwtag's own counters, so that calling
 * them never wakes glibc's unused arena. One "arena": the whole heap. */
static void collect(struct hwtag_stats *st)
{
    hwt_init_ensure();
    hwt_stats_collect(st);
}

static size_t clamp_int(uint64_t v)
{
    return v > (uint64_t)INT32_MAX ? (size_t)INT32_MAX : (size_t)v;
}

EXPORT struct mallinfo2 mallinfo2(void)
{
    struct hwtag_stats st;
    struct mallinfo2 mi;
    collect(&st);
    memset(&mi, 0, sizeof(mi));
    uint64_t live =
        st.heap_live_bytes < st.heap_mapped_bytes ? st.heap_live_bytes : st.heap_mapped_bytes;
    mi.arena = st.heap_mapped_bytes;
    mi.ordblks = 1;
    mi.uordblks = live;
    mi.fordblks = st.heap_mapped_bytes - live;
    mi.hblks = st.large_allocs - st.large_frees;
    return mi;
}

/* The int fields of the old mallinfo saturate instead of wrapping (glibc wraps). */
EXPORT struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo mi;
    memset(&mi, 0, sizeof(mi));
    mi.arena = (int)clamp_int(m2.arena);
    mi.ordblks = (int)clamp_int(m2.ordblks);
    mi.uordblks = (int)clamp_int(m2.uordblks);
    mi.fordblks = (int)clamp_int(m2.fordblks);
    mi.hblks = (int)clamp_int(m2.hblks);
    return mi;
}

/* glibc's layout on stderr, so scripts that read it keep working. */
EXPORT void malloc_stats(void)
{
    struct mallinfo2 mi = mallinfo2();
    char mem[512];
    struct hwt_buf b;
    hwt_fmt_init(&b, mem, sizeof(mem));
    hwt_fmt_printf(&b, "Arena 0:\nsystem bytes     = %10zu\nin use bytes     = %10zu\n", mi.arena,
                   mi.uordblks);
    hwt_fmt_printf(&b, "Total (incl. mmap):\nsystem bytes     = %10zu\nin use bytes     = %10zu\n",
                   mi.arena, mi.uordblks);
    hwt_fmt_printf(&b, "max mmap regions = %10zu\nmax mmap bytes   = %10zu\n", mi.hblks, (size_t)0);
    hwt_os_write_all(2, b.data, b.len);
}

/* glibc's XML shape with libhwtag's figures; options must be 0 (glibc: EINVAL). */
EXPORT int malloc_info(int options, FILE *fp)
{
    struct hwtag_stats st;
    char mem[1024];
    struct hwt_buf b;
    if (options != 0) {
        errno = EINVAL;
        return -1;
    }
    collect(&st);
    hwt_fmt_init(&b, mem, sizeof(mem));
    hwt_fmt_printf(&b, "<malloc version=\"hwtag-%s\">\n<heap nr=\"0\">\n", HWTAG_VERSION_STRING);
    hwt_fmt_printf(&b, "<total type=\"mmap\" count=\"%llu\" size=\"%llu\"/>\n",
                   (unsigned long long)(st.large_allocs - st.large_frees),
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<system type=\"current\" size=\"%llu\"/>\n",
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<aspace type=\"total\" size=\"%llu\"/>\n</heap>\n",
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<total type=\"mmap\" count=\"%llu\" size=\"%llu\"/>\n",
                   (unsigned long long)(st.large_allocs - st.large_frees),
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<system type=\"current\" size=\"%llu\"/>\n</malloc>\n",
                   (unsigned long long)st.heap_mapped_bytes);
    return fputs(b.data, fp) < 0 ? -1 : 0;
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

/* The caller's stack for a pool record, from the hwtag_pool_* entry's caller c on, as the
 * malloc family's. */
static uint32_t pool_stack(struct hwt_caller c)
{
    uintptr_t pcs[POOL_STACK_FRAMES];
    if (hwt_opts.stacktrace != HWT_ON)
        return 0;
    unsigned n = hwt_unwind_caller(c, pcs, POOL_STACK_FRAMES, NULL);
    return hwt_stackdepot_put((uint32_t)hwt_os_gettid(), pcs, n);
}

EXPORT void *hwtag_pool_alloc(void *block, size_t offset, size_t size)
{
    hwt_init_ensure();
    mte_tco_set();
    void *p = hwt_pool_alloc(block, offset, size, pool_stack(ENTRY_CALLER()));
    mte_tco_clear();
    if (p == NULL)
        errno = EINVAL;
    return p;
}

EXPORT void hwtag_pool_free(void *ptr, size_t size)
{
    hwt_init_ensure();
    mte_tco_set();
    enum hwt_pool_verdict v = hwt_pool_free(ptr, size, pool_stack(ENTRY_CALLER()));
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
