/* SPDX-License-Identifier: MIT */
/* The records of page-backed objects: the table of every record ever made, the hash by
 * object start, and their lock-free reads. It never maps, tags or caches a mapping. */
#include "large_record.h"

#include "arch/mte.h"
#include "meta.h"
#include "os.h"

/* large.c's lock for writers; from a page boundary: 8 KiB in 2 pages, not 3 */
struct hwt_large *hwt_large_record_buckets[HWT_LARGE_HASH_BUCKETS] __attribute__((aligned(4096)));
static struct hwt_large *all_records; /* published with release; walked by lookups */
static struct hwt_large *dead_list;

struct hwt_large *hwt_large_record_new_locked(void)
{
    struct hwt_large *l = dead_list;
    if (l != NULL) {
        dead_list = l->link[HWT_LARGE_BY_AGE].next;
        return l;
    }
    l = hwt_meta_alloc(sizeof(*l), 64);
    if (l == NULL)
        return NULL;
    l->anext = all_records;
    __atomic_store_n(&all_records, l, __ATOMIC_RELEASE);
    return l;
}

/* Chains change under the lock with atomic stores: hwt_large_check walks them without it. */
void hwt_large_record_insert_locked(struct hwt_large *l)
{
    unsigned b = hwt_large_record_bucket(l->start);
    __atomic_store_n(&l->hnext, hwt_large_record_buckets[b], __ATOMIC_RELAXED);
    __atomic_store_n(&hwt_large_record_buckets[b], l, __ATOMIC_RELEASE);
}

void hwt_large_record_retire_locked(struct hwt_large *l)
{
    struct hwt_large **pp = &hwt_large_record_buckets[hwt_large_record_bucket(l->start)];
    while (*pp != l)
        pp = &(*pp)->hnext;
    __atomic_store_n(pp, l->hnext, __ATOMIC_RELEASE);
    __atomic_store_n(&l->state, HWT_LARGE_DEAD, __ATOMIC_RELEASE);
    l->link[HWT_LARGE_BY_AGE].next = dead_list;
    dead_list = l;
}

const struct hwt_large *hwt_large_record_all(void)
{
    return __atomic_load_n(&all_records, __ATOMIC_ACQUIRE);
}

void hwt_large_record_describe(const struct hwt_large *l, uint8_t state, struct hwt_object *out)
{
    out->start = l->start;
    out->requested = l->requested;
    out->size = hwt_align_up(l->requested, HWT_GRANULE);
    out->class_size = 0;
    out->region_size = l->map_start + l->map_size - l->start;
    out->tag = l->tag;
    out->large = true;
    out->live = state == HWT_LARGE_LIVE;
    out->ever_used = true;
    out->sampled = l->sampled != 0;
    out->alloc_stack = l->alloc_stack;
    out->free_stack = state == HWT_LARGE_CACHED ? l->free_stack : 0;
}
