/* SPDX-License-Identifier: MIT */
/* Overflows inside an object's last granule, which MTE cannot see: the bytes between the
 * requested size and the granule's end hold a check pattern, written at malloc and
 * verified at free and realloc. The pattern comes from the granule's address and a
 * per-process secret, so a program cannot learn it by reading a neighbour's tail. */
#ifndef HWT_TAIL_H
#define HWT_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "arch/opaque.h"

/* Set at start-up: tails are written and checked (every mode but HWTAG_MODE=off). */
extern int hwt_tail_active;
/* The pattern's per-process secret and odd multiplier, side by side so that one load pair
 * fetches both (a constant multiplier took four instructions to build at every use). */
struct hwt_tail_key {
    uint64_t secret;
    uint64_t mult;
};
extern struct hwt_tail_key hwt_tail_key;

/* Once at start-up, before the first allocation. */
void hwt_tail_init(bool active);

/* Every pattern byte is odd, so the most common overflow of all, a string's terminating
 * NUL one past the end (or any even byte), is always caught; other bytes go unseen with
 * odds of 1 in 128 per byte. */
#define HWT_TAIL_ODD UINT64_C(0x0101010101010101)

/* The pattern word of the granule at heap address granule (mte_heap_addr: untagged, and
 * natively the pointer itself, with no mask to apply): its 16 pattern bytes are
 * this word twice (one multiply, one store pair: this runs on every malloc and free of a
 * size that is not a multiple of 16). */
static inline uint64_t hwt_tail_pattern(const struct hwt_tail_key *key, uintptr_t granule)
{
    return (granule ^ key->secret) * key->mult | HWT_TAIL_ODD;
}

/* Writes the pattern past requested bytes of the fresh object at ptr (tagged). keep: the
 * object's own bytes in that granule must stay (calloc's zeros, realloc in place); a
 * fresh malloc's bytes are undefined, so the whole granule is written in one store pair.
 * For callers that know tails are active (hwt_tail_write checks); key: hwt_tail_key or a
 * copy of it (a thread cache's is one load away from the fast paths). */
static inline __attribute__((always_inline)) void
hwt_tail_put(const struct hwt_tail_key *key, void *ptr, size_t requested, bool keep)
{
    unsigned off = (unsigned)(requested & (HWT_GRANULE - 1));
    if (off == 0)
        return;
    /* the last granule, from the size rounded down: one instruction fewer than - off */
    uint64_t *w = (uint64_t *)((uintptr_t)ptr + (requested & ~(size_t)(HWT_GRANULE - 1)));
    uint64_t p0 = hwt_tail_pattern(key, mte_heap_addr(w)), p1 = p0;
    if (keep) {
        /* the tail is bytes off..15: keep bytes 0..off-1 of the granule */
        if (off < 8) {
            uint64_t own = (UINT64_C(1) << (8 * off)) - 1;
            p0 = (w[0] & own) | (p0 & ~own);
        } else {
            uint64_t own = (UINT64_C(1) << (8 * (off - 8))) - 1;
            p0 = w[0];
            p1 = (w[1] & own) | (p1 & ~own);
        }
    }
    hwt_arch_store_pair(w, p0, p1);
}

static inline void hwt_tail_write(void *ptr, size_t requested, bool keep)
{
    if (hwt_tail_active)
        hwt_tail_put(&hwt_tail_key, ptr, requested, keep);
}

/* True when the tail past requested bytes of the object at ptr still holds the pattern
 * (always true for sizes that are a multiple of 16). For callers that know tails are
 * active (hwt_tail_intact checks); key as hwt_tail_put's. */
static inline __attribute__((always_inline)) bool hwt_tail_ok(const struct hwt_tail_key *key,
                                                              const void *ptr, size_t requested)
{
    if ((requested & (HWT_GRANULE - 1)) == 0)
        return true;
    /* what follows derives from requested here, in the branch: GCC otherwise formed the
     * tail's offset and address from the slot word ahead of it, two instructions on every
     * free without a tail */
    hwt_arch_opaque_here(requested);
    unsigned off = (unsigned)(requested & (HWT_GRANULE - 1));
    const uint64_t *w =
        (const uint64_t *)((uintptr_t)ptr + (requested & ~(size_t)(HWT_GRANULE - 1)));
    uint64_t v = hwt_tail_pattern(key, mte_heap_addr(w));
    /* bytes off..15 must match: part of the first word and all of the second, or part of
     * the second */
#if HWTAG_MTE
    if (off < 8)
        return ((w[0] ^ v) >> (8 * off)) == 0 && w[1] == v;
    /* 8 * (off - 8) is 8 * requested modulo 64, which the shift instruction takes by
     * itself */
    return ((w[1] ^ v) >> ((8 * requested) & 63)) == 0;
#elif defined(__SSE2__)
    /* Natively on x86_64: one compare of the whole granule with the pattern, and one test
     * of the tail's bytes (off..15) in the compare's byte mask. Fewer instructions than two
     * words' shifts and selects, and no branch on the word the tail starts in (off follows
     * the program's sizes, often at random). Bytes 0..off-1 are the object's own, so
     * reading the whole granule is always allowed. */
    typedef uint8_t bytes16 __attribute__((vector_size(16)));
    typedef char chars16 __attribute__((vector_size(16)));
    typedef uint64_t words2 __attribute__((vector_size(16)));
    bytes16 g;
    __builtin_memcpy(&g, w, sizeof(g));
    words2 pat = {v, v};
    unsigned same = (unsigned)__builtin_ia32_pmovmskb128((chars16)(g == (bytes16)pat));
    return ((same ^ 0xffffu) >> off) == 0;
#else
    /* Natively elsewhere, selects instead of the branch: off follows the program's sizes,
     * often at random, and the mispredicted branch cost more than the rest of the check
     * (churn, x86_64). Tagged builds keep the branch, which is fewer instructions. Bytes
     * 0..off-1 are the object's own, so reading the first word is always allowed. */
    uint64_t d0 = w[0] ^ v, d1 = w[1] ^ v;
    uint64_t first = -(uint64_t)(off < 8); /* all ones when the tail starts in w[0] */
    uint64_t part = (d0 & first) | (d1 & ~first);
    return ((part >> ((8 * off) & 63)) | (d1 & first)) == 0;
#endif
}

static inline bool hwt_tail_intact(const void *ptr, size_t requested)
{
    return !hwt_tail_active || hwt_tail_ok(&hwt_tail_key, ptr, requested);
}

/* The expected and the present tail bytes of the object (for a report): fills up to 15
 * bytes of each and returns the tail length. */
unsigned hwt_tail_describe(const void *ptr, size_t requested, uint8_t *expected, uint8_t *found);

#endif
