/* SPDX-License-Identifier: MIT */
/* The pool API (hwtag_pool_alloc/hwtag_pool_free, include/hwtag.h): the rules on its
 * arguments, the tags it gives, and the reports of bugs between pool objects, which must
 * name the pool object's bounds and the heap object it lies in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/mte.h"
#include "harness.h"
#include "hwtag.h"
#include "options.h"
#include "report_text.h"

#define TRIALS 300
#define LARGE_BLOCK (64u * 1024u)

static volatile unsigned char sink;
static struct child_result result;

static void run(void (*fn)(void *), void *arg)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
}

/* "The buggy address belongs to the pool object at ..." and what follows, for a pool
 * object of size bytes at the untagged address the child said under key. */
static void expect_pool_object(const char *key_obj, const char *key_block, size_t size,
                               size_t block_size)
{
    char line[256];
    uintptr_t obj = hex_after(result.output, key_obj);
    uintptr_t block = hex_after(result.output, key_block);
    snprintf(line, sizeof(line),
             "The buggy address belongs to the pool object at %lx\n"
             " of size %zu, a pool object inside the heap object at %lx of size %zu\n",
             (unsigned long)obj, size, (unsigned long)block, block_size);
    expect_text(&result, line);
    snprintf(line, sizeof(line), " %zu-byte pool region [%lx, %lx)\n", size, (unsigned long)obj,
             (unsigned long)(obj + size));
    expect_text(&result, line);
}

static __attribute__((noinline)) void overflow_between_pool_objects(void *arg)
{
    size_t block_size = arg != NULL ? LARGE_BLOCK : 256;
    unsigned char *block = malloc(block_size);
    volatile unsigned char *a = hwtag_pool_alloc(block, 64, 32);
    volatile unsigned char *b = hwtag_pool_alloc(block, 96, 48);
    if (a == NULL || b == NULL)
        _exit(91);
    say("pool_a", untag((const void *)a));
    say("block", untag(block));
    a[31] = 1;
    b[0] = 2;
    a[32] = 3; /* into b */
    say_line("went on\n");
    _exit(0);
}

static void test_overflow_into_the_next_pool_object(void **state)
{
    (void)state;
    run(overflow_between_pool_objects, NULL);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_between_pool_objects+0x");
    expect_text(&result, "Write of size 1 at addr ");
    expect_pool_object("pool_a=0x", "block=0x", 32, 256);
    expect_text(&result, "The buggy address is located 0 bytes to the right of\n"
                         " 32-byte pool region");
    /* the pool object's allocation stack: the hwtag_pool_alloc call */
    expect_text(&result, "Allocated by task ");
    expect_text(&result, "\n overflow_between_pool_objects+0x");
    expect_no_text(&result, "went on");
}

static void test_overflow_between_pool_objects_of_a_page_backed_block(void **state)
{
    (void)state;
    run(overflow_between_pool_objects, (void *)1);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: out-of-bounds in overflow_between_pool_objects+0x");
    expect_pool_object("pool_a=0x", "block=0x", 32, LARGE_BLOCK);
    expect_text(&result, " which belongs to a page-backed mapping of ");
}

static __attribute__((noinline)) void use_after_pool_free(void *arg)
{
    (void)arg;
    unsigned char *block = malloc(512);
    volatile unsigned char *a = hwtag_pool_alloc(block, 128, 64);
    if (a == NULL)
        _exit(91);
    say("pool_a", untag((const void *)a));
    say("block", untag(block));
    a[10] = 1;
    hwtag_pool_free((void *)a, 64);
    sink = a[10];
    say_line("went on\n");
    _exit(0);
}

static void test_use_after_pool_free(void **state)
{
    (void)state;
    run(use_after_pool_free, NULL);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in use_after_pool_free+0x");
    expect_text(&result, "Read of size 1 at addr ");
    expect_text(&result, "memory tag: [0f]");
    expect_pool_object("pool_a=0x", "block=0x", 64, 512);
    expect_text(&result, "The buggy address is located 10 bytes inside of\n 64-byte pool region");
    expect_text(&result, "Freed by task ");
    expect_no_text(&result, "went on");
}

static __attribute__((noinline)) void pool_free_twice(void *arg)
{
    (void)arg;
    unsigned char *block = malloc(512);
    void *a = hwtag_pool_alloc(block, 0, 64);
    if (a == NULL)
        _exit(91);
    say("pool_a", untag(a));
    say("block", untag(block));
    hwtag_pool_free(a, 64);
    hwtag_pool_free(a, 64);
    say_line("went on\n");
    _exit(0);
}

static void test_double_pool_free(void **state)
{
    (void)state;
    run(pool_free_twice, NULL);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: double-free in pool_free_twice+0x");
    expect_text(&result, "Free of addr ");
    expect_pool_object("pool_a=0x", "block=0x", 64, 512);
}

/* HWTAG_FAULT=report: both pool bugs of one run, and the run goes on. */
static __attribute__((noinline)) void two_pool_bugs(void *arg)
{
    (void)arg;
    hwt_opts.fault = HWT_FAULT_REPORT;
    unsigned char *block = malloc(1024);
    volatile unsigned char *a = hwtag_pool_alloc(block, 0, 32);
    volatile unsigned char *b = hwtag_pool_alloc(block, 32, 32);
    if (a == NULL || b == NULL)
        _exit(91);
    a[40] = 1;
    hwtag_pool_free((void *)b, 32);
    sink = b[0];
    free(block);
    exit(0);
}

