/* SPDX-License-Identifier: MIT */
/* Transfer caches: a few whole batches of free slots per class, so a drain and a refill
 * of two threads (remote frees, producer and consumer) meet in a copy of at most 16 slot
 * references instead of queueing on the central lock for span and bitmap work per slot.
 * It never touches a span or a slot word: its slots stay freed and tagged free. */
#include "transfer.h"

#include "lock.h"

/* Batches kept per class and arena, and the classes that have them: every kept slot is
 * memory no one uses, so only the small classes, whose bins drain and refill most often,
 * keep any: at most 4 batches of 16 slots up to 256 B and of 8 slots up to 1 KiB (half a
 * bin each, tcache.c), 436 KiB of objects an arena at worst. Each class's room is sized to
 * its batches: room for 16 in the 16 classes above 256 B would take 8 KiB more an arena. */
#define BATCHES 4u
#define WIDE_SLOTS 16u  /* a batch of the classes up to 256 B */
#define NARROW_SLOTS 8u /* ... above, up to 1 KiB */
#define WIDE_CLASSES HWT_LINEAR_CLASSES
#define NARROW_CLASSES (2u * HWT_STEPS_PER_DOUBLING) /* 256 -> 512 -> 1024 */
#define KEPT_CLASSES (WIDE_CLASSES + NARROW_CLASSES)
_Static_assert(HWT_LINEAR_MAX == 256u && HWT_LINEAR_MAX_LOG2 == 8u, "the wide classes end at 256");
_Static_assert(WIDE_SLOTS == HWT_TRANSFER_BATCH_MAX, "a wide batch is the largest");

struct transfer {
    struct hwt_lock lock;
    /* batches 0..count-1 of the room are kept; written under lock, with atomic stores for
     * the peek */
    uint32_t count;
    uint32_t n[BATCHES]; /* slots in each batch */
};

struct wide {
    struct transfer t;
    struct hwt_slab_ref slots[BATCHES * WIDE_SLOTS];
} __attribute__((aligned(64)));

struct narrow {
    struct transfer t;
    struct hwt_slab_ref slots[BATCHES * NARROW_SLOTS];
} __attribute__((aligned(64)));

/* An arena's caches together, from a page boundary: a process with one thread touches only
 * arena 0's 7 pages (26 KiB). */
static struct {
    struct wide wide[WIDE_CLASSES];
    struct narrow narrow[NARROW_CLASSES];
} __attribute__((aligned(4096))) arenas[HWT_ARENAS];

/* 1 + the highest arena whose transfer caches any lock was taken in (a put there, or all of
 * them; hwt_lock_mark): a fork child resets those alone (21 of a fork's 456 faults under
 * QEMU were reads of the others' untouched pages). */
static unsigned arenas_locked;

/* The transfer cache of cls in arena, with its slots and the room of a batch in them; NULL
 * for a class that keeps none. */
static struct transfer *find(unsigned arena, unsigned cls, struct hwt_slab_ref **slots,
                             unsigned *width)
{
    arena %= HWT_ARENAS;
    if (cls < WIDE_CLASSES) {
        *slots = arenas[arena].wide[cls].slots;
        *width = WIDE_SLOTS;
        return &arenas[arena].wide[cls].t;
    }
    if (cls - WIDE_CLASSES < NARROW_CLASSES) {
        *slots = arenas[arena].narrow[cls - WIDE_CLASSES].slots;
        *width = NARROW_SLOTS;
        return &arenas[arena].narrow[cls - WIDE_CLASSES].t;
    }
    return NULL;
}

/* Every transfer cache k < ALL_TRANSFERS, and its arena and class. */
#define ALL_TRANSFERS (HWT_ARENAS * KEPT_CLASSES)
#define ARENA_OF(k) ((k) / KEPT_CLASSES)
#define CLASS_OF(k) ((k) % KEPT_CLASSES)

static struct transfer *transfer_at(unsigned k)
{
    struct hwt_slab_ref *slots;
    unsigned width;
    return find(ARENA_OF(k), CLASS_OF(k), &slots, &width);
}

bool hwt_transfer_put(unsigned arena, unsigned cls, const struct hwt_slab_ref *slots, unsigned n)
{
    struct hwt_slab_ref *room;
    unsigned width;
    struct transfer *t = find(arena, cls, &room, &width);
    if (t == NULL || n == 0 || n > width)
        return false;
    /* a take locks only a cache a put has filled, and a put comes here first */
    hwt_lock_mark(&arenas_locked, arena % HWT_ARENAS + 1);
    bool kept = false;
    hwt_lock(&t->lock);
    if (t->count < BATCHES) {
        unsigned i = t->count;
        __atomic_store_n(&t->count, i + 1, __ATOMIC_RELAXED);
        t->n[i] = n;
        __builtin_memcpy(room + i * width, slots, n * sizeof(*slots));
        kept = true;
    }
    hwt_unlock(&t->lock);
    return kept;
}

unsigned hwt_transfer_take(unsigned arena, unsigned cls, struct hwt_slab_ref *out, unsigned n)
{
    struct hwt_slab_ref *room;
    unsigned width;
    struct transfer *t = find(arena, cls, &room, &width);
    /* a racy peek: an empty cache costs no lock */
    if (t == NULL || __atomic_load_n(&t->count, __ATOMIC_RELAXED) == 0)
        return 0;
    unsigned got = 0;
    hwt_lock(&t->lock);
    if (t->count > 0 && t->n[t->count - 1] <= n) {
        unsigned i = t->count - 1;
        __atomic_store_n(&t->count, i, __ATOMIC_RELAXED);
        got = t->n[i];
        __builtin_memcpy(out, room + i * width, got * sizeof(*out));
    }
    hwt_unlock(&t->lock);
    return got;
}

void hwt_transfer_flush(void)
{
    struct hwt_slab_ref slots[HWT_TRANSFER_BATCH_MAX];
    for (unsigned k = 0; k < ALL_TRANSFERS; k++) {
        unsigned n;
        while ((n = hwt_transfer_take(ARENA_OF(k), CLASS_OF(k), slots, HWT_TRANSFER_BATCH_MAX)) > 0)
            hwt_slab_give(CLASS_OF(k), slots, n);
    }
}

bool hwt_transfer_holds(unsigned cls, uintptr_t addr)
{
    for (unsigned a = 0; a < HWT_ARENAS; a++) {
        struct hwt_slab_ref *room;
        unsigned width;
        const struct transfer *t = find(a, cls, &room, &width);
        for (uint32_t i = 0; t != NULL && i < t->count && i < BATCHES; i++) {
            for (uint32_t k = 0; k < t->n[i] && k < width; k++) {
                if (room[i * width + k].addr == addr)
                    return true;
            }
        }
    }
    return false;
}

void hwt_transfer_lock_all(void)
{
    hwt_lock_mark(&arenas_locked, HWT_ARENAS);
    for (unsigned k = 0; k < ALL_TRANSFERS; k++)
        hwt_lock(&transfer_at(k)->lock);
}

void hwt_transfer_unlock_all(void)
{
    for (unsigned k = 0; k < ALL_TRANSFERS; k++)
        hwt_unlock(&transfer_at(k)->lock);
}

void hwt_transfer_reset_locks(void)
{
    unsigned n = __atomic_load_n(&arenas_locked, __ATOMIC_RELAXED) * KEPT_CLASSES;
    for (unsigned k = 0; k < n && k < ALL_TRANSFERS; k++)
        hwt_lock_reset(&transfer_at(k)->lock);
}
