/* SPDX-License-Identifier: MIT */
/* The malloc family through the real symbols, as a libc allocator's users expect it:
 * sizes, zeroing, alignment, errno, realloc, threads and fork. Built twice: linked with
 * libhwtag.a, and plain with libhwtag.so preloaded. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hwtag.h"

/* Weak, so the preloaded build runs (and fails loudly below) if the preload is missing. */
extern const char *hwtag_version(void) __attribute__((weak));
extern int hwtag_get_stats(struct hwtag_stats *out, size_t size) __attribute__((weak));
extern void hwtag_print_stats(int fd) __attribute__((weak));

#define TAG_MASK (~((uintptr_t)0xff << 56))

static uintptr_t addr_of(const void *p)
{
    return (uintptr_t)p & TAG_MASK;
}

static void test_libhwtag_is_the_allocator(void **state)
{
    (void)state;
    assert_non_null(hwtag_version);
    assert_string_equal(hwtag_version(), "0.1.0");
    struct hwtag_stats before, after;
    assert_int_equal(hwtag_get_stats(&before, sizeof(before)), 0);
    void *volatile p = malloc(100);
    free(p);
    assert_int_equal(hwtag_get_stats(&after, sizeof(after)), 0);
    assert_true(after.small_allocs >= before.small_allocs + 1);
    assert_true(after.small_frees >= before.small_frees + 1);
    assert_int_equal(hwtag_get_stats(&after, 8), -1);
}

/* Small frees are counted from the slot words (allocations not live now): exact in a
 * single thread, through the fast paths and calloc's and realloc's general ones. */
static void test_small_frees_exact(void **state)
{
    (void)state;
    enum { N = 300 };
    static void *volatile objs[N];
    struct hwtag_stats s0, s1, s2;
    assert_int_equal(hwtag_get_stats(&s0, sizeof(s0)), 0);
    for (unsigned i = 0; i < N; i++)
        objs[i] = i % 3 == 0 ? calloc(1, 24 + i) : malloc(24 + i);
    assert_int_equal(hwtag_get_stats(&s1, sizeof(s1)), 0);
    assert_int_equal(s1.small_allocs - s0.small_allocs, N);
    assert_int_equal(s1.small_frees - s0.small_frees, 0);
    for (unsigned i = 0; i < N; i += 2) {
        free(objs[i]);
        objs[i] = NULL;
    }
    objs[1] = realloc(objs[1], 2000); /* a move: one allocation, one free */
    assert_int_equal(hwtag_get_stats(&s2, sizeof(s2)), 0);
    assert_int_equal(s2.small_allocs - s1.small_allocs, 1);
    assert_int_equal(s2.small_frees - s1.small_frees, N / 2 + 1);
    for (unsigned i = 1; i < N; i += 2)
        free(objs[i]);
}

/* The text statistics name the size classes in use, with their live bytes. */
static void test_print_stats_shows_classes(void **state)
{
    (void)state;
    void *keep[64];
    int fds[2];
    char text[16384];
    assert_non_null(hwtag_print_stats);
    for (int i = 0; i < 64; i++)
        keep[i] = malloc(100); /* class 112 */
    assert_int_equal(pipe(fds), 0);
    hwtag_print_stats(fds[1]);
    close(fds[1]);
    ssize_t n = read(fds[0], text, sizeof(text) - 1);
    close(fds[0]);
    assert_true(n > 0);
    text[n] = '\0';
    assert_non_null(strstr(text, "hwtag stats:"));
    const char *line = strstr(text, "class   112:");
    if (line == NULL)
        fail_msg("no class 112 line in:\n%s", text);
    /* at least the 64 objects kept here: 64 * 112 bytes = 7 KiB live */
    const char *committed = strstr(line, "KiB committed, ");
    assert_non_null(committed);
    assert_true(strtoul(committed + strlen("KiB committed, "), NULL, 10) >= 7);
    for (int i = 0; i < 64; i++)
        free(keep[i]);
}

