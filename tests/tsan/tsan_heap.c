/* SPDX-License-Identifier: MIT */
/* The heap's core under ThreadSanitizer: the allocator's own objects (no interpose.c, so
 * TSan keeps libc's malloc) driven through alloc.h by threads that free each other's objects
 * (remote frees through the transfer caches and the central lists), exit with full thread
 * caches, and fork and trim (which flushes every thread's stash of freed mappings) while
 * others allocate. TSan reports any data race the core has; the
 * program also checks each object's contents before freeing it, and that each phase ran.
 * Built by scripts/test.sh with clang (HWTAG_TSAN=ON); seconds from argv[1] (default 4). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "init.h"
#include "trim.h"

#define CALLER() hwt_caller_of_record((uintptr_t)__builtin_frame_address(0))
#define RING 256u /* objects in flight from a producer to its consumer */
#define PAIRS 2u
#define SHORT_THREADS 4u

static double deadline;
static atomic_ulong checked, bad, phases;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Mostly small, some up to 4 KiB, a few page-backed. */
static size_t pick_size(uint64_t *s)
{
    uint64_t r = next_rand(s) % 100;
    if (r < 80)
        return 1 + next_rand(s) % 256;
    if (r < 98)
        return 1 + next_rand(s) % 4096;
    return 16384 + next_rand(s) % 32768;
}

/* An object holds its size's low byte everywhere, checked before it is freed. */
static void *make(size_t n)
{
    unsigned char *p = hwt_alloc(n, 16, false, CALLER());
    if (p != NULL)
        memset(p, (int)(n & 0xff), n);
    return p;
}

static void check_free(void *ptr, size_t n)
{
    const unsigned char *p = ptr;
    for (size_t i = 0; i < n; i += 7)
        if (p[i] != (unsigned char)(n & 0xff)) {
            atomic_fetch_add(&bad, 1);
            break;
        }
    atomic_fetch_add(&checked, 1);
    hwt_alloc_free(ptr, CALLER());
}

/* A single-producer single-consumer ring of objects: the consumer frees what the producer
 * allocated. */
struct ring {
    _Atomic unsigned head, tail;
    void *obj[RING];
    size_t size[RING];
    atomic_bool done;
};

static void *producer(void *arg)
{
    struct ring *r = arg;
    uint64_t s = (uintptr_t)arg | 1;
    while (now() < deadline) {
        unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);
        if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == RING)
            continue;
        size_t n = pick_size(&s);
        void *p = make(n);
        if (p == NULL)
            continue;
        r->obj[h % RING] = p;
        r->size[h % RING] = n;
        atomic_store_explicit(&r->head, h + 1, memory_order_release);
    }
    atomic_store(&r->done, true);
    return NULL;
}

static void *consumer(void *arg)
{
    struct ring *r = arg;
    uint64_t s = (uintptr_t)arg * 3 | 1;
    void *own[16] = {0};
    size_t own_size[16] = {0};
    for (;;) {
        unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        if (t == atomic_load_explicit(&r->head, memory_order_acquire)) {
            if (atomic_load(&r->done) && t == atomic_load(&r->head))
                break;
            continue;
        }
        check_free(r->obj[t % RING], r->size[t % RING]);
        atomic_store_explicit(&r->tail, t + 1, memory_order_release);
        /* and some churn of its own, so its cache both drains and refills */
        unsigned k = (unsigned)(next_rand(&s) % 16);
        if (own[k] != NULL)
            check_free(own[k], own_size[k]);
        own_size[k] = pick_size(&s);
        own[k] = make(own_size[k]);
    }
    for (unsigned k = 0; k < 16; k++)
        if (own[k] != NULL)
            check_free(own[k], own_size[k]);
    return NULL;
}

/* A short-lived thread: allocates, frees most of it (its cache is full when it exits) and
 * leaves the rest to the thread that joins it. */
struct handoff {
    void *obj[64];
    size_t size[64];
};

static void *short_lived(void *arg)
{
    struct handoff *h = arg;
    uint64_t s = (uintptr_t)arg | 5;
    void *tmp[64];
    size_t tmp_size[64];
    for (unsigned i = 0; i < 64; i++) {
        tmp_size[i] = pick_size(&s);
        tmp[i] = make(tmp_size[i]);
        h->size[i] = pick_size(&s);
        h->obj[i] = make(h->size[i]);
    }
    for (unsigned i = 0; i < 64; i++)
        if (tmp[i] != NULL)
            check_free(tmp[i], tmp_size[i]);
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    static struct handoff handoffs[SHORT_THREADS];
    while (now() < deadline) {
        pthread_t t[SHORT_THREADS];
        for (unsigned i = 0; i < SHORT_THREADS; i++)
            if (pthread_create(&t[i], NULL, short_lived, &handoffs[i]) != 0)
                abort();
        for (unsigned i = 0; i < SHORT_THREADS; i++) {
            pthread_join(t[i], NULL);
            for (unsigned k = 0; k < 64; k++)
                if (handoffs[i].obj[k] != NULL)
                    check_free(handoffs[i].obj[k], handoffs[i].size[k]);
        }
        atomic_fetch_or(&phases, 1);
    }
    return NULL;
}

/* Forks while the others allocate; the child allocates and frees with the heap it got. Trims
 * between forks. */
static void *forker(void *arg)
{
    (void)arg;
    uint64_t s = 99;
    while (now() < deadline) {
        pid_t pid = fork();
        if (pid < 0)
            abort();
        if (pid == 0) {
            void *p[128];
            size_t n[128];
            for (unsigned i = 0; i < 128; i++) {
                n[i] = pick_size(&s);
                p[i] = make(n[i]);
            }
            for (unsigned i = 0; i < 128; i++)
                if (p[i] != NULL)
                    check_free(p[i], n[i]);
            _exit(atomic_load(&bad) == 0 ? 0 : 3);
        }
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "tsan_heap: fork child failed (status %d)\n", status);
            atomic_fetch_add(&bad, 1);
        }
        atomic_fetch_or(&phases, 2);
        hwt_trim();
        usleep(20000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static struct ring rings[PAIRS];
    pthread_t prod[PAIRS], cons[PAIRS], spawn, fork_thread;
    double seconds = argc > 1 ? atof(argv[1]) : 4.0;

    hwt_init_ensure();
    deadline = now() + seconds;
    for (unsigned i = 0; i < PAIRS; i++) {
        pthread_create(&prod[i], NULL, producer, &rings[i]);
        pthread_create(&cons[i], NULL, consumer, &rings[i]);
    }
    pthread_create(&spawn, NULL, spawner, NULL);
    pthread_create(&fork_thread, NULL, forker, NULL);
    for (unsigned i = 0; i < PAIRS; i++) {
        pthread_join(prod[i], NULL);
        pthread_join(cons[i], NULL);
    }
    pthread_join(spawn, NULL);
    pthread_join(fork_thread, NULL);
    printf("tsan_heap: %lu objects checked and freed, %lu bad, phases %lu\n",
           (unsigned long)atomic_load(&checked), (unsigned long)atomic_load(&bad),
           (unsigned long)atomic_load(&phases));
    return atomic_load(&bad) == 0 && atomic_load(&phases) == 3 && atomic_load(&checked) > 0 ? 0 : 1;
}
