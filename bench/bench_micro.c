/* SPDX-License-Identifier: MIT */
/* malloc/free throughput by size and thread count: each thread keeps a table of live slots and
 * replaces a random one per operation (free + malloc + touch of the first and last granule).
 * It measures the allocator, its tagging included; it does not measure memory bandwidth. */
#include <pthread.h>

#include "bench_common.h"

#define MICRO_MAX_THREADS 64
#define MICRO_TOUCH 16 /* bytes written at each end of an object: one MTE granule */

struct micro_arg {
    size_t min, max;
    long ops;
    int slots;
    uint64_t seed;
    double secs;
};

static pthread_barrier_t start_line;

static void run_ops(void **slot, size_t *len, const struct micro_arg *a, uint64_t *sp, long ops)
{
    uint64_t s = *sp;
    for (long i = 0; i < ops; i++) {
        int k = (int)(bench_rand(&s) % (uint64_t)a->slots);
        free(slot[k]);
        size_t n = bench_logsize(&s, a->min, a->max);
        char *q = malloc(n);
        if (!q)
            abort();
        size_t t = n < MICRO_TOUCH ? n : MICRO_TOUCH;
        memset(q, (int)i, t);
        memset(q + n - t, (int)i, t);
        slot[k] = q;
        len[k] = n;
    }
    *sp = s;
}

/* The timed part starts after a warm-up that fills the slot table, so one-time costs (the
 * allocator's lazy init, per-thread caches, first mappings) stay out of the throughput. */
static void *micro_thread(void *p)
{
    struct micro_arg *a = p;
    uint64_t s = a->seed;
    void **slot = calloc((size_t)a->slots, sizeof(void *));
    size_t *len = calloc((size_t)a->slots, sizeof(size_t));
    if (!slot || !len)
        abort();
    run_ops(slot, len, a, &s, 4L * a->slots);
    pthread_barrier_wait(&start_line);
    double t0 = bench_now();
    run_ops(slot, len, a, &s, a->ops);
    a->secs = bench_now() - t0;
    for (int k = 0; k < a->slots; k++)
        free(slot[k]);
    free(slot);
    free(len);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_micro [--min B] [--max B] [--threads N] [--ops N per thread] "
                    "[--slots N] [--seed N]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    size_t min = 16, max = 4096;
    int threads = 1, slots = 1024;
    long ops = 200000;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--min"))
            min = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--max"))
            max = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--threads"))
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ops"))
            ops = atol(argv[++i]);
        else if (!strcmp(argv[i], "--slots"))
            slots = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[++i], NULL, 0);
        else
            usage();
    }
    if (min < 1 || max < min || threads < 1 || threads > MICRO_MAX_THREADS || slots < 1 || ops < 1)
        usage();
    struct micro_arg arg[MICRO_MAX_THREADS];
    pthread_t tid[MICRO_MAX_THREADS];
    pthread_barrier_init(&start_line, NULL, (unsigned)threads);
    for (int t = 0; t < threads; t++) {
        arg[t] = (struct micro_arg){min, max, ops, slots, seed + (uint64_t)t * 7919, 0};
        if (pthread_create(&tid[t], NULL, micro_thread, &arg[t]) != 0)
            abort();
    }
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    double wall = 0;
    for (int t = 0; t < threads; t++)
        wall = arg[t].secs > wall ? arg[t].secs : wall;
    double total = (double)ops * threads;
    printf("RESULT min=%zu max=%zu threads=%d ops=%.0f secs=%.6f ops_per_s=%.1f ns_per_op=%.2f\n",
           min, max, threads, total, wall, total / wall, wall * 1e9 / total * threads);
    bench_print_hwtag_stats();
    return 0;
}