/* C23, not in glibc 2.36: weak, so the preloaded build links; libhwtag must supply them. */
extern void free_sized(void *ptr, size_t size) __attribute__((weak));
extern void free_aligned_sized(void *ptr, size_t align, size_t size) __attribute__((weak));

/* Reads what fn writes to stderr. */
static size_t capture_stderr(void (*fn)(void), char *buf, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int saved = dup(2);
    dup2(fds[1], 2);
    fn();
    dup2(saved, 2);
    close(saved);
    close(fds[1]);
    ssize_t n = read(fds[0], buf, cap - 1);
    close(fds[0]);
    assert_true(n > 0);
    buf[n] = '\0';
    return (size_t)n;
}

/* glibc's introspection calls describe libhwtag's heap, not glibc's unused arena. */
static void test_glibc_introspection_describes_our_heap(void **state)
{
    (void)state;
    struct mallinfo2 before = mallinfo2();
    void *big = malloc(1 << 20);
    memset(big, 1, 1 << 20);
    struct mallinfo2 during = mallinfo2();
    assert_true(during.uordblks >= before.uordblks + (1 << 20));
    assert_true(during.arena >= during.uordblks);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct mallinfo old = mallinfo(); /* deprecated, still called by old programs */
#pragma GCC diagnostic pop
    assert_true(old.uordblks >= (1 << 20));
    free(big);

    char text[4096];
    capture_stderr(malloc_stats, text, sizeof(text));
    assert_non_null(strstr(text, "Arena 0:"));
    assert_non_null(strstr(text, "in use bytes"));

    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    assert_non_null(f);
    assert_int_equal(malloc_info(0, f), 0);
    fclose(f);
    assert_non_null(strstr(xml, "<malloc version=\"hwtag-"));
    free(xml);
    errno = 0;
    assert_int_equal(malloc_info(1, stdout), -1);
    assert_int_equal(errno, EINVAL);
}

static void test_trim_opt_and_sized_frees(void **state)
{
    (void)state;
    void *blocks[16];
    for (int i = 0; i < 16; i++)
        blocks[i] = malloc(50000); /* below the size whose pages go back at free */
    for (int i = 0; i < 16; i++)
        free(blocks[i]);
    assert_int_equal(malloc_trim(0), 1); /* the cached large mappings had pages */
    assert_int_equal(mallopt(M_MMAP_THRESHOLD, 1 << 20), 1);
    assert_int_equal(mallopt(M_PERTURB, 0x55), 0);
    assert_int_equal(mallopt(12345, 1), 0);
    assert_non_null(free_sized);
    assert_non_null(free_aligned_sized);
    void *p = malloc(100);
    free_sized(p, 100);
    p = aligned_alloc(64, 128);
    free_aligned_sized(p, 64, 128);
    struct hwtag_stats st;
    assert_int_equal(hwtag_get_stats(&st, sizeof(st)), 0);
    assert_true(st.small_frees >= 2);
}

/* Resident KiB of this process (/proc/self/statm; under qemu-user, the emulator's). */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = -1;
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Freed large objects may stay resident for reuse, but a bounded amount: once the program
 * has gone on without needing them the memory goes back, and malloc_trim returns it all. */
