/* SPDX-License-Identifier: MIT */
/* Tag-check detection, ported from the userspace-meaningful cases of the kernel's KASAN
 * KUnit suite to malloc: each bug runs in a child that records the SIGSEGV it takes, and
 * the test asserts the kind of fault (SEGV_MTESERR) and the faulting address. */
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/size_class_model.h"
#include "harness.h"

#define FREE_TAG 15u /* DESIGN: freed slots and slot rests */

/* The bug under test: the pointer it misuses and the exact address expected to fault
 * (or a window for string functions whose access width is theirs to choose). */
struct bug {
    size_t size;
    long offset;   /* access at p + offset */
    size_t window; /* 0: exact address; else the fault lands in [p+offset, p+offset+window) */
    int kind;
    void *volatile ptr; /* set in the child, reported back through the fault address */
};

enum {
    READ_BYTE,
    WRITE_BYTE,
    READ_AFTER_FREE,
    WRITE_AFTER_FREE,
    MEMSET_PAST,
    MEMCPY_PAST,
    MEMMOVE_PAST,
    MEMCHR_PAST,
    MEMCMP_PAST,
    STRLEN_PAST,
    MEMSET_FREED,
    REALLOC_GROW_READ,
    REALLOC_SHRINK_READ,
    ALIGNED_READ,
    CALLOC_READ,
    WARM_READ_PAST,       /* the read follows a malloc from a warmed call site */
    WARM_READ_AFTER_FREE, /* ... a free from a warmed call site */
};

/* Mallocs and frees at one call site until both take their fast paths (a slot in the bin,
 * the site's stack in the thread's stack cache), then mallocs there once more, and frees
 * it there too when free_last: the bug's access then follows the fast path's return. */
static __attribute__((noinline)) unsigned char *warm_site(size_t size, bool free_last)
{
    unsigned char *p = NULL;
    for (int i = 0; i < 8; i++) {
        p = malloc(size);
        if (p == NULL)
            _exit(4);
        p[0] = 1;
        if (i < 7 || free_last)
            free(p);
    }
    return p;
}

static volatile unsigned char sink;
static volatile size_t sink_size;

static void do_bug(void *arg)
{
    struct bug *b = arg;
    unsigned char *volatile p = NULL;
    unsigned char other[64];
    memset(other, 'x', sizeof(other));
    switch (b->kind) {
    case READ_BYTE:
    case WRITE_BYTE:
    case READ_AFTER_FREE:
    case WRITE_AFTER_FREE:
    case MEMSET_FREED:
        p = malloc(b->size);
        break;
    case CALLOC_READ:
        p = calloc(1, b->size);
        break;
    case ALIGNED_READ:
        if (posix_memalign((void **)&p, 64, b->size) != 0)
            _exit(3);
        break;
    case REALLOC_GROW_READ:
        p = malloc(8);
        p = realloc(p, b->size);
        break;
    case WARM_READ_PAST:
    case WARM_READ_AFTER_FREE:
        p = warm_site(b->size, b->kind == WARM_READ_AFTER_FREE);
        break;
    case REALLOC_SHRINK_READ:
        p = malloc(b->size * 2 - 16);
        p = realloc(p, b->size);
        break;
    default:
        p = malloc(b->size);
        memset(p, 'a', b->size);
        break;
    }
    if (p == NULL)
        _exit(4);
    b->ptr = p;
    /* tell the parent where the object is, through stdout (stderr carries reports) */
    if (write(1, (const void *)&b->ptr, sizeof(b->ptr)) < 0)
        _exit(5);
    switch (b->kind) {
    case READ_BYTE:
    case CALLOC_READ:
    case ALIGNED_READ:
    case REALLOC_GROW_READ:
    case REALLOC_SHRINK_READ:
    case WARM_READ_PAST:
    case WARM_READ_AFTER_FREE:
        sink = p[b->offset];
        break;
    case WRITE_BYTE:
        p[b->offset] = 1;
        break;
    case READ_AFTER_FREE:
        free(p);
        sink = p[b->offset];
        break;
    case WRITE_AFTER_FREE:
        free(p);
        p[b->offset] = 1;
        break;
    case MEMSET_FREED:
        free(p);
        memset(p, 0, b->size);
        break;
    case MEMSET_PAST:
        memset(p, 0, b->size + 1);
        break;
    case MEMCPY_PAST:
        memcpy(other, p, b->size + 1);
        break;
    case MEMMOVE_PAST:
        memmove(p + 1, p, b->size);
        break;
    case MEMCHR_PAST:
        sink = memchr(p, 'z', b->size + 1) != NULL;
        break;
    case MEMCMP_PAST:
        memset(other, 'a', sizeof(other));
        sink = (unsigned char)memcmp(p, other, b->size + 1);
        break;
    case STRLEN_PAST:
        sink_size = strlen((const char *)p);
        break;
    }
}

