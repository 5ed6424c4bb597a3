/* SPDX-License-Identifier: MIT */
/* Page-backed objects: carved mappings, round trips, guard tails, lookups, sampling and
 * reused mappings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/mte.h"
#include "lookup.h"
#include "init.h"
#include "large.h"
#include "large_map.h"
#include "leak_roots.h"
#include "leak_world.h"
#include "options.h"
#include "os.h"
#include "sample.h"

#define ALLOC_STACK 0xa11cu
#define FREE_STACK 0xf7eeu

static struct hwt_options saved_opts;

static int setup(void **state)
{
    (void)state;
    hwt_init_ensure();
    saved_opts = hwt_opts;
    hwt_opts.sample = 1;
    hwt_sample_reset_thread();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hwt_opts = saved_opts;
    hwt_sample_reset_thread();
    return 0;
}

static size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

static struct hwt_large *checked(const void *p)
{
    struct hwt_large *l = NULL;
    assert_int_equal(hwt_large_check(p, &l), HWT_FREE_OK);
    assert_non_null(l);
    return l;
}

/* A new object takes the cached mapping that fits it closely, not a newer, bigger one that
 * would keep its pages past the object resident for as long as the object lives. Runs first,
 * while the cache holds only what it frees. */
static void test_reuse_prefers_a_close_fit(void **state)
{
    (void)state;
    const size_t want = 397 * 1024;
    unsigned char *close = hwt_large_alloc(want + 777, 16, false, ALLOC_STACK, NULL);
    unsigned char *big = hwt_large_alloc(700 * 1024, 16, false, ALLOC_STACK, NULL);
    assert_non_null(close);
    assert_non_null(big);
    uintptr_t close_start = mte_untag(close), big_start = mte_untag(big);
    memset(close, 0x3c, want + 777);
    memset(big, 0x3d, 700 * 1024);
    hwt_large_free(checked(close), FREE_STACK, NULL);
    hwt_large_free(checked(big), FREE_STACK, NULL); /* the newest, and it fits too */
    unsigned char *q = hwt_large_alloc(want, 16, false, ALLOC_STACK, NULL);
    assert_non_null(q);
    if (mte_untag(q) != close_start)
        fail_msg("a %zu-byte object took the %s mapping", want,
                 mte_untag(q) == big_start ? "newer, bigger" : "wrong");
    unsigned char *r = hwt_large_alloc(690 * 1024, 16, false, ALLOC_STACK, NULL);
    assert_non_null(r);
    assert_int_equal(mte_untag(r), big_start);
    hwt_large_free(checked(q), FREE_STACK, NULL);
    hwt_large_free(checked(r), FREE_STACK, NULL);
}

/* Trimming gives back every page of a cached mapping, also those a bigger object used before
 * the last one, smaller, took it over. */