static void test_freed_large_memory_goes_back(void **state)
{
    (void)state;
    enum { N = 48, CHURN = 3000, MARGIN_KIB = 8 << 10 };
    const size_t size = 1 << 20;
    void *p[N];
    long base = rss_kib();
    if (base < 0)
        skip();
    for (int i = 0; i < N; i++) {
        p[i] = malloc(size);
        assert_non_null(p[i]);
        memset(p[i], 0x6b, size);
    }
    long peak = rss_kib();
    assert_true(peak >= base + (long)(N - 8) * 1024);
    for (int i = 0; i < N; i++)
        free(p[i]);
    for (int i = 0; i < CHURN; i++) {
        char *q = malloc(40000);
        assert_non_null(q);
        memset(q, 1, 40000);
        free(q);
    }
    long decayed = rss_kib();
    if (decayed > base + MARGIN_KIB)
        fail_msg("resident %ld KiB after freeing %d MiB and %d small churns: %ld KiB at start, "
                 "%ld KiB at the peak",
                 decayed, N, CHURN, base, peak);
    for (int i = 0; i < N; i++) {
        p[i] = malloc(size);
        assert_non_null(p[i]);
        memset(p[i], 0x6b, size);
    }
    for (int i = 0; i < N; i++)
        free(p[i]);
    malloc_trim(0);
    long trimmed = rss_kib();
    if (trimmed > base + MARGIN_KIB)
        fail_msg("resident %ld KiB after malloc_trim: %ld KiB at start", trimmed, base);
}

static void test_malloc_zero_gives_distinct_pointers(void **state)
{
    (void)state;
    void *a = malloc(0), *b = malloc(0);
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_not_equal(addr_of(a), addr_of(b));
    free(a);
    free(b);
}

static void test_sizes_are_usable_and_aligned(void **state)
{
    (void)state;
    static const size_t sizes[] = {1,     15,    16,     17,      100,          255,   256,
                                   257,   1000,  4095,   4096,    8191,         16384, 16385,
                                   32768, 65536, 100000, 1 << 20, (1 << 20) + 1};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned char *p = malloc(sizes[i]);
        assert_non_null(p);
        assert_int_equal(addr_of(p) % 16, 0);
        size_t usable = malloc_usable_size(p);
        assert_true(usable >= sizes[i]);
        assert_true(usable < sizes[i] + 16);
        memset(p, 0xab, usable);
        assert_int_equal(p[usable - 1], 0xab);
        free(p);
    }
    assert_int_equal(malloc_usable_size(NULL), 0);
    int on_stack = 0;
    assert_int_equal(malloc_usable_size(&on_stack), 0);
}

static void test_calloc_zeroes_reused_memory(void **state)
{
    (void)state;
    static const size_t sizes[] = {24, 200, 3000, 20000, 300000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (int round = 0; round < 4; round++) {
            unsigned char *dirty = malloc(sizes[i]);
            assert_non_null(dirty);
            memset(dirty, 0x5a, sizes[i]);
            free(dirty);
            unsigned char *p = calloc(1, sizes[i]);
            assert_non_null(p);
            for (size_t j = 0; j < sizes[i]; j++)
                assert_int_equal(p[j], 0);
            free(p);
        }
    }
}

/* volatile: the compiler must not see the absurd sizes (it would warn, or fold the calls) */
static volatile size_t size_max = SIZE_MAX;

static void test_overflowing_requests_fail_with_enomem(void **state)
{
    (void)state;
    errno = 0;
    assert_null(malloc(size_max));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(malloc(size_max / 2 + 1));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(calloc(size_max / 2, 3));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(calloc(size_max >> 31, size_max >> 31));
    assert_int_equal(errno, ENOMEM);
    char *volatile p = malloc(10);
    strcpy(p, "kept");
    errno = 0;
    assert_null(reallocarray(p, size_max / 4, 8));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(realloc(p, size_max - 8));
    assert_int_equal(errno, ENOMEM);
    assert_string_equal(p, "kept");
    free(p);
    /* more than the machine has, also when it fits the address space: no mapping is made
     * (and nothing tags terabytes) */
    errno = 0;
    assert_null(malloc((size_t)1 << 46));
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_null(memalign((size_t)1 << 44, 1));
    assert_int_equal(errno, ENOMEM);
}

