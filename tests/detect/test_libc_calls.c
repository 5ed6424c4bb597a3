/* SPDX-License-Identifier: MIT */
/* Bugs inside the C library's string and memory routines: the report names the program's
 * function that called the routine (not memcpy), the access is the whole call's range
 * (Write of size 80 for memcpy(dst, src, 80)) and the object section describes the call's
 * first bad byte, exactly, from the requested size. The routine's frame stays in the call
 * trace, and libhwtag's own checked versions never appear in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "report_text.h"

void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);

static struct child_result result;
static char source[256] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          "0123456789abcdefghijklmnopqrstuvwxyz";
static volatile int sink;

static __attribute__((noinline)) void copy_into(void *arg)
{
    (void)arg;
    char *volatile p = malloc(64);
    memcpy(p, source, 80);
    _exit(0);
}

static __attribute__((noinline)) void copy_from_freed(void *arg)
{
    (void)arg;
    char *volatile p = malloc(48);
    memset(p, 1, 48);
    free(p);
    memcpy(source, p, 48);
    _exit(0);
}

static __attribute__((noinline)) void set_past_end(void *arg)
{
    (void)arg;
    char *volatile p = malloc(60);
    memset(p, 0, 100);
    _exit(0);
}

static __attribute__((noinline)) void copy_string(void *arg)
{
    (void)arg;
    char *volatile p = malloc(24);
    strcpy(p, "this string has forty characters in it!!");
    _exit(0);
}

static __attribute__((noinline)) void append_string(void *arg)
{
    (void)arg;
    char *volatile p = malloc(16);
    strcpy(p, "hello");
    strcat(p, ", twenty characters!");
    _exit(0);
}

static __attribute__((noinline)) void measure_unterminated(void *arg)
{
    (void)arg;
    char *volatile p = malloc(32);
    memset(p, 'a', 32);
    sink = (int)strlen(p);
    _exit(0);
}

static __attribute__((noinline)) void compare_short(void *arg)
{
    (void)arg;
    char *volatile a = malloc(48);
    char *volatile b = malloc(64);
    memset(a, 7, 48);
    memset(b, 7, 64);
    sink = memcmp(b, a, 64);
    _exit(0);
}

static __attribute__((noinline)) void copy_fortified(void *arg)
{
    (void)arg;
    char *volatile p = malloc(32);
    __memcpy_chk(p, source, 40, (size_t)-1);
    _exit(0);
}

/* The trace's second frame (after the routine's own) is the program's caller. */
static void expect_caller_second(const struct child_result *r, const char *caller)
{
    const char *trace = strstr(r->output, "Call trace:\n");
    if (trace == NULL)
        fail_msg("no call trace in:\n%s", r->output);
    const char *second = strchr(trace + strlen("Call trace:\n"), '\n');
    char want[64];
    snprintf(want, sizeof(want), "\n %s+0x", caller);
    if (second == NULL || strncmp(second, want, strlen(want)) != 0)
        fail_msg("the frame after the routine's is not %s in:\n%s", caller, r->output);
}

static void run_bug(void (*fn)(void *))
{
    assert_true(run_child(LIBRARY_REPORT, fn, NULL, &result));
    expect_abort(&result);
}

static void test_memcpy_overflow_is_the_whole_call(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(copy_into);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in copy_into+0x");
    expect_text(&result, "Write of size 80 at addr ");
    expect_text(&result, "The access is inside memcpy, called from copy_into+0x");
    expect_text(&result, "The memcpy call writes [");
    expect_text(&result, "The buggy address is located 0 bytes to the right of\n 64-byte region");
    expect_text(&result, "SUMMARY: KASAN: slab-out-of-bounds in copy_into+0x");
    expect_caller_second(&result, "copy_into");
    expect_no_text(&result, "Write of size 16 ");
    expect_no_text(&result, "Write of size 32 ");
}

static void test_memcpy_from_freed_is_a_read(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(copy_from_freed);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in copy_from_freed+0x");
    expect_text(&result, "Read of size 48 at addr ");
    expect_text(&result, "The memcpy call reads [");
    expect_text(&result, "located 0 bytes inside of\n 48-byte region");
    expect_text(&result, "Freed by task");
}

static void test_memset_first_bad_byte_is_exact(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(set_past_end);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in set_past_end+0x");
    expect_text(&result, "Write of size 100 at addr ");
    expect_text(&result, "The access is inside memset, called from set_past_end+0x");
    /* the fault is at byte 64, the first granule of another tag; the bug starts at 60 */
    expect_text(&result, "The buggy address is located 0 bytes to the right of\n 60-byte region");
}

static void test_strcpy_writes_the_string_and_its_nul(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(copy_string);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in copy_string+0x");
    expect_text(&result, "Write of size 41 at addr ");
    expect_text(&result, "The access is inside strcpy, called from copy_string+0x");
    expect_text(&result, "located 0 bytes to the right of\n 24-byte region");
    expect_caller_second(&result, "copy_string");
}

static void test_strcat_writes_after_the_string(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(append_string);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in append_string+0x");
    expect_text(&result, "Write of size 21 at addr ");
    expect_text(&result, "The access is inside strcat, called from append_string+0x");
    expect_text(&result, "located 0 bytes to the right of\n 16-byte region");
}

static void test_strlen_reads_past_an_unterminated_string(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(measure_unterminated);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in measure_unterminated+0x");
    expect_text(&result, "The access is inside strlen, called from measure_unterminated+0x");
    expect_text(&result, "The strlen call reads [");
    expect_text(&result, "located 0 bytes to the right of\n 32-byte region");
    const char *size = strstr(result.output, "Read of size ");
    assert_non_null(size);
    assert_true(strtoul(size + strlen("Read of size "), NULL, 10) > 32);
}

static void test_memcmp_reads_the_whole_size(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(compare_short);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in compare_short+0x");
    expect_text(&result, "Read of size 64 at addr ");
    expect_text(&result, "The access is inside memcmp, called from compare_short+0x");
    expect_text(&result, "located 0 bytes to the right of\n 48-byte region");
}

static void test_fortified_memcpy(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run_bug(copy_fortified);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in copy_fortified+0x");
    expect_text(&result, "Write of size 40 at addr ");
    expect_text(&result, "The access is inside __memcpy_chk, called from copy_fortified+0x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcpy_overflow_is_the_whole_call),
        cmocka_unit_test(test_memcpy_from_freed_is_a_read),
        cmocka_unit_test(test_memset_first_bad_byte_is_exact),
        cmocka_unit_test(test_strcpy_writes_the_string_and_its_nul),
        cmocka_unit_test(test_strcat_writes_after_the_string),
        cmocka_unit_test(test_strlen_reads_past_an_unterminated_string),
        cmocka_unit_test(test_memcmp_reads_the_whole_size),
        cmocka_unit_test(test_fortified_memcpy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