static void test_trim_gives_back_pages_past_the_last_object(void **state)
{
    (void)state;
    const size_t big = 1500 * 1024, small = 800 * 1024;
    unsigned char *p = hwt_large_alloc(big, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    uintptr_t start = mte_untag(p);
    memset(p, 0x5a, big);
    hwt_large_free(checked(p), FREE_STACK, NULL);
    unsigned char *q = hwt_large_alloc(small, 16, false, ALLOC_STACK, NULL);
    assert_non_null(q);
    assert_int_equal(mte_untag(q), start); /* the only cached mapping that fits */
    memset(q, 0x5b, small);
    hwt_large_free(checked(q), FREE_STACK, NULL);
    hwt_large_trim();
    size_t left = hwt_os_resident_pages((void *)start, big);
    if (left > 1)
        fail_msg("%zu of the mapping's %zu pages stay resident after trimming", left,
                 big / hwt_os_page_size);
}

static void test_round_trip(void **state)
{
    (void)state;
    const size_t size = 100001;
    unsigned char *p = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    uintptr_t start = mte_untag(p);
    assert_int_equal(start % hwt_os_page_size, 0);
    memset(p, 0x3c, size);
    assert_int_equal(p[0], 0x3c);
    assert_int_equal(p[size - 1], 0x3c);

    struct hwt_large *l = checked(p);
    assert_int_equal(hwt_large_usable(l), 100016);
    if (hwt_mte_active) {
        unsigned tag = mte_ptr_tag(p);
        assert_true(tag != HWT_TAG_UNTAGGED && tag != HWT_TAG_FREE);
        assert_int_equal(mte_load_tag(start), tag);
        assert_int_equal(mte_load_tag(start + 100000), tag);
        assert_int_equal(mte_load_tag(start + 100016), HWT_TAG_FREE);
    }

    hwt_large_free(l, FREE_STACK, NULL);
    struct hwt_large *again = NULL;
    assert_int_equal(hwt_large_check(p, &again), HWT_FREE_DOUBLE);
    assert_ptr_equal(again, l);
    if (hwt_mte_active)
        assert_int_equal(mte_load_tag(start), HWT_TAG_FREE);
}

static void test_page_multiple_keeps_a_guard(void **state)
{
    (void)state;
    const size_t size = 16 * hwt_os_page_size;
    void *p = hwt_large_alloc(size, 16, true, ALLOC_STACK, NULL);
    assert_non_null(p);
    uintptr_t start = mte_untag(p);
    struct hwt_object o;
    assert_true(hwt_lookup_addr(start + size, &o));
    assert_int_equal(o.start, start);
    assert_true(o.region_size >= size + 16);
    if (hwt_mte_active)
        assert_int_equal(mte_load_tag(start + size), HWT_TAG_FREE);
    hwt_large_free(checked(p), FREE_STACK, NULL);
}

static void test_lookup_describes_live_and_freed(void **state)
{
    (void)state;
    const size_t size = 70000;
    void *p = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    uintptr_t start = mte_untag(p);
    struct hwt_object o;
    memset(&o, 0xff, sizeof(o));
    assert_true(hwt_lookup_addr(start + 1234, &o));
    assert_int_equal(o.start, start);
    assert_int_equal(o.requested, size);
    assert_int_equal(o.size, round_up(size, 16));
    assert_int_equal(o.class_size, 0);
    assert_true(o.region_size >= round_up(size, 16) + 16);
    assert_int_equal(o.tag, mte_ptr_tag(p));
    assert_true(o.large);
    assert_true(o.live);
    assert_true(o.ever_used);
    assert_true(o.sampled);
    assert_int_equal(o.alloc_stack, ALLOC_STACK);
    assert_int_equal(o.free_stack, 0);

    /* the guard tail after the object belongs to it too */
    struct hwt_object g;
    assert_true(hwt_lookup_addr(start + round_up(size, 16), &g));
    assert_int_equal(g.start, start);
    assert_true(g.large);
    assert_true(hwt_lookup_addr(start + o.region_size - 1, &g));
    assert_int_equal(g.start, start);
    assert_int_equal(g.requested, size);
    /* and so does the guard below it */
    assert_true(hwt_lookup_addr(start - 16, &g));
    assert_int_equal(g.start, start);
    if (hwt_mte_active)
        assert_int_equal(mte_load_tag(start - 16), HWT_TAG_FREE);

    hwt_large_free(checked(p), FREE_STACK, NULL);
    memset(&o, 0xff, sizeof(o));
    assert_true(hwt_lookup_addr(start + 10, &o));
    assert_int_equal(o.start, start);
    assert_int_equal(o.requested, size);
    assert_true(o.large);
    assert_false(o.live);
    assert_true(o.ever_used);
    assert_int_equal(o.alloc_stack, ALLOC_STACK);
    assert_int_equal(o.free_stack, FREE_STACK);
}

static void test_check_rejects_pointers_it_does_not_own(void **state)
{
    (void)state;
    unsigned char *p = hwt_large_alloc(40000, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    struct hwt_large *l;
    assert_int_equal(hwt_large_check(p + 16, &l), HWT_FREE_NOT_OURS);
    assert_int_equal(hwt_large_check(p + hwt_os_page_size, &l), HWT_FREE_NOT_OURS);
    int local;
    assert_int_equal(hwt_large_check(&local, &l), HWT_FREE_NOT_OURS);
    hwt_large_free(checked(p), FREE_STACK, NULL);
}

static void test_alignment_is_honoured(void **state)
{
    (void)state;
    for (size_t align = hwt_os_page_size; align <= ((size_t)1 << 21); align *= 4) {
        void *p = hwt_large_alloc(50000, align, true, ALLOC_STACK, NULL);
        assert_non_null(p);
        uintptr_t start = mte_untag(p);
        if (start % align != 0)
            fail_msg("start %#lx not aligned to %zu", (unsigned long)start, align);
        struct hwt_object o;
        assert_true(hwt_lookup_addr(start, &o));
        assert_int_equal(o.start, start);
        assert_true(o.region_size >= round_up(50000, 16) + 16);
        memset(p, 1, 50000);
        hwt_large_free(checked(p), FREE_STACK, NULL);
    }
}

static void test_freed_mapping_is_reused_with_a_new_tag(void **state)
{
    (void)state;
    /* a size no other test uses, so the cached mapping is the only candidate */
    const size_t size = 3u << 20;
    unsigned char *p = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    uintptr_t start = mte_untag(p);
    memset(p, 0xcd, size);
    hwt_large_free(checked(p), FREE_STACK, NULL);

    unsigned char *q = hwt_large_alloc(size - 100, 16, true, ALLOC_STACK + 1, NULL);
    assert_non_null(q);
    assert_int_equal(mte_untag(q), start);
    for (size_t i = 0; i < size - 100; i += 4093)
        assert_int_equal(q[i], 0);
    assert_int_equal(q[size - 101], 0);
    struct hwt_large *l = checked(q);
    assert_int_equal(hwt_large_usable(l), round_up(size - 100, 16));
    struct hwt_object o;
    assert_true(hwt_lookup_addr(start, &o));
    assert_true(o.live);
    assert_int_equal(o.requested, size - 100);
    assert_int_equal(o.alloc_stack, ALLOC_STACK + 1);
    assert_int_equal(o.free_stack, 0);
    if (hwt_mte_active) {
        /* the stale pointer has the old tag: freeing it is a double free */
        assert_int_not_equal(mte_ptr_tag(q), mte_ptr_tag(p));
        struct hwt_large *stale;
        assert_int_equal(hwt_large_check(p, &stale), HWT_FREE_DOUBLE);
        assert_int_equal(mte_load_tag(start + round_up(size - 100, 16)), HWT_TAG_FREE);
    }
    hwt_large_free(l, FREE_STACK, NULL);
}

static void test_sampling_leaves_the_skipped_untagged(void **state)
{
    (void)state;
    hwt_opts.sample = 2;
    hwt_opts.sample_order = 0;
    hwt_sample_reset_thread();
    void *p[4];
    struct hwt_object o[4];
    for (int i = 0; i < 4; i++) {
        p[i] = hwt_large_alloc(20000, 16, false, ALLOC_STACK, NULL);
        assert_non_null(p[i]);
        assert_true(hwt_lookup_addr(mte_untag(p[i]), &o[i]));
        assert_int_equal(o[i].sampled, i % 2 == 0);
    }
    if (hwt_mte_active) {
        for (int i = 0; i < 4; i++) {
            unsigned tag = mte_ptr_tag(p[i]);
            if (i % 2 == 0)
                assert_true(tag != HWT_TAG_UNTAGGED && tag != HWT_TAG_FREE);
            else
                assert_int_equal(tag, HWT_TAG_UNTAGGED);
            assert_int_equal(mte_load_tag(mte_untag(p[i])), tag);
        }
    }
    for (int i = 0; i < 4; i++)
        hwt_large_free(checked(p[i]), FREE_STACK, NULL);
}

struct reuse_result {
    int found;         /* a first mapping whose start lies deep inside it */
    uintptr_t a_start; /* the aligned allocation that was freed */
    size_t a_region;   /* bytes from its start to the end of its mapping */
    uintptr_t b_start; /* the allocation that reused the cached mapping */
    size_t b_region;   /* bytes from its start to the end of its mapping */
    size_t b_usable;
};

/* Runs child(fd) in a forked child, which writes its result to fd and exits; reads up to
 * size bytes of it into out (*got: how many). Returns the child's wait status. */
static int in_child(void (*child)(int fd), void *out, size_t size, ssize_t *got)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child(fds[1]);
        _exit(1);
    }
    close(fds[1]);
    do
        *got = read(fds[0], out, size);
    while (*got < 0 && errno == EINTR);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* A child's end: its result code down the pipe. */
static void child_exit(int fd, int r)
{
    ssize_t w = write(fd, &r, sizeof(r));
    _exit(w == (ssize_t)sizeof(r) ? 0 : 1);
}

/* The result code child wrote, once it exited normally. */
static int child_code(void (*child)(int fd))
{
    int r = -1;
    ssize_t got;
    int status = in_child(child, &r, sizeof(r), &got);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, sizeof(r));
    return r;
}

