/* SPDX-License-Identifier: MIT */
/* Overflows that leave an object's span or mapping: the byte after the last slot of a span
 * lies in the next span (unused, or of another class) and the byte after a page-multiple
 * object in its guard; each is still that object's out-of-bounds, named with its stacks.
 * HWTAG_SAMPLE=10 is set for this test by CMake, so the page-backed cases meet both
 * tagged and untagged (sampled-out) objects. */
#include <malloc.h>
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

#define OBJECTS 48 /* of one class: more than one span's worth for every class tested */
#define SAMPLE 10

static volatile unsigned char sink;

struct boundary_case {
    size_t size;
    size_t align; /* 0: malloc */
    long offset;  /* of the access from the object's start */
};

static void *allocate(const struct boundary_case *c)
{
    return c->align != 0 ? aligned_alloc(c->align, c->size) : malloc(c->size);
}

/* The object among OBJECTS of the case's size whose end (or start, for an underflow) no
 * other of them touches: the last slot of its span, or a mapping of its own. */
static __attribute__((noinline)) void access_at_boundary(void *arg)
{
    const struct boundary_case *c = arg;
    static unsigned char *objs[OBJECTS];
    for (int i = 0; i < OBJECTS; i++)
        objs[i] = allocate(c);
    for (int i = OBJECTS - 1; i >= 0; i--) {
        uintptr_t edge = untag(objs[i]) + (c->offset < 0 ? 0 : c->size);
        bool touched = false;
        for (int j = 0; j < OBJECTS; j++) {
            uintptr_t other = untag(objs[j]);
            if (j != i && (c->offset < 0 ? other + c->size == edge : other == edge))
                touched = true;
        }
        if (touched || ptr_tag(objs[i]) == 0) /* sampled out: not checked */
            continue;
        say("ptr", (uintptr_t)objs[i]);
        volatile unsigned char *p = objs[i];
        sink = p[c->offset];
        say_line("no fault\n");
        _exit(0);
    }
    say_line("no object at a boundary\n");
    _exit(3);
}

static struct child_result result;

static void run_case(size_t size, size_t align, long offset, const char *bug)
{
    struct boundary_case c = {size, align, offset};
    char want[160];
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, access_at_boundary, &c, &result));
    expect_abort(&result);
    uintptr_t start = untag((const void *)hex_after(result.output, "ptr=0x"));
    snprintf(want, sizeof(want), "BUG: KASAN: %s in access_at_boundary+0x", bug);
    expect_text(&result, want);
    snprintf(want, sizeof(want), "The buggy address belongs to the object at %lx\n",
             (unsigned long)start);
    expect_text(&result, want);
    if (offset < 0)
        snprintf(want, sizeof(want), "located %ld bytes to the left of\n %zu-byte region [%lx, ",
                 -offset, size, (unsigned long)start);
    else
        snprintf(want, sizeof(want), "located %ld bytes to the right of\n %zu-byte region [%lx, ",
                 offset - (long)size, size, (unsigned long)start);
    expect_text(&result, want);
    expect_text(&result, "Allocated by task ");
    expect_no_text(&result, "does not belong to any heap object");
    /* the faulting row shows the tags there, not "??" */
    const char *row = strstr(result.output, "\n>");
    assert_non_null(row);
    const char *eol = strchr(row + 1, '\n');
    assert_non_null(eol);
    for (const char *q = row; q < eol; q++)
        if (q[0] == '?' && q[1] == '?')
            fail_msg("unknown tags on the faulting row:\n%s", result.output);
}

static void test_after_last_slot_of_4096_span(void **state)
{
    (void)state;
    run_case(4096, 0, 4096, "slab-out-of-bounds");
}

static void test_after_last_slot_of_8192_span(void **state)
{
    (void)state;
    run_case(8192, 0, 8192, "slab-out-of-bounds");
}

static void test_after_largest_small_object(void **state)
{
    (void)state;
    run_case(16384, 0, 16384 + 100, "slab-out-of-bounds");
}

static void test_after_aligned_4096(void **state)
{
    (void)state;
    run_case(4096, 4096, 4096, "slab-out-of-bounds");
}

static void test_before_first_slot_of_4096_span(void **state)
{
    (void)state;
    run_case(4096, 0, -1, "slab-out-of-bounds");
}

static void test_after_page_multiple_large_object(void **state)
{
    (void)state;
    run_case(65536, 0, 65536, "out-of-bounds");
}

static void test_after_aligned_page_backed_object(void **state)
{
    (void)state;
    run_case(40000, 4096, 40000 + 16, "out-of-bounds");
}

static void test_before_page_backed_object(void **state)
{
    (void)state;
    run_case(65536, 65536, -16, "out-of-bounds");
}

/* HWTAG_SAMPLE=10: a sampled-out object (tag 0) is mapped without tags, guard included, so
 * its overflow is not checked: no report, and the program goes on. */
static __attribute__((noinline)) void overflow_untagged_sampled(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2 * SAMPLE; i++) {
        unsigned char *volatile p = malloc(65536);
        if (ptr_tag(p) != 0)
            continue;
        volatile unsigned char *q = p;
        sink = q[65536];
        say_line("not checked\n");
        _exit(0);
    }
    _exit(6);
}

static void test_untagged_sampled_object_is_not_checked(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, overflow_untagged_sampled, NULL, &result));
    assert_true(result.exited);
    assert_int_equal(result.exit_code, 0);
    expect_text(&result, "not checked\n");
    expect_no_text(&result, "BUG: KASAN");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_after_last_slot_of_4096_span),
        cmocka_unit_test(test_after_last_slot_of_8192_span),
        cmocka_unit_test(test_after_largest_small_object),
        cmocka_unit_test(test_after_aligned_4096),
        cmocka_unit_test(test_before_first_slot_of_4096_span),
        cmocka_unit_test(test_after_page_multiple_large_object),
        cmocka_unit_test(test_after_aligned_page_backed_object),
        cmocka_unit_test(test_before_page_backed_object),
        cmocka_unit_test(test_untagged_sampled_object_is_not_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
