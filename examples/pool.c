/* SPDX-License-Identifier: MIT */
/* A small fixed-size object pool on top of one malloc'd block, tagged per object with
 * libhwtag's pool API (include/hwtag.h): an overflow from one pool object into the next,
 * or a use after pool_put, is reported with the pool object's bounds.
 *
 *   pool            a correct workload; prints "pool: ... ok" and must run clean
 *   pool overflow   writes one byte past a pool object (a bug, reported)
 *   pool uaf        reads a pool object after pool_put (a bug, reported)
 * (run the bugs with HWTAG_FAULT=report to see the program go on after the report)
 *
 * The pool API is referenced weakly, so the program also runs without libhwtag (then the
 * pool hands out plain pointers). The free list lives outside the block: a freed pool
 * object carries the free tag, which no pointer has, so the pool must not write into it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwtag.h"

#pragma weak hwtag_pool_alloc
#pragma weak hwtag_pool_free

struct pool {
    unsigned char *block; /* as malloc returned it */
    size_t obj_size;      /* a multiple of HWTAG_GRANULE */
    unsigned count;
    unsigned *free_idx; /* a stack of free object indexes, outside the block */
    unsigned nfree;
};

static uintptr_t untagged(const void *p)
{
    return (uintptr_t)p & ((UINT64_C(1) << 56) - 1);
}

static int pool_init(struct pool *p, size_t obj_size, unsigned count)
{
    p->obj_size = (obj_size + HWTAG_GRANULE - 1) & ~(size_t)(HWTAG_GRANULE - 1);
    p->count = count;
    p->block = malloc(p->obj_size * count);
    p->free_idx = malloc(sizeof(*p->free_idx) * count);
    if (p->block == NULL || p->free_idx == NULL)
        return -1;
    p->nfree = count;
    for (unsigned i = 0; i < count; i++)
        p->free_idx[i] = count - 1 - i;
    /* until an object is handed out, its memory belongs to the pool: retag it freed */
    for (unsigned i = 0; i < count; i++)
        if (hwtag_pool_free != NULL && hwtag_pool_alloc != NULL)
            hwtag_pool_free(hwtag_pool_alloc(p->block, i * p->obj_size, p->obj_size), p->obj_size);
    return 0;
}

static void *pool_get(struct pool *p)
{
    if (p->nfree == 0)
        return NULL;
    size_t offset = p->free_idx[--p->nfree] * p->obj_size;
    if (hwtag_pool_alloc == NULL)
        return p->block + offset;
    return hwtag_pool_alloc(p->block, offset, p->obj_size);
}

static void pool_put(struct pool *p, void *obj)
{
    unsigned idx = (unsigned)((untagged(obj) - untagged(p->block)) / p->obj_size);
    if (hwtag_pool_free != NULL)
        hwtag_pool_free(obj, p->obj_size);
    p->free_idx[p->nfree++] = idx;
}

static void pool_destroy(struct pool *p)
{
    free(p->block); /* drops the pool records; the whole block is retagged free */
    free(p->free_idx);
}

struct item {
    unsigned id;
    char name[40];
};

static volatile char sink;

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    struct pool pool;
    struct item *live[64];
    unsigned long checksum = 0;

    if (pool_init(&pool, sizeof(struct item), 64) != 0)
        return 1;
    if (strcmp(mode, "overflow") == 0) {
        struct item *a = pool_get(&pool);
        struct item *b = pool_get(&pool);
        (void)b;
        /* sizeof(struct item) is 44: the pool object is 48 bytes, the next one follows */
        memset(a->name, 'x', 48 - offsetof(struct item, name) + 1);
        fprintf(stderr, "pool: overflow done\n");
        return 0;
    }
    if (strcmp(mode, "uaf") == 0) {
        struct item *a = pool_get(&pool);
        pool_put(&pool, a);
        sink = a->name[0];
        fprintf(stderr, "pool: use after free done\n");
        return 0;
    }
    /* a correct workload: fill, check, free every other object, refill, check again */
    for (int round = 0; round < 20; round++) {
        unsigned n = 0;
        while (n < 64 && (live[n] = pool_get(&pool)) != NULL) {
            live[n]->id = (unsigned)round * 64 + n;
            snprintf(live[n]->name, sizeof(live[n]->name), "item-%u-%u", round, n);
            n++;
        }
        for (unsigned i = 0; i < n; i += 2)
            pool_put(&pool, live[i]);
        for (unsigned i = 0; i < n; i += 2) {
            live[i] = pool_get(&pool);
            live[i]->id = (unsigned)round * 64 + i;
            memset(live[i]->name, 0, sizeof(live[i]->name));
            memcpy(live[i]->name, "refilled", 9);
        }
        for (unsigned i = 0; i < n; i++) {
            checksum += live[i]->id + (unsigned char)live[i]->name[0] + strlen(live[i]->name);
            pool_put(&pool, live[i]);
        }
    }
    pool_destroy(&pool);
    printf("pool: 20 rounds of 64 objects ok, checksum %lu\n", checksum);
    return 0;
}
