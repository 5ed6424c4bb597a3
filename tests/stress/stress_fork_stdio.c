/* SPDX-License-Identifier: MIT */
/* glibc bug 19431's lock-order cycle: threads read a file with getline (which mallocs
 * holding the stream's lock), one calls fflush(NULL) (the stdio list lock, then each
 * stream's lock), and the main thread forks. Allocator locks taken before the list lock
 * close the cycle. A watchdog process calls a hang a deadlock. STRESS_SECONDS / _LONG. */
#include <pthread.h>

#include "stress.h"

static volatile int stop;
static char path[64];
static uint64_t lines_read, flushes;

static void *reader(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    while (!stop) {
        FILE *f = fopen(path, "r");
        if (f == NULL)
            break;
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) > 0) {
            free(line); /* so the next getline mallocs under the stream lock again */
            line = NULL;
            cap = 0;
            n++;
        }
        free(line);
        fclose(f);
    }
    __atomic_add_fetch(&lines_read, n, __ATOMIC_RELAXED);
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
    uint64_t n = 0;
    while (!stop) {
        fflush(NULL);
        n++;
    }
    __atomic_add_fetch(&flushes, n, __ATOMIC_RELAXED);
    return NULL;
}

static double run_seconds;

static int workload(void)
{
    snprintf(path, sizeof(path), "/tmp/hwtag-stress-stdio-%d", (int)getpid());
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return 1;
    /* long lines: getline's buffer grows past 16 KiB, page-backed, a lock each time */
    for (unsigned i = 0; i < 16; i++)
        fprintf(f, "%0*u\n", (int)(100 + (i % 4) * 12000), i);
    fclose(f);
    pthread_t t[3];
    pthread_create(&t[0], NULL, reader, NULL);
    pthread_create(&t[1], NULL, reader, NULL);
    pthread_create(&t[2], NULL, flusher, NULL);
    unsigned forks = 0;
    double deadline = stress_now() + run_seconds;
    while (stress_now() < deadline) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0)
            break;
        waitpid(pid, NULL, 0);
        forks++;
    }
    stop = 1;
    for (unsigned i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    unlink(path);
    printf("%u forks, %llu lines read with getline, %llu fflush(NULL), 0 deadlocks\n", forks,
           (unsigned long long)lines_read, (unsigned long long)flushes);
    return 0;
}

int main(void)
{
    run_seconds = stress_seconds(15);
    return stress_watchdog(workload, run_seconds + 30, "fork with stdio");
}
