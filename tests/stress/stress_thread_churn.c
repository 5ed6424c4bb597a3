/* SPDX-License-Identifier: MIT */
/* Thread churn: pairs of short-lived threads allocating and freeing 16 B..64 KiB objects,
 * then pairs of threads that allocate 2000 objects each (16 B..1 KiB) and exit; the main
 * thread checks and frees those objects after their threads are gone. Thread caches are
 * flushed and reused, spans emptied, given back and taken again, all the time.
 * STRESS_SECONDS / STRESS_LONG. */
#include <pthread.h>

#include "stress.h"

#define KEEP 2000
#define LIVE 32
#define OPS 300

struct batch {
    uint64_t seed;
    void *objs[KEEP];
    size_t sizes[KEEP];
};

static uint64_t total_objects;

static size_t log_size(uint64_t *rng, unsigned max_shift)
{
    unsigned shift = 4 + (unsigned)(stress_rand(rng) % (max_shift - 3));
    size_t size = (size_t)1 << shift;
    return size + stress_rand(rng) % size;
}

static void *short_lived(void *arg)
{
    struct batch *b = arg;
    uint64_t rng = b->seed;
    void *live[LIVE] = {0};
    size_t sizes[LIVE] = {0};
    for (unsigned i = 0; i < OPS; i++) {
        unsigned k = (unsigned)(stress_rand(&rng) % LIVE);
        if (live[k] != NULL) {
            stress_check(live[k], sizes[k]);
            free(live[k]);
        }
        sizes[k] = log_size(&rng, 15); /* up to 64 KiB */
        live[k] = malloc(sizes[k]);
        if (live[k] != NULL)
            stress_fill(live[k], sizes[k]);
    }
    for (unsigned k = 0; k < LIVE; k++) {
        if (live[k] != NULL) {
            stress_check(live[k], sizes[k]);
            free(live[k]);
        }
    }
    __atomic_add_fetch(&total_objects, OPS, __ATOMIC_RELAXED);
    return NULL;
}

static void *keeper(void *arg)
{
    struct batch *b = arg;
    uint64_t rng = b->seed;
    for (unsigned i = 0; i < KEEP; i++) {
        b->sizes[i] = i % 16 == 0 ? 622 : log_size(&rng, 9); /* up to 1 KiB */
        b->objs[i] = malloc(b->sizes[i]);
        if (b->objs[i] != NULL)
            stress_fill(b->objs[i], b->sizes[i]);
    }
    __atomic_add_fetch(&total_objects, KEEP, __ATOMIC_RELAXED);
    return NULL;
}

int main(void)
{
    stress_init();
    double deadline = stress_now() + stress_seconds(25);
    static struct batch batches[2];
    uint64_t lifetimes = 0, seed = 1;
    while (stress_now() < deadline) {
        pthread_t t[2];
        for (unsigned round = 0; round < 4; round++) {
            for (unsigned i = 0; i < 2; i++) {
                batches[i].seed = ++seed * 0x9e3779b97f4a7c15u;
                pthread_create(&t[i], NULL, short_lived, &batches[i]);
            }
            for (unsigned i = 0; i < 2; i++)
                pthread_join(t[i], NULL);
            lifetimes += 2;
        }
        for (unsigned i = 0; i < 2; i++) {
            batches[i].seed = ++seed * 0x9e3779b97f4a7c15u;
            pthread_create(&t[i], NULL, keeper, &batches[i]);
        }
        for (unsigned i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        lifetimes += 2;
        /* the threads are gone: their objects die here, checked first */
        for (unsigned i = 0; i < 2; i++) {
            for (unsigned k = 0; k < KEEP; k++) {
                if (batches[i].objs[k] != NULL) {
                    stress_check(batches[i].objs[k], batches[i].sizes[k]);
                    free(batches[i].objs[k]);
                }
            }
        }
    }
    char line[160];
    snprintf(line, sizeof(line), "%llu thread lifetimes, %llu objects",
             (unsigned long long)lifetimes, (unsigned long long)total_objects);
    return stress_finish(line);
}
