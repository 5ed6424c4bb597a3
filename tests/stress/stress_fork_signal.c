/* SPDX-License-Identifier: MIT */
/* glibc's tst-mallocfork/tst-mallocfork2 in one: a single-threaded process allocates,
 * frees and forks while another process showers it with signals whose handler forks (the
 * child exits at once). The handler can interrupt malloc, free or fork with allocator locks
 * held; the fork in it must not wait for them. A watchdog process calls a stall of progress
 * a deadlock.
 * The work is a count of rounds (STRESS_ROUNDS, ten times the default with STRESS_LONG), not
 * a time: a fork costs hundreds of times more under qemu than natively. For the same reason
 * the sender paces itself on the target's progress, not on a clock: it signals again only
 * once the last handler has returned and the main loop has moved on, so the handler can
 * never take all the target's time (with a fixed period shorter than a fork under qemu,
 * a new signal was always pending when the handler returned, and the main loop never ran). */
#include "stress.h"

enum { PHASE_OTHER, PHASE_MALLOC, PHASE_FORK, PHASES };

/* Shared by the watchdog, the target and the sender (stress_shared); every field is
 * written by one process and read by the others with atomics. */
struct shared {
    uint64_t progress; /* target: malloc/free pairs, forks and handler forks done */
    uint64_t pairs;    /* target's main loop */
    uint64_t forks;    /* target's main loop */
    uint64_t handler_forks;
    uint64_t handled;        /* target: handlers returned, whether their fork worked or not */
    uint64_t landed[PHASES]; /* handler entries by what the main loop was doing */
    uint64_t signals;        /* sender */
    int phase;               /* target's main loop: PHASE_* */
    int in_handler;          /* target: a handler has started and not returned */
    int done;                /* target: the main loop has finished */
};

static struct shared *sh;

static uint64_t get(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void bump(uint64_t *p)
{
    __atomic_add_fetch(p, 1, __ATOMIC_RELEASE);
}

static void set_phase(int phase)
{
    __atomic_store_n(&sh->phase, phase, __ATOMIC_RELEASE);
}

static void reap(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

static void handler(int sig)
{
    (void)sig;
    int saved = errno;
    __atomic_store_n(&sh->in_handler, 1, __ATOMIC_RELEASE);
    bump(&sh->landed[__atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE)]);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    if (pid > 0) {
        reap(pid);
        bump(&sh->handler_forks);
        bump(&sh->progress);
    }
    __atomic_store_n(&sh->in_handler, 0, __ATOMIC_RELEASE);
    bump(&sh->handled);
    errno = saved;
}

static int target_done(void)
{
    return __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE);
}

/* Polling, as the sender waits for another process's progress; short against any step
 * here (a malloc/free pair is the shortest) so the signal still lands at a random place. */
static void nap(pid_t target)
{
    if (getppid() != target)
        _exit(0); /* the watchdog killed the target: do not outlive it */
    usleep(200);
}

/* One signal at a time: after a random number of the main loop's malloc/free pairs, or,
 * one time in four, while the main loop is in fork; then until the handler has returned. */
static void sender(pid_t target)
{
    uint64_t rng = 67890;
    for (;;) {
        uint64_t r = stress_rand(&rng);
        if (r % 4 == 0) {
            while (!target_done() && __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE) != PHASE_FORK)
                nap(target);
        } else {
            uint64_t until = get(&sh->pairs) + 1 + (r >> 8) % 200;
            while (!target_done() && get(&sh->pairs) < until)
                nap(target);
        }
        uint64_t handled = get(&sh->handled);
        if (target_done() || kill(target, SIGUSR1) != 0)
            _exit(0);
        bump(&sh->signals);
        while (!target_done() && get(&sh->handled) == handled)
            nap(target);
    }
}

static int workload(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    pid_t me = getpid();
    pid_t sender_pid = fork();
    if (sender_pid == 0)
        sender(me);
    unsigned rounds = stress_count("STRESS_ROUNDS", 120);
    uint64_t rng = 12345;
    void *live[32] = {0};
    for (unsigned round = 0; round < rounds; round++) {
        for (unsigned i = 0; i < 200; i++) {
            unsigned k = (unsigned)(stress_rand(&rng) % 32);
            uint64_t r = stress_rand(&rng);
            /* small ones (thread cache, central refills) and page-backed ones (a lock on
             * every call) */
            size_t size = r % 4 == 0 ? 20000 + r % 40000 : 16 + r % 2000;
            set_phase(PHASE_MALLOC);
            free(live[k]);
            live[k] = malloc(size);
            set_phase(PHASE_OTHER);
            bump(&sh->pairs);
            bump(&sh->progress);
        }
        set_phase(PHASE_FORK);
        pid_t pid = fork(); /* a signal may land inside this fork too */
        if (pid == 0)
            _exit(0);
        set_phase(PHASE_OTHER);
        if (pid > 0) {
            reap(pid);
            bump(&sh->forks);
            bump(&sh->progress);
        }
    }
    __atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
    kill(sender_pid, SIGKILL);
    reap(sender_pid);
    for (unsigned k = 0; k < 32; k++)
        free(live[k]);
    uint64_t handled = get(&sh->handler_forks);
    printf("%llu malloc/free, %llu forks, %llu forks from signal handlers (%llu signals landed "
           "in malloc/free, %llu in fork), 0 deadlocks\n",
           (unsigned long long)get(&sh->pairs), (unsigned long long)get(&sh->forks),
           (unsigned long long)handled, (unsigned long long)get(&sh->landed[PHASE_MALLOC]),
           (unsigned long long)get(&sh->landed[PHASE_FORK]));
    if (handled == 0) {
        printf("no signal was handled: the fork from a handler went untested\n");
        return 1;
    }
    return 0;
}

static void describe(void)
{
    static const char *const phases[PHASES] = {"between calls", "in malloc/free", "in fork"};
    int phase = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
    printf("main loop %s%s; %llu malloc/free, %llu forks, %llu of %llu signals handled\n",
           phase >= 0 && phase < PHASES ? phases[phase] : "?",
           __atomic_load_n(&sh->in_handler, __ATOMIC_ACQUIRE) ? ", interrupted by a handler" : "",
           (unsigned long long)get(&sh->pairs), (unsigned long long)get(&sh->forks),
           (unsigned long long)get(&sh->handled), (unsigned long long)get(&sh->signals));
}

int main(void)
{
    sh = stress_shared(sizeof(*sh));
    if (sh == NULL)
        return 1;
    return stress_watchdog_progress(workload, &sh->progress, 20, describe,
                                    "fork from a signal handler");
}
