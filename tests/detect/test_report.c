/* SPDX-License-Identifier: MIT */
/* The KASAN-format report of libhwtag's own handler: each bug runs in a child with the
 * library's handler installed, and the parent checks the report's lines. */
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

#include "harness.h"

static volatile unsigned char sink;

static __attribute__((noinline)) void overflow_by_one(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(123);
    p[128] = 1;
}

static __attribute__((noinline)) void read_after_free(void *arg)
{
    (void)arg;
    unsigned char *volatile p = malloc(100);
    free(p);
    sink = p[40];
}

static __attribute__((noinline)) void free_twice(void *arg)
{
    (void)arg;
    void *volatile p = malloc(64);
    free(p);
    free(p);
}

static __attribute__((noinline)) void free_interior(void *arg)
{
    (void)arg;
    char *volatile p = malloc(64);
    free(p + 16);
}

static void expect_lines(void (*fn)(void *), const char *const *lines)
{
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, NULL, &r));
    assert_false(r.exited && r.exit_code == 0);
    for (size_t i = 0; lines[i] != NULL; i++) {
        if (strstr(r.output, lines[i]) == NULL)
            fail_msg("missing \"%s\" in report:\n%s", lines[i], r.output);
    }
}

static void test_slab_out_of_bounds_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: slab-out-of-bounds in overflow_by_one+0x",
                                 "Write of size 1 at addr ",
                                 "Pointer tag: [",
                                 "Call trace:\n overflow_by_one+0x",
                                 "Allocated by task ",
                                 "which belongs to the size class 128 of size 128",
                                 "located 5 bytes to the right of\n 123-byte region",
                                 "Memory state around the buggy address:",
                                 "SUMMARY: KASAN: slab-out-of-bounds in overflow_by_one+0x",
                                 NULL};
    expect_lines(overflow_by_one, lines);
}

static void test_use_after_free_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: slab-use-after-free in read_after_free+0x",
                                 "Read of size 1 at addr ",
                                 "Allocated by task ",
                                 "Freed by task ",
                                 "located 40 bytes inside of\n 100-byte region",
                                 NULL};
    expect_lines(read_after_free, lines);
}

static void test_double_free_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: double-free in free_twice+0x", "Free of addr ",
                                 "Freed by task ", NULL};
    expect_lines(free_twice, lines);
}

static void test_invalid_free_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: invalid-free in free_interior+0x", "Free of addr ",
                                 NULL};
    expect_lines(free_interior, lines);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_use_after_free_report),
        cmocka_unit_test(test_slab_out_of_bounds_report),
        cmocka_unit_test(test_double_free_report),
        cmocka_unit_test(test_invalid_free_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