/* Runs the bug, checks SEGV_MTESERR at the expected address with the pointer's tag. */
static void expect_tag_fault(struct bug *b)
{
    struct child_result r;
    if (!tagging_active())
        skip();
    int out_pipe[2];
    assert_int_equal(pipe(out_pipe), 0);
    int saved = dup(1);
    dup2(out_pipe[1], 1);
    bool ok = run_child(CATCH_SEGV, do_bug, b, &r);
    dup2(saved, 1);
    close(saved);
    close(out_pipe[1]);
    void *ptr = NULL;
    assert_int_equal(read(out_pipe[0], &ptr, sizeof(ptr)), sizeof(ptr));
    close(out_pipe[0]);
    assert_true(ok);
    if (!r.faulted)
        fail_msg("no fault: child exit %d signal %d, stderr: %s", r.exit_code, r.signal, r.output);
    assert_int_equal(r.si_code, SEGV_MTESERR);
    assert_int_equal(ptr_tag((void *)r.fault_addr), ptr_tag(ptr));
    uintptr_t want = untag(ptr) + (uintptr_t)b->offset;
    if (b->window == 0) {
        assert_int_equal(untag((void *)r.fault_addr), want);
    } else {
        assert_in_range(untag((void *)r.fault_addr), want, want + b->window - 1);
    }
}

/* kmalloc_oob_right: one byte past the granule-rounded end. */
static void test_oob_right_small(void **state)
{
    (void)state;
    struct bug b = {.size = 123, .offset = 128, .kind = READ_BYTE};
    expect_tag_fault(&b);
    struct bug w = {.size = 128, .offset = 128, .kind = WRITE_BYTE};
    expect_tag_fault(&w);
}

/* kmalloc_oob_left */
static void test_oob_left_small(void **state)
{
    (void)state;
    struct bug b = {.size = 100, .offset = -1, .kind = READ_BYTE};
    expect_tag_fault(&b);
}

/* kmalloc_large_oob_right / page_alloc_oob_right, also for a whole number of pages */
static void test_oob_right_large(void **state)
{
    (void)state;
    struct bug b = {.size = 40000, .offset = 40000, .kind = READ_BYTE};
    expect_tag_fault(&b);
    struct bug pages = {.size = 65536, .offset = 65536, .kind = WRITE_BYTE};
    expect_tag_fault(&pages);
    struct bug big = {.size = 1 << 20, .offset = 1 << 20, .kind = READ_BYTE};
    expect_tag_fault(&big);
}

/* page-backed objects have a free-tagged guard page below them too */
static void test_oob_left_large(void **state)
{
    (void)state;
    struct bug b = {.size = 100000, .offset = -1, .kind = READ_BYTE};
    expect_tag_fault(&b);
    struct bug w = {.size = 65536, .offset = -16, .kind = WRITE_BYTE};
    expect_tag_fault(&w);
}

