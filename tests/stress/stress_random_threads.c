/* SPDX-License-Identifier: MIT */
/* mimalloc-bench's alloc-test in spirit: 2 threads (STRESS_THREADS, up to 4) each
 * replace random entries of a table of live objects with new ones of random sizes (mostly
 * 8..128 bytes, some up to 16 KiB, a few page-backed), checking each object before it is
 * freed. Run with HWTAG_STACKTRACE=off, as the users did. STRESS_SECONDS / _LONG. */
#include <pthread.h>

#include "stress.h"

#define TABLE 2048

static double deadline;
static uint64_t total_objects;

static size_t random_size(uint64_t *rng)
{
    uint64_t r = stress_rand(rng) % 1000;
    if (r < 800)
        return 1 + (size_t)(stress_rand(rng) % 128);
    if (r < 990)
        return 1 + (size_t)(stress_rand(rng) % 4096);
    if (r < 998)
        return 1 + (size_t)(stress_rand(rng) % 16384);
    return 16384 + (size_t)(stress_rand(rng) % 65536);
}

static void *worker(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15u + 7;
    static __thread void *objs[TABLE];
    static __thread size_t sizes[TABLE];
    static const struct stress_kind kind = {random_size, stress_fill, stress_check};
    uint64_t n = stress_churn_table(objs, sizes, TABLE, &rng, &kind, 1000, deadline);
    __atomic_add_fetch(&total_objects, n, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    stress_init();
    deadline = stress_now() + stress_seconds(20);
    unsigned nthreads = stress_run_threads(worker);
    char line[128];
    snprintf(line, sizeof(line), "%u threads, %llu objects", nthreads,
             (unsigned long long)total_objects);
    return stress_finish(line);
}
