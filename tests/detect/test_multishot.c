/* SPDX-License-Identifier: MIT */
/* HWTAG_FAULT=report as a multi-shot mode (docs/design.md, section 5): each distinct bug
 * (bug type + pc) printed once, HWTAG_MAX_REPORTS bounding a storm, checks resuming at
 * the thread's next allocator call, and the count line at exit. Each child sets the
 * hwt_opts fields itself (options are read once at start-up) and ends with exit(), so the
 * exit line is written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "options.h"
#include "report_text.h"

#define BLIND_BUGS 8

static volatile unsigned char sink;
static struct child_result result;

static void run(void (*fn)(void *), void *arg)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
    expect_exit(&result, 0);
}

/* An allocator call the compiler cannot drop: checks come back after it. */
static __attribute__((noinline)) void allocator_call(void)
{
    void *volatile t = malloc(8);
    free(t);
}

static __attribute__((noinline)) void overflow_write(volatile unsigned char *p)
{
    p[64] = 1;
}

static __attribute__((noinline)) void overflow_read(volatile unsigned char *p)
{
    sink = p[80];
}

static __attribute__((noinline)) void free_twice(void)
{
    void *volatile p = malloc(40);
    free(p);
    free(p);
}

static void setup_report_mode(uint32_t max_reports)
{
    hwt_opts.fault = HWT_FAULT_REPORT;
    hwt_opts.max_reports = max_reports;
}

static __attribute__((noinline)) void three_bugs(void *arg)
{
    setup_report_mode((uint32_t)(uintptr_t)arg);
    volatile unsigned char *volatile p = malloc(48);
    overflow_write(p);
    allocator_call();
    overflow_read(p);
    allocator_call();
    free_twice();
    exit(0);
}

static void test_three_bugs_three_reports(void **state)
{
    (void)state;
    run(three_bugs, (void *)(uintptr_t)100);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_write+0x");
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_read+0x");
    expect_text(&result, "BUG: KASAN: double-free in free_twice+0x");
    assert_int_equal(count_text(result.output, "BUG: KASAN: "), 3);
    assert_int_equal(count_text(result.output, "SUMMARY: KASAN: "), 3);
    /* the last line of the run */
    const char *line = "hwtag: 3 reports printed, 0 suppressed as duplicates\n";
    expect_text(&result, line);
    assert_string_equal(result.output + result.output_len - strlen(line), line);
}

static __attribute__((noinline)) void same_bug_in_a_loop(void *arg)
{
    (void)arg;
    setup_report_mode(100);
    volatile unsigned char *volatile p = malloc(48);
    for (int i = 0; i < 10; i++) {
        allocator_call(); /* so that every round faults again */
        overflow_write(p);
    }
    for (int i = 0; i < 5; i++) {
        void *volatile q = malloc(24);
        free(q);
        free(q); /* a bad free: the same caller pc every round */
    }
    exit(0);
}

static void test_same_bug_in_a_loop_one_report(void **state)
{
    (void)state;
    run(same_bug_in_a_loop, NULL);
    assert_int_equal(count_text(result.output, "BUG: KASAN: slab-out-of-bounds in overflow_write"),
                     1);
    assert_int_equal(count_text(result.output, "BUG: KASAN: double-free in same_bug_in_a_loop"), 1);
    assert_int_equal(count_text(result.output, "BUG: KASAN: "), 2);
    expect_text(&result, "hwtag: 2 reports printed, 13 suppressed as duplicates\n");
}

static void test_the_cap_holds(void **state)
{
    (void)state;
    run(three_bugs, (void *)(uintptr_t)2);
    assert_int_equal(count_text(result.output, "BUG: KASAN: "), 2);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_write+0x");
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_read+0x");
    expect_no_text(&result, "double-free");
    expect_text(&result, "hwtag: HWTAG_MAX_REPORTS=2 reached: 1 more distinct bugs not printed\n");
    const char *line = "hwtag: 2 reports printed, 1 suppressed as duplicates\n";
    assert_string_equal(result.output + result.output_len - strlen(line), line);
}

/* Distinct bad accesses, each at its own pc, none of them a duplicate. */
#define BLIND(n)                                                                                   \
    static __attribute__((noinline)) void blind_##n(volatile unsigned char *p)                     \
    {                                                                                              \
        p[64 + 16 * (n)] = (unsigned char)(n);                                                     \
    }
BLIND(0)
BLIND(1)
BLIND(2)
BLIND(3)
BLIND(4)
BLIND(5)
BLIND(6)
BLIND(7)
static void (*const blind_bugs[BLIND_BUGS])(volatile unsigned char *) = {
    blind_0, blind_1, blind_2, blind_3, blind_4, blind_5, blind_6, blind_7};

/* The blind window: after a report, the thread runs unchecked until its next allocator
 * call (TCO stays set, docs/design.md section 5). Measured: bugs at distinct pcs with no
 * allocator call in between go unseen, and the first one after an allocator call is
 * reported. */
static __attribute__((noinline)) void blind_window(void *arg)
{
    (void)arg;
    setup_report_mode(100);
    volatile unsigned char *volatile p = malloc(48);
    overflow_write(p); /* reported; checks off from here */
    for (int i = 0; i < BLIND_BUGS; i++)
        blind_bugs[i](p); /* not one of them is reported */
    allocator_call();
    overflow_read(p); /* checks are back: reported */
    exit(0);
}

static void test_checking_resumes_after_an_allocator_call(void **state)
{
    (void)state;
    run(blind_window, NULL);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_write+0x");
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_read+0x");
    expect_no_text(&result, "in blind_");
    assert_int_equal(count_text(result.output, "BUG: KASAN: "), 2);
    expect_text(&result, "hwtag: 2 reports printed, 0 suppressed as duplicates\n");
}

/* No bug: no line at exit. */
static __attribute__((noinline)) void clean_run(void *arg)
{
    (void)arg;
    setup_report_mode(100);
    allocator_call();
    exit(0);
}

static void test_no_line_without_reports(void **state)
{
    (void)state;
    run(clean_run, NULL);
    expect_no_text(&result, "reports printed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_bugs_three_reports),
        cmocka_unit_test(test_same_bug_in_a_loop_one_report),
        cmocka_unit_test(test_the_cap_holds),
        cmocka_unit_test(test_checking_resumes_after_an_allocator_call),
        cmocka_unit_test(test_no_line_without_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
