/* SPDX-License-Identifier: MIT */
/* Span metadata and its husks, a span set up on a range, and a released range cut up for
 * another class. It never chooses, keeps or releases a span: the central lists do (slab.c). */
#include "slab_span.h"

#include "history.h"
#include "lock.h"
#include "meta.h"
#include "size_class.h"
#include "slab_region.h"
#include "tag.h"

#define BITS_PER_WORD 64u

/* Span structs whose address range another class took (hwt_slab_span_cut) or whose region
 * was given back: their metadata waits here for the next span of their own class.
 * husk_lock is a leaf lock. */
static struct hwt_lock husk_lock = HWT_LOCK_INIT;
static struct hwt_span *husks[HWT_NUM_CLASSES];

void hwt_slab_span_husk(struct hwt_span *s)
{
    /* its words are about to be forgotten: the freed objects they describe go to the
     * history ring, as a reused slot's do (history.h) */
    if (hwt_history_keeps_slots())
        for (uint32_t i = 0; i < s->nslots; i++)
            hwt_history_record_slot(s->base + (uintptr_t)i * s->slot_size,
                                    hwt_slab_slot_load(&s->slots[i]));
    hwt_lock(&husk_lock);
    s->next = husks[s->cls];
    husks[s->cls] = s;
    hwt_unlock(&husk_lock);
}

void hwt_slab_span_reset_lock(void)
{
    hwt_lock_reset(&husk_lock);
}

/* Metadata for a span of cls: a husk of that class, else fresh (zeroed) memory. */
static struct hwt_span *span_meta(unsigned cls)
{
    hwt_lock(&husk_lock);
    struct hwt_span *s = husks[cls];
    if (s != NULL)
        husks[cls] = s->next;
    hwt_unlock(&husk_lock);
    if (s != NULL) {
        /* its slot words describe objects of the range it had: forget them */
        for (uint32_t i = 0; i < s->nslots; i++)
            __atomic_store_n(&s->slots[i].word, 0, __ATOMIC_RELAXED);
        return s;
    }
    size_t span_size = hwt_size_class_span(cls);
    uint32_t nslots = (uint32_t)(span_size / hwt_size_class_size(cls));
    size_t words = (nslots + BITS_PER_WORD - 1) / BITS_PER_WORD;
    s = hwt_meta_alloc(sizeof(*s), HWT_SPAN_LINE);
    uint64_t *bits = hwt_meta_alloc(words * sizeof(uint64_t), 16);
    struct hwt_slot *slots = hwt_meta_alloc((nslots + 2) * sizeof(struct hwt_slot), 16);
    if (s == NULL || bits == NULL || slots == NULL)
        return NULL;
    s->free_bits = bits;
    s->slots = slots + 1;
    s->slots[-1].word = HWT_SLOT_EDGE_WORD;
    s->slots[nslots].word = HWT_SLOT_EDGE_WORD;
    return s;
}

/* Gives s (metadata from span_meta) the range at base and publishes it in the page map.
 * tag: tag the range free now (the span is about to be used); otherwise it joins a released
 * list and is tagged when taken. */
static void span_init(struct hwt_span *s, unsigned arena, unsigned cls, uintptr_t base, bool tag)
{
    size_t span_size = hwt_size_class_span(cls);
    size_t slot_size = hwt_size_class_size(cls);
    uint32_t nslots = (uint32_t)(span_size / slot_size);
    HWT_CHECK(span_size <= HWT_SPAN_MAX);
    s->base = base;
    s->span_shift = (uint8_t)__builtin_ctzl(span_size);
    HWT_CHECK(hwt_span_bytes(s) == span_size);
    s->slot_size = (uint16_t)slot_size;
    s->slots_bytes = (uint32_t)(nslots * slot_size);
    s->nslots = (uint16_t)nslots;
    s->slot_recip = (uint32_t)(((UINT64_C(1) << 32) + slot_size - 1) / slot_size);
    s->cls = (uint8_t)cls;
    s->bin_offset = (uint16_t)(HWT_SPAN_BINS_AT + 16u * cls);
    /* the base is aligned to the span's size, at least 16 KiB, and a block is at most 2 KiB:
     * a slot size that is a multiple of the block puts every slot on one */
    HWT_DCHECK((base & (hwt_mte_dcz_block - 1)) == 0);
    s->slot_blocks =
        (uint16_t)((slot_size & (hwt_mte_dcz_block - 1)) == 0 ? slot_size / hwt_mte_dcz_block : 0);
    s->granule_slots = slot_size < hwt_mte_dcz_block;
    s->arena = (uint8_t)arena;
    for (uint32_t w = 0; w < (nslots + BITS_PER_WORD - 1) / BITS_PER_WORD; w++)
        s->free_bits[w] = 0;
    for (uint32_t i = 0; i < nslots; i++)
        s->free_bits[i / BITS_PER_WORD] |= UINT64_C(1) << (i % BITS_PER_WORD);
    s->nfree = (uint16_t)nslots;
    s->next = s->prev = NULL;
    s->list = HWT_SPAN_LIST_NONE;
    if (tag)
        hwt_tag_range(base, span_size, HWT_TAG_FREE, false);
    hwt_slab_region_map(base, span_size, s);
}

struct hwt_span *hwt_slab_span_cut(struct hwt_span *victim, unsigned arena, unsigned cls,
                                   struct hwt_span **released)
{
    size_t span_size = hwt_size_class_span(cls);
    uintptr_t base = victim->base, end = victim->base + hwt_span_bytes(victim);
    /* the range forgets the victim first: a part no new span takes reads as unused, and
     * its region can still be given back whole (hwt_slab_unmap_free_regions) */
    hwt_slab_region_map(base, end - base, NULL);
    hwt_slab_span_husk(victim);
    struct hwt_span *first = NULL;
    for (uintptr_t p = base; p < end; p += span_size) {
        struct hwt_span *s = span_meta(cls);
        if (s == NULL)
            break; /* the rest of the range stays unused: no metadata for it */
        span_init(s, arena, cls, p, first == NULL);
        if (first == NULL)
            first = s;
        else
            hwt_slab_span_push(released, s, HWT_SPAN_LIST_RELEASED);
    }
    return first;
}

struct hwt_span *hwt_slab_span_new(unsigned arena, unsigned cls, bool *no_space)
{
    *no_space = false;
    struct hwt_span *s = span_meta(cls);
    if (s == NULL)
        return NULL;
    uintptr_t base = hwt_slab_region_carve(hwt_size_class_span(cls));
    if (base == 0) {
        s->cls = (uint16_t)cls; /* fresh metadata has no class yet */
        hwt_slab_span_husk(s);  /* keep it for the next span of cls */
        *no_space = true;
        return NULL;
    }
    span_init(s, arena, cls, base, true);
    return s;
}

bool hwt_slab_span_consistent(const struct hwt_span *s)
{
    uint32_t avail = 0;
    for (uint32_t i = 0; i < s->nslots; i++) {
        if (!(s->free_bits[i / BITS_PER_WORD] & (UINT64_C(1) << (i % BITS_PER_WORD))))
            continue;
        avail++;
        if (hwt_slab_slot_state(hwt_slab_slot_load(&s->slots[i])) == HWT_SLOT_LIVE)
            return false;
    }
    return avail == s->nfree;
}
