/* SPDX-License-Identifier: MIT */
/* The only MTE instructions of libhwtag: random tags, tag stores (with and without
 * zeroing), tag loads and TCO. Nothing here decides policy or touches metadata. */
#ifndef HWT_ARCH_MTE_H
#define HWT_ARCH_MTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "align.h"

#define HWT_GRANULE 16u /* bytes covered by one MTE tag */
#define HWT_GRANULE_SHIFT 4u
#define HWT_TAG_BITS 4u
#define HWT_TAG_COUNT 16u
#define HWT_TAG_UNTAGGED 0u /* memory left untagged: sampled-out or native */
#define HWT_TAG_FREE 15u    /* freed slots and guards; no live pointer has it */
/* irg may pick from tags 1..14: 0 and HWT_TAG_FREE are reserved. */
#define HWT_TAG_INCLUDE_MASK 0x7ffeu

#define HWT_TAG_SHIFT 56u
#define HWT_ADDR_MASK ((UINT64_C(1) << HWT_TAG_SHIFT) - 1)

/* Set once at start-up by init.c (setup_mte, once the kernel took a tag-check mode): tag
 * checks are on and tags may be written. */
extern int hwt_mte_active;
/* DC GVA/GZVA block size in bytes (DCZID_EL0), a power of two >= HWT_GRANULE. */
extern size_t hwt_mte_dcz_block;

/* signal-safe */
static inline uintptr_t mte_untag(const void *ptr)
{
    return (uintptr_t)ptr & HWT_ADDR_MASK;
}

/* Whether the CPU ignores a pointer's top byte in accesses (aarch64's TBI). Where it does
 * not (x86_64, natively), no heap pointer has one, and a pointer that has one is no heap
 * pointer: free and realloc must report it, not access memory through it. */
#if HWTAG_MTE || defined(__aarch64__)
#define HWT_TOP_BYTE_IGNORED 1
#else
#define HWT_TOP_BYTE_IGNORED 0
#endif

/* The heap address a pointer from the program names: its address bits, or natively the
 * whole pointer, so that one with a top byte finds no object. signal-safe */
static inline uintptr_t mte_heap_addr(const void *ptr)
{
    return HWT_TOP_BYTE_IGNORED ? mte_untag(ptr) : (uintptr_t)ptr;
}

/* signal-safe */
static inline unsigned mte_ptr_tag(const void *ptr)
{
    return (unsigned)((uintptr_t)ptr >> HWT_TAG_SHIFT) & (HWT_TAG_COUNT - 1);
}

/* signal-safe */
static inline void *mte_with_tag(uintptr_t addr, unsigned tag)
{
    return (void *)((addr & HWT_ADDR_MASK) | ((uintptr_t)tag << HWT_TAG_SHIFT));
}

#if HWTAG_MTE

#define MTE_ASM_ARCH ".arch armv8.5-a+memtag\n"

/* A random tag from the process include mask, never one whose bit is set in exclude. */
static inline unsigned mte_random_tag(uint64_t exclude)
{
    uintptr_t out;
    if (!hwt_mte_active)
        return HWT_TAG_UNTAGGED;
    __asm__ volatile(MTE_ASM_ARCH "irg %0, %1, %2" : "=r"(out) : "r"((uintptr_t)0), "r"(exclude));
    return mte_ptr_tag((void *)out);
}

/* Memory tag of the granule holding addr. signal-safe */
static inline unsigned mte_load_tag(uintptr_t addr)
{
    uintptr_t p = addr & HWT_ADDR_MASK;
    if (!hwt_mte_active)
        return HWT_TAG_UNTAGGED;
    __asm__ volatile(MTE_ASM_ARCH "ldg %0, [%0]" : "+r"(p) : : "memory");
    return mte_ptr_tag((void *)p);
}

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

/* DC G(Z)VA of the whole blocks [p, end), both block-aligned, p < end: the odd one, the
 * odd pair, then four a round (on hardware a block is often 64 bytes, so the loop's own
 * instructions count; a DC takes no offset, so each block costs its address too). */