/* In a child, so that the cache keeps none of its mappings for the other tests: fresh
 * mappings of up to 1 MiB are carved in address order from a chunk of their kind, each new
 * one ending where that chunk's unused end begins; none overlaps another, and each comes
 * zeroed. Writes 0 when all held, else prints what did not. */
static void carve_child(int fd)
{
    enum { N = 24 };
    unsigned char *p[N];
    size_t size[N];
    int r = 0;
    for (unsigned i = 0; i < N && r == 0; i++) {
        size[i] = 20000 + i * 5000;
        p[i] = hwt_large_alloc(size[i], 16, true, ALLOC_STACK, NULL); /* fresh: not zeroed */
        struct hwt_object o;
        if (p[i] == NULL || !hwt_lookup_addr(mte_untag(p[i]), &o)) {
            r = 1;
            break;
        }
        uintptr_t map_end = o.start - hwt_os_page_size + hwt_large_map_size(size[i]);
        uintptr_t lo[2], hi[2];
        unsigned n = hwt_large_map_unused(lo, hi), k = 0;
        while (k < n && lo[k] != map_end)
            k++;
        if (k == n) {
            fprintf(stderr,
                    "object %u (%zu bytes): its mapping ends at %#lx, no chunk's unused "
                    "end begins there (%u unused ends)\n",
                    i, size[i], (unsigned long)map_end, n);
            r = 2;
        }
        for (size_t b = 0; b < size[i] && r == 0; b++)
            if (p[i][b] != 0) {
                fprintf(stderr, "fresh object %u: byte %zu is %#x\n", i, b, p[i][b]);
                r = 3;
            }
        memset(p[i], (int)i + 1, size[i]);
    }
    for (unsigned i = 0; i < N && r == 0; i++)
        for (size_t b = 0; b < size[i] && r == 0; b++)
            if (p[i][b] != i + 1) {
                fprintf(stderr, "object %u: byte %zu is %#x, not %#x\n", i, b, p[i][b], i + 1);
                r = 4;
            }
    child_exit(fd, r);
}

static void test_fresh_mappings_are_carved_in_order(void **state)
{
    (void)state;
    assert_int_equal(child_code(carve_child), 0);
}

/* In a child: once the chunks' unused ends went back (out of memory), objects still get
 * zeroed mappings, each of its own, and no chunk is mapped again. Writes 0 when all held. */
static void no_carve_child(int fd)
{
    uintptr_t lo[2], hi[2];
    int r = 0;
    (void)hwt_large_map_give_unused();
    for (unsigned i = 0; i < 8 && r == 0; i++) {
        unsigned char *q = hwt_large_alloc(30000 + i * 4096, 16, true, ALLOC_STACK, NULL);
        if (q == NULL)
            r = 1;
        else if (q[0] != 0 || q[29999] != 0)
            r = 2;
        else if (hwt_large_map_unused(lo, hi) != 0)
            r = 3;
    }
    child_exit(fd, r);
}

static void test_no_carving_after_the_unused_ends_went_back(void **state)
{
    (void)state;
    int r = child_code(no_carve_child);
    if (r != 0)
        fail_msg("after the unused ends went back: %s", r == 1   ? "no memory"
                                                        : r == 2 ? "a fresh object was not zero"
                                                                 : "a chunk again");
}

