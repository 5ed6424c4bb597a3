/* SPDX-License-Identifier: MIT */
/* The external symbolizer process (the sanitizers' way): llvm-symbolizer, or binutils
 * addr2line -a -C -f -i -e MODULE, started with a raw clone(SIGCHLD) + execve (glibc's fork
 * would run the atfork handlers, which take the allocator's locks) and fed over a socketpair
 * (send with MSG_NOSIGNAL: a dead symbolizer must not raise SIGPIPE). One process per
 * report, killed and reaped at its end, so nothing is left across fork or exit. Every wait
 * is a poll bounded by the report's deadline. Fixed buffers only. */
#include "symbolizer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fmt.h"
#include "options.h"
#include "os.h"
#include "symparse.h"

#define POOL_CAP 32768u
#define MAX_LINES 512u
#define MAX_CACHE 128u
#define ANSWER_CAP 8192u
#define PATH_CAP 512u
#define ENV_MAX 256u
#define SENTINEL "0xffffffffffffffff"

extern char **environ;

struct cache_entry {
    const char *module; /* the caller's pointer (stable during a report) */
    uintptr_t offset;
    unsigned first, count;
};

static struct {
    bool active;            /* between begin and end */
    bool failed;            /* no more lookups in this report */
    bool resolved;          /* path looked up */
    bool missing;           /* looked up and not found */
    bool addr2line;         /* addr2line protocol */
    int sock;               /* our end, while there is a process */
    long pid;               /* the process, 0 when none */
    const char *module;     /* addr2line: the module its process reads */
    const char *bad_module; /* addr2line: the module it could not read */
    uint32_t deadline_ms;   /* hwt_os_clock_ms: compare differences */
    char path[PATH_CAP];
    char pool[POOL_CAP];
    size_t pool_used;
    struct hwt_symbolizer_line lines[MAX_LINES];
    unsigned nr_lines;
    struct cache_entry cache[MAX_CACHE];
    unsigned nr_cache;
    char answer[ANSWER_CAP];
} st; /* no field starts nonzero: the state stays in .bss, untouched until a report, where
       * one initialiser would put all of it in every process's .data */

/* ---- finding the program ---- */

static bool executable(const char *path)
{
    return syscall(SYS_faccessat, (long)AT_FDCWD, path, (long)X_OK, 0L) == 0;
}

static const char *env_value(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* name with a '/' is taken as is; otherwise the first executable PATH entry. */
static bool find_program(const char *name, char *out, size_t cap)
{
    const char *path = env_value("PATH");
    size_t len = strlen(name);

    if (strchr(name, '/') != NULL) {
        if (len >= cap || !executable(name))
            return false;
        memcpy(out, name, len + 1);
        return true;
    }
    if (path == NULL)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path != '\0') {
        const char *end = strchr(path, ':');
        size_t dir = end != NULL ? (size_t)(end - path) : strlen(path);
        if (dir > 0 && dir + 1 + len < cap) {
            memcpy(out, path, dir);
            out[dir] = '/';
            memcpy(out + dir + 1, name, len + 1);
            if (executable(out))
                return true;
        }
        path += dir;
        if (*path == ':')
            path++;
    }
    return false;
}

static bool resolve(void)
{
    static const char *const candidates[] = {"llvm-symbolizer",    "llvm-symbolizer-19",
                                             "llvm-symbolizer-18", "llvm-symbolizer-17",
                                             "llvm-symbolizer-16", "llvm-symbolizer-15",
                                             "llvm-symbolizer-14", "aarch64-linux-gnu-addr2line",
                                             "addr2line",          NULL};
    const char *chosen = hwt_opts.symbolizer;
    bool found = false;

    if (chosen != NULL && chosen[0] != '\0') {
        found = find_program(chosen, st.path, sizeof(st.path));
    } else {
        for (unsigned i = 0; candidates[i] != NULL && !found; i++)
            found = find_program(candidates[i], st.path, sizeof(st.path));
    }
    if (found) {
        const char *base = strrchr(st.path, '/');
        st.addr2line = strstr(base != NULL ? base + 1 : st.path, "addr2line") != NULL;
    }
    return found;
}

