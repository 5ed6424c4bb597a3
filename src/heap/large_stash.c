/* SPDX-License-Identifier: MIT */
/* A thread's stash of freed untagged mappings: which mappings it keeps, takes back and hands
 * on (large_stash.h). It never takes the shared cache's lock, maps or unmaps: large.c hands
 * what leaves a stash to the shared cache. */
#include "large_stash.h"

#include "large_cache.h"
#include "large_record.h"

/* A thread's stash hands a mapping to the shared cache at least every STASH_VISIT frees. */
#define STASH_VISIT 32u

/* Takes entry i out of the stash (st->lock held). */
static struct hwt_large *stash_remove(struct hwt_large_stash *st, unsigned i)
{
    struct hwt_large *l = st->entries[i];
    st->bytes -= l->map_size;
    st->count--;
    for (; i < st->count; i++)
        st->entries[i] = st->entries[i + 1];
    return l;
}

/* Untagged and warm: nothing to retag, nothing to give back, so a stash can keep it without
 * a look at the shared budget. Tagged mappings do not stay: they need their retag pass and
 * the shared budget, and they are what the default start-up heaps hold. With 2 threads
 * churning 32 KiB..1 MiB objects, a large malloc and free visit the shared lock 0.60 times
 * with stashes (3.03 times without). */
bool hwt_large_stash_keeps(const struct hwt_large *l)
{
    return !l->mte && l->map_size <= HWT_LARGE_STASH_BLOCK && hwt_large_cache_warm(l);
}

struct hwt_large *hwt_large_stash_take(struct hwt_large_stash *st, size_t need, size_t size,
                                       size_t align)
{
    struct hwt_large *l = NULL;
    hwt_lock(&st->lock);
    unsigned i = hwt_large_cache_stash_pick(st->entries, st->count, need, size, align);
    if (i < st->count)
        l = stash_remove(st, i);
    hwt_unlock(&st->lock);
    return l;
}

/* The oldest that no longer fit go to the shared cache, and one goes every STASH_VISIT frees
 * anyway: the shared budget follows the program's large frees (see PEAK_DECAY in large_budget.c),
 * and a thread that has moved on to other sizes does not keep its stash's old mappings. */
unsigned hwt_large_stash_put(struct hwt_large_stash *st, struct hwt_large *l,
                             struct hwt_large **out, unsigned *frees)
{
    unsigned n = 0;
    hwt_lock(&st->lock);
    while (st->count > 0 &&
           (st->count == HWT_LARGE_STASH_MAX || st->bytes + l->map_size > HWT_LARGE_STASH_BYTES))
        out[n++] = stash_remove(st, 0);
    st->entries[st->count++] = l;
    st->bytes += l->map_size;
    if (++st->frees >= STASH_VISIT && n == 0)
        out[n++] = stash_remove(st, 0);
    *frees = n > 0 ? st->frees : 0;
    if (n > 0)
        st->frees = 0;
    hwt_unlock(&st->lock);
    return n;
}

unsigned hwt_large_stash_empty(struct hwt_large_stash *st, struct hwt_large **out, unsigned *frees)
{
    unsigned n = 0;
    hwt_lock(&st->lock);
    while (st->count > 0)
        out[n++] = stash_remove(st, 0);
    *frees = st->frees;
    st->frees = 0;
    hwt_unlock(&st->lock);
    return n;
}
