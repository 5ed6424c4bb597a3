/* SPDX-License-Identifier: MIT */
/* glibc's tst-mallocfork/tst-mallocfork2 in one: a single-threaded process allocates,
 * frees and forks while another process showers it with signals whose handler forks (the
 * child exits at once). The handler can interrupt malloc, free or fork with allocator locks
 * held; the fork in it must not wait for them. A watchdog process calls a hang a deadlock.
 * STRESS_SECONDS / STRESS_LONG. */
#include "stress.h"

static volatile sig_atomic_t handler_forks;
static double run_seconds;

static void handler(int sig)
{
    (void)sig;
    int saved = errno;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid > 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
        handler_forks++;
    }
    errno = saved;
}

static int workload(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pid_t me = getpid();
    pid_t sender = fork();
    if (sender == 0) {
        for (;;) {
            if (kill(me, SIGUSR1) != 0)
                _exit(0);
            usleep(10000); /* a fork and wait take ms under qemu: let main run */
        }
    }
    uint64_t rng = 12345, ops = 0, forks = 0;
    void *live[32] = {0};
    double deadline = stress_now() + run_seconds;
    while (stress_now() < deadline) {
        for (unsigned i = 0; i < 200; i++) {
            unsigned k = (unsigned)(stress_rand(&rng) % 32);
            free(live[k]);
            uint64_t r = stress_rand(&rng);
            /* small ones (thread cache, central refills) and page-backed ones (a lock on
             * every call) */
            size_t size = r % 4 == 0 ? 20000 + r % 40000 : 16 + r % 2000;
            live[k] = malloc(size);
            ops++;
        }
        pid_t pid = fork(); /* a signal may land inside this fork too */
        if (pid == 0)
            _exit(0);
        if (pid > 0) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
            }
            forks++;
        }
    }
    kill(sender, SIGKILL);
    while (waitpid(sender, NULL, 0) < 0 && errno == EINTR) {
    }
    for (unsigned k = 0; k < 32; k++)
        free(live[k]);
    printf("%llu malloc/free, %llu forks, %d forks from signal handlers, 0 deadlocks\n",
           (unsigned long long)ops, (unsigned long long)forks, (int)handler_forks);
    return 0;
}

int main(void)
{
    run_seconds = stress_seconds(15);
    return stress_watchdog(workload, run_seconds + 30, "fork from a signal handler");
}
