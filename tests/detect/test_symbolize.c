/* SPDX-License-Identifier: MIT */
/* Source lines in reports: file:line:column and inlined frames in the access, allocation
 * and free stacks and in SUMMARY (this file is built with -g -O2), a memcpy overflow whose
 * header names memcpy's caller, thread names, and a symbolizer that is switched off,
 * missing or hangs: the report stays whole. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "options.h"
#include "report_text.h"

#define FILE_NAME "test_symbolize.c:"

static volatile unsigned char sink;

static const unsigned store_line = __LINE__ + 3;
static inline __attribute__((always_inline)) void store_byte(volatile unsigned char *p, size_t i)
{
    p[i] = 1;
}

static const unsigned alloc_line = __LINE__ + 3;
static inline __attribute__((always_inline)) unsigned char *make_buffer(size_t n)
{
    return malloc(n);
}

static const unsigned free_line = __LINE__ + 3;
static inline __attribute__((always_inline)) void drop_buffer(unsigned char *p)
{
    free(p);
}

static __attribute__((noipa)) unsigned char *allocator_frame(size_t n)
{
    unsigned char *p = make_buffer(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

static __attribute__((noipa)) void free_frame(unsigned char *p)
{
    drop_buffer(p);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noipa)) void write_after_free(void *arg)
{
    unsigned char *volatile p = allocator_frame(64);
    (void)arg;
    free_frame(p);
    store_byte(p, 8);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noipa)) void copy_past_end(void *arg)
{
    unsigned char src[64] = {1};
    unsigned char *volatile dst = malloc(16);
    (void)arg;
    memcpy(dst, src, sizeof(src));
    sink = dst[0];
}

static void *named_thread(void *arg)
{
    pthread_setname_np(pthread_self(), "sym-worker");
    write_after_free(arg);
    return NULL;
}

static __attribute__((noipa)) void fault_in_named_thread(void *arg)
{
    pthread_t t;
    pthread_create(&t, NULL, named_thread, arg);
    pthread_join(t, NULL);
}

static void with_symbolizer(void *arg)
{
    hwt_opts.symbolizer = (const char *)arg;
    write_after_free(NULL);
}

static void symbolize_off(void *arg)
{
    hwt_opts.symbolize = HWT_OFF;
    write_after_free(arg);
}

static struct child_result result;

static void run_report(void (*fn)(void *), void *arg)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
    expect_abort(&result);
}

static bool have_symbolizer(void)
{
    return system("command -v llvm-symbolizer >/dev/null 2>&1 || "
                  "command -v aarch64-linux-gnu-addr2line >/dev/null 2>&1") == 0;
}

/* The text of the section starting at header, up to the next empty line. */
static void section(const char *out, const char *header, char *buf, size_t cap)
{
    const char *s = strstr(out, header), *end;
    if (s == NULL)
        fail_msg("missing \"%s\" in:\n%s", header, out);
    end = strstr(s, "\n\n");
    size_t n = end != NULL ? (size_t)(end - s) : strlen(s);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

static void expect_in(const char *text, const char *what, const char *all)
{
    if (strstr(text, what) == NULL)
        fail_msg("missing \"%s\" in section:\n%s\n--- report:\n%s", what, text, all);
}

/* The line holding start has, after start, a "+0x../0x.." token, then what (a file), then
 * " (detect_test_symbolize+0x" with the module's file name only, and no name twice. */
static void expect_frame_line(const char *out, const char *start, const char *what)
{
    char line[512], name[128];
    const char *s = strstr(out, start);
    if (s == NULL)
        fail_msg("missing \"%s\" in:\n%s", start, out);
    s += *s == '\n';
    size_t n = strcspn(s, "\n");
    assert_true(n < sizeof(line));
    memcpy(line, s, n);
    line[n] = '\0';
    const char *fn = strrchr(start, ' ') != NULL ? strrchr(start, ' ') + 1 : start;
    size_t fn_len = strcspn(fn, "+");
    snprintf(name, sizeof(name), " %.*s ", (int)fn_len, fn);
    if (strstr(line, what) == NULL || strstr(line, " (detect_test_symbolize+0x") == NULL ||
        strstr(line, "(/") != NULL || strstr(line, name) != NULL)
        fail_msg("frame line not compact (want %s ... %s ... (module+0x..)): %s\n%s", start, what,
                 line, out);
}

/* No line of the report is longer than a terminal's wide window, apart from the directory
 * of this file's path: the test runs outside the source tree, so its paths are absolute
 * and as long as wherever the tree was checked out. */
static void expect_short_lines(const char *out)
{
    const char *slash = strrchr(__FILE__, '/');
    size_t dir_len = slash != NULL ? (size_t)(slash - __FILE__) : 0;
    for (const char *s = out; *s != '\0';) {
        size_t n = strcspn(s, "\n");
        size_t counted = n;
        for (const char *p = s; dir_len > 0 && (p = strstr(p, __FILE__)) != NULL && p < s + n;
             p += dir_len)
            counted -= dir_len;
        if (counted > 160)
            fail_msg("a line of %zu characters: %.*s", n, (int)n, s);
        s += n + (s[n] != '\0');
    }
}

static void test_lines_and_inlined_frames_in_three_stacks(void **state)
{
    char sec[4096], want[128];
    (void)state;
    if (!have_symbolizer())
        skip();
    run_report(write_after_free, NULL);
    const char *out = result.output;

    /* inlined calls first, indented, then the physical frame: symbol+off/size, its line,
     * (module+offset); the name is not repeated */
    section(out, "Call trace:", sec, sizeof(sec));
    snprintf(want, sizeof(want), "\n   store_byte /");
    expect_in(sec, want, out);
    snprintf(want, sizeof(want), FILE_NAME "%u:", store_line);
    expect_in(sec, want, out);
    expect_in(sec, " [inline]\n write_after_free+0x", out);
    expect_frame_line(out, "\n write_after_free+0x", FILE_NAME);

    section(out, "Allocated by task", sec, sizeof(sec));
    snprintf(want, sizeof(want), "\n   make_buffer /");
    expect_in(sec, want, out);
    snprintf(want, sizeof(want), FILE_NAME "%u:", alloc_line);
    expect_in(sec, want, out);
    expect_in(sec, " [inline]\n allocator_frame+0x", out);
    expect_frame_line(out, "\n allocator_frame+0x", FILE_NAME);

    section(out, "Freed by task", sec, sizeof(sec));
    snprintf(want, sizeof(want), FILE_NAME "%u:", free_line);
    expect_in(sec, want, out);
    expect_in(sec, "\n   drop_buffer /", out);
    expect_in(sec, " [inline]\n free_frame+0x", out);
    expect_frame_line(out, "\n free_frame+0x", FILE_NAME);

    /* the header keeps the kernel's token; SUMMARY adds the innermost name and line */
    expect_text(&result, "BUG: KASAN: slab-use-after-free in write_after_free+0x");
    section(out, "SUMMARY: KASAN:", sec, sizeof(sec));
    expect_in(sec, "SUMMARY: KASAN: slab-use-after-free in write_after_free+0x", out);
    expect_in(sec, " store_byte /", out);
    snprintf(want, sizeof(want), FILE_NAME "%u:", store_line);
    expect_in(sec, want, out);
    expect_in(sec, " (detect_test_symbolize+0x", out);

    /* each module once, with its build id: the only place its full path is printed */
    section(out, "Modules:", sec, sizeof(sec));
    expect_in(sec, "/detect_test_symbolize (BuildId: ", out);
    assert_int_equal(count_text(out, "/detect_test_symbolize"), 1);
    expect_short_lines(out);
}

/* The inlined callee of an -O2 build with the test run from the source tree: its file is
 * printed relative to the working directory. */
static void from_source_dir(void *arg)
{
    if (chdir(HWT_SOURCE_DIR) != 0)
        _exit(91);
    write_after_free(arg);
}

static void test_paths_relative_to_working_directory(void **state)
{
    (void)state;
    if (!have_symbolizer())
        skip();
    run_report(from_source_dir, NULL);
    expect_frame_line(result.output, "\n write_after_free+0x", " tests/detect/" FILE_NAME);
    expect_text(&result, "\n   store_byte tests/detect/" FILE_NAME);
    expect_no_text(&result, HWT_SOURCE_DIR "/tests/detect/" FILE_NAME);
}

/* glibc's local functions (__libc_start_call_main calls main) are named from libc's debug
 * file when one is installed (Debian's libc6-dbg); otherwise one note says to install it. */
static void test_libc_local_names_or_note(void **state)
{
    char path[128];
    (void)state;
    run_report(symbolize_off, NULL);
    const char *libc = strstr(result.output, "/libc.so.6 (BuildId: ");
    assert_non_null(libc);
    const char *id = libc + strlen("/libc.so.6 (BuildId: ");
    size_t len = strspn(id, "0123456789abcdef");
    assert_true(len > 2 && len < 64);
    snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%.*s.debug", id, (int)len - 2,
             id + 2);
    if (access(path, R_OK) == 0) {
        expect_text(&result, "\n __libc_start_call_main+0x");
        expect_text(&result, " (libc.so.6+0x");
        expect_no_text(&result, "libc.so.6; install libc6-dbg");
    } else {
        expect_text(&result, "\n libc.so.6+0x");
        expect_text(&result, "libc.so.6; install libc6-dbg for its local names and lines\n");
    }
    expect_no_text(&result, "\n 0x");
    assert_true(count_text(result.output, "\nNote: ") <= 1);
}

