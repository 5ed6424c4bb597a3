/* SPDX-License-Identifier: MIT */
/* Many spans created, emptied, given back and re-tagged by 9 threads at once: each thread
 * allocates 144-byte objects (with a few of other classes in between, so spans of different
 * classes sit side by side) up to its budget or until malloc fails, checks them, frees
 * them all and starts again. The last slot of a span has the next span as its neighbour:
 * a tag read there used to race with another thread's first tagging of that span (QEMU
 * 7.2 creates a page's tag storage lazily, without a lock) and lose its tags.
 * STRESS_THREADS, STRESS_MIB (per thread), STRESS_SECONDS. */
#include <pthread.h>

#include "stress.h"

static double deadline;
static size_t budget;
static uint64_t total_objects, total_bytes, total_rounds, total_oom;

static size_t pick_size(uint64_t *rng, unsigned i)
{
    if (i % 8 != 7)
        return 144;
    static const size_t others[] = {16, 48, 96, 160, 256, 640, 1024, 3072, 8192, 16384};
    return others[stress_rand(rng) % (sizeof(others) / sizeof(others[0]))];
}

static void *worker(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15u + 1;
    size_t cap = budget / 144 + 16;
    void **objs = calloc(cap, sizeof(void *));
    size_t *sizes = calloc(cap, sizeof(size_t));
    if (objs == NULL || sizes == NULL)
        return NULL;
    while (stress_now() < deadline) {
        size_t n = 0, bytes = 0;
        while (n < cap && bytes < budget) {
            size_t size = pick_size(&rng, (unsigned)n);
            void *p = malloc(size);
            if (p == NULL) {
                __atomic_add_fetch(&total_oom, 1, __ATOMIC_RELAXED);
                break;
            }
            stress_fill(p, size);
            objs[n] = p;
            sizes[n++] = size;
            bytes += size;
        }
        for (size_t i = 0; i < n; i++)
            stress_check(objs[i], sizes[i]);
        for (size_t i = 0; i < n; i++) {
            size_t j = i + stress_rand(&rng) % (n - i);
            void *t = objs[i];
            objs[i] = objs[j];
            objs[j] = t;
            size_t s = sizes[i];
            sizes[i] = sizes[j];
            sizes[j] = s;
            stress_check(objs[i], sizes[i]);
            free(objs[i]);
        }
        __atomic_add_fetch(&total_objects, n, __ATOMIC_RELAXED);
        __atomic_add_fetch(&total_bytes, bytes, __ATOMIC_RELAXED);
        __atomic_add_fetch(&total_rounds, 1, __ATOMIC_RELAXED);
    }
    free(objs);
    free(sizes);
    return NULL;
}

int main(void)
{
    stress_init();
    unsigned nthreads = stress_env_uint("STRESS_THREADS", 9);
    budget = (size_t)stress_env_uint("STRESS_MIB", 2) << 20;
    deadline = stress_now() + stress_seconds(20);
    pthread_t t[64];
    if (nthreads > 64)
        nthreads = 64;
    for (unsigned i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (unsigned i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    char line[256];
    snprintf(
        line, sizeof(line),
        "%u threads, %llu rounds, %llu objects, %llu span fills (16 KiB), %llu malloc failures",
        nthreads, (unsigned long long)total_rounds, (unsigned long long)total_objects,
        (unsigned long long)(total_bytes >> 14), (unsigned long long)total_oom);
    return stress_finish(line);
}
