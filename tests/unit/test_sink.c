/* SPDX-License-Identifier: MIT */
/* The report sink's log file: what HWTAG_LOG_PATH may name (a regular file or a character
 * device, never through a symlink), the mode of a file it creates, and the fallback to
 * stderr with one line. The sink keeps per-process state, so each case runs in a forked
 * child whose stderr goes into a pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "options.h"
#include "sink.h"

#define NOTICE "hwtag-test: the text\n"

static char dir[64];
static char err[8192];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/hwtag-sink-XXXXXX");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    if (d != NULL) {
        for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
            char path[360];
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            if (e->d_name[0] != '.' && unlink(path) != 0)
                rmdir(path);
        }
        closedir(d);
    }
    rmdir(dir);
    return 0;
}

static const char *in_dir(const char *name)
{
    static char paths[4][160];
    static unsigned next;
    char *p = paths[next++ % 4];
    snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
    return p;
}

/* A child opens the log at path (umask 0, so the mode asked for is the mode created) and
 * writes NOTICE through the sink; err gets what it wrote on stderr. */
static void write_through_sink(const char *path)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        umask(0);
        hwt_opts.log_path = path;
        hwt_sink_init();
        hwt_sink_notice(NOTICE);
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fds[0], err + n, sizeof(err) - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    err[n] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, cap - 1);
    assert_true(n >= 0);
    buf[n] = '\0';
    close(fd);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* The refusal line once, then the text itself, on stderr. */
static void expect_fallback(const char *line)
{
    char want[512];
    snprintf(want, sizeof(want), "%s\n" NOTICE, line);
    assert_string_equal(err, want);
}

static void test_created_log_is_private(void **state)
{
    (void)state;
    const char *path = in_dir("new.log");
    char text[256];
    struct stat st;
    write_through_sink(path);
    assert_string_equal(err, "");
    read_file(path, text, sizeof(text));
    assert_string_equal(text, NOTICE);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
}

/* An existing file is the user's choice: appended to, its mode left as it was. */
static void test_existing_log_is_appended_and_keeps_its_mode(void **state)
{
    (void)state;
    const char *path = in_dir("old.log");
    char text[256];
    struct stat st;
    write_file(path, "before\n", 0644);
    write_through_sink(path);
    assert_string_equal(err, "");
    read_file(path, text, sizeof(text));
    assert_string_equal(text, "before\n" NOTICE);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
}

/* Another user's symlink in a shared directory must not make the sink write where it
 * points, to an existing file or one it would create. */
static void test_symlink_is_not_followed(void **state)
{
    (void)state;
    const char *target = in_dir("victim");
    const char *link = in_dir("link.log");
    char text[256], line[256];
    struct stat before, after;
    write_file(target, "untouched\n", 0600);
    assert_int_equal(stat(target, &before), 0);
    assert_int_equal(symlink(target, link), 0);
    write_through_sink(link);
    snprintf(line, sizeof(line),
             "hwtag: HWTAG_LOG_PATH %s is a symbolic link (not followed), reporting to stderr",
             link);
    expect_fallback(line);
    read_file(target, text, sizeof(text));
    assert_string_equal(text, "untouched\n");
    assert_int_equal(stat(target, &after), 0);
    assert_int_equal(after.st_size, before.st_size);
    assert_int_equal(after.st_mode, before.st_mode);
}

static void test_dangling_symlink_creates_nothing(void **state)
{
    (void)state;
    const char *target = in_dir("would-be-created");
    const char *link = in_dir("dangling.log");
    char line[256];
    assert_int_equal(symlink(target, link), 0);
    write_through_sink(link);
    snprintf(line, sizeof(line),
             "hwtag: HWTAG_LOG_PATH %s is a symbolic link (not followed), reporting to stderr",
             link);
    expect_fallback(line);
    assert_int_equal(access(target, F_OK), -1);
}

/* With no reader, opening a FIFO for writing would block start-up: it fails instead. */
static void test_fifo_without_reader_is_refused(void **state)
{
    (void)state;
    const char *path = in_dir("fifo");
    char line[256];
    assert_int_equal(mkfifo(path, 0600), 0);
    write_through_sink(path);
    snprintf(line, sizeof(line),
             "hwtag: cannot open HWTAG_LOG_PATH %s (errno %d), reporting to stderr", path, ENXIO);
    expect_fallback(line);
}

/* With a reader the open succeeds, and the file's type is what refuses it. */
static void test_fifo_with_reader_is_refused(void **state)
{
    (void)state;
    const char *path = in_dir("fifo");
    char line[256], buf[64];
    assert_int_equal(mkfifo(path, 0600), 0);
    int reader = open(path, O_RDONLY | O_NONBLOCK);
    assert_true(reader >= 0);
    write_through_sink(path);
    snprintf(line, sizeof(line),
             "hwtag: HWTAG_LOG_PATH %s is not a regular file or a character device, reporting "
             "to stderr",
             path);
    expect_fallback(line);
    assert_true(read(reader, buf, sizeof(buf)) <= 0); /* nothing went into it */
    close(reader);
}

static void test_directory_is_refused(void **state)
{
    (void)state;
    const char *path = in_dir("sub");
    char line[256];
    assert_int_equal(mkdir(path, 0700), 0);
    write_through_sink(path);
    snprintf(line, sizeof(line),
             "hwtag: cannot open HWTAG_LOG_PATH %s (errno %d), reporting to stderr", path, EISDIR);
    expect_fallback(line);
}

static void test_missing_directory_falls_back(void **state)
{
    (void)state;
    const char *path = in_dir("no-such-dir/r.log");
    char line[256];
    write_through_sink(path);
    snprintf(line, sizeof(line),
             "hwtag: cannot open HWTAG_LOG_PATH %s (errno %d), reporting to stderr", path, ENOENT);
    expect_fallback(line);
}

/* A character device is a fine log (a terminal, /dev/null); one that refuses the write
 * sends the text to stderr with one line. */
static void test_character_devices(void **state)
{
    (void)state;
    write_through_sink("/dev/null");
    assert_string_equal(err, "");
    write_through_sink("/dev/full");
    expect_fallback("hwtag: writing to HWTAG_LOG_PATH failed, reporting to stderr");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_created_log_is_private, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_log_is_appended_and_keeps_its_mode, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_symlink_is_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dangling_symlink_creates_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_without_reader_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_with_reader_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_directory_falls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_character_devices, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
