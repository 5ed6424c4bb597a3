/* SPDX-License-Identifier: MIT */
/* Private to the large*.c files: the record of a page-backed object, the table of every
 * record, the hash by object start and the lock-free reads of them. It never maps, tags or
 * decides which mapping is reused. */
#ifndef HWT_LARGE_RECORD_H
#define HWT_LARGE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "os.h"

enum { HWT_LARGE_DEAD, HWT_LARGE_LIVE, HWT_LARGE_CACHED };

enum { HWT_LARGE_BY_AGE, HWT_LARGE_BY_SIZE };

struct hwt_large;
struct hwt_large_link {
    struct hwt_large *next, *prev;
};

struct hwt_large {
    uintptr_t map_start; /* untagged mapping */
    size_t map_size;
    uintptr_t start; /* untagged object start, inside the mapping */
    size_t requested;
    size_t area; /* [start, start+area) holds area_tag; the rest of the map is FREE */
    uint32_t alloc_stack, free_stack;
    uint8_t tag; /* live: its tag; cached: the tag it had */
    uint8_t area_tag;
    uint8_t state;           /* HWT_LARGE_*, written under large.c's lock */
    uint8_t sampled;         /* tagged by the sampling decision (or below the order) */
    uint8_t mte;             /* mapped PROT_MTE; sampled-out objects are not */
    size_t resident;         /* while cached: bytes not given back to the OS */
    uint64_t seq;            /* while cached: when linked as the newest; 0: as the oldest */
    struct hwt_large *hnext; /* hash chain by start */
    /* cached: [HWT_LARGE_BY_AGE] its list by kind and warmth, oldest first (dead: .next is
     * the dead-record free list); [HWT_LARGE_BY_SIZE] its size bin, newest first */
    struct hwt_large_link link[2];
    struct hwt_large *anext; /* every record ever made; never unlinked */
};

/* Every _locked function here runs under large.c's lock. */

/* A record to fill: a dead one, else a new one in the table; NULL when metadata runs out. */
struct hwt_large *hwt_large_record_new_locked(void);
/* Puts l (its start set) into the lookups by start. */
void hwt_large_record_insert_locked(struct hwt_large *l);
/* Takes l out of the lookups for good; its record waits for hwt_large_record_new_locked. */
void hwt_large_record_retire_locked(struct hwt_large *l);
#define HWT_LARGE_HASH_BUCKETS 1024u
/* The hash chains by start: written under large.c's lock with atomic stores, read without
 * it. Only large_record.c writes them. */
extern struct hwt_large *hwt_large_record_buckets[HWT_LARGE_HASH_BUCKETS];

static inline unsigned hwt_large_record_bucket(uintptr_t start)
{
    return (unsigned)((start / hwt_os_page_size) * 0x9E3779B1u) % HWT_LARGE_HASH_BUCKETS;
}

/* The record of the object starting at addr, looking at max_steps records at most; NULL when
 * none. Without the lock it may also miss: a record reused for another mapping moves to
 * another chain, and a walk that followed it goes on there (records are never freed, so
 * every pointer it follows is a record). Inline: it is most of a large free's check.
 * signal-safe */
static inline __attribute__((always_inline)) struct hwt_large *
hwt_large_record_find(uintptr_t addr, unsigned max_steps)
{
    struct hwt_large *l =
        __atomic_load_n(&hwt_large_record_buckets[hwt_large_record_bucket(addr)], __ATOMIC_ACQUIRE);
    for (unsigned steps = 0; l != NULL && steps < max_steps; steps++) {
        if (__atomic_load_n(&l->start, __ATOMIC_RELAXED) == addr)
            return l;
        l = __atomic_load_n(&l->hnext, __ATOMIC_ACQUIRE);
    }
    return NULL;
}
/* The newest record ever made; older ones follow through anext. signal-safe */
const struct hwt_large *hwt_large_record_all(void);
/* Fills out from l, read in state (not HWT_LARGE_DEAD). signal-safe */
void hwt_large_record_describe(const struct hwt_large *l, uint8_t state, struct hwt_object *out);

#endif
