/* SPDX-License-Identifier: MIT */
/* fork while 4 threads allocate and free at full speed: the snapshot can catch a thread
 * cache bin in the middle of an update (a drain that has given its slots back but not yet
 * shortened the bin, a push whose count is ahead of its slot). The child adopts the dead
 * threads' caches, then allocates and frees in every class; it must neither trap nor
 * report. Prints forks and child failures. STRESS_SECONDS / STRESS_LONG. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stress.h"

static volatile int stop;
static uint64_t ops;

static void *churn(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15u + 3;
    void *live[64] = {0};
    uint64_t n = 0;
    while (!stop) {
        /* bursts of frees then allocations: bins fill, drain and refill all the time */
        unsigned cls = (unsigned)(stress_rand(&rng) % 8);
        size_t size = (size_t)16 << cls;
        for (unsigned k = 0; k < 64; k++)
            live[k] = malloc(size + (k & 15));
        for (unsigned k = 0; k < 64; k++)
            free(live[k]);
        n += 64;
    }
    __atomic_add_fetch(&ops, n, __ATOMIC_RELAXED);
    return NULL;
}

static int child_work(void)
{
    void *p[256];
    for (unsigned round = 0; round < 4; round++) {
        for (unsigned i = 0; i < 256; i++) {
            p[i] = malloc((size_t)16 << (i % 11));
            if (p[i] == NULL)
                return 1;
            stress_fill(p[i], (size_t)16 << (i % 11));
        }
        for (unsigned i = 0; i < 256; i++) {
            stress_check(p[i], (size_t)16 << (i % 11));
            free(p[i]);
        }
    }
    return stress_bad_values != 0;
}

int main(void)
{
    stress_init();
    double deadline = stress_now() + stress_seconds(20);
    pthread_t t[4];
    for (unsigned i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
    unsigned forks = 0, failures = 0;
    while (stress_now() < deadline) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_work());
        if (pid < 0)
            break;
        int status = 0;
        waitpid(pid, &status, 0);
        forks++;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failures++;
            fprintf(stderr, "fork %u: child %s %d\n", forks,
                    WIFSIGNALED(status) ? "killed by signal" : "exited with",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
    }
    stop = 1;
    for (unsigned i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    char line[160];
    snprintf(line, sizeof(line),
             "%u forks under 4 allocating threads (%llu objects), %u child failures", forks,
             (unsigned long long)ops, failures);
    int rc = stress_finish(line);
    return rc != 0 || failures != 0;
}