/* In a child: frees a large allocation whose aligned start sits deep inside its mapping,
 * then asks for an unaligned allocation that fits the mapping but not the room after
 * that start. */
static void reuse_child(int fd)
{
    struct reuse_result r = {0};
    enum { TRIES = 64 };
    void *held[TRIES];
    unsigned n = 0;
    const size_t align = (size_t)1 << 20;
    const size_t a_size = 50000, b_size = 600000;
    /* first use up any cached mapping a b_size request could take */
    for (unsigned i = 0; i < 40; i++)
        (void)hwt_large_alloc(b_size, 16, false, ALLOC_STACK, NULL);
    for (; n < TRIES; n++) {
        held[n] = hwt_large_alloc(a_size, align, false, ALLOC_STACK, NULL);
        if (held[n] == NULL)
            break;
        struct hwt_object o;
        if (!hwt_lookup_addr(mte_untag(held[n]), &o))
            break;
        if (o.region_size < b_size) {
            r.found = 1;
            r.a_start = o.start;
            r.a_region = o.region_size;
            break;
        }
    }
    if (r.found) {
        struct hwt_large *l;
        if (hwt_large_check(held[n], &l) == HWT_FREE_OK)
            hwt_large_free(l, FREE_STACK, NULL);
        void *b = hwt_large_alloc(b_size, 16, false, ALLOC_STACK, NULL);
        struct hwt_object o;
        if (b != NULL && hwt_lookup_addr(mte_untag(b), &o)) {
            r.b_start = o.start;
            r.b_region = o.region_size;
            r.b_usable = round_up(b_size, 16);
        }
    }
    ssize_t w = write(fd, &r, sizeof(r));
    _exit(w == (ssize_t)sizeof(r) ? 0 : 1);
}

static void test_reused_mapping_has_room_after_its_start(void **state)
{
    (void)state;
    struct reuse_result r;
    memset(&r, 0, sizeof(r));
    ssize_t got;
    int status = in_child(reuse_child, &r, sizeof(r), &got);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("child died (status %#x) reusing a cached mapping", status);
    assert_int_equal(got, sizeof(r));
    if (!r.found)
        skip();
    assert_int_not_equal(r.b_start, 0);
    if (r.b_region < r.b_usable + 16)
        fail_msg("reused mapping at %#lx (freed object was at %#lx with %zu bytes to its "
                 "mapping's end) gives %zu bytes after the new start for a %zu-byte object",
                 (unsigned long)r.b_start, (unsigned long)r.a_start, r.a_region, r.b_region,
                 r.b_usable);
}

#define MIB ((size_t)1 << 20)
/* large_cache.c's bound: 2 MiB plus the recent peak of live mappings, at most 64 MiB (or
 * half the peak, when that is more: test_big_peak_keeps_half_of_it_resident); and
 * a cached mapping whose pages went back still counts its guard page and partial last page
 * (at most 256 cached mappings). */
#define RESIDENT_CAP (64 * MIB)
#define RESIDENT_BASE (2 * MIB)
#define TAGGED_BASE (128 * 1024ul)
#define RESIDENT_SLACK (256 * 2 * 4096ul)

/* Freed untagged mappings stay resident up to the recent peak of the live ones (a churning
 * program reuses them without faulting their pages in again), tagged ones up to 128 KiB +
 * 1/64 of it, never beyond the cap; when the
 * program goes on with small large objects only, the budget decays and the pages go back;
 * trimming gives back everything. */
static void test_cached_pages_are_bounded(void **state)
{
    (void)state;
    enum { WARM = 20, MANY = 100 };
    void *p[MANY];
    for (int i = 0; i < WARM; i++) {
        p[i] = hwt_large_alloc(MIB, 16, false, ALLOC_STACK, NULL);
        assert_non_null(p[i]);
        memset(p[i], 0x2e, MIB); /* untouched tagged objects give their pages back */
    }
    for (int i = 0; i < WARM; i++)
        hwt_large_free(checked(p[i]), FREE_STACK, NULL);
    size_t warm = hwt_large_cached_resident();
    if (hwt_mte_active) {
        /* tagged mappings keep 128 KiB + 1/64 of the peak (HWTAG_SAMPLE=1 here) */
        size_t budget = TAGGED_BASE + WARM * MIB / 64;
        if (warm < budget / 2 || warm > budget + MIB + RESIDENT_SLACK)
            fail_msg("%d freed tagged 1 MiB objects left %zu bytes resident, budget %zu", WARM,
                     warm, budget);
    } else if (warm < (WARM - 2) * MIB) {
        fail_msg("%d freed 1 MiB objects left only %zu bytes resident in the cache", WARM, warm);
    }

    for (int i = 0; i < MANY; i++) {
        p[i] = hwt_large_alloc(MIB, 16, false, ALLOC_STACK, NULL);
        assert_non_null(p[i]);
    }
    for (int i = 0; i < MANY; i++)
        hwt_large_free(checked(p[i]), FREE_STACK, NULL);
    size_t capped = hwt_large_cached_resident();
    if (capped > RESIDENT_CAP + 2 * MIB + RESIDENT_SLACK)
        fail_msg("%d freed 1 MiB objects left %zu bytes resident, over the cap", MANY, capped);

    for (int i = 0; i < 3000; i++) {
        void *q = hwt_large_alloc(20000, 16, false, ALLOC_STACK, NULL);
        assert_non_null(q);
        hwt_large_free(checked(q), FREE_STACK, NULL);
    }
    size_t decayed = hwt_large_cached_resident();
    if (decayed > RESIDENT_BASE + MIB + RESIDENT_SLACK)
        fail_msg("after 3000 frees of 20000-byte objects the cache still holds %zu bytes", decayed);

    hwt_large_trim();
    assert_true(hwt_large_cached_resident() <= RESIDENT_SLACK);
}