/* ---- the process ---- */

static void stop_process(void)
{
    if (st.pid > 0) {
        int status;
        syscall(SYS_close, (long)st.sock);
        syscall(SYS_kill, st.pid, (long)SIGKILL);
        while (syscall(SYS_wait4, st.pid, &status, 0L, 0L) < 0 && errno == EINTR)
            ;
    }
    st.pid = 0;
    st.module = NULL;
}

static bool start_process(const char *module)
{
    static const char *envp[ENV_MAX];
    const char *argv[8];
    unsigned argc = 0, envc = 0;
    int sv[2];

    argv[argc++] = st.path;
    if (st.addr2line) {
        argv[argc++] = "-a";
        argv[argc++] = "-C";
        argv[argc++] = "-f";
        argv[argc++] = "-i";
        argv[argc++] = "-e";
        argv[argc++] = module;
    }
    argv[argc] = NULL;
    /* not LD_PRELOAD: the symbolizer must not run under this library (nor fail to load it,
     * being a host binary under qemu-user) */
    for (char **e = environ; e != NULL && *e != NULL && envc < ENV_MAX - 1; e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
            envp[envc++] = *e;
    envp[envc] = NULL;

    if (syscall(SYS_socketpair, (long)AF_UNIX, (long)(SOCK_STREAM | SOCK_CLOEXEC), 0L, sv) != 0)
        return false;
    long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (pid == 0) {
        sigset_t none;
        int null_fd;
        sigemptyset(&none);
        syscall(SYS_rt_sigprocmask, (long)SIG_SETMASK, &none, 0L, (long)(_NSIG / 8));
        if (sv[1] <= 2)
            syscall(SYS_exit_group, 126L);
        syscall(SYS_dup3, (long)sv[1], 0L, 0L);
        syscall(SYS_dup3, (long)sv[1], 1L, 0L);
        null_fd = (int)syscall(SYS_openat, (long)AT_FDCWD, "/dev/null", (long)O_WRONLY);
        if (null_fd >= 0)
            syscall(SYS_dup3, (long)null_fd, 2L, 0L);
        syscall(SYS_execve, st.path, argv, envp);
        syscall(SYS_exit_group, 127L);
    }
    syscall(SYS_close, (long)sv[1]);
    if (pid < 0) {
        syscall(SYS_close, (long)sv[0]);
        return false;
    }
    st.sock = sv[0];
    st.pid = pid;
    st.module = module;
    return true;
}

static bool send_all(const char *buf, size_t len)
{
    while (len > 0) {
        long n = syscall(SYS_sendto, (long)st.sock, buf, len, (long)MSG_NOSIGNAL, 0L, 0L);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

/* The answer is complete: llvm-symbolizer ends it with an empty line, addr2line with the
 * two lines of the sentinel address after its "0xffffffffffffffff" line. */
static bool answer_done(const char *buf, size_t len)
{
    if (!st.addr2line)
        return len >= 2 && buf[len - 1] == '\n' && buf[len - 2] == '\n';
    const char *s = strstr(buf, "\n" SENTINEL "\n");
    if (s == NULL)
        return false;
    unsigned newlines = 0;
    for (s += strlen(SENTINEL) + 2; *s != '\0'; s++)
        newlines += *s == '\n';
    return newlines >= 2;
}

/* Reads one answer into st.answer (NUL-terminated); false on EOF, error or deadline. */
static bool read_answer(void)
{
    size_t len = 0;

    st.answer[0] = '\0';
    for (;;) {
        int32_t left = (int32_t)(st.deadline_ms - hwt_os_clock_ms());
        struct pollfd p = {.fd = st.sock, .events = POLLIN};
        if (left <= 0)
            return false;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        long n =
            syscall(SYS_recvfrom, (long)st.sock, st.answer + len, ANSWER_CAP - 1 - len, 0L, 0L, 0L);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        len += (size_t)n;
        st.answer[len] = '\0';
        if (answer_done(st.answer, len))
            return true;
        if (len == ANSWER_CAP - 1)
            return false;
    }
}

/* ---- the session ---- */

void hwt_symbolizer_begin(void)
{
    stop_process();
    st.active = true;
    /* A secure-execution process starts no program: it would run with privileges the user
     * who chose it (PATH, HWTAG_SYMBOLIZER, the symbolizer's own variables) does not have.
     * Frames keep the names read from the modules' own ELF files. */
    st.failed = hwt_opts.symbolize != HWT_ON || hwt_os_secure();
    st.resolved = false;
    st.missing = false;
    st.bad_module = NULL;
    st.pool_used = 0;
    st.nr_lines = 0;
    st.nr_cache = 0;
    st.deadline_ms = 0;
}

bool hwt_symbolizer_missing(void)
{
    return st.missing;
}

void hwt_symbolizer_end(void)
{
    stop_process();
    st.active = false;
}

static const char *pool_copy(const char *s)
{
    size_t len = strlen(s) + 1;
    char *at;
    if (len > POOL_CAP - st.pool_used)
        return NULL;
    at = &st.pool[st.pool_used];
    memcpy(at, s, len);
    st.pool_used += len;
    return at;
}

/* Asks the symbolizer; stores the answer's lines in st.lines. */
static unsigned query(const char *module, uintptr_t offset, unsigned *first)
{
    struct hwt_symbolizer_line parsed[HWT_SYMBOLIZER_MAX_INLINE];
    char request[PATH_CAP + 64];
    struct hwt_buf b;
    unsigned n;

    if (!st.resolved) {
        st.resolved = true;
        if (!resolve()) {
            st.failed = true;
            st.missing = true;
            return 0;
        }
        st.deadline_ms = hwt_os_clock_ms() + HWT_SYMBOLIZER_DEADLINE_MS;
    }
    if (st.addr2line && st.bad_module == module)
        return 0;
    if (st.addr2line && st.module != module)
        stop_process();
    if (st.pid == 0 && !start_process(module)) {
        st.failed = true;
        return 0;
    }
    hwt_fmt_init(&b, request, sizeof(request));
    if (st.addr2line)
        hwt_fmt_printf(&b, "0x%lx\n" SENTINEL "\n", (unsigned long)offset);
    else
        hwt_fmt_printf(&b, "CODE %s 0x%lx\n", module, (unsigned long)offset);
    if (b.truncated || !send_all(request, b.len) || !read_answer()) {
        bool timed_out = (int32_t)(hwt_os_clock_ms() - st.deadline_ms) >= 0;
        stop_process();
        /* addr2line that cannot read one module may read the next */
        if (st.addr2line && !timed_out)
            st.bad_module = module;
        else
            st.failed = true;
        return 0;
    }
    n = hwt_symparse_answer(st.answer, parsed, HWT_SYMBOLIZER_MAX_INLINE);
    if (n > MAX_LINES - st.nr_lines)
        return 0;
    *first = st.nr_lines;
    for (unsigned i = 0; i < n; i++) {
        struct hwt_symbolizer_line *l = &st.lines[st.nr_lines++];
        *l = parsed[i];
        l->function = parsed[i].function != NULL ? pool_copy(parsed[i].function) : NULL;
        l->file = parsed[i].file != NULL ? pool_copy(parsed[i].file) : NULL;
        if (l->file == NULL)
            l->line = l->column = 0;
    }
    return n;
}

unsigned hwt_symbolizer_lookup(const char *module, uintptr_t offset,
                               struct hwt_symbolizer_line *out, unsigned max)
{
    unsigned first = 0, n;

    if (!st.active || module == NULL || module[0] != '/')
        return 0;
    for (unsigned i = 0; i < st.nr_cache; i++) {
        if (st.cache[i].module == module && st.cache[i].offset == offset) {
            first = st.cache[i].first;
            n = st.cache[i].count;
            goto copy;
        }
    }
    if (st.failed)
        return 0;
    n = query(module, offset, &first);
    if (st.nr_cache < MAX_CACHE)
        st.cache[st.nr_cache++] = (struct cache_entry){module, offset, first, n};
copy:
    if (n > max)
        n = max;
    for (unsigned i = 0; i < n; i++)
        out[i] = st.lines[first + i];
    return n;
}