/* kmalloc_uaf, kmalloc_uaf2 */
static void test_use_after_free_small(void **state)
{
    (void)state;
    struct bug b = {.size = 10, .offset = 8, .kind = READ_AFTER_FREE};
    expect_tag_fault(&b);
    struct bug w = {.size = 4000, .offset = 0, .kind = WRITE_AFTER_FREE};
    expect_tag_fault(&w);
}

/* The fast paths of malloc and free may run with Tag Check Override set (alloc_fast.h):
 * the program's next access must be checked again. */
static void test_checks_on_after_fast_paths(void **state)
{
    (void)state;
    struct bug m = {.size = 32, .offset = 32, .kind = WARM_READ_PAST};
    expect_tag_fault(&m);
    struct bug f = {.size = 48, .offset = 16, .kind = WARM_READ_AFTER_FREE};
    expect_tag_fault(&f);
}

static void test_use_after_free_large(void **state)
{
    (void)state;
    struct bug b = {.size = 50000, .offset = 49999, .kind = READ_AFTER_FREE};
    expect_tag_fault(&b);
    struct bug w = {.size = 1 << 20, .offset = 4096, .kind = WRITE_AFTER_FREE};
    expect_tag_fault(&w);
}

static void touch_after_huge_free(void *arg)
{
    (void)arg;
    size_t size = (size_t)80 << 20; /* more than the cache keeps: unmapped when freed */
    unsigned char *volatile p = malloc(size);
    if (p == NULL)
        _exit(4);
    p[size - 1] = 1;
    free((void *)p);
    sink = p[4096];
}

/* A freed object too big for the cache is unmapped: a later access is a plain SIGSEGV on
 * an unmapped page, which counts as a detection (issue 3, point 6). */
static void test_use_after_free_of_huge_object(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(CATCH_SEGV, touch_after_huge_free, NULL, &r));
    assert_true(r.faulted);
    assert_int_equal(r.si_code, SEGV_MAPERR);
}

static unsigned char *volatile stale;

/* Frees a fully written object (its pages stay resident in the cache) and, for arg != 0,
 * has the next object of that size reuse its mapping; then reads through the old pointer. */
static void touch_after_cached_reuse(void *arg)
{
    const size_t size = 300000;
    unsigned char *p = malloc(size);
    if (p == NULL)
        _exit(4);
    memset(p, 1, size);
    free(p);
    stale = p;
    if (arg != NULL) {
        unsigned char *q = malloc(size);
        if (q == NULL || untag(q) != untag(p))
            _exit(6); /* the mapping was not reused: nothing tested */
        memset(q, 2, size);
    }
    sink = stale[size / 2];
    _exit(5);
}

/* A freed mapping kept warm for reuse still faults through the old pointer, while cached
 * and after the next object took it. */
static void test_use_after_free_of_cached_and_reused_mapping(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    for (uintptr_t reuse = 0; reuse < 2; reuse++) {
        struct child_result r;
        assert_true(run_child(CATCH_SEGV, touch_after_cached_reuse, (void *)reuse, &r));
        if (!r.faulted)
            fail_msg("reuse=%d: no fault, child exit %d", (int)reuse, r.exit_code);
        assert_int_equal(r.si_code, SEGV_MTESERR);
    }
}

/* kmalloc_memmove_invalid_size, kasan_memchr, kasan_memcmp, kasan_strings, memset */
static void test_string_functions_past_end(void **state)
{
    (void)state;
    int kinds[] = {MEMSET_PAST, MEMCPY_PAST, MEMMOVE_PAST, MEMCHR_PAST, MEMCMP_PAST, STRLEN_PAST};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        /* the functions use wide loads and stores: the fault is in the granule past the
         * object, or in the access that straddles into it */
        struct bug b = {.size = 48, .offset = 32, .window = 32, .kind = kinds[i]};
        expect_tag_fault(&b);
    }
    struct bug freed = {.size = 64, .offset = 0, .window = 64, .kind = MEMSET_FREED};
    expect_tag_fault(&freed);
}

