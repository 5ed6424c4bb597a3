/* SPDX-License-Identifier: MIT */
/* Size classes of small objects: 16-byte steps up to 256 bytes, then eight classes per
 * doubling up to HWT_SMALL_MAX. Pure arithmetic, and the fast paths' tables of it. */
#ifndef HWT_SIZE_CLASS_H
#define HWT_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"

#define HWT_NUM_CLASSES 64u
#define HWT_SMALL_MAX 16384u /* largest small object; bigger ones are page-backed */
#define HWT_LINEAR_MAX 256u  /* classes are 16 bytes apart up to here */
#define HWT_LINEAR_CLASSES 16u
#define HWT_STEPS_PER_DOUBLING 8u
#define HWT_LINEAR_MAX_LOG2 8u

/* Class of a request of size bytes, 0 < size <= HWT_SMALL_MAX (0 maps to class 0). */
static inline unsigned hwt_size_class_of(size_t size)
{
    if (size <= HWT_LINEAR_MAX)
        return size == 0 ? 0 : (unsigned)((size - 1) >> HWT_GRANULE_SHIFT);
    unsigned k = 63u - (unsigned)__builtin_clzll((unsigned long long)(size - 1));
    unsigned step_log2 = k - 3u;
    size_t base = (size_t)1 << k;
    return HWT_LINEAR_CLASSES + (k - HWT_LINEAR_MAX_LOG2) * HWT_STEPS_PER_DOUBLING +
           (unsigned)((size - 1 - base) >> step_log2);
}

/* The fast paths' tables, in one object so that one address (a thread cache holds it)
 * reaches both; filled by hwt_size_class_init. */
struct hwt_size_class_tables {
    /* At index (size + 15) / 16, for every size up to HWT_SMALL_MAX (class boundaries are
     * multiples of the granule): hwt_size_class_of(size) in bits 0-7 (HWT_LUT_CLASS) and
     * the size's tagging plan in bits 16-31 (HWT_LUT_PLAN), one load for both.
     * The plan, for the usable bytes in a slot of that class: when the class's slots start
     * on DC G(Z)VA blocks (slot sizes that are multiples of a block), the whole blocks that
     * cover them in bits 4 and up, and in bits 0-3 how many granules of the last block lie
     * past them (at most HWT_PLAN_REST_MAX); otherwise, when they are less than a block,
     * HWT_PLAN_GRANULES: granule stores alone. 0: no plan (four granules or fewer, or none
     * of these), the range is then worked out from the block size. */
    uint32_t lut[HWT_SMALL_MAX / HWT_GRANULE + 1];
    uint32_t bytes[HWT_NUM_CLASSES]; /* hwt_size_class_size(cls) for every class */
    uint16_t dc_block;               /* the block size the plans are made for */
};
#define HWT_LUT_CLASS(e) ((e)&0xffu)
#define HWT_LUT_PLAN(e) ((e) >> 16)
#define HWT_PLAN_REST_MAX 8u
#define HWT_PLAN_GRANULES 15u /* no blocks, a rest no block plan has */
#define HWT_PLAN_BLOCKS(plan) ((plan) >> 4)
#define HWT_PLAN_REST(plan) ((plan)&15u)
extern struct hwt_size_class_tables hwt_size_classes;
#define hwt_size_class_lut (hwt_size_classes.lut)
#define hwt_size_class_bytes (hwt_size_classes.bytes)
/* The tagging plan of g granules in a slot of their class with blocks of dc_block bytes
 * (see hwt_size_class_tables). */
unsigned hwt_size_class_plan(size_t g, size_t dc_block);

/* Fills the tables; dc_block: the DC G(Z)VA block size in bytes (a power of two, at least
 * a granule, at most 2 KiB). */
void hwt_size_class_init(size_t dc_block);

/* The lut entry of a request of size bytes (<= HWT_SMALL_MAX) when cls is the class it
 * gives the size, otherwise 0 (no plan): what a slot of class cls is tagged by. */
static inline uint32_t hwt_size_class_plan_for(unsigned cls, size_t size)
{
    uint32_t e = hwt_size_class_lut[(size + HWT_GRANULE - 1) >> HWT_GRANULE_SHIFT];
    return HWT_LUT_CLASS(e) == cls ? e : 0;
}

/* Slot size of class cls. */
static inline size_t hwt_size_class_size(unsigned cls)
{
    if (cls < HWT_LINEAR_CLASSES)
        return (size_t)(cls + 1) * HWT_GRANULE;
    unsigned rel = cls - HWT_LINEAR_CLASSES;
    unsigned k = HWT_LINEAR_MAX_LOG2 + rel / HWT_STEPS_PER_DOUBLING;
    size_t step = (size_t)1 << (k - 3u);
    return ((size_t)1 << k) + (size_t)(rel % HWT_STEPS_PER_DOUBLING + 1) * step;
}

/* Bytes of one span of class cls: a power of two, at least HWT_SPAN_MIN and a page, room for
 * >= 8 slots. */
#define HWT_SPAN_MIN (16u * 1024u)
size_t hwt_size_class_span(unsigned cls);

/* Smallest class >= size whose slots are all aligned to align (a power of two);
 * HWT_NUM_CLASSES when none fits. */
unsigned hwt_size_class_aligned(size_t size, size_t align);

#endif
