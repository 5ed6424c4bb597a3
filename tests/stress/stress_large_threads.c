/* SPDX-License-Identifier: MIT */
/* Page-backed objects churned by 2 threads (STRESS_THREADS, up to 4): each replaces random
 * entries of a table of 48 live objects of 16 KiB..1 MiB (log-uniform), writing a byte in
 * every page and checking them before the free. The freed mappings outgrow the cache's
 * resident budget all the time (tagged ones almost at once), so cached mappings give their
 * pages back while the other thread takes mappings from the cache: a page given back
 * under a live object reads as zero and is counted. STRESS_SECONDS / _LONG. */
#include <pthread.h>

#include "stress.h"

#define TABLE 48
#define PAGE 4096u

static double deadline;
static uint64_t total_objects;

static size_t random_size(uint64_t *rng)
{
    /* 2^14 .. 2^20 bytes, log-uniform, any byte count */
    unsigned shift = 14 + (unsigned)(stress_rand(rng) % 6);
    size_t lo = (size_t)1 << shift;
    return lo + (size_t)(stress_rand(rng) % lo);
}

static void fill_pages(void *p, size_t size)
{
    volatile unsigned char *c = p;
    for (size_t off = 0; off < size; off += PAGE)
        c[off] = stress_byte(p, off);
    c[size - 1] = stress_byte(p, size - 1);
}

static void check_pages(const void *p, size_t size)
{
    const volatile unsigned char *c = p;
    for (size_t off = 0; off < size; off += PAGE) {
        if (c[off] != stress_byte(p, off))
            __atomic_add_fetch(&stress_bad_values, 1, __ATOMIC_RELAXED);
    }
    if (c[size - 1] != stress_byte(p, size - 1))
        __atomic_add_fetch(&stress_bad_values, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15u + 11;
    void *objs[TABLE] = {0};
    size_t sizes[TABLE] = {0};
    static const struct stress_kind kind = {random_size, fill_pages, check_pages};
    uint64_t n = stress_churn_table(objs, sizes, TABLE, &rng, &kind, 50, deadline);
    __atomic_add_fetch(&total_objects, n, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    stress_init();
    double secs = stress_seconds(10);
    deadline = stress_now() + secs;
    unsigned nthreads = stress_run_threads(worker);
    char line[160];
    snprintf(line, sizeof(line), "%u threads, %llu page-backed objects (%.0f a second)", nthreads,
             (unsigned long long)total_objects, (double)total_objects / secs);
    return stress_finish(line);
}
