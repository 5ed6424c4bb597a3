/* SPDX-License-Identifier: MIT */
/* Small objects: spans of equal slots carved from one PROT_MTE reservation, slot state
 * kept out of band, central per-class free lists behind a lock. */
#ifndef HWT_SLAB_H
#define HWT_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../include/hwtag.h"
#include "heap.h"

enum hwt_slot_state { HWT_SLOT_UNUSED = 0, HWT_SLOT_LIVE = 1, HWT_SLOT_FREED = 2 };

/* Out-of-band state of one slot; written by the thread that owns the slot at the time. */
struct hwt_slot {
    uint32_t alloc_stack; /* depot id of the last allocation */
    uint32_t free_stack;  /* depot id of the last free */
    uint16_t requested;   /* bytes asked for by the last allocation */
    uint8_t tag;          /* live: the object's tag; freed: the tag it had (never reused next) */
    uint8_t state;        /* enum hwt_slot_state, changed with atomics */
};

struct hwt_span {
    uintptr_t base;     /* untagged, aligned to span_size */
    uint32_t span_size; /* bytes */
    uint32_t slot_size; /* bytes */
    uint32_t nslots;
    uint32_t nfree;      /* slots available in the span (free_bits set); central lock */
    uint32_t slot_recip; /* 2^32 / slot_size rounded up, for division-free slot indexes */
    uint16_t cls;
    uint8_t list; /* which central list holds it; central lock */
    uint8_t pad;
    uint64_t *free_bits; /* 1 = available in the span; central lock */
    struct hwt_slot *slots;
    struct hwt_span *next, *prev; /* central lists; central lock */
};

bool hwt_slab_init(void);

/* Span holding addr (untagged), NULL when none. Lock-free. signal-safe */
struct hwt_span *hwt_slab_span_of(uintptr_t addr);

static inline uint32_t hwt_slab_index(const struct hwt_span *s, uintptr_t addr)
{
    return (uint32_t)(((addr - s->base) * (uint64_t)s->slot_recip) >> 32);
}

/* Takes up to n available slots of class cls into out (untagged addresses; memory tag
 * HWT_TAG_FREE). Returns how many; 0 when out of memory. */
unsigned hwt_slab_take(unsigned cls, uintptr_t *out, unsigned n);
/* Gives slots (already retagged free) back to their spans. */
void hwt_slab_give(unsigned cls, const uintptr_t *slots, unsigned n);

/* Makes slot addr of class cls a live object of size requested: picks its tag (policy in
 * slab.c), tags it (zeroing when zero), records it. Returns the tagged pointer. */
void *hwt_slab_prepare(uintptr_t addr, size_t requested, bool zero, uint32_t stack);

/* Result of checking a pointer passed to free/realloc. */
enum hwt_free_check { HWT_FREE_OK, HWT_FREE_NOT_OURS, HWT_FREE_INVALID, HWT_FREE_DOUBLE };

/* Validates ptr as a live small object without changing anything. */
enum hwt_free_check hwt_slab_check(const void *ptr, struct hwt_span **span_out, uint32_t *idx_out);
/* Marks the checked slot freed (atomically: a racing second free gets false), retags it
 * free and records the stack. Returns the untagged slot address or 0 on a lost race. */
uintptr_t hwt_slab_release(struct hwt_span *s, uint32_t idx, uint32_t stack);

/* Usable size of a live small object (its requested size rounded up to the granule). */
size_t hwt_slab_usable(const struct hwt_span *s, uint32_t idx);

/* realloc in place when new_size belongs in the same slot: keeps the tag, tags the grown
 * part or frees the cut tail. Returns false when the object must move. */
bool hwt_slab_resize(struct hwt_span *s, uint32_t idx, size_t new_size);

bool hwt_slab_lookup(uintptr_t addr, long delta, struct hwt_object *out);

void hwt_slab_lock_all(void);
void hwt_slab_unlock_all(void);
void hwt_slab_reset_locks(void);
uint64_t hwt_slab_mapped(void);

#endif
