/* SPDX-License-Identifier: MIT */
/* Multi-threaded allocator workloads of the shapes where an allocator core wins or loses
 * (issue 10): every one runs a fixed, seeded amount of work, times it and prints
 *   RESULT workload=NAME threads=T ops=N seconds=S ops_s=X
 * Workloads (--workload):
 *   remote   server-style remote frees: T threads each own a bin of live objects of 10..1000 B;
 *            in every phase thread t works on bin (t + phase) % T, replacing random objects,
 *            so nearly every free is of an object another thread allocated (larson's shape).
 *   handoff  producer/consumer: half the threads malloc 16..512 B objects and pass them in
 *            batches of 64 through a mutex-protected queue, the other half frees them.
 *   churn    per-thread malloc/free loops over a small private working set (256 slots,
 *            16..1024 B), no sharing at all (glibc's bench-malloc-thread shape).
 *   mixed    long-lived plus churn: each thread first builds 20000 long-lived objects of
 *            16 B..4 KiB, then churns short-lived 16..256 B objects, replacing one long-lived
 *            object every 16 operations.
 *   bigbuf   big buffers: each thread keeps 10 buffers of 5..25 MiB and replaces a random one
 *            per op, writing all of it (malloc-large's shape: C++ new char[n]() zeroes it).
 * One op is one malloc plus one free. Plain C + pthreads: builds natively and for aarch64. */
#include "bench_common.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline size_t rsize(uint64_t *s, size_t lo, size_t hi)
{
    return (size_t)bench_range(s, lo, hi);
}

static void *xmalloc(size_t n)
{
    unsigned char *p = malloc(n);
    if (!p) {
        fprintf(stderr, "bench_threads: out of memory\n");
        exit(2);
    }
    p[0] = (unsigned char)n; /* touch it: an allocator must hand out real memory */
    p[n - 1] = 1;
    return p;
}

static int nthreads = 2;
static long ops_per_thread = 1000000;
static pthread_barrier_t barrier;

/* ---- remote: bins that change hands every phase ---- */
#define REMOTE_SLOTS 1000
#define REMOTE_PHASES 20
static void **remote_bins;

static void *remote_thread(void *arg)
{
    long t = (long)arg;
    uint64_t s = 0x9E3779B97F4A7C15ULL * (uint64_t)(t + 1);
    void **own = remote_bins + (size_t)t * REMOTE_SLOTS;
    for (int i = 0; i < REMOTE_SLOTS; i++)
        own[i] = xmalloc(rsize(&s, 10, 1000));
    long per_phase = ops_per_thread / REMOTE_PHASES;
    for (int ph = 0; ph < REMOTE_PHASES; ph++) {
        pthread_barrier_wait(&barrier);
        void **bin = remote_bins + (size_t)((t + ph) % nthreads) * REMOTE_SLOTS;
        for (long i = 0; i < per_phase; i++) {
            size_t j = (size_t)(bench_rand(&s) % REMOTE_SLOTS);
            free(bin[j]);
            bin[j] = xmalloc(rsize(&s, 10, 1000));
        }
    }
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < REMOTE_SLOTS; i++)
        free(own[i]);
    return NULL;
}

/* ---- handoff: producer/consumer through a bounded queue of batches ---- */
#define BATCH 64
#define QCAP 64
struct batch {
    void *p[BATCH];
};
static struct batch *queue[QCAP];
static int qhead, qtail, qlen, producers_left;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qnotfull = PTHREAD_COND_INITIALIZER, qnotempty = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg)
{
    uint64_t s = 0xD1B54A32D192ED03ULL * ((uint64_t)(long)arg + 1);
    long batches = ops_per_thread * 2 / BATCH; /* a pair of threads does ops_per_thread*2 ops */
    for (long b = 0; b < batches; b++) {
        struct batch *bt = xmalloc(sizeof *bt);
        for (int i = 0; i < BATCH; i++)
            bt->p[i] = xmalloc(rsize(&s, 16, 512));
        pthread_mutex_lock(&qlock);
        while (qlen == QCAP)
            pthread_cond_wait(&qnotfull, &qlock);
        queue[qtail] = bt;
        qtail = (qtail + 1) % QCAP;
        qlen++;
        pthread_cond_signal(&qnotempty);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    producers_left--;
    pthread_cond_broadcast(&qnotempty);
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&qlock);
        while (qlen == 0 && producers_left > 0)
            pthread_cond_wait(&qnotempty, &qlock);
        if (qlen == 0) {
            pthread_mutex_unlock(&qlock);
            return NULL;
        }
        struct batch *bt = queue[qhead];
        qhead = (qhead + 1) % QCAP;
        qlen--;
        pthread_cond_signal(&qnotfull);
        pthread_mutex_unlock(&qlock);
        for (int i = 0; i < BATCH; i++)
            free(bt->p[i]);
        free(bt);
    }
}

