/* SPDX-License-Identifier: MIT */
/* Stop-the-world for the leak check, in process: /proc/self/task lists the threads, a
 * real-time signal stops each in a handler that saves its registers and sleeps on a futex.
 * It never uses ptrace (so it works under gdb, strace, seccomp'd containers and qemu-user)
 * and must never leave a thread stopped. */
#include "leak_world.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "os.h"

#define MAX_THREADS 16384u
#define LIST_ROUNDS 4 /* re-listings for threads started while the others were stopped */
#define POLL_NS 1000000L

static struct hwt_leak_world *current; /* the world being stopped; its owner's only */
static int released;                   /* futex word: 1 when the stopped may go on */
static unsigned in_handler;            /* threads inside stop_handler */
/* Installed at the first check and kept: a signal still pending for a thread that did not
 * stop (it blocks it) must find this handler, never the default action, which kills. */
static int stop_signal;

static struct hwt_leak_thread *slot_of(int tid)
{
    struct hwt_leak_world *w = __atomic_load_n(&current, __ATOMIC_ACQUIRE);
    if (w == NULL)
        return NULL;
    for (unsigned i = 0; i < w->count; i++)
        if (w->threads[i].tid == tid)
            return &w->threads[i];
    return NULL;
}

static void stop_handler(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    int saved_errno = errno;
    __atomic_add_fetch(&in_handler, 1, __ATOMIC_ACQ_REL);
    struct hwt_leak_thread *t = info->si_pid == hwt_os_getpid() ? slot_of(hwt_os_gettid()) : NULL;
    if (t != NULL && !__atomic_load_n(&released, __ATOMIC_ACQUIRE)) {
        t->sp = hwt_arch_context_regs(ucontext, t->regs);
        t->tp = hwt_arch_thread_pointer();
        __atomic_store_n(&t->stopped, 1, __ATOMIC_RELEASE);
        while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
            syscall(SYS_futex, &released, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    }
    __atomic_sub_fetch(&in_handler, 1, __ATOMIC_ACQ_REL);
    errno = saved_errno;
}

/* A real-time signal the program leaves at its default, from the top: glibc keeps the
 * lowest two for itself. */
static bool install_handler(void)
{
    if (stop_signal != 0)
        return true;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = stop_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (int sig = SIGRTMAX - 1; sig >= SIGRTMIN + 2; sig--) {
        struct sigaction old;
        if (hwt_os_sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        if (hwt_os_sigaction(sig, &sa, NULL) != 0)
            continue;
        /* an emulator may not carry every signal number: try it on this thread first (the
         * handler finds no slot for it and returns at once) */
        if (syscall(SYS_tgkill, hwt_os_getpid(), hwt_os_gettid(), sig) == 0) {
            stop_signal = sig;
            return true;
        }
        hwt_os_sigaction(sig, &old, NULL);
    }
    return false;
}

/* Whether an emulator (qemu-user) runs this process: the host's view of a thread's exe is
 * the emulator, the guest's /proc/self/exe the program. */
static bool under_emulator(void)
{
    char path[64], mine[256], host[256];
    struct hwt_buf b;
    hwt_fmt_init(&b, path, sizeof(path));
    hwt_fmt_printf(&b, "/proc/self/task/%d/exe", hwt_os_gettid());
    long n1 = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", mine, sizeof(mine));
    long n2 = syscall(SYS_readlinkat, AT_FDCWD, path, host, sizeof(host));
    return n1 > 0 && n2 > 0 && (n1 != n2 || memcmp(mine, host, (size_t)n1) != 0);
}

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Adds the tids of /proc/self/task that w does not have yet (never the caller's), up to
 * cap in all; returns how many were added. */
static unsigned list_new_threads(struct hwt_leak_world *w, unsigned cap)
{
    char buf[4096];
    unsigned added = 0;
    int self = hwt_os_gettid();
    int fd =
        (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            const struct linux_dirent64 *d = (const void *)(buf + off);
            off += d->d_reclen;
            int tid = 0;
            const char *c = d->d_name;
            for (; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (*c - '0');
            if (*c != '\0' || tid <= 0 || tid == self)
                continue;
            bool known = false;
            for (unsigned i = 0; i < w->count && !known; i++)
                known = w->threads[i].tid == tid || w->threads[i].tid == -tid;
            if (known || w->count == cap)
                continue;
            struct hwt_leak_thread *t = &w->threads[w->count];
            memset(t, 0, sizeof(*t));
            t->tid = tid;
            __atomic_store_n(&w->count, w->count + 1, __ATOMIC_RELEASE);
            added++;
        }
    }
    hwt_os_close(fd);
    return added;
}

/* Threads that ran before libhwtag started: under qemu-user, the emulator's own (its RCU
 * thread), which block every signal and run no program code. */
#define EARLY_MAX 8u
static int early[EARLY_MAX];
static unsigned nearly;

void hwt_leak_world_note_start(void)
{
    struct hwt_leak_world w = {0};
    struct hwt_leak_thread t[EARLY_MAX];
    w.threads = t;
    w.count = 0;
    list_new_threads(&w, EARLY_MAX);
    for (unsigned i = 0; i < w.count; i++)
        early[i] = t[i].tid;
    nearly = w.count;
}

static bool started_early(int tid)
{
    for (unsigned i = 0; i < nearly; i++)
        if (early[i] == tid)
            return true;
    return false;
}

/* Threads of w from index from on that have stopped. */
static unsigned stopped_in(const struct hwt_leak_world *w, unsigned from)
{
    unsigned n = 0;
    for (unsigned i = from; i < w->count; i++)
        n += (unsigned)__atomic_load_n(&w->threads[i].stopped, __ATOMIC_ACQUIRE);
    return n;
}

static void sleep_poll(void)
{
    struct timespec ts = {0, POLL_NS};
    nanosleep(&ts, NULL);
}

size_t hwt_leak_world_bytes(void)
{
    return MAX_THREADS * sizeof(struct hwt_leak_thread);
}

bool hwt_leak_world_stop(struct hwt_leak_world *w, unsigned deadline_ms)
{
    w->count = w->stopped = 0;
    w->missing_tid = 0;
    w->foreign_threads = false;
    w->threads = hwt_os_map(MAX_THREADS * sizeof(*w->threads), false);
    if (w->threads == NULL)
        return false;
    __atomic_store_n(&released, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&current, w, __ATOMIC_RELEASE);
    if (!install_handler()) {
        w->missing_tid = -1;
        hwt_leak_world_resume(w);
        return false;
    }
    bool emulated = nearly > 0 && under_emulator();
    for (int round = 0; round < LIST_ROUNDS; round++) {
        unsigned from = w->count;
        if (list_new_threads(w, MAX_THREADS) == 0 && round > 0)
            break;
        unsigned signalled = 0;
        for (unsigned i = from; i < w->count; i++) {
            if (emulated && started_early(w->threads[i].tid)) {
                w->threads[i].tid = -w->threads[i].tid; /* the emulator's, never answers */
                w->foreign_threads = true;
            } else if (syscall(SYS_tgkill, hwt_os_getpid(), w->threads[i].tid, stop_signal) == 0)
                signalled++;
            else
                w->threads[i].tid = -w->threads[i].tid; /* gone already */
        }
        for (unsigned ms = 0; stopped_in(w, from) < signalled && ms < deadline_ms; ms++)
            sleep_poll();
    }
    w->stopped = stopped_in(w, 0);
    for (unsigned i = 0; i < w->count; i++) {
        struct hwt_leak_thread *t = &w->threads[i];
        if (t->stopped || t->tid <= 0)
            continue;
        if (syscall(SYS_tgkill, hwt_os_getpid(), t->tid, 0) != 0)
            t->tid = -t->tid; /* exited meanwhile */
        else if (w->missing_tid == 0)
            w->missing_tid = t->tid;
    }
    if (w->missing_tid != 0) {
        hwt_leak_world_resume(w);
        return false;
    }
    return true;
}

void hwt_leak_world_resume(struct hwt_leak_world *w)
{
    __atomic_store_n(&released, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &released, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
    /* A handler reads *w until it leaves; a late one finds current NULL. */
    __atomic_store_n(&current, NULL, __ATOMIC_RELEASE);
    while (__atomic_load_n(&in_handler, __ATOMIC_ACQUIRE) != 0)
        sleep_poll();
    if (w->threads != NULL)
        hwt_os_unmap(w->threads, MAX_THREADS * sizeof(*w->threads));
    w->threads = NULL;
}