static void test_realloc_keeps_contents(void **state)
{
    (void)state;
    static const size_t steps[] = {1, 7, 16, 40, 300, 5000, 20000, 200000, 100, 3, 1 << 20, 50};
    unsigned char *p = realloc(NULL, 1);
    assert_non_null(p);
    p[0] = 0;
    size_t have = 1;
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        p = realloc(p, steps[i]);
        assert_non_null(p);
        size_t keep = have < steps[i] ? have : steps[i];
        for (size_t j = 0; j < keep; j++)
            assert_int_equal(p[j], (unsigned char)(j * 7));
        for (size_t j = 0; j < steps[i]; j++)
            p[j] = (unsigned char)(j * 7);
        have = steps[i];
    }
    errno = 0;
    assert_null(realloc(p, 0)); /* glibc: frees and returns NULL */
}

/* A small object realloc moves to grow gets room for the next small growth, in place, and
 * is still exactly the size asked for (the tail and tags end there). */
static void test_realloc_growth_has_room(void **state)
{
    (void)state;
    unsigned char *p = malloc(24);
    assert_non_null(p);
    memset(p, 0x5a, 24);
    p = realloc(p, 40);
    assert_non_null(p);
    assert_int_equal(malloc_usable_size(p), 40);
    memset(p + 24, 0x6b, 16);
    unsigned char *q = realloc(p, 48);
    assert_ptr_equal(q, p);
    assert_int_equal(malloc_usable_size(q), 48);
    for (size_t i = 0; i < 40; i++)
        assert_int_equal(q[i], i < 24 ? 0x5a : 0x6b);
    q = realloc(q, 16000); /* near the largest small class: room capped, still small */
    assert_non_null(q);
    assert_int_equal(malloc_usable_size(q), 16000);
    assert_int_equal(q[39], 0x6b);
    free(q);
}

static void test_alignment_functions(void **state)
{
    (void)state;
    void *p = (void *)1;
    assert_int_equal(posix_memalign(&p, 3, 10), EINVAL);
    assert_int_equal(posix_memalign(&p, 0, 10), EINVAL);
    assert_int_equal(posix_memalign(&p, 4, 10), EINVAL); /* not a multiple of sizeof(void*) */
    assert_ptr_equal(p, (void *)1);
    /* glibc 2.36: memalign and aligned_alloc round an alignment up to a power of two, and
     * only one past the largest power of two is EINVAL */
    static const size_t odd[] = {0, 1, 3, 24, 100, 4097};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        size_t want = 16;
        while (want < odd[i])
            want <<= 1;
        p = aligned_alloc(odd[i], 100);
        assert_non_null(p);
        assert_int_equal(addr_of(p) % want, 0);
        free(p);
        p = memalign(odd[i], 100);
        assert_non_null(p);
        assert_int_equal(addr_of(p) % want, 0);
        free(p);
    }
    errno = 0;
    assert_null(aligned_alloc(((size_t)1 << 63) + 1, 100));
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(memalign(SIZE_MAX, 100));
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(memalign((size_t)1 << 63, 100));
    assert_int_equal(errno, ENOMEM);
    for (size_t align = 8; align <= (1 << 16); align <<= 1) {
        static const size_t sizes[] = {1, 24, 100, 4000, 20000, 70000};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            assert_int_equal(posix_memalign(&p, align, sizes[i]), 0);
            assert_int_equal(addr_of(p) % align, 0);
            memset(p, 1, sizes[i]);
            free(p);
            p = aligned_alloc(align, sizes[i]);
            assert_non_null(p);
            assert_int_equal(addr_of(p) % align, 0);
            memset(p, 2, sizes[i]);
            free(p);
            p = memalign(align, sizes[i]);
            assert_non_null(p);
            assert_int_equal(addr_of(p) % align, 0);
            free(p);
        }
    }
    long page = sysconf(_SC_PAGESIZE);
    p = valloc(10);
    assert_int_equal(addr_of(p) % (uintptr_t)page, 0);
    free(p);
    p = pvalloc(10);
    assert_int_equal(addr_of(p) % (uintptr_t)page, 0);
    assert_true(malloc_usable_size(p) >= (size_t)page);
    free(p);
}

