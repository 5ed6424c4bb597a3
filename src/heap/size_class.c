/* SPDX-License-Identifier: MIT */
/* Span geometry of the size classes and the class lookup table. No state beyond the page
 * size and that table. */
#include "size_class.h"

#include "os.h"

#define SPAN_MAX (128u * 1024u)
#define SPAN_MIN_SLOTS 8u
#define SPAN_FEW_SLOTS_ABOVE 4096u

struct hwt_size_class_tables hwt_size_classes;

/* hwt_size_class_plan for g granules in a slot of slot_size bytes */
static unsigned plan_in(size_t g, size_t slot_size, size_t dc_block)
{
    size_t usable = g * HWT_GRANULE;
    if (g <= 4)
        return 0;
    if ((slot_size & (dc_block - 1)) == 0) {
        size_t blocks = (usable + dc_block - 1) / dc_block;
        size_t rest = (blocks * dc_block - usable) / HWT_GRANULE;
        if (rest <= HWT_PLAN_REST_MAX && blocks <= UINT16_MAX >> 4)
            return (unsigned)(blocks << 4 | rest);
    }
    return usable < dc_block ? HWT_PLAN_GRANULES : 0;
}

unsigned hwt_size_class_plan(size_t g, size_t dc_block)
{
    return plan_in(g, hwt_size_class_size(hwt_size_class_of(g * HWT_GRANULE)), dc_block);
}

void hwt_size_class_init(size_t dc_block)
{
    _Static_assert(HWT_NUM_CLASSES <= 256, "a class fits in a byte");
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++)
        hwt_size_class_bytes[cls] = (uint32_t)hwt_size_class_size(cls);
    /* the class of each size from the last one's (classes grow with the size): this runs at
     * every process start, and hwt_size_class_of for each of the 1025 entries cost 15000
     * instructions of it */
    unsigned cls = 0;
    for (size_t i = 0; i <= HWT_SMALL_MAX / HWT_GRANULE; i++) {
        while (i * HWT_GRANULE > hwt_size_class_bytes[cls])
            cls++;
        unsigned plan = plan_in(i, hwt_size_class_bytes[cls], dc_block);
        hwt_size_class_lut[i] = cls | (uint32_t)plan << 16;
    }
    hwt_size_classes.dc_block = (uint16_t)dc_block;
}

size_t hwt_size_class_span(unsigned cls)
{
    /* big objects come in fewer numbers: half as many slots keep less memory idle */
    size_t slots =
        hwt_size_class_size(cls) > SPAN_FEW_SLOTS_ABOVE ? SPAN_MIN_SLOTS / 2 : SPAN_MIN_SLOTS;
    size_t want = hwt_size_class_size(cls) * slots;
    size_t span = HWT_SPAN_MIN;
    while (span < want && span < SPAN_MAX)
        span <<= 1;
    if (span < hwt_os_page_size)
        span = hwt_os_page_size;
    return span;
}

unsigned hwt_size_class_aligned(size_t size, size_t align)
{
    if (size > HWT_SMALL_MAX || align > HWT_SMALL_MAX)
        return HWT_NUM_CLASSES;
    if (size < align)
        size = align;
    for (unsigned cls = hwt_size_class_of(size); cls < HWT_NUM_CLASSES; cls++) {
        if ((hwt_size_class_size(cls) & (align - 1)) == 0)
            return cls;
    }
    return HWT_NUM_CLASSES;
}
