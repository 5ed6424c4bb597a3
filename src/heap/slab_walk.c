/* SPDX-License-Identifier: MIT */
/* Lock-free walks over the spans in the page maps and their slot words: statistics and the
 * live objects (for a leak detector). It never changes the heap, takes no lock and never allocates.
 */
#include "slab.h"

#include "align.h"
#include "slab_region.h"
#include "slab_span.h"
#include "slot.h"

/* Calls fn for every span a region's page map names: husks and unused ranges are in none;
 * released spans are, and hold no object. */
static void walk_spans(void (*fn)(struct hwt_span *s, void *arg), void *arg)
{
    uint32_t nregions = __atomic_load_n(&hwt_slab_region_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < nregions; i++) {
        struct hwt_region *r = &hwt_slab_regions[i];
        hwt_slab_region_spans(r, __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE), fn, arg);
    }
}

static void count_span(struct hwt_span *s, void *arg)
{
    struct hwt_class_usage *u = &((struct hwt_class_usage *)arg)[s->cls];
    u->spans++;
    if (s->list == HWT_SPAN_LIST_RELEASED)
        return;
    u->span_bytes += hwt_span_bytes(s);
    for (uint32_t k = 0; k < s->nslots; k++) {
        uint64_t w = hwt_slab_slot_load(&s->slots[k]);
        if (hwt_slab_slot_state(w) == HWT_SLOT_LIVE) {
            u->live_slots++;
            u->live_bytes += hwt_align_up(hwt_slab_slot_requested(w), HWT_GRANULE);
        }
    }
    u->free_in_span += __atomic_load_n(&s->nfree, __ATOMIC_RELAXED);
}

void hwt_slab_class_usage(struct hwt_class_usage *out)
{
    for (unsigned c = 0; c < HWT_NUM_CLASSES; c++)
        out[c] = (struct hwt_class_usage){0, 0, 0, 0, 0};
    walk_spans(count_span, out);
}

struct live_walk {
    void (*fn)(const struct hwt_object *obj, void *arg);
    void *arg;
};

static void report_live(struct hwt_span *s, void *arg)
{
    const struct live_walk *walk = arg;
    if (s->list == HWT_SPAN_LIST_RELEASED)
        return;
    for (uint32_t k = 0; k < s->nslots; k++) {
        if (hwt_slab_slot_state(hwt_slab_slot_load(&s->slots[k])) != HWT_SLOT_LIVE)
            continue;
        /* described as a fault report would, from the word read again: skipped if it was
         * freed since */
        struct hwt_object obj;
        if (hwt_slot_lookup(s->base + (uintptr_t)k * s->slot_size, 0, &obj) && obj.live)
            walk->fn(&obj, walk->arg);
    }
}

void hwt_slab_walk_live(void (*fn)(const struct hwt_object *obj, void *arg), void *arg)
{
    struct live_walk walk = {fn, arg};
    walk_spans(report_live, &walk);
}
