/* SPDX-License-Identifier: MIT */
/* Tagging a range of granules with the fewest MTE stores (STG/ST2G, their zeroing forms, and
 * DC G(Z)VA for whole blocks), no-ops when compiled out. It picks no tag and decides no
 * policy: the caller's pointer carries the tag. */
#ifndef HWT_ARCH_MTE_RANGE_H
#define HWT_ARCH_MTE_RANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "align.h"
#include "arch/mte.h"

#if HWTAG_MTE

/* One tag store instruction (insn: st2g, stz2g, stg, stzg) at p + off, tag from p. */
#define MTE_TAG_AT(insn, p, off)                                                                   \
    __asm__ volatile(MTE_ASM_ARCH insn " %0, [%0, #" #off "]" : : "r"(p) : "memory")

/* DC GZVA (zero) or DC GVA of the block holding p, with p's tag. */
#define MTE_DC_AT(zero, p)                                                                         \
    do {                                                                                           \
        if (zero)                                                                                  \
            __asm__ volatile(MTE_ASM_ARCH "dc gzva, %0" : : "r"(p) : "memory");                    \
        else                                                                                       \
            __asm__ volatile(MTE_ASM_ARCH "dc gva, %0" : : "r"(p) : "memory");                     \
    } while (0)

/* Four tag stores (insn: st2g or stz2g), 32 bytes each, over [p, p + 128). */
#define MTE_TAG_ROUND(insn, p)                                                                     \
    do {                                                                                           \
        MTE_TAG_AT(insn, p, 0);                                                                    \
        MTE_TAG_AT(insn, p, 32);                                                                   \
        MTE_TAG_AT(insn, p, 64);                                                                   \
        MTE_TAG_AT(insn, p, 96);                                                                   \
    } while (0)

/* Granule stores over [p, end), both granule-aligned, 16 to 128 bytes: as few as they
 * need. Every store writes the same tag, so the last ST2G ends at end and may overlap the
 * one before it, which saves the pointer updates and branches of an exact remainder. */
static inline __attribute__((always_inline)) void mte_tag_short(uintptr_t p, uintptr_t end,
                                                                int zero)
{
    uintptr_t rest = end - p;
    if (rest > 2 * HWT_GRANULE) {
        if (zero)
            MTE_TAG_AT("stz2g", p, 0);
        else
            MTE_TAG_AT("st2g", p, 0);
        if (rest > 4 * HWT_GRANULE) {
            if (zero)
                MTE_TAG_AT("stz2g", p, 32);
            else
                MTE_TAG_AT("st2g", p, 32);
            if (rest > 6 * HWT_GRANULE) {
                if (zero)
                    MTE_TAG_AT("stz2g", p, 64);
                else
                    MTE_TAG_AT("st2g", p, 64);
            }
        }
        if (zero)
            MTE_TAG_AT("stz2g", end - 2 * HWT_GRANULE, 0);
        else
            MTE_TAG_AT("st2g", end - 2 * HWT_GRANULE, 0);
    } else if (rest == 2 * HWT_GRANULE) {
        if (zero)
            MTE_TAG_AT("stz2g", p, 0);
        else
            MTE_TAG_AT("st2g", p, 0);
    } else {
        if (zero)
            MTE_TAG_AT("stzg", p, 0);
        else
            MTE_TAG_AT("stg", p, 0);
    }
}

/* Granule stores over [p, end), both granule-aligned, p < end: rounds of four ST2G, then
 * mte_tag_short for the last 16 to 128 bytes. */
static inline __attribute__((always_inline)) void mte_tag_granules(uintptr_t p, uintptr_t end,
                                                                   int zero)
{
    /* heap addresses are far above 128, so last cannot wrap */
    for (uintptr_t last = end - 8 * HWT_GRANULE; p < last; p += 8 * HWT_GRANULE) {
        if (zero)
            MTE_TAG_ROUND("stz2g", p);
        else
            MTE_TAG_ROUND("st2g", p);
    }
    mte_tag_short(p, end, zero);
}

/* One block: the DC at %0, then %0 moves on by %2. The sequence one instruction or label
 * a line: */
/* clang-format off */
#define MTE_DC_NEXT(dc) dc ", %0\n\tadd %0, %0, %2\n\t"
#define MTE_NBLOCKS_ASM(dc)                                             \
    "tbz %1, #0, 1f\n\t"                                                \
    MTE_DC_NEXT(dc)                                                     \
    "1:\n\t"                                                            \
    "tbz %1, #1, 2f\n\t"                                                \
    MTE_DC_NEXT(dc) MTE_DC_NEXT(dc)                                     \
    "2:\n\t"                                                            \
    "lsr %1, %1, #2\n\t"                                                \
    "cbz %1, 4f\n"                                                      \
    "3:\n\t"                                                            \
    MTE_DC_NEXT(dc) MTE_DC_NEXT(dc) MTE_DC_NEXT(dc) MTE_DC_NEXT(dc)     \
    "subs %1, %1, #1\n\t"                                               \
    "b.ne 3b\n"                                                         \
    "4:"
/* clang-format on */

/* DC G(Z)VA of n >= 1 whole blocks from p (block-aligned) with p's tag: the odd one, the
 * odd pair, then four a round, each DC followed by the add that moves to the next block (a
 * DC takes no offset). Returns the end. In assembly: GCC's loop formed the four addresses
 * of a round in four registers, with six instructions more over eight blocks. */
static inline __attribute__((always_inline)) uintptr_t mte_tag_nblocks(uintptr_t p, uintptr_t n,
                                                                       uintptr_t blk, int zero)
{
    if (zero)
        __asm__ volatile(MTE_ASM_ARCH MTE_NBLOCKS_ASM("dc gzva")
                         : "+r"(p), "+r"(n)
                         : "r"(blk)
                         : "memory", "cc");
    else
        __asm__ volatile(MTE_ASM_ARCH MTE_NBLOCKS_ASM("dc gva")
                         : "+r"(p), "+r"(n)
                         : "r"(blk)
                         : "memory", "cc");
    return p;
}

/* DC G(Z)VA of the whole blocks [p, end), both block-aligned, p < end. */
static inline __attribute__((always_inline)) void mte_tag_blocks(uintptr_t p, uintptr_t end,
                                                                 uintptr_t blk, int zero)
{
    mte_tag_nblocks(p, (end - p) >> __builtin_ctzl(blk), blk, zero);
}

/* How mte_tag_range_on may tag past end, to the end of end's DC G(Z)VA block, when that
 * is at most limit. KEEP: for memory past end that has the tag already (a freed slot's
 * rest is HWT_TAG_FREE); when the block does not then lie whole in the range, the
 * extension costs ST2G instead of saving them, at most limit - end bytes of them (under a
 * class's spacing for a slot); testing for that case cost more on every free than it
 * saves in the rare one. RESTORE: for memory past end that has HWT_TAG_FREE and must keep
 * it (a fresh object's slot rest), when the range starts on a block and ends at most 128
 * bytes before one: whole blocks are tagged, then those bytes get HWT_TAG_FREE back with
 * at most four stores, where the exact range takes up to a block's worth of ST2G (31 of
 * them under QEMU's 512-byte blocks). */
enum mte_grow { MTE_GROW_NONE, MTE_GROW_KEEP, MTE_GROW_RESTORE };

/* Tags [p, end) with the tag of p; end - p a multiple of HWT_GRANULE. zero != 0 also
 * zeroes the data (STZ2G / DC GZVA), and may zero the bytes a grow tags on. grow, limit:
 * see enum mte_grow. blk: the DC G(Z)VA block size (hwt_mte_dcz_block, or a copy of it the
 * caller has nearer). */
static inline __attribute__((always_inline)) void mte_tag_range_on(uintptr_t p, uintptr_t end,
                                                                   int zero, enum mte_grow grow,
                                                                   uintptr_t limit, uintptr_t blk)
{
    size_t size = end - p;
    if (size <= 4 * HWT_GRANULE) {
        /* the common small object, no loop: past two granules, two ST2G, the first at p
         * and the last ending at end, which meet or overlap (both write p's tag); two
         * granules, one ST2G (a tag store is a helper call under QEMU); one, an STG. One
         * compare tells them apart where telling 2, 3 and 4 granules apart took three */
        if (size > 2 * HWT_GRANULE) {
            if (zero) {
                MTE_TAG_AT("stz2g", p, 0);
                MTE_TAG_AT("stz2g", end, -32);
            } else {
                MTE_TAG_AT("st2g", p, 0);
                MTE_TAG_AT("st2g", end, -32);
            }
        } else if (size == 2 * HWT_GRANULE) {
            if (zero)
                MTE_TAG_AT("stz2g", p, 0);
            else
                MTE_TAG_AT("st2g", p, 0);
        } else if (size != 0) {
            if (zero)
                MTE_TAG_AT("stzg", p, 0);
            else
                MTE_TAG_AT("stg", p, 0);
        }
        return;
    }
    if (grow != MTE_GROW_NONE) {
        /* a range that starts on a block: blocks alone (the slot layer's plans take the
         * classes whose slots all do; this serves a slot that does by its place) */
        uintptr_t full = hwt_align_up(end, blk);
        if ((p & (blk - 1)) == 0 && full <= limit &&
            (grow == MTE_GROW_KEEP || full - end <= 8 * HWT_GRANULE)) {
            mte_tag_blocks(p, full, blk, zero);
            if (grow == MTE_GROW_RESTORE && full != end) {
                uintptr_t r = (uintptr_t)mte_with_tag(end, HWT_TAG_FREE);
                mte_tag_short(r, r + (full - end), 0);
            }
            return;
        }
    }
    if (size < blk) {
        /* no whole block inside (a grow would give at most one, for more work) */
        mte_tag_granules(p, end, zero);
        return;
    }
    /* DC G(Z)VA for every whole block inside the range: one instruction tags a block
     * (512 bytes under QEMU) where ST2G tags 32 bytes for about the same cost */
    uintptr_t mid = hwt_align_up(p, blk);
    uintptr_t mid_end = hwt_align_down(end, blk);
    if (grow == MTE_GROW_KEEP && hwt_align_up(end, blk) <= limit)
        end = mid_end = hwt_align_up(end, blk);
    if (mid < mid_end) {
        if (p != mid)
            mte_tag_granules(p, mid, zero);
        mte_tag_blocks(mid, mid_end, blk, zero);
        p = mid_end;
        if (p == end)
            return;
    }
    mte_tag_granules(p, end, zero);
}

/* Tags blocks whole DC G(Z)VA blocks of blk bytes from tagged (block-aligned) with the
 * pointer's tag, zeroing them when zero, then gives the last rest granules of them (at most
 * 8) HWT_TAG_FREE back: a size's precomputed plan, with no block arithmetic at the call. */
static inline __attribute__((always_inline)) void
mte_store_tags_blocks_on(void *tagged, size_t blocks, unsigned rest, uintptr_t blk, int zero)
{
    uintptr_t end = mte_tag_nblocks((uintptr_t)tagged, blocks, blk, zero);
    if (rest == 0)
        return;
    /* HWT_TAG_FREE has every tag bit set: an OR gives it whatever the tag was */
    _Static_assert(HWT_TAG_FREE == 15u, "the free tag is all ones");
    uintptr_t r = end | (uintptr_t)HWT_TAG_FREE << HWT_TAG_SHIFT;
    /* [r - rest granules, r): one STG, or two ST2G that meet or overlap, or four */
    uintptr_t start = r - rest * HWT_GRANULE;
    if (rest == 1) {
        MTE_TAG_AT("stg", start, 0);
        return;
    }
    MTE_TAG_AT("st2g", start, 0);
    MTE_TAG_AT("st2g", r, -32);
    if (rest > 4) {
        MTE_TAG_AT("st2g", start, 32);
        MTE_TAG_AT("st2g", r, -64);
    }
}

/* Tags [tagged, tagged+size) with the pointer's tag; size a multiple of HWT_GRANULE.
 * zero != 0 also zeroes the data (STZ2G / DC GZVA) instead of leaving it. For callers
 * that know tagging is on. */
static inline __attribute__((always_inline)) void mte_store_tags_on(void *tagged, size_t size,
                                                                    int zero)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_range_on(p, p + size, zero, MTE_GROW_NONE, 0, hwt_mte_dcz_block);
}

