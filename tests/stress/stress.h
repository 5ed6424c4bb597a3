/* SPDX-License-Identifier: MIT */
/* Shared helpers of the stress programs: a time budget (STRESS_SECONDS, or
 * STRESS_LONG=1 for ten times the default) or a count of work, a watchdog that tells a
 * hang from slow progress, a per-thread random generator, objects
 * filled and checked one byte per granule (so every granule's tag is exercised and a page
 * given back under a live object reads as a wrong value), and a report counter hooked in
 * through hwtag_set_report_callback when libhwtag is there. */
#ifndef STRESS_H
#define STRESS_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int stress_reports;
static int stress_bad_values;

static double stress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds to run: STRESS_SECONDS, else dflt (ten times that with STRESS_LONG). */
static double stress_seconds(double dflt)
{
    const char *s = getenv("STRESS_SECONDS");
    if (s != NULL && atof(s) > 0)
        return atof(s);
    s = getenv("STRESS_LONG");
    if (s != NULL && *s != '\0' && *s != '0')
        return dflt * 10;
    return dflt;
}

static unsigned stress_env_uint(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    return s != NULL && atoi(s) > 0 ? (unsigned)atoi(s) : dflt;
}

/* A count of work for a test bounded by count, not time: the variable name, else dflt
 * (ten times that with STRESS_LONG). */
static unsigned stress_count(const char *name, unsigned dflt)
{
    const char *s = getenv("STRESS_LONG");
    return stress_env_uint(name, s != NULL && *s != '\0' && *s != '0' ? dflt * 10 : dflt);
}

static uint64_t stress_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

static void stress_on_report(const void *info, void *arg)
{
    (void)info;
    (void)arg;
    __atomic_add_fetch(&stress_reports, 1, __ATOMIC_RELAXED);
}

static void stress_init(void)
{
    void (*set)(void (*)(const void *, void *), void *) =
        (void (*)(void (*)(const void *, void *), void *))dlsym(RTLD_DEFAULT,
                                                                "hwtag_set_report_callback");
    if (set != NULL)
        set(stress_on_report, NULL);
}

static unsigned char stress_byte(const void *p, size_t off)
{
    uintptr_t a = ((uintptr_t)p & ((UINT64_C(1) << 56) - 1)) + off;
    return (unsigned char)(((a >> 4) * 0x9du) | 1u); /* never 0 */
}

/* Writes one byte in every 16-byte granule of [p, p+size) and the last byte. */
static void stress_fill(void *p, size_t size)
{
    volatile unsigned char *c = p;
    for (size_t off = 0; off < size; off += 16)
        c[off] = stress_byte(p, off);
    if (size > 0)
        c[size - 1] = stress_byte(p, size - 1);
}

/* Reads them back; a wrong value (memory given back under the object) is counted. */
static void stress_check(const void *p, size_t size)
{
    const volatile unsigned char *c = p;
    for (size_t off = 0; off < size; off += 16) {
        if (c[off] != stress_byte(p, off))
            __atomic_add_fetch(&stress_bad_values, 1, __ATOMIC_RELAXED);
    }
    if (size > 0 && c[size - 1] != stress_byte(p, size - 1))
        __atomic_add_fetch(&stress_bad_values, 1, __ATOMIC_RELAXED);
}

/* How a table churn sizes, fills and checks its objects. */
struct stress_kind {
    size_t (*size)(uint64_t *rng);
    void (*fill)(void *p, size_t size);
    void (*check)(const void *p, size_t size);
};

/* Until deadline, replaces random entries of a table of n objects (NULL = empty) with new
 * ones of kind k, batch at a time, checking each object before it is freed; then checks
 * and frees them all. Returns how many objects it made. */