static inline __attribute__((always_inline)) void mte_tag_blocks(uintptr_t p, uintptr_t end,
                                                                 uintptr_t blk, int zero)
{
    uintptr_t n = end - p;
    if (n & blk) {
        MTE_DC_AT(zero, p);
        p += blk;
    }
    if (n & 2 * blk) {
        MTE_DC_AT(zero, p);
        MTE_DC_AT(zero, p + blk);
        p += 2 * blk;
    }
    for (; p < end; p += 4 * blk) {
        MTE_DC_AT(zero, p);
        MTE_DC_AT(zero, p + blk);
        MTE_DC_AT(zero, p + 2 * blk);
        MTE_DC_AT(zero, p + 3 * blk);
    }
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
 * see enum mte_grow. */
static inline __attribute__((always_inline)) void
mte_tag_range_on(uintptr_t p, uintptr_t end, int zero, enum mte_grow grow, uintptr_t limit)
{
    size_t size = end - p;
    if (size <= 4 * HWT_GRANULE) {
        /* the common small object: one to three stores, no loop */
        if (size & HWT_GRANULE) {
            if (zero)
                MTE_TAG_AT("stzg", end - HWT_GRANULE, 0);
            else
                MTE_TAG_AT("stg", end - HWT_GRANULE, 0);
        }
        if (size >= 2 * HWT_GRANULE) {
            if (zero)
                MTE_TAG_AT("stz2g", p, 0);
            else
                MTE_TAG_AT("st2g", p, 0);
        }
        if (size == 4 * HWT_GRANULE) {
            if (zero)
                MTE_TAG_AT("stz2g", p, 32);
            else
                MTE_TAG_AT("st2g", p, 32);
        }
        return;
    }
    uintptr_t blk = hwt_mte_dcz_block;
    if (grow != MTE_GROW_NONE) {
        /* the common case of a class whose slots start on blocks: blocks alone */
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

/* Tags [tagged, tagged+size) with the pointer's tag; size a multiple of HWT_GRANULE.
 * zero != 0 also zeroes the data (STZ2G / DC GZVA) instead of leaving it. For callers
 * that know tagging is on. */
static inline __attribute__((always_inline)) void mte_store_tags_on(void *tagged, size_t size,
                                                                    int zero)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_range_on(p, p + size, zero, MTE_GROW_NONE, 0);
}

/* mte_store_tags_on for a fresh object whose memory up to tagged + limit has
 * HWT_TAG_FREE and keeps it (see MTE_GROW_RESTORE). */
static inline __attribute__((always_inline)) void
mte_store_tags_within_on(void *tagged, size_t size, int zero, size_t limit)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_range_on(p, p + size, zero, MTE_GROW_RESTORE, p + limit);
}

/* mte_store_tags_on without zeroing, allowed to tag on up to tagged + limit bytes where
 * that saves stores: for memory whose bytes past size already carry the tag. */
static inline __attribute__((always_inline)) void mte_store_tags_upto_on(void *tagged, size_t size,
                                                                         size_t limit)
{
    uintptr_t p = (uintptr_t)tagged;
    mte_tag_range_on(p, p + size, false, MTE_GROW_KEEP, p + limit);
}

static inline void mte_store_tags(void *tagged, size_t size, int zero)
{
    if (hwt_mte_active)
        mte_store_tags_on(tagged, size, zero);
}

/* addr (untagged) with a random tag not excluded, in one IRG. Tagging must be on. */
static inline uintptr_t mte_random_tagged(uintptr_t addr, uint64_t exclude)
{
    uintptr_t out;
    __asm__ volatile(MTE_ASM_ARCH "irg %0, %1, %2" : "=r"(out) : "r"(addr), "r"(exclude));
    return out;
}

/* Compare-and-swap of the word at p from expected to desired, acquire and release; true
 * when it held expected. For callers that know tagging is on: a CPU with MTE (ARMv8.5)
 * has the LSE atomics, whose CASAL is one instruction where the exclusive pair and its
 * retry loop (the build's portable code) take six. */
static inline bool mte_cas_on(uint64_t *p, uint64_t expected, uint64_t desired)
{
    uint64_t seen = expected;
    __asm__ volatile(MTE_ASM_ARCH "casal %0, %2, [%1]"
                     : "+r"(seen)
                     : "r"(p), "r"(desired)
                     : "memory");
    return seen == expected;
}

/* Tag Check Override: while set, this thread's accesses are not tag-checked. The _on forms
 * are for where tagging is known to be on. signal-safe */
static inline void mte_tco_set_on(void)
{
    __asm__ volatile(MTE_ASM_ARCH "msr tco, #1" : : : "memory");
}

static inline void mte_tco_clear_on(void)
{
    __asm__ volatile(MTE_ASM_ARCH "msr tco, #0" : : : "memory");
}

static inline void mte_tco_set(void)
{
    if (hwt_mte_active)
        mte_tco_set_on();
}

static inline void mte_tco_clear(void)
{
    if (hwt_mte_active)
        mte_tco_clear_on();
}

/* DCZID_EL0 block size in bytes. */
static inline size_t mte_read_dcz_block(void)
{
    uint64_t dczid;
    __asm__ volatile("mrs %0, dczid_el0" : "=r"(dczid));
    return (size_t)4 << (dczid & 0xf);
}

#else /* !HWTAG_MTE: tagging compiled out */

static inline unsigned mte_random_tag(uint64_t exclude)
{
    (void)exclude;
    return HWT_TAG_UNTAGGED;
}

static inline unsigned mte_load_tag(uintptr_t addr)
{
    (void)addr;
    return HWT_TAG_UNTAGGED;
}

static inline void mte_store_tags_on(void *tagged, size_t size, int zero)
{
    (void)tagged;
    (void)size;
    (void)zero;
}

static inline void mte_store_tags_upto_on(void *tagged, size_t size, size_t limit)
{
    (void)tagged;
    (void)size;
    (void)limit;
}

static inline void mte_store_tags_within_on(void *tagged, size_t size, int zero, size_t limit)
{
    (void)tagged;
    (void)size;
    (void)zero;
    (void)limit;
}

static inline void mte_store_tags(void *tagged, size_t size, int zero)
{
    (void)tagged;
    (void)size;
    (void)zero;
}

static inline uintptr_t mte_random_tagged(uintptr_t addr, uint64_t exclude)
{
    (void)exclude;
    return addr;
}

static inline bool mte_cas_on(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED);
}

static inline void mte_tco_set(void)
{
}

static inline void mte_tco_clear(void)
{
}

static inline void mte_tco_set_on(void)
{
}

static inline void mte_tco_clear_on(void)
{
}

static inline size_t mte_read_dcz_block(void)
{
    return 64;
}

#endif /* HWTAG_MTE */

#endif
