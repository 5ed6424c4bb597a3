/* SPDX-License-Identifier: MIT */
/* "boot": replays a start-up-like allocation trace (many small objects with lifetimes, some
 * medium, a few large, growing buffers via realloc) and leaves the long-lived objects in place
 * for run.py to measure the heap that remains, the userspace analogue of slab memory after
 * boot. The trace is synthetic and deterministic (--seed), or read from a file (--trace); it is
 * built in mmap'd memory so that generating it does not touch the heap under test. */
#include <sys/mman.h>

#include "bench_common.h"

enum { OP_ALLOC = 0, OP_FREE = 1, OP_REALLOC = 2 };

struct ev {
    uint32_t op, id;
    uint64_t size;
};

struct trace {
    struct ev *ev;
    size_t n, cap;
    uint32_t ids;
};

/* Size classes of a start-up: strings and nodes dominate, then buffers; weights in per mille. */
static const struct {
    unsigned permille;
    size_t lo, hi;
} size_mix[] = {
    {560, 16, 64},    {250, 65, 256},    {120, 257, 1024},
    {52, 1025, 4096}, {16, 4097, 32767}, {2, 32768, 512 << 10},
};

/* Lifetimes in allocation ticks: temporaries, short, medium, and the rest lives past boot. */
static const struct {
    unsigned permille;
    uint64_t lo, hi; /* 0,0 = permanent */
} life_mix[] = {{450, 1, 64}, {250, 64, 4096}, {100, 4096, 65536}, {200, 0, 0}};

/* Buffers (> 4 KiB) are mostly I/O and parse buffers: permanent only this often (per mille). */
#define LARGE_PERMANENT_PERMILLE 100
#define REALLOC_PERMILLE 30
#define REALLOC_MAX (64 * 1024)

static void *xmap(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    return p;
}

static void push(struct trace *t, uint32_t op, uint32_t id, uint64_t size)
{
    if (t->n == t->cap) {
        fprintf(stderr, "trace full\n");
        exit(1);
    }
    t->ev[t->n++] = (struct ev){op, id, size};
}

/* A binary min-heap of (death tick, id) in mmap'd memory. */
struct death {
    uint64_t tick;
    uint32_t id;
};

static void heap_push(struct death *h, size_t *n, struct death d)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].tick > d.tick) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = d;
}

static struct death heap_pop(struct death *h, size_t *n)
{
    struct death top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].tick < h[c].tick)
            c++;
        if (h[c].tick >= last.tick)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

static size_t pick_size(uint64_t *s, int *buffer)
{
    unsigned r = (unsigned)(bench_rand(s) % 1000), acc = 0;
    for (size_t i = 0; i < sizeof(size_mix) / sizeof(size_mix[0]); i++) {
        acc += size_mix[i].permille;
        if (r < acc) {
            *buffer = size_mix[i].lo > 4096;
            return bench_logsize(s, size_mix[i].lo, size_mix[i].hi);
        }
    }
    *buffer = 0;
    return 32;
}

static uint64_t pick_life(uint64_t *s, int buffer)
{
    if (buffer)
        return (bench_rand(s) % 1000 < LARGE_PERMANENT_PERMILLE) ? 0 : bench_range(s, 1, 256);
    unsigned r = (unsigned)(bench_rand(s) % 1000), acc = 0;
    for (size_t i = 0; i < sizeof(life_mix) / sizeof(life_mix[0]); i++) {
        acc += life_mix[i].permille;
        if (r < acc)
            return life_mix[i].lo ? bench_range(s, life_mix[i].lo, life_mix[i].hi) : 0;
    }
    return 0;
}

static void generate(struct trace *t, size_t allocs, uint64_t seed)
{
    uint64_t s = seed;
    struct death *h = xmap((allocs + 1) * sizeof(*h));
    uint64_t *cur = xmap((allocs + 1) * sizeof(*cur)); /* current size of growable ids */
    uint32_t *grow = xmap((allocs + 1) * sizeof(*grow));
    size_t hn = 0, ngrow = 0;
    for (uint64_t tick = 0; tick < allocs; tick++) {
        while (hn > 0 && h[0].tick <= tick) {
            struct death d = heap_pop(h, &hn);
            push(t, OP_FREE, d.id, 0);
            cur[d.id] = 0;
        }
        if (ngrow > 0 && bench_rand(&s) % 1000 < REALLOC_PERMILLE) {
            uint32_t id = grow[bench_rand(&s) % ngrow];
            if (cur[id] && cur[id] < REALLOC_MAX) {
                cur[id] = cur[id] * 2;
                push(t, OP_REALLOC, id, cur[id]);
                continue;
            }
        }
        int buffer;
        size_t size = pick_size(&s, &buffer);
        uint32_t id = t->ids++;
        push(t, OP_ALLOC, id, size);
        cur[id] = size;
        if (!buffer && size <= 1024 && bench_rand(&s) % 16 == 0)
            grow[ngrow++] = id;
        uint64_t life = pick_life(&s, buffer);
        if (life)
            heap_push(h, &hn, (struct death){tick + life, id});
    }
    munmap(h, (allocs + 1) * sizeof(*h));
    munmap(cur, (allocs + 1) * sizeof(*cur));
    munmap(grow, (allocs + 1) * sizeof(*grow));
}