#define RING 1024
static void *volatile ring[RING];
static volatile int ring_done;

static void *producer(void *arg)
{
    (void)arg;
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < RING; i++) {
            void *p;
            while ((p = __atomic_load_n(&ring[i], __ATOMIC_ACQUIRE)) != NULL)
                sched_yield();
            size_t n = (size_t)(i % 7 == 0 ? 20000 : 8 + (i * 13) % 500);
            p = malloc(n);
            memset(p, i & 0xff, n);
            __atomic_store_n(&ring[i], p, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&ring_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_free_on_another_thread(void **state)
{
    (void)state;
    pthread_t t;
    int consumed = 0;
    assert_int_equal(pthread_create(&t, NULL, producer, NULL), 0);
    for (;;) {
        int idle = 1;
        for (int i = 0; i < RING; i++) {
            unsigned char *p =
                __atomic_exchange_n((unsigned char **)&ring[i], NULL, __ATOMIC_ACQ_REL);
            if (p != NULL) {
                assert_int_equal(p[0], i & 0xff);
                free(p);
                consumed++;
                idle = 0;
            }
        }
        if (idle && __atomic_load_n(&ring_done, __ATOMIC_ACQUIRE)) {
            int left = 0;
            for (int i = 0; i < RING; i++)
                left += ring[i] != NULL;
            if (left == 0)
                break;
        }
    }
    pthread_join(t, NULL);
    assert_int_equal(consumed, 20 * RING);
}

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    void *slots[256] = {0};
    for (int i = 0; i < 20000; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % 256;
        if (slots[k] != NULL) {
            free(slots[k]);
            slots[k] = NULL;
        } else {
            size_t n = (seed >> 16) % 97 == 0 ? 40000 : (seed >> 16) % 2000;
            slots[k] = malloc(n);
            if (slots[k] == NULL)
                return (void *)1;
            memset(slots[k], 1, n);
        }
    }
    for (int k = 0; k < 256; k++)
        free(slots[k]);
    return NULL;
}

static void test_threads_churn(void **state)
{
    (void)state;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
}

/* Page-backed objects from several threads at once: the mapping cache and its records are
 * shared, so this is where a race would show (as a false report, a crash or bad data). */
static void *large_churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    unsigned char *slots[16] = {0};
    size_t sizes[16] = {0};
    for (int i = 0; i < 1500; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % 16;
        if (slots[k] != NULL) {
            if (slots[k][0] != (unsigned char)k || slots[k][sizes[k] - 1] != (unsigned char)k)
                return (void *)2;
            free(slots[k]);
        }
        sizes[k] = 16385 + (seed >> 12) % 300000;
        slots[k] = malloc(sizes[k]);
        if (slots[k] == NULL)
            return (void *)1;
        slots[k][0] = (unsigned char)k;
        slots[k][sizes[k] - 1] = (unsigned char)k;
    }
    for (int k = 0; k < 16; k++)
        free(slots[k]);
    return NULL;
}

static void test_threads_large_churn(void **state)
{
    (void)state;
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, large_churn, (void *)(i + 7)), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert_null(r);
    }
}

static volatile int spinning;

static void *spin_alloc(void *arg)
{
    (void)arg;
    while (__atomic_load_n(&spinning, __ATOMIC_ACQUIRE)) {
        void *p = malloc(3000);
        void *q = malloc(50000);
        free(p);
        free(q);
    }
    return NULL;
}

