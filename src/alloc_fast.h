/* SPDX-License-Identifier: MIT */
/* The fast paths of malloc and free: a small object through the thread cache, inline in
 * interpose.c's entry points, so no call or frame stands between the program and the
 * cache and the stack they capture starts at the program's call. Whatever they do not
 * handle (a thread's first call, an empty or full bin, a large or aligned request, a bad
 * pointer, a report) they leave untouched and return NULL / false, and the entry point
 * takes the general path of alloc.c, which checks everything again. */
#ifndef HWT_ALLOC_FAST_H
#define HWT_ALLOC_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "history.h"
#include "size_class.h"
#include "slab.h"
#include "slot.h"
#include "tail.h"
#include "tcache.h"
#include "unwind.h"

/* Frames kept of an allocation or free: enough to place the call; fewer frames mean fewer
 * distinct stacks (python3 start-up: 17k at 16 frames, 15.5k at 12) and a shorter walk. */
#define HWT_ALLOC_STACK_FRAMES 12u

/* A thread-owned counter: only its thread writes it, readers want whole values. */
#define HWT_TC_COUNT(tc, field, n)                                                                 \
    __atomic_store_n(&(tc)->counters.field,                                                        \
                     __atomic_load_n(&(tc)->counters.field, __ATOMIC_RELAXED) + (n),               \
                     __ATOMIC_RELAXED)

/* True when fp can be the first frame record of a walk on the thread's own stack. */
static inline bool hwt_alloc_fast_on_stack(const struct hwt_tcache *tc, uintptr_t fp)
{
    return fp - tc->stack_lo < tc->stack_hi - tc->stack_lo - 2 * sizeof(uintptr_t);
}

/* Depot id of the stack from the frame record fp when its key was not in the thread's
 * stack cache (or fp is on another stack): walks again keeping the frames. alloc.c */
uint32_t hwt_alloc_stack_miss(struct hwt_tcache *tc, uintptr_t fp);

/* Stack of this malloc or free from the entry point's own frame record fp: a walk that only
 * hashes, then the thread's stack cache. */
static inline __attribute__((always_inline)) uint32_t hwt_alloc_fast_stack(struct hwt_tcache *tc,
                                                                           uintptr_t fp)
{
    if (unlikely(!hwt_alloc_fast_on_stack(tc, fp)))
        return hwt_alloc_stack_miss(tc, fp);
    uint64_t key;
    hwt_unwind_walk(fp, tc->stack_hi, NULL, HWT_ALLOC_STACK_FRAMES, &key);
    unsigned i = (unsigned)(key >> 58) & (HWT_TCACHE_STACKS - 1);
    if (likely(tc->stack_keys[i] == key))
        return tc->stack_ids[i];
    return hwt_alloc_stack_miss(tc, fp);
}

/* malloc/calloc of size bytes (16-byte alignment) from the cache; NULL when the general
 * path must do it. */
static inline __attribute__((always_inline)) void *hwt_alloc_fast_malloc(size_t size, bool zero)
{
    struct hwt_thread_state *self = &hwt_self;
    struct hwt_tcache *tc = self->tc;
    if (unlikely(size > HWT_SMALL_MAX || (uintptr_t)tc <= (uintptr_t)HWT_TCACHE_DEAD || self->busy))
        return NULL;
    /* busy before the bin is read: a signal handler's malloc must not pop the same slot */
    self->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct hwt_tcache_bin *bin = &tc->bins[hwt_size_class_lut[(size + 15) >> HWT_GRANULE_SHIFT]];
    uint32_t n = bin->count;
    void *p = NULL;
    if (likely(n != 0)) {
        unsigned flags = tc->flags;
        bool tagged = HWTAG_MTE && (flags & HWT_TCACHE_MTE);
        if (tagged)
            mte_tco_on();
        uint32_t stack = 0;
        if (flags & HWT_TCACHE_STACK)
            stack = hwt_alloc_fast_stack(tc, (uintptr_t)__builtin_frame_address(0));
        struct hwt_slab_ref ref = bin->slots[n - 1];
        bin->count = n - 1;
        p = hwt_slot_prepare_ref(ref, size, zero, stack, tagged, flags & HWT_TCACHE_TAIL);
        HWT_TC_COUNT(tc, small_allocs, 1);
        HWT_TC_COUNT(tc, live_bytes, (int64_t)hwt_align_up(size, HWT_GRANULE));
        if (tagged) {
            hwt_history_record(p, size, stack, false);
            mte_tco_off();
        }
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self->busy = 0;
    return p;
}

/* free of a live small object into the cache; false when the general path must do it
 * (nothing has been changed then). */
static inline __attribute__((always_inline)) bool hwt_alloc_fast_free(void *ptr)
{
    struct hwt_thread_state *self = &hwt_self;
    struct hwt_tcache *tc = self->tc;
    if (unlikely((uintptr_t)tc <= (uintptr_t)HWT_TCACHE_DEAD || self->busy))
        return false;
    uintptr_t addr = mte_untag(ptr);
    struct hwt_span *s = hwt_slab_span_of(addr);
    if (unlikely(s == NULL))
        return false;
    uint32_t idx = hwt_slab_index(s, addr);
    if (unlikely(idx >= s->nslots || s->base + (uintptr_t)idx * s->slot_size != addr))
        return false;
    struct hwt_slot *slot = &s->slots[idx];
    struct hwt_tcache_bin *bin = &tc->bins[s->cls];
    self->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    unsigned flags = tc->flags;
    bool tagged = HWTAG_MTE && (flags & HWT_TCACHE_MTE);
    uint64_t w = __atomic_load_n(&slot->word, __ATOMIC_RELAXED);
    size_t requested = hwt_slot_requested(w);
    bool ok = bin->count != bin->max && hwt_slot_state(w) == HWT_SLOT_LIVE &&
              (!tagged || mte_ptr_tag(ptr) == hwt_slot_tag(w));
    if (tagged)
        mte_tco_on();
    if (ok && (flags & HWT_TCACHE_TAIL) && !hwt_tail_ok(ptr, requested))
        ok = false;
    uint32_t stack = 0;
    if (ok) {
        if (flags & HWT_TCACHE_STACK)
            stack = hwt_alloc_fast_stack(tc, (uintptr_t)__builtin_frame_address(0));
        uint64_t freed = (w & ~((HWT_SLOT_STACK_MASK << HWT_SLOT_FREE_SHIFT) | 3u)) |
                         HWT_SLOT_FREED | (uint64_t)stack << HWT_SLOT_FREE_SHIFT;
        ok = __atomic_compare_exchange_n(&slot->word, &w, freed, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED);
    }
    if (ok) {
        size_t usable = hwt_align_up(requested, HWT_GRANULE);
        if (tagged) {
            if (usable != 0)
                mte_store_tags(mte_with_tag(addr, HWT_TAG_FREE), usable, false);
            hwt_history_record(ptr, requested, stack, true);
        }
        bin->slots[bin->count++] = (struct hwt_slab_ref){addr, slot};
        HWT_TC_COUNT(tc, small_frees, 1);
        HWT_TC_COUNT(tc, live_bytes, -(int64_t)usable);
    }
    if (tagged)
        mte_tco_off();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self->busy = 0;
    return ok;
}

#endif