/* Trace file: one event a line, "a ID SIZE", "f ID" or "r ID SIZE"; ids are small integers. */
static void load(struct trace *t, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    char op;
    unsigned long id;
    unsigned long long size;
    int k;
    while ((k = fscanf(f, " %c %lu", &op, &id)) == 2) {
        size = 0;
        if (op != 'f' && fscanf(f, " %llu", &size) != 1)
            break;
        push(t, op == 'a' ? OP_ALLOC : op == 'f' ? OP_FREE : OP_REALLOC, (uint32_t)id, size);
        if (id + 1 > t->ids)
            t->ids = (uint32_t)id + 1;
    }
    fclose(f);
}

static void touch(char *p, size_t n, uint32_t id)
{
    /* Start-up code initialises what it allocates; big buffers are filled a page at a time. */
    if (n <= 4096) {
        memset(p, (int)id, n);
        return;
    }
    for (size_t o = 0; o < n; o += 4096)
        memset(p + o, (int)id, n - o < 64 ? n - o : 64);
    memset(p + n - 16, (int)id, 16);
}

int main(int argc, char **argv)
{
    size_t allocs = 100000;
    uint64_t seed = 1;
    const char *trace_path = NULL;
    int dump = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--allocs") && i + 1 < argc)
            allocs = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc)
            trace_path = argv[++i];
        else if (!strcmp(argv[i], "--dump"))
            dump = 1;
        else {
            fprintf(stderr, "usage: bench_boot [--allocs N] [--seed N] [--trace FILE] [--dump]\n");
            return 2;
        }
    }
    struct trace t = {0};
    t.cap = trace_path ? (size_t)1 << 26 : allocs * 3 + 16;
    t.ev = xmap(t.cap * sizeof(*t.ev));
    if (trace_path)
        load(&t, trace_path);
    else
        generate(&t, allocs, seed);
    if (dump) {
        for (size_t i = 0; i < t.n; i++) {
            const struct ev *e = &t.ev[i];
            if (e->op == OP_FREE)
                printf("f %u\n", e->id);
            else
                printf("%c %u %llu\n", e->op == OP_ALLOC ? 'a' : 'r', e->id,
                       (unsigned long long)e->size);
        }
        return 0;
    }
    char **slot = xmap(((size_t)t.ids + 1) * sizeof(*slot));
    uint64_t *len = xmap(((size_t)t.ids + 1) * sizeof(*len));

    bench_measure_point("start");
    double t0 = bench_now();
    size_t nalloc = 0, nfree = 0, nrealloc = 0;
    for (size_t i = 0; i < t.n; i++) {
        const struct ev *e = &t.ev[i];
        switch (e->op) {
        case OP_ALLOC:
            slot[e->id] = malloc(e->size);
            if (!slot[e->id])
                abort();
            len[e->id] = e->size;
            touch(slot[e->id], e->size, e->id);
            nalloc++;
            break;
        case OP_FREE:
            free(slot[e->id]);
            slot[e->id] = NULL;
            len[e->id] = 0;
            nfree++;
            break;
        default: {
            char *q = realloc(slot[e->id], e->size);
            if (!q)
                abort();
            if (e->size > len[e->id])
                touch(q + len[e->id], e->size - len[e->id], e->id);
            slot[e->id] = q;
            len[e->id] = e->size;
            nrealloc++;
            break;
        }
        }
    }
    double secs = bench_now() - t0;
    size_t live = 0, live_bytes = 0;
    for (size_t i = 0; i < t.ids; i++)
        if (slot[i]) {
            live++;
            live_bytes += len[i];
        }
    bench_measure_point("end");
    printf("RESULT events=%zu allocs=%zu frees=%zu reallocs=%zu live=%zu live_bytes=%zu "
           "secs=%.6f\n",
           t.n, nalloc, nfree, nrealloc, live, live_bytes, secs);
    bench_print_hwtag_stats();
    fflush(stdout);
    return 0;
}
