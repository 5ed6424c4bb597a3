/* SPDX-License-Identifier: MIT */
/* The event ring behind history.h. It stores events only; deciding what a report says
 * about them is fault.c's business. */
#include "history.h"

#include "arch/mte.h"
#include "lock.h"
#include "meta.h"
#include "slab_slot.h"

static struct hwt_history_event *ring; /* HWT_HISTORY_ENTRIES, published with release */
static uint32_t next_claim;            /* entries claimed so far, in whole batches */
static uint64_t shared_clock;          /* hwt_history_clock where there is no timer */
static struct hwt_lock shared_lock = HWT_LOCK_INIT;
static struct hwt_history_cursor shared_cursor; /* shared_lock: callers without a cache */

bool hwt_history_init(void)
{
    if (__atomic_load_n(&ring, __ATOMIC_ACQUIRE) != NULL)
        return true;
    struct hwt_history_event *r = hwt_meta_alloc(HWT_HISTORY_ENTRIES * sizeof(*r), 64);
    if (r == NULL)
        return false;
    __atomic_store_n(&ring, r, __ATOMIC_RELEASE);
    return true;
}

uint64_t hwt_history_clock_slow(void)
{
    return __atomic_add_fetch(&shared_clock, 1, __ATOMIC_RELAXED);
}

bool hwt_history_claim(struct hwt_history_cursor *c)
{
    _Static_assert(HWT_HISTORY_ENTRIES % HWT_HISTORY_BATCH == 0, "batches tile the ring");
    struct hwt_history_event *r = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
    if (r == NULL)
        return false;
    uint32_t first = __atomic_fetch_add(&next_claim, HWT_HISTORY_BATCH, __ATOMIC_RELAXED);
    c->next = &r[first & (HWT_HISTORY_ENTRIES - 1)];
    c->end = c->next + HWT_HISTORY_BATCH;
    return true;
}

void hwt_history_record(const void *ptr, size_t size, uint32_t stack, bool is_free)
{
    /* rare (a thread without a cache, page-backed objects); a try-lock, as a signal
     * handler may interrupt the holder: the event is dropped then */
    if (!hwt_trylock(&shared_lock))
        return;
    hwt_history_put(&shared_cursor, ptr, size, stack, is_free);
    hwt_unlock(&shared_lock);
}

void hwt_history_record_slot(uintptr_t addr, uint64_t w)
{
    if (hwt_slab_slot_state(w) != HWT_SLOT_FREED)
        return;
    if (!hwt_trylock(&shared_lock)) /* as hwt_history_record */
        return;
    hwt_history_put_slot(&shared_cursor, addr, w);
    hwt_unlock(&shared_lock);
}

static bool matches(const struct hwt_history_event *e, uintptr_t addr)
{
    if (mte_ptr_tag((void *)e->ptr) != mte_ptr_tag((void *)addr))
        return false;
    uintptr_t start = mte_untag((void *)e->ptr);
    uintptr_t a = mte_untag((void *)addr);
    uintptr_t end = start + (e->size == 0 ? 1 : e->size);
    return a >= start && a < hwt_align_up(end, HWT_GRANULE);
}

/* *best becomes e when e is no older. */
static void keep_newer(struct hwt_history_event *best, const struct hwt_history_event *e)
{
    if (hwt_history_time(e) >= hwt_history_time(best))
        *best = *e;
}

bool hwt_history_find(uintptr_t addr, struct hwt_history_event *alloc,
                      struct hwt_history_event *freed)
{
    alloc->seq = 0;
    freed->seq = 0;
    struct hwt_history_event *r = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
    if (r == NULL)
        return false;
    /* the newest allocation and the newest free, by time, wherever they sit */
    for (uint32_t i = 0; i < HWT_HISTORY_ENTRIES; i++) {
        const struct hwt_history_event *e = &r[i];
        uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
        if (seq == 0)
            continue;
        struct hwt_history_event copy = *e;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) != seq || copy.seq != seq ||
            (seq & HWT_HISTORY_CHECK) != hwt_history_check(copy.ptr))
            continue; /* torn: being written */
        if (!(seq & HWT_HISTORY_EVENT)) {
            /* a freed object's slot word: its allocation and its free, at this time */
            uint64_t w = copy.word;
            if (hwt_slab_slot_state(w) != HWT_SLOT_FREED)
                continue;
            struct hwt_history_event a = {
                .seq = (seq | HWT_HISTORY_EVENT) & ~(uint64_t)HWT_HISTORY_FREE,
                .ptr = (uintptr_t)mte_with_tag(copy.ptr, hwt_slab_slot_tag(w)),
                .size = (uint32_t)hwt_slab_slot_requested(w),
                .stack = hwt_slab_slot_alloc_stack(w),
            };
            if (!matches(&a, addr))
                continue;
            struct hwt_history_event f = a;
            f.seq |= HWT_HISTORY_FREE;
            f.stack = hwt_slab_slot_free_stack(w);
            keep_newer(alloc, &a);
            keep_newer(freed, &f);
            continue;
        }
        if (!matches(&copy, addr))
            continue;
        keep_newer(hwt_history_is_free(&copy) ? freed : alloc, &copy);
    }
    if (hwt_history_time(freed) < hwt_history_time(alloc))
        freed->seq = 0; /* that free was of an older object: this one is live */
    return alloc->seq != 0;
}
