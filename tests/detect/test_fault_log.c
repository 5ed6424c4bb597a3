/* SPDX-License-Identifier: MIT */
/* HWTAG_LOG_PATH: the report goes to the file, "%p" replaced by the pid of the process
 * that reports (a forked child writes its own file), and not to stderr. The child sets
 * the option field and re-installs the handler, which opens the log. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fault.h"
#include "harness.h"
#include "options.h"
#include "report_text.h"

static volatile unsigned char sink;
static struct child_result result;
static char dir[64];
static char pattern[128];
static char file_text[32768];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/hwtag-log-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(pattern, sizeof(pattern), "%s/report.%%p", dir);
    return 0;
}

static void remove_file(uintptr_t pid)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/report.%lu", dir, (unsigned long)pid);
    unlink(path);
}

/* Removes whatever a failed test left behind, then the directory. */
static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
            char path[360];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            if (e->d_name[0] != '.')
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
    return 0;
}

/* The contents of <dir>/report.<pid>; false when there is no such file. */
static bool read_report(uintptr_t pid, size_t *len)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/report.%lu", dir, (unsigned long)pid);
    int fd = open(path, O_RDONLY);
    *len = 0;
    if (fd < 0)
        return false;
    ssize_t n;
    while ((n = read(fd, file_text + *len, sizeof(file_text) - 1 - *len)) > 0)
        *len += (size_t)n;
    file_text[*len] = '\0';
    close(fd);
    return true;
}

static __attribute__((noinline)) void overflow_logged(void)
{
    volatile unsigned char *volatile p = malloc(123);
    p[128] = 1;
}

static void log_to_file(void *arg)
{
    (void)arg;
    hwt_opts.log_path = pattern;
    hwt_fault_install();
    say("pid", (uintptr_t)getpid());
    overflow_logged();
}

static void test_report_goes_to_the_log_file(void **state)
{
    (void)state;
    size_t len;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, log_to_file, NULL, &result));
    expect_abort(&result);
    uintptr_t pid = hex_after(result.output, "pid=0x");
    expect_no_text(&result, "BUG: KASAN");
    assert_true(read_report(pid, &len));
    remove_file(pid);
    if (strncmp(file_text, RULE "\nBUG: KASAN: slab-out-of-bounds in overflow_logged+0x",
                strlen(RULE) + 1 + strlen("BUG: KASAN: slab-out-of-bounds in overflow_logged")) !=
            0 ||
        strstr(file_text, "\nSUMMARY: KASAN: slab-out-of-bounds in overflow_logged+0x") == NULL ||
        len < strlen(RULE) + 1 || strcmp(file_text + len - strlen(RULE) - 1, RULE "\n") != 0)
        fail_msg("log file should hold exactly the report:\n%s", file_text);
}

/* The child opens report.<its pid>; a process it forks reports to report.<its own>. */
static void fork_then_bug(void *arg)
{
    (void)arg;
    int status;
    hwt_opts.log_path = pattern;
    hwt_fault_install();
    say("parent", (uintptr_t)getpid());
    pid_t child = fork();
    if (child == 0) {
        say("child", (uintptr_t)getpid());
        overflow_logged();
        _exit(0);
    }
    if (child < 0 || waitpid(child, &status, 0) != child)
        _exit(99);
    say("child_aborted", WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    _exit(0);
}

static void test_forked_child_reports_to_its_own_file(void **state)
{
    (void)state;
    size_t len;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fork_then_bug, NULL, &result));
    expect_exit(&result, 0);
    uintptr_t parent = hex_after(result.output, "parent=0x");
    uintptr_t child = hex_after(result.output, "child=0x");
    assert_int_equal(hex_after(result.output, "child_aborted=0x"), 1);
    expect_no_text(&result, "BUG: KASAN");
    bool have_child_file = read_report(child, &len);
    remove_file(child);
    assert_true(have_child_file);
    if (strstr(file_text, "BUG: KASAN: slab-out-of-bounds in overflow_logged+0x") == NULL)
        fail_msg("report.%lu should hold the report:\n%s", (unsigned long)child, file_text);
    /* the parent's file was opened at install time and never written */
    if (read_report(parent, &len))
        assert_int_equal(len, 0);
    remove_file(parent);
}

/* A log that cannot be opened or written: the report lands on stderr all the same, with
 * one line that says why. */
static void log_to(void *arg)
{
    hwt_opts.log_path = arg;
    hwt_fault_install();
    overflow_logged();
}

static void expect_fallback(const char *path, const char *notice)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, log_to, (void *)path, &result));
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_logged+0x");
    expect_text(&result, "SUMMARY: KASAN: slab-out-of-bounds");
    if (count_text(result.output, notice) != 1)
        fail_msg("want \"%s\" once in:\n%s", notice, result.output);
}

static void test_unwritable_log_falls_back_to_stderr(void **state)
{
    (void)state;
    expect_fallback("/dev/full", "hwtag: writing to HWTAG_LOG_PATH failed, reporting to stderr");
}

static void test_unopenable_log_is_said_once(void **state)
{
    (void)state;
    expect_fallback("/tmp", "hwtag: cannot open HWTAG_LOG_PATH /tmp (errno 21)");
    expect_fallback("/nonexistent-hwtag-dir/r.log", "hwtag: cannot open HWTAG_LOG_PATH");
}

/* A symlink planted at the log's path (another user's, in a shared directory) is refused:
 * its target keeps its contents and the report goes to stderr. */
static void test_symlinked_log_is_refused(void **state)
{
    (void)state;
    char target[160], link[160], text[64];
    snprintf(target, sizeof(target), "%s/victim", dir);
    snprintf(link, sizeof(link), "%s/report.link", dir);
    int fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "untouched\n", 10), 10);
    close(fd);
    assert_int_equal(symlink(target, link), 0);
    expect_fallback(link, "is a symbolic link (not followed), reporting to stderr");
    fd = open(target, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    assert_int_equal(n, 10);
    text[n] = '\0';
    assert_string_equal(text, "untouched\n");
    unlink(link);
    unlink(target);
}

/* A FIFO nobody reads would block the open for good: the report comes on stderr. */
static void test_fifo_log_does_not_block(void **state)
{
    (void)state;
    char fifo[160];
    snprintf(fifo, sizeof(fifo), "%s/report.fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    expect_fallback(fifo, "hwtag: cannot open HWTAG_LOG_PATH");
    unlink(fifo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_goes_to_the_log_file),
        cmocka_unit_test(test_forked_child_reports_to_its_own_file),
        cmocka_unit_test(test_unwritable_log_falls_back_to_stderr),
        cmocka_unit_test(test_unopenable_log_is_said_once),
        cmocka_unit_test(test_symlinked_log_is_refused),
        cmocka_unit_test(test_fifo_log_does_not_block),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