/* ---- churn: private working set per thread ---- */
#define CHURN_SLOTS 256
static void *churn_thread(void *arg)
{
    uint64_t s = 0xA0761D6478BD642FULL * ((uint64_t)(long)arg + 1);
    void *slot[CHURN_SLOTS];
    for (int i = 0; i < CHURN_SLOTS; i++)
        slot[i] = xmalloc(rsize(&s, 16, 1024));
    for (long i = 0; i < ops_per_thread; i++) {
        size_t j = (size_t)(bench_rand(&s) % CHURN_SLOTS);
        free(slot[j]);
        slot[j] = xmalloc(rsize(&s, 16, 1024));
    }
    for (int i = 0; i < CHURN_SLOTS; i++)
        free(slot[i]);
    return NULL;
}

/* ---- mixed: long-lived set plus short-lived churn ---- */
#define LONG_LIVED 20000
#define SHORT_SLOTS 64
static void *mixed_thread(void *arg)
{
    uint64_t s = 0xE7037ED1A0B428DBULL * ((uint64_t)(long)arg + 1);
    void **lived = xmalloc(LONG_LIVED * sizeof(void *));
    void *shortp[SHORT_SLOTS];
    for (int i = 0; i < LONG_LIVED; i++) {
        /* mostly small, some up to 4 KiB: log-ish distribution by picking a bound first */
        size_t hi = (bench_rand(&s) & 7) == 0 ? 4096 : 128;
        lived[i] = xmalloc(rsize(&s, 16, hi));
    }
    for (int i = 0; i < SHORT_SLOTS; i++)
        shortp[i] = xmalloc(rsize(&s, 16, 256));
    for (long i = 0; i < ops_per_thread; i++) {
        if ((i & 15) == 0) {
            size_t j = (size_t)(bench_rand(&s) % LONG_LIVED);
            size_t hi = (bench_rand(&s) & 7) == 0 ? 4096 : 128;
            free(lived[j]);
            lived[j] = xmalloc(rsize(&s, 16, hi));
        } else {
            size_t j = (size_t)(bench_rand(&s) % SHORT_SLOTS);
            free(shortp[j]);
            shortp[j] = xmalloc(rsize(&s, 16, 256));
        }
    }
    for (int i = 0; i < SHORT_SLOTS; i++)
        free(shortp[i]);
    for (int i = 0; i < LONG_LIVED; i++)
        free(lived[i]);
    free(lived);
    return NULL;
}

/* ---- bigbuf: buffers of several MiB, replaced and written whole ---- */
#define BIG_SLOTS 10
#define BIG_MIN ((size_t)5 << 20)
#define BIG_MAX ((size_t)25 << 20)
static void *bigbuf_thread(void *arg)
{
    uint64_t s = 0x8EBC6AF09C88C6E3ULL * ((uint64_t)(long)arg + 1);
    void *slot[BIG_SLOTS] = {0};
    for (long i = 0; i < ops_per_thread; i++) {
        size_t j = (size_t)(bench_rand(&s) % BIG_SLOTS), n = rsize(&s, BIG_MIN, BIG_MAX);
        free(slot[j]);
        slot[j] = xmalloc(n);
        memset(slot[j], (int)i, n);
    }
    for (int i = 0; i < BIG_SLOTS; i++)
        free(slot[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *wl = "churn";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workload") && i + 1 < argc)
            wl = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
            ops_per_thread = atol(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s --workload remote|handoff|churn|mixed|bigbuf [--threads T] "
                    "[--ops N per thread]\n",
                    argv[0]);
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 256 || ops_per_thread < 1 ||
        (!strcmp(wl, "remote") && ops_per_thread < REMOTE_PHASES))
        return 2;
    void *(*fn)(void *) = NULL;
    if (!strcmp(wl, "remote"))
        fn = remote_thread;
    else if (!strcmp(wl, "churn"))
        fn = churn_thread;
    else if (!strcmp(wl, "mixed"))
        fn = mixed_thread;
    else if (!strcmp(wl, "bigbuf"))
        fn = bigbuf_thread;
    else if (strcmp(wl, "handoff")) {
        fprintf(stderr, "bench_threads: unknown workload %s\n", wl);
        return 2;
    }
    if (fn == remote_thread) {
        remote_bins = calloc((size_t)nthreads * REMOTE_SLOTS, sizeof(void *));
        pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    }
    pthread_t th[256];
    double t0 = bench_now();
    long total;
    if (fn) {
        for (long t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, fn, (void *)t);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
        total = ops_per_thread * nthreads;
        if (fn == remote_thread)
            total = ops_per_thread / REMOTE_PHASES * REMOTE_PHASES * nthreads;
    } else {
        int pairs = nthreads / 2 > 0 ? nthreads / 2 : 1;
        producers_left = pairs;
        for (long t = 0; t < pairs; t++) {
            pthread_create(&th[2 * t], NULL, producer, (void *)t);
            pthread_create(&th[2 * t + 1], NULL, consumer, (void *)t);
        }
        for (int t = 0; t < 2 * pairs; t++)
            pthread_join(th[t], NULL);
        /* objects plus their batch records */
        total = pairs * (ops_per_thread * 2 / BATCH) * (BATCH + 1);
    }
    double dt = bench_now() - t0;
    free(remote_bins);
    printf("RESULT workload=%s threads=%d ops=%ld seconds=%.4f ops_s=%.0f\n", wl, nthreads, total,
           dt, (double)total / dt);
    return 0;
}