static uint64_t stress_churn_table(void **objs, size_t *sizes, unsigned n, uint64_t *rng,
                                   const struct stress_kind *k, unsigned batch, double deadline)
{
    uint64_t made = 0;
    while (stress_now() < deadline) {
        for (unsigned i = 0; i < batch; i++) {
            unsigned j = (unsigned)(stress_rand(rng) % n);
            if (objs[j] != NULL) {
                k->check(objs[j], sizes[j]);
                free(objs[j]);
            }
            sizes[j] = k->size(rng);
            objs[j] = malloc(sizes[j]);
            if (objs[j] != NULL)
                k->fill(objs[j], sizes[j]);
        }
        made += batch;
    }
    for (unsigned j = 0; j < n; j++) {
        if (objs[j] != NULL) {
            k->check(objs[j], sizes[j]);
            free(objs[j]);
            objs[j] = NULL;
        }
    }
    return made;
}

/* Runs fn in STRESS_THREADS threads (default 2, at most 4), argument 1..n, and waits
 * for them. Returns how many ran. */
static unsigned stress_run_threads(void *(*fn)(void *))
{
    unsigned n = stress_env_uint("STRESS_THREADS", 2);
    if (n > 4)
        n = 4;
    pthread_t t[4];
    for (unsigned i = 0; i < n; i++)
        pthread_create(&t[i], NULL, fn, (void *)(uintptr_t)(i + 1));
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return n;
}

/* Prints the rate line; exit status 1 when anything went wrong. */
static int stress_finish(const char *what)
{
    int reports = __atomic_load_n(&stress_reports, __ATOMIC_RELAXED);
    int bad = __atomic_load_n(&stress_bad_values, __ATOMIC_RELAXED);
    printf("%s, %d false reports, %d corrupted values\n", what, reports, bad);
    fflush(stdout);
    return reports == 0 && bad == 0 ? 0 : 1;
}

/* Runs fn in a child process and waits at most timeout seconds for it: a hang is
 * reported as a deadlock (the child is killed), a signal as what it is. Returns 0 when fn
 * returned 0. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int stress_watchdog(int (*fn)(void), double timeout, const char *what)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        int rc = fn();
        fflush(stdout);
        _exit(rc);
    }
    double end = stress_now() + timeout;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (stress_now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            printf("%s: DEADLOCK, no progress for %.0f s\n", what, timeout);
            return 1;
        }
        usleep(20000);
    }
    if (WIFSIGNALED(status)) {
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
        return 1;
    }
    return WEXITSTATUS(status);
}

/* Zeroed memory that stays shared with the processes forked after this call, where they
 * can publish their progress. NULL when it cannot be mapped. */
#include <sys/mman.h>

static void *stress_shared(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Runs fn in a child process that bumps *progress (in stress_shared memory) as it gets work
 * done, and calls a hang a deadlock only when *progress stalls: for stall seconds, or ten
 * times the longest pause seen so far when that is longer, as a loaded machine or an
 * emulator stretches every step but a deadlock stops them all. describe, when not NULL,
 * then says where the child stood. Returns 0 when fn returned 0. */
static int stress_watchdog_progress(int (*fn)(void), const uint64_t *progress, double stall,
                                    void (*describe)(void), const char *what)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        int rc = fn();
        fflush(stdout);
        _exit(rc);
    }
    uint64_t seen = __atomic_load_n(progress, __ATOMIC_RELAXED);
    double since = stress_now(), longest = 0;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        double now = stress_now();
        uint64_t cur = __atomic_load_n(progress, __ATOMIC_RELAXED);
        if (cur != seen) {
            if (now - since > longest)
                longest = now - since;
            seen = cur;
            since = now;
        } else if (now - since > (stall > 10 * longest ? stall : 10 * longest)) {
            printf("%s: DEADLOCK, no progress for %.0f s (longest pause before: %.2f s)\n", what,
                   now - since, longest);
            if (describe != NULL)
                describe();
            fflush(stdout);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return 1;
        }
        usleep(20000);
    }
    if (WIFSIGNALED(status)) {
        printf("%s: killed by signal %d\n", what, WTERMSIG(status));
        return 1;
    }
    return WEXITSTATUS(status);
}

#endif