static void test_memcpy_overflow_names_its_caller(void **state)
{
    (void)state;
    run_report(copy_past_end, NULL);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in copy_past_end+0x");
    expect_text(&result, "Write of size 64 at addr");
    expect_text(&result, "The access is inside memcpy, called from copy_past_end+0x");
    expect_text(&result, "SUMMARY: KASAN: slab-out-of-bounds in copy_past_end+0x");
    expect_no_text(&result, "BUG: KASAN: slab-out-of-bounds in /");
    if (have_symbolizer())
        expect_frame_line(result.output, "called from copy_past_end+0x", FILE_NAME);
}

static void test_thread_names(void **state)
{
    (void)state;
    run_report(fault_in_named_thread, NULL);
    const char *line = strstr(result.output, " by task ");
    assert_non_null(line);
    const char *eol = strchr(line, '\n');
    const char *name = strstr(line, " (thread sym-worker)");
    if (name == NULL || name > eol)
        fail_msg("access line without the thread name:\n%s", result.output);
    expect_text(&result, " (thread sym-worker):\n");
}

static void expect_plain_report(void)
{
    expect_text(&result, "BUG: KASAN: slab-use-after-free in write_after_free+0x");
    expect_text(&result, "\nCall trace:\n write_after_free+0x");
    expect_text(&result, "Allocated by task ");
    expect_text(&result, "Freed by task ");
    expect_text(&result, "SUMMARY: KASAN: slab-use-after-free in write_after_free+0x");
    expect_text(&result, "(BuildId: ");
    expect_no_text(&result, FILE_NAME);
    expect_no_text(&result, "[inline]");
}

