/* SPDX-License-Identifier: MIT */
/* One slot's life as an object: its tag by the policy (the neighbours' and its previous
 * tag excluded), tagging and the tail pattern at malloc, the free and resize of its slot
 * word, and its description for reports. Spans and central lists are slab.c's. */
#include "slot.h"

#include "arch/mte.h"
#include "history.h"
#include "options.h"
#include "size_class.h"
#include "tag.h"
#include "tail.h"

void *hwt_slot_prepare(uintptr_t addr, size_t requested, bool zero, uint32_t stack)
{
    struct hwt_span *s = hwt_slab_span_of(addr);
    struct hwt_slab_ref ref = {addr, &s->slots[hwt_slab_index(s, addr)]};
    if (hwt_history_keeps_slots())
        hwt_history_record_slot(addr, hwt_slab_slot_load(ref.slot));
    return hwt_slot_prepare_ref(ref, requested, zero, stack, hwt_mte_active,
                                hwt_tail_active ? &hwt_tail_key : NULL,
                                hwt_size_class_plan_for(s->cls, requested),
                                &hwt_size_class_bytes[s->cls], &hwt_size_classes.dc_block, NULL);
}

uintptr_t hwt_slot_release(struct hwt_span *s, uint32_t idx, uint32_t stack)
{
    struct hwt_slot *slot = &s->slots[idx];
    uint64_t w = hwt_slab_slot_load(slot);
    uint64_t freed;
    do {
        if (hwt_slab_slot_state(w) != HWT_SLOT_LIVE)
            return 0; /* a racing free got there first */
        freed = hwt_slab_slot_word(HWT_SLOT_FREED, hwt_slab_slot_tag(w), hwt_slab_slot_requested(w),
                                   hwt_slab_slot_alloc_stack(w), stack);
    } while (!__atomic_compare_exchange_n(&slot->word, &w, freed, 0, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    uintptr_t addr = s->base + (uintptr_t)idx * s->slot_size;
    hwt_tag_range(addr, hwt_align_up(hwt_slab_slot_requested(w), HWT_GRANULE), HWT_TAG_FREE, false);
    return addr;
}

bool hwt_slot_resize(struct hwt_span *s, uint32_t idx, size_t new_size)
{
    if (new_size > s->slot_size)
        return false;
    /* Stay when the new size would land in the same class, or still fills half the slot. */
    if (hwt_size_class_of(new_size) != s->cls && new_size < s->slot_size / 2)
        return false;
    struct hwt_slot *slot = &s->slots[idx];
    uint64_t w = hwt_slab_slot_load(slot);
    uintptr_t addr = s->base + (uintptr_t)idx * s->slot_size;
    size_t old_usable = hwt_align_up(hwt_slab_slot_requested(w), HWT_GRANULE);
    size_t new_usable = hwt_align_up(new_size, HWT_GRANULE);
    if (new_usable > old_usable)
        hwt_tag_range(addr + old_usable, new_usable - old_usable, hwt_slab_slot_tag(w), false);
    else if (new_usable < old_usable)
        hwt_tag_range(addr + new_usable, old_usable - new_usable, HWT_TAG_FREE, false);
    __atomic_store_n(&slot->word,
                     hwt_slab_slot_word(HWT_SLOT_LIVE, hwt_slab_slot_tag(w), new_size,
                                        hwt_slab_slot_alloc_stack(w), 0),
                     __ATOMIC_RELEASE);
    return true;
}

bool hwt_slot_lookup(uintptr_t addr, long delta, struct hwt_object *out)
{
    struct hwt_span *s = hwt_slab_span_of(addr);
    if (s == NULL || s->slot_size == 0)
        return false;
    int64_t idx = (int64_t)hwt_slab_index(s, addr) + delta;
    if (idx < 0 || idx >= (int64_t)s->nslots)
        return false;
    uint64_t w = hwt_slab_slot_load(&s->slots[idx]);
    unsigned state = hwt_slab_slot_state(w);
    out->start = s->base + (uintptr_t)idx * s->slot_size;
    out->requested = hwt_slab_slot_requested(w);
    out->size = hwt_align_up(out->requested, HWT_GRANULE);
    out->class_size = s->slot_size;
    out->region_size = s->slot_size;
    out->tag = hwt_slab_slot_tag(w);
    out->large = false;
    out->live = state == HWT_SLOT_LIVE;
    out->ever_used = state != HWT_SLOT_UNUSED;
    out->sampled = true;
    out->alloc_stack = hwt_slab_slot_alloc_stack(w);
    out->free_stack = state == HWT_SLOT_FREED ? hwt_slab_slot_free_stack(w) : 0;
    return true;
}

/* Lock order: a central lock, then heap_lock, then the metadata lock. */