/* A tagged object whose pages were never touched gives them back at free instead of being
 * retagged (its stale pointer then meets tag 0); a used one is retagged free and kept. */
static void test_untouched_tagged_object_is_released(void **state)
{
    (void)state;
    if (!hwt_mte_active)
        skip();
    const size_t size = 200 * 4096;
    unsigned char *used = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    unsigned char *idle = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    assert_non_null(used);
    assert_non_null(idle);
    memset(used, 0x11, size);
    idle[0] = 1;
    size_t before = hwt_large_cached_resident();
    hwt_large_free(checked(used), FREE_STACK, NULL);
    size_t after_used = hwt_large_cached_resident();
    assert_true(after_used >= before + size);
    assert_int_equal(mte_load_tag(mte_untag(used) + size / 2), HWT_TAG_FREE);
    hwt_large_free(checked(idle), FREE_STACK, NULL);
    assert_true(hwt_large_cached_resident() < after_used + size / 2);
    unsigned old = mte_load_tag(mte_untag(idle) + size / 2);
    assert_true(old == HWT_TAG_UNTAGGED || old == HWT_TAG_FREE);
    assert_int_not_equal(old, mte_ptr_tag(idle));
}

/* From here on the thread's large objects are left untagged by sampling (1 in a million is
 * tagged: the first, made now). Returns that first object, for the caller to free. */
static void *sample_out_the_next(void)
{
    hwt_opts.sample = 1000000;
    hwt_opts.sample_order = 0;
    hwt_sample_reset_thread();
    void *first = hwt_large_alloc(20000, 16, false, ALLOC_STACK, NULL);
    assert_non_null(first);
    return first;
}

/* An untagged object of several MiB (HWTAG_MODE=off, or left out by sampling) stays warm in
 * the cache when freed, and a much smaller one reuses its mapping: the object's pages are
 * still resident (no refault), and those past it go back to the OS. Before, every object of
 * 4 MiB and more gave its pages back at free, so a program churning such buffers refaulted
 * all of them (malloc-large: 4.7x glibc's time natively). */