/* krealloc_more_oob, krealloc_less_oob */
static void test_realloc_grow_and_shrink(void **state)
{
    (void)state;
    struct bug grow = {.size = 200, .offset = 208, .kind = REALLOC_GROW_READ};
    expect_tag_fault(&grow);
    struct bug shrink = {.size = 160, .offset = 160, .kind = REALLOC_SHRINK_READ};
    expect_tag_fault(&shrink);
}

static void test_aligned_and_calloc_objects(void **state)
{
    (void)state;
    struct bug a = {.size = 100, .offset = 112, .kind = ALIGNED_READ};
    expect_tag_fault(&a);
    struct bug c = {.size = 300, .offset = 304, .kind = CALLOC_READ};
    expect_tag_fault(&c);
}

static void touch_last_granule(void *arg)
{
    (void)arg;
    unsigned char *volatile p = malloc(123);
    /* bytes 123..127 share the last 16-byte granule with the object: same tag, no fault */
    for (int i = 123; i < 128; i++)
        p[i] = (unsigned char)i;
    p = malloc(40001);
    for (int i = 40001; i < 40016; i++) /* the rest of the large object's last granule */
        p[i] = 1;
    /* no free: that is where the tail check would report them (test_tail.c) */
}

/* The granule limit: an access inside the last 16-byte granule does not fault with MTE
 * (the kernel's tests skip these cases for HW_TAGS); this test pins that down. The tail
 * check finds such writes later, at free or realloc (test_tail.c). */
static void test_overflow_within_last_granule_is_not_caught(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(CATCH_SEGV, touch_last_granule, NULL, &r));
    assert_false(r.faulted);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
}

#define TRIALS 5000

/* Neighbours never share a tag: over thousands of objects carved side by side, each
 * object's tag differs from the tags of the objects right before and after it. */
static void test_neighbour_tags_always_differ(void **state)
{
    (void)state;
    static void *objs[TRIALS];
    unsigned adjacent = 0;
    if (!tagging_active())
        skip();
    for (int i = 0; i < TRIALS; i++) {
        objs[i] = malloc(32);
        assert_non_null(objs[i]);
        assert_int_not_equal(ptr_tag(objs[i]), 0);
        assert_int_not_equal(ptr_tag(objs[i]), 15);
    }
    for (int i = 0; i < TRIALS; i++) {
        for (int j = 0; j < TRIALS; j += 1) {
            if (j == i || untag(objs[j]) != untag(objs[i]) + 32)
                continue;
            adjacent++;
            assert_int_not_equal(ptr_tag(objs[i]), ptr_tag(objs[j]));
            break;
        }
        if (i > 64 && adjacent == 0)
            break;
    }
    assert_true(adjacent > TRIALS / 2);
    for (int i = 0; i < TRIALS; i++)
        free(objs[i]);
}

/* A slot's new tag is never its previous one: free then malloc of the same size reuses
 * the slot at once (thread cache, LIFO), and the old pointer's tag no longer matches. */
static void test_reused_slot_never_gets_previous_tag(void **state)
{
    (void)state;
    unsigned reused = 0;
    if (!tagging_active())
        skip();
    static const size_t sizes[] = {16, 48, 200, 1000, 9000, 40000};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        void *p = malloc(sizes[s]);
        for (int i = 0; i < TRIALS / 5; i++) {
            unsigned old = ptr_tag(p);
            uintptr_t addr = untag(p);
            free(p);
            p = malloc(sizes[s]);
            if (untag(p) == addr) {
                reused++;
                assert_int_not_equal(ptr_tag(p), old);
            }
        }
        free(p);
    }
    assert_true(reused > TRIALS / 2);
}

/* Memory tag of the granule at addr (untagged); 0 where there is no MTE (the test that
 * reads it skips then). */
static unsigned granule_tag(uintptr_t addr)
{
    uintptr_t p = addr;
#if defined(__aarch64__)
    __asm__ volatile(".arch armv8.5-a+memtag\nldg %0, [%0]" : "+r"(p) : : "memory");
#endif
    return (unsigned)(p >> 56) & 15u;
}

