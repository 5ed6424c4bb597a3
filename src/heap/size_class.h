/* SPDX-License-Identifier: MIT */
/* Size classes of small objects: 16-byte steps up to 256 bytes, then eight classes per
 * doubling up to HWT_SMALL_MAX. Pure arithmetic, no state. */
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
    /* hwt_size_class_of(size) at index (size + 15) / 16, for every size up to
     * HWT_SMALL_MAX (class boundaries are multiples of the granule) */
    uint8_t lut[HWT_SMALL_MAX / HWT_GRANULE + 1];
    uint32_t bytes[HWT_NUM_CLASSES]; /* hwt_size_class_size(cls) for every class */
};
extern struct hwt_size_class_tables hwt_size_classes;
#define hwt_size_class_lut (hwt_size_classes.lut)
#define hwt_size_class_bytes (hwt_size_classes.bytes)
void hwt_size_class_init(void);

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