/* mte_store_tags_on for a range of more than four granules known to hold no whole DC
 * G(Z)VA block: granule stores alone, no block arithmetic. */
static inline __attribute__((always_inline)) void mte_store_tags_granules_on(void *tagged,
                                                                             size_t size, int zero)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_granules(p, p + size, zero);
}

/* mte_store_tags_on for a fresh object whose memory up to tagged + limit has
 * HWT_TAG_FREE and keeps it (see MTE_GROW_RESTORE); blk as mte_tag_range_on's. */
static inline __attribute__((always_inline)) void
mte_store_tags_within_on(void *tagged, size_t size, int zero, size_t limit, uintptr_t blk)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_range_on(p, p + size, zero, MTE_GROW_RESTORE, p + limit, blk);
}

/* mte_store_tags_on without zeroing, allowed to tag on up to tagged + limit bytes where
 * that saves stores: for memory whose bytes past size already carry the tag. blk as
 * mte_tag_range_on's. */
static inline __attribute__((always_inline)) void
mte_store_tags_upto_on(void *tagged, size_t size, size_t limit, uintptr_t blk)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_range_on(p, p + size, false, MTE_GROW_KEEP, p + limit, blk);
}

static inline void mte_store_tags(void *tagged, size_t size, int zero)
{
    if (hwt_mte_active)
        mte_store_tags_on(tagged, size, zero);
}

#else /* !HWTAG_MTE: tagging compiled out */

static inline void mte_store_tags_on(void *tagged, size_t size, int zero)
{
    (void)tagged;
    (void)size;
    (void)zero;
}

static inline void mte_store_tags_upto_on(void *tagged, size_t size, size_t limit, uintptr_t blk)
{
    (void)tagged;
    (void)size;
    (void)limit;
    (void)blk;
}

static inline void mte_store_tags_blocks_on(void *tagged, size_t blocks, unsigned rest,
                                            uintptr_t blk, int zero)
{
    (void)tagged;
    (void)blocks;
    (void)rest;
    (void)blk;
    (void)zero;
}

static inline void mte_store_tags_granules_on(void *tagged, size_t size, int zero)
{
    (void)tagged;
    (void)size;
    (void)zero;
}

static inline void mte_store_tags_within_on(void *tagged, size_t size, int zero, size_t limit,
                                            uintptr_t blk)
{
    (void)tagged;
    (void)size;
    (void)zero;
    (void)limit;
    (void)blk;
}

static inline void mte_store_tags(void *tagged, size_t size, int zero)
{
    (void)tagged;
    (void)size;
    (void)zero;
}

#endif /* HWTAG_MTE */

#endif
