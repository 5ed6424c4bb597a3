/* SPDX-License-Identifier: MIT */
/* The large path, per operation: the shape of bench_micro's large workload (a table of --slots
 * live objects, log-uniform --min..--max bytes, each op frees a random slot and mallocs a new
 * object into it), with the guest's own getrusage page-fault counts of the timed part.
 *   --touch ends   write the first and last 16 bytes (bench_micro's touch; default)
 *   --touch pages  write one byte per 4 KiB page as well (a program that uses its buffers)
 * Prints RESULT ops=N secs=S ns_op=X minflt=F majflt=G minflt_op=Y. The warm-up (filling the
 * table, then 2x slots ops) is outside the timed part and the same for every --ops, so
 * bench/large.py can subtract a --ops 0 run from qemu -strace counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static unsigned long long rs = 0x9E3779B97F4A7C15ULL;
static unsigned long long rnd(void)
{
    rs ^= rs >> 12, rs ^= rs << 25, rs ^= rs >> 27;
    return rs * 0x2545F4914F6CDD1DULL;
}

/* log-uniform in [lo, hi] */
static size_t logsize(size_t lo, size_t hi)
{
    int bl = 63 - __builtin_clzll(lo), bh = 63 - __builtin_clzll(hi);
    int b = bl + (int)(rnd() % (unsigned)(bh - bl + 1));
    size_t base = (size_t)1 << b, n = base + (size_t)(rnd() % base);
    return n < lo ? lo : n > hi ? hi : n;
}

static int pages;

static void ops_run(char **slot, int slots, size_t lo, size_t hi, long ops)
{
    for (long i = 0; i < ops; i++) {
        int k = (int)(rnd() % (unsigned)slots);
        free(slot[k]);
        size_t n = logsize(lo, hi);
        char *q = malloc(n);
        if (!q) abort();
        memset(q, (int)i, 16);
        memset(q + n - 16, (int)i, 16);
        if (pages)
            for (size_t o = 4096; o < n; o += 4096) q[o] = (char)i;
        slot[k] = q;
    }
}

int main(int argc, char **argv)
{
    long ops = 2000;
    int slots = 64;
    size_t lo = 32768, hi = 1 << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ops")) ops = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--slots")) slots = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--min")) lo = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--max")) hi = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--touch")) pages = !strcmp(argv[i + 1], "pages");
        else return 2;
    }
    if (slots < 1 || lo < 32 || hi < lo) return 2;
    char **slot = calloc((size_t)slots, sizeof *slot);
    if (!slot) return 2;
    ops_run(slot, slots, lo, hi, 2L * slots); /* warm-up: fills every slot, then churns */
    struct rusage r0, r1;
    struct timespec t0, t1;
    getrusage(RUSAGE_SELF, &r0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ops_run(slot, slots, lo, hi, ops);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &r1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    long mf = r1.ru_minflt - r0.ru_minflt, jf = r1.ru_majflt - r0.ru_majflt;
    printf("RESULT ops=%ld secs=%.6f ns_op=%.1f minflt=%ld majflt=%ld minflt_op=%.3f\n", ops, secs,
           ops ? secs * 1e9 / (double)ops : 0.0, mf, jf, ops ? (double)mf / (double)ops : 0.0);
    for (int k = 0; k < slots; k++) free(slot[k]);
    free(slot);
    return 0;
}