static void test_big_untagged_object_stays_warm(void **state)
{
    (void)state;
    const size_t big = 20 * MIB, small = 6 * MIB; /* no other test leaves such mappings */
    void *first = sample_out_the_next();
    unsigned char *p = hwt_large_alloc(big, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    struct hwt_object o;
    assert_true(hwt_lookup_addr(mte_untag(p), &o));
    assert_false(o.sampled);
    memset(p, 0x6b, big);
    uintptr_t start = mte_untag(p);
    size_t before = hwt_large_cached_resident();
    hwt_large_free(checked(p), FREE_STACK, NULL);
    size_t kept = hwt_large_cached_resident() - before;
    if (kept < big)
        fail_msg("a freed untagged %zu-byte object kept %zu bytes resident", big, kept);

    unsigned char *q = hwt_large_alloc(small, 16, false, ALLOC_STACK, NULL);
    assert_non_null(q);
    if (mte_untag(q) != start)
        fail_msg("a %zu-byte object did not reuse the cached %zu-byte mapping", small, big);
    size_t pages = small / hwt_os_page_size;
    size_t warm = hwt_os_resident_pages((void *)start, small);
    if (warm != pages)
        fail_msg("%zu of the reused object's %zu pages were resident", warm, pages);
    uintptr_t past = start + small + hwt_os_page_size;
    size_t left = hwt_os_resident_pages((void *)past, start + big - past);
    if (left > 0)
        fail_msg("%zu pages past the smaller object stayed resident", left);
    assert_int_equal(q[0], 0x6b); /* the same memory, not a fresh zero page */
    hwt_large_free(checked(q), FREE_STACK, NULL);
    hwt_large_free(checked(first), FREE_STACK, NULL);
}

/* A new large object of size bytes, written whole with byte. */
static unsigned char *written(size_t size, int byte)
{
    unsigned char *p = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    memset(p, byte, size);
    return p;
}

/* Without a close fit, a new object takes the smallest cached mapping that fits, found in the
 * size bins above its own (the cache files mappings by size); then the next smallest. Runs
 * last: the others leave no mapping that fits 3.1..6.2 MiB (nor, below the 4 MiB of the
 * loose fit, one that mid and top could take). */
static void test_reuse_takes_the_smallest_fit_from_the_bins(void **state)
{
    (void)state;
    const size_t want = 3174 * 1024, mid = 3686 * 1024, top = 4044 * 1024;
    unsigned char *a = written(top, 0x41), *b = written(mid, 0x42);
    uintptr_t top_start = mte_untag(a), mid_start = mte_untag(b);
    hwt_large_free(checked(a), FREE_STACK, NULL);
    hwt_large_free(checked(b), FREE_STACK, NULL);
    unsigned char *q = hwt_large_alloc(want, 16, false, ALLOC_STACK, NULL);
    unsigned char *r = hwt_large_alloc(want, 16, false, ALLOC_STACK, NULL);
    assert_non_null(q);
    assert_non_null(r);
    if (mte_untag(q) != mid_start || mte_untag(r) != top_start)
        fail_msg("%zu-byte objects took %s and %s, not the %zu- then the %zu-byte mapping", want,
                 mte_untag(q) == top_start ? "the bigger" : "another",
                 mte_untag(r) == mid_start ? "the smaller" : "another", mid, top);
    hwt_large_free(checked(q), FREE_STACK, NULL);
    hwt_large_free(checked(r), FREE_STACK, NULL);
}

/* Frees a close fit for want, gives every cached page back, frees a bigger fit (then the only
 * warm one), and allocates want: returns which of the two it took, 'c' or 'f', or 0. */
static char take_after_trim(size_t want, size_t close, size_t far)
{
    unsigned char *a = written(close, 0x51), *b = written(far, 0x52);
    uintptr_t close_start = mte_untag(a), far_start = mte_untag(b);
    hwt_large_free(checked(a), FREE_STACK, NULL);
    hwt_large_trim();
    hwt_large_free(checked(b), FREE_STACK, NULL);
    unsigned char *q = hwt_large_alloc(want, 16, false, ALLOC_STACK, NULL);
    assert_non_null(q);
    uintptr_t got = mte_untag(q);
    hwt_large_free(checked(q), FREE_STACK, NULL);
    return got == close_start ? 'c' : got == far_start ? 'f' : 0;
}

/* Between two cached mappings that fit, an untagged object takes the warm one over a close
 * fit whose pages went back (that one would refault every page the object touches); a
 * tagged one takes the close fit (it is retagged either way, and it keeps fewer pages
 * resident). */
static void test_reuse_prefers_warm_pages_untagged(void **state)
{
    (void)state;
    const size_t want = 2200 * 1024, close = 2300 * 1024, far = 4000 * 1024;
    void *first = NULL;
    if (hwt_mte_active) {
        hwt_opts.sample = 1000000; /* the first is tagged, the next ones are not */
        hwt_opts.sample_order = 0;
        hwt_sample_reset_thread();
        first = hwt_large_alloc(20000, 16, false, ALLOC_STACK, NULL);
        assert_non_null(first);
    }
    char took = take_after_trim(want, close, far);
    if (took != 'f')
        fail_msg("an untagged %zu-byte object took %s, not the warm %zu-byte mapping", want,
                 took == 'c' ? "the cold close fit" : "another mapping", far);
    if (first == NULL)
        return;
    hwt_large_free(checked(first), FREE_STACK, NULL);
    hwt_opts.sample = 1;
    hwt_sample_reset_thread();
    took = take_after_trim(want, close, far);
    if (took != 'c')
        fail_msg("a tagged %zu-byte object did not take the %zu-byte close fit", want, close);
}

/* Of two tagged close fits, a tagged object takes the newer, here the bigger one (the older
 * one, smaller, is what a smallest-first rule would take). Runs last: no other test leaves
 * tagged mappings of 6..12 MiB. */
static void test_tagged_reuse_takes_the_newest_close_fit(void **state)
{
    (void)state;
    if (!hwt_mte_active)
        skip();
    const size_t want = 6 * MIB, older = 6246 * 1024, newer = 6656 * 1024;
    unsigned char *a = written(older, 0x61), *b = written(newer, 0x62);
    uintptr_t older_start = mte_untag(a), newer_start = mte_untag(b);
    hwt_large_free(checked(a), FREE_STACK, NULL);
    hwt_large_free(checked(b), FREE_STACK, NULL);
    unsigned char *q = hwt_large_alloc(want, 16, false, ALLOC_STACK, NULL);
    assert_non_null(q);
    if (mte_untag(q) != newer_start)
        fail_msg("a tagged %zu-byte object took %s, not the newer close fit", want,
                 mte_untag(q) == older_start ? "the older close fit" : "another mapping");
    hwt_large_free(checked(q), FREE_STACK, NULL);
}

/* Over the resident budget, an untagged cached mapping whose pages were mostly never touched
 * keeps the few that were, counted, rather than giving them back: that madvise was a TLB
 * shootdown with 2 threads, and its reuse faulted the pages in again. The count keeps the
 * budget honest, and trimming gives those pages back too. */
static void test_untouched_untagged_pages_are_counted_not_given_back(void **state)
{
    (void)state;
    enum { N = 100 }; /* 100 MiB, over the 64 MiB cap */
    void *first = sample_out_the_next();
    unsigned char *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = hwt_large_alloc(MIB, 16, false, ALLOC_STACK, NULL);
        assert_non_null(p[i]);
        p[i][0] = 1;
        p[i][MIB - 1] = 1;
    }
    for (int i = 0; i < N; i++)
        hwt_large_free(checked(p[i]), FREE_STACK, NULL);
    int lost = 0;
    for (int i = 0; i < N; i++)
        lost += hwt_os_resident_pages((void *)mte_untag(p[i]), 1) == 0;
    if (lost > 0)
        fail_msg("%d of %d freed 1 MiB objects with 2 touched pages gave them back", lost, N);
    size_t counted = hwt_large_cached_resident();
    if (counted > RESIDENT_CAP + 2 * MIB + RESIDENT_SLACK)
        fail_msg("the cache counts %zu bytes resident, over the cap", counted);

    hwt_large_trim();
    int kept = 0;
    for (int i = 0; i < N; i++)
        kept += hwt_os_resident_pages((void *)mte_untag(p[i]), 1) != 0;
    if (kept > 0)
        fail_msg("%d of %d cached mappings kept their first page through a trim", kept, N);
    assert_true(hwt_large_cached_resident() <= RESIDENT_SLACK);
    hwt_large_free(checked(first), FREE_STACK, NULL);
}

