/* SPDX-License-Identifier: MIT */
/* The leak check's cost: N live objects of SIZE bytes (all reachable: half from a global
 * array, half through a list), then one hwtag_leak_check() timed, with the process's peak
 * RSS before and after (the check's tables are its only new memory). A second thread
 * counts how long it was stopped. Run under LD_PRELOAD=libhwtag.so:
 *   bench_leak N SIZE        (e.g. 1000000 32, or 1024 1048576 for a 1 GiB heap) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* volatile: the compiler must keep both roots in memory across the check */
void **volatile table;
void *volatile list_head;
static volatile int stop_spinner, spinner_started;
static volatile double longest_gap;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The longest time between two of its iterations: how long the check held it stopped. */
static void *spinner(void *arg)
{
    double last = now();
    spinner_started = 1;
    while (!stop_spinner) {
        double t = now();
        if (t - last > longest_gap)
            longest_gap = t - last;
        last = t;
    }
    return arg;
}

static long peak_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000;
    size_t size = argc > 2 ? strtoull(argv[2], NULL, 0) : 32;
    int (*check)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "hwtag_leak_check");
    if (check == NULL) {
        fprintf(stderr, "bench_leak: run it with libhwtag preloaded\n");
        return 2;
    }
    if (size < sizeof(void *))
        size = sizeof(void *);
    table = calloc(n / 2 + 1, sizeof(void *));
    void *list = NULL; /* a local while it grows, then kept in list_head */
    for (size_t i = 0; i < n; i++) {
        void **p = malloc(size);
        memset(p, 0, size);
        if (i % 2 == 0) {
            table[i / 2] = p;
        } else {
            p[0] = list;
            list = p;
        }
    }
    list_head = list;
    list = NULL;
    pthread_t t;
    pthread_create(&t, NULL, spinner, NULL);
    while (!spinner_started)
        ;
    long rss_before = peak_kib();
    double t0 = now();
    int leaked = check();
    double t1 = now();
    long rss_after = peak_kib();
    stop_spinner = 1;
    pthread_join(t, NULL);
    printf("RESULT objects=%zu size=%zu heap_mib=%.1f check_s=%.3f pause_s=%.3f "
           "rss_growth_kib=%ld leaked=%d\n",
           n, size, (double)n * (double)size / 1048576.0, t1 - t0, longest_gap,
           rss_after - rss_before, leaked);
    return leaked != 0;
}
