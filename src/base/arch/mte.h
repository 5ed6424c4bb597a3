/* SPDX-License-Identifier: MIT */
/* The only MTE instructions of libhwtag, with arch/mte_range.h: pointer tags, random tags,
 * tag loads, CAS and TCO. Nothing here decides policy or touches metadata. */
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
/* irg may pick from tags 1..14: 0 and HWT_TAG_FREE are reserved. The include mask set with
 * the tag-check mode (os.c), which every IRG obeys, so no exclude operand need name them. */
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

/* addr (untagged) with a random tag not excluded, in one IRG. Tagging must be on. */
static inline uintptr_t mte_random_tagged(uintptr_t addr, uint64_t exclude)
{
    uintptr_t out;
    __asm__ volatile(MTE_ASM_ARCH "irg %0, %1, %2" : "=r"(out) : "r"(addr), "r"(exclude));
    return out;
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

static inline uintptr_t mte_random_tagged(uintptr_t addr, uint64_t exclude)
{
    (void)exclude;
    return addr;
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
