/* SPDX-License-Identifier: MIT */
/* hwtag_set_report_callback: the callback gets what the report says (bug, address, tags,
 * access size, object and distance) and the report text itself; NULL removes it. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "hwtag.h"
#include "report_text.h"

static struct child_result result;
static int callback_arg;

/* Says every field (test code: snprintf in a handler is fine here). */
static void callback(const struct hwtag_report_info *info, void *arg)
{
    say("cb_arg_ok", arg == &callback_arg);
    say("cb_bug", (uintptr_t)info->bug_type);
    say("cb_name_ok", info->bug_name != NULL && strstr(info->text, info->bug_name) != NULL);
    say("cb_access", (uintptr_t)info->access);
    say("cb_addr", info->addr);
    say("cb_size", info->access_size);
    say("cb_ptag", info->pointer_tag);
    say("cb_mtag", info->memory_tag);
    say("cb_async", (uintptr_t)info->asynchronous);
    say("cb_sampled_out", (uintptr_t)info->sampled_out);
    say("cb_start", info->object_start);
    say("cb_osize", info->object_size);
    say("cb_req", info->object_requested);
    say("cb_class", info->object_class);
    say("cb_dist", (uintptr_t)info->distance);
    say("cb_text_ok", info->text != NULL && info->text_len == strlen(info->text) &&
                          strncmp(info->text, RULE "\nBUG: KASAN: ", strlen(RULE) + 13) == 0);
}

static __attribute__((noinline)) void overflow_with_callback(void *arg)
{
    hwtag_set_report_callback(callback, &callback_arg);
    if (arg != NULL)
        hwtag_set_report_callback(NULL, NULL);
    volatile unsigned char *volatile p = malloc(123);
    say("ptr", (uintptr_t)p);
    p[128] = 1;
}

static __attribute__((noinline)) void double_free_with_callback(void *arg)
{
    (void)arg;
    hwtag_set_report_callback(callback, &callback_arg);
    void *volatile p = malloc(200);
    say("ptr", (uintptr_t)p);
    free(p);
    free(p);
}

static void run(void (*fn)(void *), void *arg)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
    expect_abort(&result);
}

static uintptr_t cb(const char *field)
{
    char key[40];
    snprintf(key, sizeof(key), "cb_%s=0x", field);
    return hex_after(result.output, key);
}

static void test_callback_matches_the_report(void **state)
{
    (void)state;
    char want[128];
    run(overflow_with_callback, NULL);
    const char *out = result.output;
    uintptr_t ptr = hex_after(out, "ptr=0x");
    assert_int_equal(cb("arg_ok"), 1);
    assert_int_equal(cb("text_ok"), 1);
    assert_int_equal(cb("name_ok"), 1);
    assert_int_equal(cb("bug"), HWTAG_BUG_SLAB_OUT_OF_BOUNDS);
    assert_int_equal(cb("access"), HWTAG_ACCESS_WRITE);
    assert_int_equal(cb("addr"), ptr + 128);
    assert_int_equal(cb("size"), 1);
    assert_int_equal(cb("ptag"), ptr_tag((const void *)ptr));
    assert_int_equal(cb("async"), 0);
    assert_int_equal(cb("sampled_out"), 0);
    assert_int_equal(cb("start"), untag((const void *)ptr));
    assert_int_equal(cb("osize"), 128);
    assert_int_equal(cb("req"), 123);
    assert_int_equal(cb("class"), 128);
    assert_int_equal(cb("dist"), 5);
    /* and the text says the same */
    snprintf(want, sizeof(want), "Write of size %lu at addr %016lx ", (unsigned long)cb("size"),
             (unsigned long)cb("addr"));
    expect_text(&result, want);
    snprintf(want, sizeof(want), "Pointer tag: [%02lx], memory tag: [%02lx]",
             (unsigned long)cb("ptag"), (unsigned long)cb("mtag"));
    expect_text(&result, want);
    snprintf(want, sizeof(want), "located %ld bytes to the right of\n %lu-byte region [%lx, ",
             (long)cb("dist"), (unsigned long)cb("req"), (unsigned long)cb("start"));
    expect_text(&result, want);
    snprintf(want, sizeof(want), "size class %lu of size %lu", (unsigned long)cb("class"),
             (unsigned long)cb("osize"));
    expect_text(&result, want);
    /* the callback runs after the report is written */
    assert_true(strstr(out, "cb_bug=") > strstr(out, "SUMMARY: KASAN: "));
}

static void test_callback_on_a_bad_free(void **state)
{
    (void)state;
    run(double_free_with_callback, NULL);
    uintptr_t ptr = hex_after(result.output, "ptr=0x");
    expect_text(&result, "BUG: KASAN: double-free in double_free_with_callback+0x");
    assert_int_equal(cb("bug"), HWTAG_BUG_DOUBLE_FREE);
    assert_int_equal(cb("access"), HWTAG_ACCESS_FREE);
    assert_int_equal(cb("addr"), ptr);
    assert_int_equal(cb("size"), 0);
    assert_int_equal(cb("ptag"), ptr_tag((const void *)ptr));
    assert_int_equal(cb("start"), untag((const void *)ptr));
    assert_int_equal(cb("req"), 200);
    assert_int_equal(cb("dist"), 0);
    assert_int_equal(cb("text_ok"), 1);
}

static void test_removed_callback_is_not_called(void **state)
{
    (void)state;
    run(overflow_with_callback, (void *)1);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_with_callback+0x");
    expect_no_text(&result, "cb_");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callback_matches_the_report),
        cmocka_unit_test(test_callback_on_a_bad_free),
        cmocka_unit_test(test_removed_callback_is_not_called),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
