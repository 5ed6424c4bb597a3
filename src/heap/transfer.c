/* SPDX-License-Identifier: MIT */
/* Transfer caches: a few whole batches of free slots per class, so a drain and a refill
 * of two threads (remote frees, producer and consumer) meet in a copy of at most 16 slot
 * references instead of queueing on the central lock for span and bitmap work per slot.
 * It never touches a span or a slot word: its slots stay freed and tagged free. */
#include "transfer.h"

#include "lock.h"

/* Batches kept per class and arena, and the classes that have them: every kept slot is
 * memory no one uses, so only the small classes, whose bins drain and refill most often,
 * keep any; at most 4 batches of 16 slots up to 256 B and of 8 slots up to 1 KiB: 436 KiB
 * of objects an arena at worst. */
#define BATCHES 4u
#define MAX_SLOT 1024u

struct batch {
    uint32_t n;
    struct hwt_slab_ref slots[HWT_TRANSFER_BATCH_MAX];
};

struct transfer {
    struct hwt_lock lock;
    /* batches[0..count) are kept; written under lock, with atomic stores for the peek */
    uint32_t count;
    struct batch batches[BATCHES];
} __attribute__((aligned(64)));

static struct transfer transfers[HWT_ARENAS][HWT_NUM_CLASSES];
#define ALL_TRANSFERS (HWT_ARENAS * HWT_NUM_CLASSES)
#define TRANSFER(k) (&transfers[(k) / HWT_NUM_CLASSES][(k) % HWT_NUM_CLASSES])

bool hwt_transfer_put(unsigned arena, unsigned cls, const struct hwt_slab_ref *slots, unsigned n)
{
    if (n == 0 || n > HWT_TRANSFER_BATCH_MAX || hwt_size_class_bytes[cls] > MAX_SLOT)
        return false;
    struct transfer *t = &transfers[arena % HWT_ARENAS][cls];
    bool kept = false;
    hwt_lock(&t->lock);
    if (t->count < BATCHES) {
        struct batch *b = &t->batches[t->count];
        __atomic_store_n(&t->count, t->count + 1, __ATOMIC_RELAXED);
        b->n = n;
        __builtin_memcpy(b->slots, slots, n * sizeof(*slots));
        kept = true;
    }
    hwt_unlock(&t->lock);
    return kept;
}

unsigned hwt_transfer_take(unsigned arena, unsigned cls, struct hwt_slab_ref *out, unsigned n)
{
    struct transfer *t = &transfers[arena % HWT_ARENAS][cls];
    /* a racy peek: an empty cache costs no lock */
    if (__atomic_load_n(&t->count, __ATOMIC_RELAXED) == 0)
        return 0;
    unsigned got = 0;
    hwt_lock(&t->lock);
    if (t->count > 0 && t->batches[t->count - 1].n <= n) {
        __atomic_store_n(&t->count, t->count - 1, __ATOMIC_RELAXED);
        struct batch *b = &t->batches[t->count];
        got = b->n;
        __builtin_memcpy(out, b->slots, got * sizeof(*out));
    }
    hwt_unlock(&t->lock);
    return got;
}

void hwt_transfer_flush(void)
{
    struct hwt_slab_ref slots[HWT_TRANSFER_BATCH_MAX];
    for (unsigned k = 0; k < ALL_TRANSFERS; k++) {
        unsigned n, arena = k / HWT_NUM_CLASSES, cls = k % HWT_NUM_CLASSES;
        while ((n = hwt_transfer_take(arena, cls, slots, HWT_TRANSFER_BATCH_MAX)) > 0)
            hwt_slab_give(cls, slots, n);
    }
}

bool hwt_transfer_holds(unsigned cls, uintptr_t addr)
{
    for (unsigned a = 0; a < HWT_ARENAS; a++) {
        const struct transfer *t = &transfers[a][cls];
        for (uint32_t i = 0; i < t->count && i < BATCHES; i++) {
            for (uint32_t k = 0; k < t->batches[i].n && k < HWT_TRANSFER_BATCH_MAX; k++) {
                if (t->batches[i].slots[k].addr == addr)
                    return true;
            }
        }
    }
    return false;
}

void hwt_transfer_lock_all(void)
{
    for (unsigned k = 0; k < ALL_TRANSFERS; k++)
        hwt_lock(&TRANSFER(k)->lock);
}

void hwt_transfer_unlock_all(void)
{
    for (unsigned k = 0; k < ALL_TRANSFERS; k++)
        hwt_unlock(&TRANSFER(k)->lock);
}

void hwt_transfer_reset_locks(void)
{
    for (unsigned k = 0; k < ALL_TRANSFERS; k++)
        hwt_lock_reset(&TRANSFER(k)->lock);
}