/* In a child (its recent peak stays its own): N untagged 1 MiB objects, every page
 * touched; writes what the cache keeps resident once half of them are freed. */
#define BIG_PEAK_OBJECTS 200
static void big_peak_child(int fd)
{
    const int n = BIG_PEAK_OBJECTS;
    void *first = sample_out_the_next();
    unsigned char **p = hwt_large_alloc((size_t)n * sizeof(*p), 16, false, ALLOC_STACK, NULL);
    if (p == NULL)
        _exit(1);
    for (int i = 0; i < n; i++) {
        p[i] = hwt_large_alloc(MIB, 16, false, ALLOC_STACK, NULL);
        if (p[i] == NULL)
            _exit(1);
        for (size_t off = 0; off < MIB; off += hwt_os_page_size)
            p[i][off] = 1;
    }
    for (int i = 0; i < n / 2; i++)
        hwt_large_free(checked(p[i]), FREE_STACK, NULL);
    size_t kept = hwt_large_cached_resident();
    ssize_t w = write(fd, &kept, sizeof(kept));
    (void)first;
    _exit(w == (ssize_t)sizeof(kept) ? 0 : 1);
}

/* Freed untagged mappings keep up to half the recent peak of the live ones resident when
 * that is over 64 MiB: with 200 MiB live, then 100 MiB of it freed, more than 64 MiB stays
 * (the peak decays by 1/256 of its gap to the live bytes a free: to about 180 MiB here).
 * With a flat 64 MiB, a program churning 20 buffers of 5..25 MiB faulted three times the
 * pages glibc does. */
static void test_big_peak_keeps_half_of_it_resident(void **state)
{
    (void)state;
    size_t kept = 0;
    ssize_t got;
    int status = in_child(big_peak_child, &kept, sizeof(kept), &got);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("child died (status %#x) freeing 1 MiB objects", status);
    assert_int_equal(got, sizeof(kept));
    const size_t n = BIG_PEAK_OBJECTS;
    if (kept < RESIDENT_CAP + 8 * MIB || kept > (n / 2 + 2) * MIB + RESIDENT_SLACK)
        fail_msg("%zu of %zu live 1 MiB objects freed, all pages touched, left %zu bytes "
                 "resident (the cap: half the peak, at least 64 MiB)",
                 n / 2, n, kept);
}

/* A thread's freed untagged mappings wait in its stash for its next objects: the same
 * mapping comes back without the shared cache; meanwhile it reads as freed (a second free is
 * a double free); the stash stays within its bounds; a flush hands everything to the shared
 * cache. Tagged mappings never stay there. */