static void test_symbolize_off(void **state)
{
    (void)state;
    run_report(symbolize_off, NULL);
    expect_plain_report();
}

static void test_missing_symbolizer(void **state)
{
    (void)state;
    run_report(with_symbolizer, "/nonexistent/llvm-symbolizer");
    expect_plain_report();
    /* one note says what to install, once per report */
    expect_text(&result, "\nNote: no symbolizer found");
    assert_int_equal(count_text(result.output, "\nNote: "), 1);
}

static void test_hanging_symbolizer(void **state)
{
    char path[] = "/tmp/hwtag-hang-XXXXXX";
    struct timespec t0, t1;
    (void)state;
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *script = "#!/bin/sh\nexec sleep 60\n";
    assert_int_equal(write(fd, script, strlen(script)), (ssize_t)strlen(script));
    close(fd);
    chmod(path, 0755);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    run_report(with_symbolizer, path);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    unlink(path);
    expect_plain_report();
    /* bounded by the deadline (4 s), not by the symbolizer's 60 */
    assert_true(t1.tv_sec - t0.tv_sec < 20);
}

static void test_crashing_symbolizer(void **state)
{
    (void)state;
    run_report(with_symbolizer, "/bin/false");
    expect_plain_report();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_and_inlined_frames_in_three_stacks),
        cmocka_unit_test(test_paths_relative_to_working_directory),
        cmocka_unit_test(test_libc_local_names_or_note),
        cmocka_unit_test(test_memcpy_overflow_names_its_caller),
        cmocka_unit_test(test_thread_names),
        cmocka_unit_test(test_symbolize_off),
        cmocka_unit_test(test_missing_symbolizer),
        cmocka_unit_test(test_hanging_symbolizer),
        cmocka_unit_test(test_crashing_symbolizer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