static void test_fork_while_other_thread_allocates(void **state)
{
    (void)state;
    pthread_t t;
    spinning = 1;
    assert_int_equal(pthread_create(&t, NULL, spin_alloc, NULL), 0);
    for (int i = 0; i < 10; i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            alarm(60);
            for (int j = 0; j < 1000; j++) {
                void *p = malloc((size_t)(j % 20) * 1000 + 1);
                void *q = malloc(40000);
                if (p == NULL || q == NULL)
                    _exit(2);
                free(p);
                free(q);
            }
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    __atomic_store_n(&spinning, 0, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
}

/* A thread that freed some large objects and then waits: untagged ones stay in its stash
 * (both fit in it). No other test leaves a mapping that may hold this size (at least it, at
 * most twice it), so the parked thread maps its own and a reuse can only take one of them:
 * with 200000 B, a reuse after a trim took another test's mapping now and then. */
enum { PARKED_N = 2, PARKED_SIZE = 1900000 };
struct parked {
    pthread_barrier_t freed, go;
    uintptr_t addr[PARKED_N];
};

static void *free_and_park(void *arg)
{
    struct parked *pk = arg;
    void *p[PARKED_N];
    for (int i = 0; i < PARKED_N; i++) {
        p[i] = malloc(PARKED_SIZE);
        if (p[i] == NULL)
            abort();
        memset(p[i], 0x5a, PARKED_SIZE);
        pk->addr[i] = (uintptr_t)p[i] & TAG_MASK;
    }
    for (int i = 0; i < PARKED_N; i++)
        free(p[i]);
    pthread_barrier_wait(&pk->freed);
    pthread_barrier_wait(&pk->go);
    return NULL;
}

/* Whether a new object of PARKED_SIZE bytes reuses a mapping the parked thread freed. */
static bool reuses_parked(const struct parked *pk)
{
    void *q = malloc(PARKED_SIZE);
    assert_non_null(q);
    bool hit = false;
    for (int i = 0; i < PARKED_N; i++)
        hit |= ((uintptr_t)q & TAG_MASK) == pk->addr[i];
    free(q);
    return hit;
}

/* The mappings another thread freed and still holds for its own reuse are not lost to the
 * rest of the process: a fork child (where that thread does not exist) adopts them, and
 * malloc_trim hands them to every thread. */
static void test_other_threads_freed_mappings_are_not_lost(void **state)
{
    (void)state;
    struct parked pk;
    pthread_t t;
    pthread_barrier_init(&pk.freed, NULL, 2);
    pthread_barrier_init(&pk.go, NULL, 2);
    assert_int_equal(pthread_create(&t, NULL, free_and_park, &pk), 0);
    pthread_barrier_wait(&pk.freed);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(reuses_parked(&pk) ? 0 : 3);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("a fork child did not reuse the mappings a parked thread had freed");
    malloc_trim(0);
    if (!reuses_parked(&pk))
        fail_msg("after malloc_trim, the mappings a parked thread had freed were not reused");
    pthread_barrier_wait(&pk.go);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&pk.freed);
    pthread_barrier_destroy(&pk.go);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libhwtag_is_the_allocator),
        cmocka_unit_test(test_small_frees_exact),
        cmocka_unit_test(test_print_stats_shows_classes),
        cmocka_unit_test(test_glibc_introspection_describes_our_heap),
        cmocka_unit_test(test_trim_opt_and_sized_frees),
        cmocka_unit_test(test_malloc_zero_gives_distinct_pointers),
        cmocka_unit_test(test_sizes_are_usable_and_aligned),
        cmocka_unit_test(test_realloc_growth_has_room),
        cmocka_unit_test(test_calloc_zeroes_reused_memory),
        cmocka_unit_test(test_overflowing_requests_fail_with_enomem),
        cmocka_unit_test(test_realloc_keeps_contents),
        cmocka_unit_test(test_alignment_functions),
        cmocka_unit_test(test_free_on_another_thread),
        cmocka_unit_test(test_threads_churn),
        cmocka_unit_test(test_threads_large_churn),
        cmocka_unit_test(test_freed_large_memory_goes_back),
        cmocka_unit_test(test_fork_while_other_thread_allocates),
        cmocka_unit_test(test_other_threads_freed_mappings_are_not_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