static void test_report_mode_reports_both_pool_bugs(void **state)
{
    (void)state;
    run(two_pool_bugs, NULL);
    expect_exit(&result, 0);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in two_pool_bugs+0x");
    expect_text(&result, "BUG: KASAN: slab-use-after-free in two_pool_bugs+0x");
    assert_int_equal(count_text(result.output, "The buggy address belongs to the pool object"), 2);
    expect_text(&result, "hwtag: 2 reports printed, 0 suppressed as duplicates\n");
}

/* The rules on arguments: granule alignment, inside a live heap object. */
static void test_bad_ranges_are_refused(void **state)
{
    (void)state;
    unsigned char *block = malloc(100);
    assert_non_null(block);
    errno = 0;
    assert_null(hwtag_pool_alloc(block, 8, 32)); /* misaligned offset */
    assert_int_equal(errno, EINVAL);
    errno = 0;
    assert_null(hwtag_pool_alloc(block, 0, 24)); /* size not a granule multiple */
    assert_int_equal(errno, EINVAL);
    assert_null(hwtag_pool_alloc(block, 0, 0));
    assert_null(hwtag_pool_alloc(block, 80, 32)); /* past the 100 requested bytes */
    assert_null(hwtag_pool_alloc(block, SIZE_MAX - 15, 32));
    assert_null(hwtag_pool_alloc(block + 16, 0, 16)); /* not the object's start */
    assert_null(hwtag_pool_alloc(NULL, 0, 16));
    int local[8];
    assert_null(hwtag_pool_alloc(local, 0, 16)); /* not a heap object */
    void *ok = hwtag_pool_alloc(block, 80, 16);  /* the last whole granule of the request */
    assert_non_null(ok);
    assert_int_equal(untag(ok), untag(block) + 80);
    errno = 0;
    hwtag_pool_free((char *)ok + 8, 16);
    assert_int_equal(errno, EINVAL);
    hwtag_pool_free(ok, 16);
    free(block);
    errno = 0;
    assert_null(hwtag_pool_alloc(block, 0, 16)); /* freed */
    assert_int_equal(errno, EINVAL);
}

/* Tags: never 0, 15 or the block's, never a neighbour's, never the range's last one. */
static void test_pool_tags(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    for (int t = 0; t < TRIALS; t++) {
        unsigned char *block = malloc(256);
        assert_non_null(block);
        unsigned char *prev = NULL;
        for (size_t off = 0; off < 256; off += 32) {
            unsigned char *p = hwtag_pool_alloc(block, off, 32);
            assert_non_null(p);
            unsigned tag = ptr_tag(p);
            assert_true(tag != 0 && tag != 15 && tag != ptr_tag(block));
            assert_int_equal(mte_load_tag(untag(p)), tag);
            assert_int_equal(mte_load_tag(untag(p) + 16), tag);
            if (prev != NULL)
                assert_int_not_equal(tag, ptr_tag(prev));
            prev = p;
        }
        /* a range given out again after its free: a different tag than last time */
        unsigned old = ptr_tag(prev);
        hwtag_pool_free(prev, 32);
        assert_int_equal(mte_load_tag(untag(prev)), 15);
        unsigned char *again = hwtag_pool_alloc(block, 224, 32);
        assert_int_not_equal(ptr_tag(again), old);
        /* the middle of the row: both neighbours excluded */
        unsigned char *mid = hwtag_pool_alloc(block, 96, 32);
        assert_int_not_equal(ptr_tag(mid), mte_load_tag(untag(block) + 80));
        assert_int_not_equal(ptr_tag(mid), mte_load_tag(untag(block) + 128));
        free(block);
    }
}

/* Freeing the enclosing object drops its records: its memory is retagged free, and a
 * pool pointer into it is no longer described as a pool object. */
static __attribute__((noinline)) void pool_pointer_after_block_free(void *arg)
{
    (void)arg;
    unsigned char *block = malloc(256);
    volatile unsigned char *a = hwtag_pool_alloc(block, 32, 32);
    if (a == NULL)
        _exit(91);
    free(block);
    say("mem", mte_load_tag(untag((const void *)a)));
    sink = a[0];
    say_line("went on\n");
    _exit(0);
}

static void test_block_free_drops_pool_records(void **state)
{
    (void)state;
    run(pool_pointer_after_block_free, NULL);
    expect_abort(&result);
    assert_int_equal(hex_after(result.output, "mem=0x"), 15);
    expect_text(&result, "BUG: KASAN: ");
    expect_no_text(&result, "pool object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overflow_into_the_next_pool_object),
        cmocka_unit_test(test_overflow_between_pool_objects_of_a_page_backed_block),
        cmocka_unit_test(test_use_after_pool_free),
        cmocka_unit_test(test_double_pool_free),
        cmocka_unit_test(test_report_mode_reports_both_pool_bugs),
        cmocka_unit_test(test_bad_ranges_are_refused),
        cmocka_unit_test(test_pool_tags),
        cmocka_unit_test(test_block_free_drops_pool_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
