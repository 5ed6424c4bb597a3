/* SPDX-License-Identifier: MIT */
/* Forks a child per bug so one test's fault cannot take the suite down. */
#include "harness.h"
#include "os.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"
#include "hwtag.h"

#define CAUGHT_EXIT 42

static int report_fd = -1;

struct fault_record {
    int si_code;
    uintptr_t addr;
};

static void catcher(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    struct fault_record rec = {info->si_code, (uintptr_t)info->si_addr};
    if (write(report_fd, &rec, sizeof(rec)) != (ssize_t)sizeof(rec))
        _exit(CAUGHT_EXIT + 1);
    _exit(CAUGHT_EXIT);
}

bool tagging_active(void)
{
    struct hwtag_stats st;
    return hwtag_get_stats(&st, sizeof(st)) == 0 && st.mte_active;
}

static void read_all(int fd, char *buf, size_t cap, size_t *len)
{
    *len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + *len, cap - 1 - *len);
        if (n <= 0)
            break;
        *len += (size_t)n;
        if (*len == cap - 1)
            break;
    }
    buf[*len] = '\0';
}

/* HWT_DETECT_SAVE=FILE: every child's output is appended there too, for checks that read
 * all the reports the tests make (syzkaller_titles.py). */
static void save_output(const char *text, size_t len)
{
    const char *path = getenv("HWT_DETECT_SAVE");
    if (path == NULL || len == 0)
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
        fprintf(stderr, "HWT_DETECT_SAVE: short write to %s\n", path);
    close(fd);
}

bool run_child(enum child_mode mode, void (*fn)(void *), void *arg, struct child_result *out)
{
    int rec_pipe[2], err_pipe[2];
    memset(out, 0, sizeof(*out));
    if (pipe(rec_pipe) != 0 || pipe(err_pipe) != 0)
        return false;
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        close(rec_pipe[0]);
        close(err_pipe[0]);
        dup2(err_pipe[1], 2);
        report_fd = rec_pipe[1];
        alarm(120);
        if (mode == CATCH_SEGV) {
            struct sigaction sa;
            memset(&sa, 0, sizeof(sa));
            sa.sa_sigaction = catcher;
            sa.sa_flags = SA_SIGINFO | SA_EXPOSE_TAGBITS;
            /* libc's own: the program-facing sigaction would put it behind ours */
            hwt_os_sigaction(SIGSEGV, &sa, NULL);
        } else {
            /* cmocka swaps SIGSEGV handlers around each test: take ours back */
            signal(SIGSEGV, SIG_DFL);
            hwt_fault_install();
        }
        fn(arg);
        _exit(0);
    }
    close(rec_pipe[1]);
    close(err_pipe[1]);
    read_all(err_pipe[0], out->output, sizeof(out->output), &out->output_len);
    save_output(out->output, out->output_len);
    struct fault_record rec;
    if (read(rec_pipe[0], &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
        out->faulted = true;
        out->si_code = rec.si_code;
        out->fault_addr = rec.addr;
    }
    close(rec_pipe[0]);
    close(err_pipe[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return false;
    out->exited = WIFEXITED(status);
    out->exit_code = out->exited ? WEXITSTATUS(status) : -1;
    out->signaled = WIFSIGNALED(status);
    out->signal = out->signaled ? WTERMSIG(status) : 0;
    return true;
}