static void test_stash_keeps_a_threads_untagged_mappings(void **state)
{
    (void)state;
    enum { N = 12, SIZE = 100000 }; /* no other test uses this size */
    struct hwt_large_stash st = {0};
    struct hwt_large *l;
    struct hwt_object o;
    void *first = sample_out_the_next();
    unsigned char *p = hwt_large_alloc(SIZE, 16, false, ALLOC_STACK, &st);
    assert_non_null(p);
    uintptr_t start = mte_untag(p);
    hwt_large_free(checked(p), FREE_STACK, &st);
    assert_int_equal(st.count, 1);
    assert_int_equal(hwt_large_check(p, &l), HWT_FREE_DOUBLE);
    assert_true(hwt_lookup_addr(start, &o));
    assert_false(o.live);
    assert_int_equal(o.free_stack, FREE_STACK);
    unsigned char *q = hwt_large_alloc(SIZE, 16, false, ALLOC_STACK, &st);
    assert_int_equal(mte_untag(q), start);
    assert_int_equal(st.count, 0);

    unsigned char *r[N];
    for (int i = 0; i < N; i++) {
        r[i] = hwt_large_alloc(MIB, 16, false, ALLOC_STACK, &st);
        assert_non_null(r[i]);
    }
    for (int i = 0; i < N; i++) {
        hwt_large_free(checked(r[i]), FREE_STACK, &st);
        assert_true(st.count <= HWT_LARGE_STASH_MAX && st.bytes <= HWT_LARGE_STASH_BYTES);
    }
    assert_true(st.count > 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(hwt_large_check(r[i], &l), HWT_FREE_DOUBLE);

    hwt_large_free(checked(q), FREE_STACK, &st);
    hwt_large_stash_flush(&st);
    assert_int_equal(st.count, 0);
    assert_int_equal(st.bytes, 0);
    q = hwt_large_alloc(SIZE, 16, false, ALLOC_STACK, NULL);
    assert_int_equal(mte_untag(q), start); /* from the shared cache now */
    hwt_large_free(checked(q), FREE_STACK, NULL);
    hwt_large_free(checked(first), FREE_STACK, NULL);

    if (hwt_mte_active) {
        hwt_opts.sample = 1;
        hwt_sample_reset_thread();
        unsigned char *t = hwt_large_alloc(SIZE, 16, false, ALLOC_STACK, &st);
        assert_non_null(t);
        hwt_large_free(checked(t), FREE_STACK, &st);
        assert_int_equal(st.count, 0);
    }
}

/* The walk reports every live page-backed object once, with its start and requested size,
 * and none that was freed; objects live before the test (other tests') are told apart by a
 * walk taken first. */
enum { WALK_OBJECTS = 10, WALK_SEEN_MAX = 64 };
struct walk_seen {
    unsigned n;
    uintptr_t start[WALK_SEEN_MAX];
    size_t requested[WALK_SEEN_MAX];
    bool live[WALK_SEEN_MAX];
};

static void walk_record(const struct hwt_object *obj, void *arg)
{
    struct walk_seen *seen = arg;
    assert_true(seen->n < WALK_SEEN_MAX);
    assert_true(obj->large);
    seen->start[seen->n] = obj->start;
    seen->requested[seen->n] = obj->requested;
    seen->live[seen->n] = obj->live;
    seen->n++;
}

static unsigned walk_count(const struct walk_seen *seen, uintptr_t start)
{
    unsigned n = 0;
    for (unsigned i = 0; i < seen->n; i++)
        n += seen->start[i] == start;
    return n;
}

static void test_walk_reports_exactly_the_live_objects(void **state)
{
    (void)state;
    static struct walk_seen before, after;
    before.n = after.n = 0;
    hwt_large_walk_live(walk_record, &before);
    unsigned char *p[WALK_OBJECTS];
    size_t size[WALK_OBJECTS];
    for (unsigned i = 0; i < WALK_OBJECTS; i++) {
        size[i] = 40000 + i * 12345;
        p[i] = hwt_large_alloc(size[i], 16, false, ALLOC_STACK, NULL);
        assert_non_null(p[i]);
        assert_int_equal(walk_count(&before, mte_untag(p[i])), 0);
    }
    for (unsigned i = 0; i < WALK_OBJECTS; i += 3)
        hwt_large_free(checked(p[i]), FREE_STACK, NULL);
    hwt_large_walk_live(walk_record, &after);

    unsigned live = 0;
    for (unsigned i = 0; i < WALK_OBJECTS; i++) {
        unsigned n = walk_count(&after, mte_untag(p[i]));
        if (i % 3 == 0) {
            assert_int_equal(n, 0);
            continue;
        }
        assert_int_equal(n, 1);
        for (unsigned j = 0; j < after.n; j++) {
            if (after.start[j] == mte_untag(p[i]))
                assert_int_equal(after.requested[j], size[i]);
        }
        live++;
    }
    assert_int_equal(after.n, before.n + live);
    for (unsigned j = 0; j < after.n; j++) {
        assert_true(after.live[j]);
        assert_int_equal(walk_count(&after, after.start[j]), 1);
    }
    for (unsigned i = 0; i < WALK_OBJECTS; i++) {
        if (i % 3 != 0)
            hwt_large_free(checked(p[i]), FREE_STACK, NULL);
    }
}

/* The leak check leaves a large object's mapping out of its root scan, and no more: the page
 * above it may be the program's (CPython's arenas were), whose pointers are roots. */
static void test_leak_skip_is_the_large_mapping_alone(void **state)
{
    (void)state;
    size_t size = 40000, page = hwt_os_page_size;
    char *p = hwt_large_alloc(size, 16, false, ALLOC_STACK, NULL);
    assert_non_null(p);
    struct hwt_leak_object obj = {
        .start = (uintptr_t)mte_untag(p), .size = size, .marks = HWT_LEAK_LARGE};
    struct hwt_leak_graph g = {0};
    g.objects = &obj;
    g.count = 1;
    struct hwt_leak_world w = {0};
    struct hwt_leak_range *skip = NULL;
    size_t n = 0, bytes = 0;
    assert_true(hwt_leak_roots_skip(&g, &w, &skip, &n, &bytes));
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        if (skip[i].lo == obj.start - page) {
            found = true;
            assert_int_equal(skip[i].hi, obj.start - page + hwt_large_map_size(size));
        }
    }
    assert_true(found);
    /* and the chunks' unused ends, which nothing has touched */
    uintptr_t lo[2], hi[2];
    unsigned nunused = hwt_large_map_unused(lo, hi);
    assert_true(nunused > 0);
    for (unsigned k = 0; k < nunused; k++) {
        size_t i = 0;
        while (i < n && (skip[i].lo != lo[k] || skip[i].hi != hi[k]))
            i++;
        if (i == n)
            fail_msg("the unused end [%#lx, %#lx) is not skipped", (unsigned long)lo[k],
                     (unsigned long)hi[k]);
    }
    /* the object's own record says where its mapping ends */
    struct hwt_object o;
    assert_true(hwt_lookup_addr(obj.start, &o));
    assert_int_equal(obj.start + o.region_size, obj.start - page + hwt_large_map_size(size));
    hwt_os_unmap(skip, bytes);
    hwt_large_free(checked(p), FREE_STACK, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fresh_mappings_are_carved_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leak_skip_is_the_large_mapping_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reuse_prefers_a_close_fit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_carving_after_the_unused_ends_went_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_trim_gives_back_pages_past_the_last_object, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_multiple_keeps_a_guard, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookup_describes_live_and_freed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_reports_exactly_the_live_objects, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_check_rejects_pointers_it_does_not_own, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_alignment_is_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_freed_mapping_is_reused_with_a_new_tag, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sampling_leaves_the_skipped_untagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reused_mapping_has_room_after_its_start, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cached_pages_are_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_untouched_tagged_object_is_released, setup, teardown),
        cmocka_unit_test_setup_teardown(test_big_untagged_object_stays_warm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reuse_takes_the_smallest_fit_from_the_bins, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reuse_prefers_warm_pages_untagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tagged_reuse_takes_the_newest_close_fit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_untouched_untagged_pages_are_counted_not_given_back,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_stash_keeps_a_threads_untagged_mappings, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_big_peak_keeps_half_of_it_resident, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
