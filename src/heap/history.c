/* SPDX-License-Identifier: MIT */
/* The event ring behind history.h. It stores events only; deciding what a report says
 * about them is fault.c's business. */
#include "history.h"

#include "arch/mte.h"
#include "meta.h"

static struct hwt_history_event *ring; /* HWT_HISTORY_ENTRIES, published with release */
static uint32_t next_claim;

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

void hwt_history_record(const void *ptr, size_t size, uint32_t stack, bool is_free)
{
    struct hwt_history_event *r = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
    if (r == NULL)
        return;
    uint32_t claim = __atomic_fetch_add(&next_claim, 1, __ATOMIC_RELAXED);
    struct hwt_history_event *e = &r[claim & (HWT_HISTORY_ENTRIES - 1)];
    __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    e->ptr = (uintptr_t)ptr;
    e->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    e->stack = stack;
    e->is_free = is_free;
    __atomic_store_n(&e->seq, claim + 1, __ATOMIC_RELEASE);
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

bool hwt_history_find(uintptr_t addr, struct hwt_history_event *alloc,
                      struct hwt_history_event *freed)
{
    alloc->seq = 0;
    freed->seq = 0;
    struct hwt_history_event *r = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
    if (r == NULL)
        return false;
    uint32_t end = __atomic_load_n(&next_claim, __ATOMIC_RELAXED);
    uint32_t n = end < HWT_HISTORY_ENTRIES ? end : HWT_HISTORY_ENTRIES;
    /* newest first: the free of the object, then its allocation */
    for (uint32_t i = 1; i <= n; i++) {
        uint32_t claim = end - i;
        const struct hwt_history_event *e = &r[claim & (HWT_HISTORY_ENTRIES - 1)];
        struct hwt_history_event copy;
        if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != claim + 1)
            continue;
        copy = *e;
        if (__atomic_load_n(&e->seq, __ATOMIC_ACQUIRE) != claim + 1 || !matches(&copy, addr))
            continue;
        if (copy.is_free) {
            if (freed->seq == 0 && alloc->seq == 0)
                *freed = copy;
            continue;
        }
        *alloc = copy;
        return true;
    }
    return false;
}
