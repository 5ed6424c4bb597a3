/* SPDX-License-Identifier: MIT */
/* A report from a stripped binary (CMake strips this program after linking): its frames
 * have no symbol in their own module, so each prints as module+0xOFFSET and the title uses
 * that token, never the nearest exported symbol of another module (__libc_start_main) nor
 * one more than its size away; the build id stays in Modules, and one note says what would
 * name the frames. */
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

static volatile unsigned char sink;

static __attribute__((noinline)) void overflow_in_stripped(void *arg)
{
    volatile unsigned char *p = malloc(40);
    (void)arg;
    p[48] = 1;
    sink = p[0];
}

static struct child_result result;

/* "name+0x" for this program's file name, as the header spells a module. */
static void module_token(char *out, size_t cap)
{
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    const char *base = strrchr(exe, '/') != NULL ? strrchr(exe, '/') + 1 : exe;
    size_t len = 0;
    for (; *base != '\0' && len + 4 < cap; base++, len++) {
        char c = *base;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.';
        out[len] = ok ? c : '_';
    }
    memcpy(out + len, "+0x", 4);
}

/* The line of text that starts with prefix. */
static void line_of(const char *text, const char *prefix, char *out, size_t cap)
{
    const char *s = strstr(text, prefix);
    if (s == NULL)
        fail_msg("missing \"%s\" in:\n%s", prefix, text);
    size_t n = strcspn(s, "\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

static void test_stripped_frames_are_module_offsets(void **state)
{
    char token[256], want[320], line[512];
    (void)state;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, overflow_in_stripped, NULL, &result));
    expect_abort(&result);
    module_token(token, sizeof(token));

    snprintf(want, sizeof(want), "BUG: KASAN: slab-out-of-bounds in %s", token);
    expect_text(&result, want);
    line_of(result.output, "BUG: KASAN: ", line, sizeof(line));
    if (strstr(line, "__libc_start") != NULL || strchr(line, '/') != NULL)
        fail_msg("title names another module's symbol: %s", line);

    snprintf(want, sizeof(want), "\nCall trace:\n %s", token);
    expect_text(&result, want);
    /* the faulting frame, its callers in this program, and the allocation's */
    snprintf(want, sizeof(want), "\n %s", token);
    assert_true(count_text(result.output, want) >= 4);

    line_of(result.output, "SUMMARY: KASAN: ", line, sizeof(line));
    snprintf(want, sizeof(want), "SUMMARY: KASAN: slab-out-of-bounds in %s", token);
    if (strncmp(line, want, strlen(want)) != 0 || strstr(line, "__libc_start") != NULL)
        fail_msg("SUMMARY does not name the stripped frame: %s\n%s", line, result.output);

    expect_text(&result, "\nModules:\n");
    snprintf(want, sizeof(want), "/%.*s (BuildId: ", (int)(strlen(token) - 3), token);
    expect_text(&result, want);
    snprintf(want, sizeof(want), "Note: no debug file for /");
    expect_text(&result, want);
    assert_int_equal(count_text(result.output, "\nNote: "), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stripped_frames_are_module_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
