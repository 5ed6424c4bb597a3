/* SPDX-License-Identifier: MIT */
/* The report sink: stderr or the HWTAG_LOG_PATH file, opened with open(2) and written with
 * write(2) only, so the fault path can use it. Owns nothing but the log's state. */
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "options.h"
#include "os.h"

#define COMM_CAP 32
#define LOG_PATH_CAP 4096
/* A report is a small core dump: addresses that undo ASLR, register contents. The kernel
 * keeps both private (core files 0600, /proc/PID/maps behind ptrace access), and so does a
 * log this library creates; an existing file is appended to and keeps its mode. */
#define LOG_MODE 0600
/* Never through a symlink in the last component (another user's link in /tmp); no tty
 * becomes the controlling terminal; a FIFO with no reader fails instead of blocking
 * start-up, and one with a reader is refused after the open. */
#define LOG_FLAGS (O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK)

static int log_fd = STDERR_FILENO; /* HWTAG_LOG_PATH, opened by hwt_sink_init */
/* Process the log was opened for; with "%p" in the path a forked child reopens its own. */
static int log_pid;
static bool log_per_pid;
static char comm[COMM_CAP] = "?"; /* process name, read at install time */
/* The process whose log could not be opened or written: it reports to stderr, and the
 * notice saying so is printed once. */
static int log_failed_pid;
static uint64_t reports_printed;

/* The process name from /proc/self/stat, "pid (comm) state ...": the same as
 * /proc/self/comm, but also right under qemu-user, which emulates stat and not comm. */
static void read_comm(void)
{
    char stat[512];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, stat, sizeof(stat) - 1);
    close(fd);
    if (n <= 0)
        return;
    stat[n] = '\0';
    const char *open_paren = strchr(stat, '(');
    const char *close_paren = strrchr(stat, ')');
    if (open_paren == NULL || close_paren == NULL || close_paren <= open_paren)
        return;
    size_t len = (size_t)(close_paren - open_paren - 1);
    if (len > sizeof(comm) - 1)
        len = sizeof(comm) - 1;
    memcpy(comm, open_paren + 1, len);
    comm[len] = '\0';
}

/* HWTAG_LOG_PATH with every "%p" replaced by the pid; stderr when unset, unopenable or
 * neither a regular file nor a character device.
 * signal-safe (open, fstat, fcntl and our formatter only), so the report path can reopen it. */
static void open_log(void)
{
    char path[LOG_PATH_CAP];
    struct hwt_buf b;
    const char *p = hwt_opts.log_path;
    int pid = hwt_os_getpid();

    if (p == NULL || *p == '\0' || (log_fd != STDERR_FILENO && (!log_per_pid || log_pid == pid)))
        return;
    if (log_failed_pid == pid || (log_failed_pid != 0 && !log_per_pid))
        return; /* already said, and already on stderr */
    hwt_fmt_init(&b, path, sizeof(path));
    log_per_pid = false;
    for (; *p != '\0'; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            hwt_fmt_printf(&b, "%d", pid);
            log_per_pid = true;
            p++;
        } else {
            hwt_fmt_printf(&b, "%c", *p);
        }
    }
    int fd = b.truncated ? -1 : open(path, LOG_FLAGS, LOG_MODE);
    const char *refused = NULL;
    if (fd >= 0) {
        struct stat st;
        /* what was opened, not what the path named a moment before */
        if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
            refused = "is not a regular file or a character device";
            close(fd);
            fd = -1;
        } else {
            /* a report waits for a slow terminal rather than losing lines to EAGAIN; should
             * this fail, a short write sends the rest to stderr */
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        }
    } else if (errno == ELOOP) {
        refused = "is a symbolic link (not followed)";
    }
    if (fd < 0) {
        char msg[LOG_PATH_CAP + 96];
        struct hwt_buf m;
        hwt_fmt_init(&m, msg, sizeof(msg));
        if (b.truncated)
            hwt_fmt_printf(&m, "hwtag: HWTAG_LOG_PATH is too long, reporting to stderr\n");
        else if (refused != NULL)
            hwt_fmt_printf(&m, "hwtag: HWTAG_LOG_PATH %s %s, reporting to stderr\n", path, refused);
        else
            hwt_fmt_printf(&m,
                           "hwtag: cannot open HWTAG_LOG_PATH %s (errno %d), reporting to stderr\n",
                           path, errno);
        hwt_os_write_all(STDERR_FILENO, m.data, m.len);
        log_failed_pid = pid;
        return;
    }
    /* A forked child inherited its parent's file: leave that one to the parent. */
    if (log_fd != STDERR_FILENO)
        close(log_fd);
    log_fd = fd;
    log_pid = pid;
}

void hwt_sink_init(void)
{
    read_comm();
    open_log();
}

/* Writes to the log; when the log refuses (a full disk, /dev/full, a closed pipe), says so
 * once on stderr and sends this and every later text there: a report always lands. */
static void write_log(const char *text, size_t len)
{
    if (hwt_os_write_all(log_fd, text, len) || log_fd == STDERR_FILENO)
        return;
    static const char msg[] = "hwtag: writing to HWTAG_LOG_PATH failed, reporting to stderr\n";
    hwt_os_write_all(STDERR_FILENO, msg, sizeof(msg) - 1);
    close(log_fd);
    log_fd = STDERR_FILENO;
    log_failed_pid = hwt_os_getpid();
    hwt_os_write_all(STDERR_FILENO, text, len);
}

void hwt_sink_report(const char *text, size_t len)
{
    open_log(); /* a forked child writes to its own %p file, as ASan's log_path does */
    write_log(text, len);
    __atomic_add_fetch(&reports_printed, 1, __ATOMIC_RELAXED);
}

void hwt_sink_notice(const char *msg)
{
    open_log();
    write_log(msg, strlen(msg));
}

int hwt_sink_log_fd(void)
{
    open_log();
    return log_fd;
}

const char *hwt_sink_comm(void)
{
    return comm;
}

uint64_t hwt_sink_reports_printed(void)
{
    return __atomic_load_n(&reports_printed, __ATOMIC_RELAXED);
}