static void check_tags_kept(const unsigned char *p, size_t size, size_t freed_size)
{
    uintptr_t a = untag(p);
    for (size_t off = 0; off < size; off += 16)
        if (granule_tag(a + off) != ptr_tag(p))
            fail_msg("size %zu: freeing a neighbour retagged granule +%zu", freed_size, off);
}

/* Checks the tags around a live object of size bytes: every granule of it carries the
 * pointer's tag, and the granules just before and just after it do not. Then frees it
 * and checks that every granule it had is retagged away from that tag, and that the
 * tags of a neighbour allocated with it (often the next slot) are untouched. */
static void check_object_tags(unsigned char *p, size_t size)
{
    unsigned char *other = malloc(size);
    assert_non_null(other);
    uintptr_t a = untag(p);
    unsigned t = ptr_tag(p);
    size_t usable = (size + 15) & ~(size_t)15;
    for (size_t off = 0; off < usable; off += 16)
        if (granule_tag(a + off) != t)
            fail_msg("size %zu: granule at +%zu has tag %u, pointer %u", size, off,
                     granule_tag(a + off), t);
    /* every granule past the end, up to the slot's end, is free-tagged: malloc may tag
     * whole blocks past the end and give those granules back */
    size_t slot = size <= 16384 ? model_slot_size(size) : usable + 16;
    for (size_t off = usable; off < slot; off += 16)
        if (size <= 16384 ? granule_tag(a + off) != FREE_TAG : granule_tag(a + off) == t)
            fail_msg("size %zu: granule +%zu past the end (slot %zu) has tag %u, pointer %u", size,
                     off, slot, granule_tag(a + off), t);
    if (granule_tag(a - 16) == t)
        fail_msg("size %zu: granule before the object has its tag %u", size, t);
    free(p);
    for (size_t off = 0; off < usable; off += 16)
        if (granule_tag(a + off) == t)
            fail_msg("size %zu: granule at +%zu keeps tag %u after free", size, off, t);
    check_tags_kept(other, size, size);
    free(other);
}

/* The tag stores cover each object exactly, whatever its size: the store sequences
 * differ by the size's remainder modulo 128 and by whether whole DC GVA blocks fit, so
 * every size up to 4 KiB and a spread above it are checked, malloc and calloc. */
static void test_every_granule_tagged_exactly(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    unsigned checked = 0;
    for (size_t size = 1; size <= 16384; size += size < 4200 ? 1 : 61) {
        unsigned char *p = malloc(size);
        assert_non_null(p);
        p[0] = 1;
        p[size - 1] = 2;
        check_object_tags(p, size);
        unsigned char *z = calloc(1, size);
        assert_non_null(z);
        for (size_t i = 0; i < size; i++)
            if (z[i] != 0)
                fail_msg("calloc(%zu): byte %zu is %u", size, i, z[i]);
        check_object_tags(z, size);
        checked += 2;
    }
    assert_true(checked > 8000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oob_right_small),
        cmocka_unit_test(test_oob_left_small),
        cmocka_unit_test(test_oob_right_large),
        cmocka_unit_test(test_oob_left_large),
        cmocka_unit_test(test_use_after_free_small),
        cmocka_unit_test(test_checks_on_after_fast_paths),
        cmocka_unit_test(test_use_after_free_large),
        cmocka_unit_test(test_use_after_free_of_huge_object),
        cmocka_unit_test(test_use_after_free_of_cached_and_reused_mapping),
        cmocka_unit_test(test_string_functions_past_end),
        cmocka_unit_test(test_realloc_grow_and_shrink),
        cmocka_unit_test(test_aligned_and_calloc_objects),
        cmocka_unit_test(test_overflow_within_last_granule_is_not_caught),
        cmocka_unit_test(test_neighbour_tags_always_differ),
        cmocka_unit_test(test_reused_slot_never_gets_previous_tag),
        cmocka_unit_test(test_every_granule_tagged_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
