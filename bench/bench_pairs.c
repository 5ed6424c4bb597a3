/* SPDX-License-Identifier: MIT */
/* The instruction-count workload of issue 10: a live set of --live blocks of --size bytes,
 * then --ops malloc+free pairs, each freeing the oldest live block and allocating a new one in
 * its place (single thread, every block written at both ends). bench/insns.py runs it with two
 * op counts under the insncount plugin; the difference divided by the op difference is the
 * cost of one pair, start-up and the live set excluded. --threads T runs T such loops at once
 * (for counting only; the plugin's adds are not atomic across threads). --burst N is the
 * other shape: N blocks allocated, then all N freed, ops / N times (ops pairs in all; the live
 * set is not used). Built with -DBENCH_PAIRS_CALLOC it allocates with calloc instead of malloc
 * (a build of its own: a run-time switch would add instructions to the malloc loop). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long ops = 100000, size = 32, live = 64, burst = 0;

/* A block of size bytes, written at both ends. */
static unsigned char *new_block(unsigned char v)
{
#ifdef BENCH_PAIRS_CALLOC
    unsigned char *p = calloc(1, (size_t)size);
#else
    unsigned char *p = malloc((size_t)size);
#endif
    if (!p) exit(2);
    p[0] = p[size - 1] = v;
    return p;
}

static void burst_loop(void)
{
    unsigned char **slot = calloc((size_t)burst, sizeof *slot);
    if (!slot) exit(2);
    for (long i = 0; i + burst <= ops; i += burst) {
        for (long j = 0; j < burst; j++)
            slot[j] = new_block((unsigned char)j);
        for (long j = 0; j < burst; j++)
            free(slot[j]);
    }
    free(slot);
}

static void *loop(void *arg)
{
    (void)arg;
    if (burst > 0) {
        burst_loop();
        return NULL;
    }
    unsigned char **slot = calloc((size_t)live, sizeof *slot);
    if (!slot) exit(2);
    for (long i = 0; i < live; i++)
        slot[i] = new_block(1);
    for (long i = 0; i < ops; i++) {
        long j = i % live;
        free(slot[j]);
        slot[j] = new_block((unsigned char)i);
    }
    for (long i = 0; i < live; i++)
        free(slot[i]);
    free(slot);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ops")) ops = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--size")) size = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--live")) live = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--burst")) burst = atol(argv[i + 1]);
        else return 2;
    }
    if (size < 1 || live < 1 || burst < 0 || threads < 1 || threads > 64) return 2;
    pthread_t th[64];
    for (int t = 1; t < threads; t++) pthread_create(&th[t], NULL, loop, NULL);
    loop(NULL);
    for (int t = 1; t < threads; t++) pthread_join(th[t], NULL);
    printf("RESULT ops=%ld size=%ld live=%ld burst=%ld threads=%d\n", ops, size, live, burst, threads);
    return 0;
}
