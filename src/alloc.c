/* SPDX-License-Identifier: MIT */
/* Front end: thread cache first, then the slab or large back ends; pointer validation
 * (stacks are captured by alloc_stack.h). It defines no libc names (interpose.c does). */
#include "alloc.h"
#include "alloc_fast.h"
#include "alloc_stack.h"
#include "busy.h"
#include "leak.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/mte.h"
#include "fault.h"
#include "history.h"
#include "init.h"
#include "large.h"
#include "options.h"
#include "os.h"
#include "slab.h"
#include "slot.h"
#include "stats.h"
#include "tail.h"
#include "thread.h"
#include "trim.h"
#include "unwind.h"

/* The fast path's copies for flags the entry points do not inline (a report's resume, a
 * stack depth or tail setting other than the default), out of line. */

/* Clears the TCO a report left set (HWT_TCACHE_RESUME). */
static inline void resume_checks(struct hwt_thread_state *self)
{
    if (self->flags & HWT_TCACHE_RESUME) {
        mte_tco_clear();
        self->flags &= ~(uint32_t)HWT_TCACHE_RESUME;
    }
}

static __attribute__((noinline)) void *malloc_flags(struct hwt_thread_state *self,
                                                    struct hwt_tcache *tc, size_t size, bool zero,
                                                    struct hwt_caller c)
{
    resume_checks(self);
    return hwt_alloc_fast_malloc_with(self, tc, size, zero, self->flags, c);
}

static __attribute__((noinline)) bool
free_flags(struct hwt_thread_state *self, struct hwt_tcache *tc, void *ptr, struct hwt_caller c)
{
    resume_checks(self);
    return hwt_alloc_fast_free_with(self, tc, ptr, self->flags, c);
}

/* The thread's cache when its flags have no copy inlined into the entry points, it is live
 * and the thread is not busy; else NULL. */
static inline struct hwt_tcache *other_flags_cache(struct hwt_thread_state *self)
{
    struct hwt_tcache *tc = self->tc;
    if ((uintptr_t)tc <= (uintptr_t)HWT_TCACHE_DEAD)
        return NULL;
    if (hwt_alloc_fast_malloc_inline(self->gate) || self->busy)
        return NULL;
    return tc;
}

/* An event of the history ring, through the thread's cursor when it has a cache; none
 * when the ring is not recording (history.h). */
static void record(struct hwt_tcache *tc, const void *ptr, size_t size, uint32_t stack,
                   bool is_free)
{
    if (!hwt_history_recording())
        return;
    if (hwt_tcache_live(tc))
        hwt_history_put(&tc->history, ptr, size, stack, is_free);
    else
        hwt_history_record(ptr, size, stack, is_free);
}

static inline struct hwt_tcache *tcache(void)
{
    struct hwt_tcache *tc = hwt_self.tc;
    if (unlikely(tc == NULL))
        tc = hwt_thread_start();
    return tc;
}

/* Where the object slot ref's word describes goes when the slot is reused (history.h):
 * the thread's cursor, with an entry left, for hwt_slot_prepare_ref; NULL when none is
 * kept, or when it was recorded here (a thread without a cache). */
static struct hwt_history_cursor *slot_history(struct hwt_tcache *tc, struct hwt_slab_ref ref)
{
    if (!hwt_history_keeps_slots())
        return NULL;
    if (hwt_tcache_live(tc))
        return tc->history.next != tc->history.end || hwt_history_claim(&tc->history) ? &tc->history
                                                                                      : NULL;
    hwt_history_record_slot(ref.addr, hwt_slab_slot_load(ref.slot));
    return NULL;
}

static inline __attribute__((always_inline)) void *
alloc_small(struct hwt_tcache *tc, unsigned cls, size_t size, bool zero, uint32_t stack)
{
    struct hwt_slab_ref ref;
    if (likely(hwt_tcache_live(tc))) {
        struct hwt_tcache_bin *bin = &tc->bins[cls];
        if (unlikely(bin->top == hwt_tcache_bin_base(tc, cls)) && !hwt_tcache_refill(tc, bin, cls))
            return NULL;
        ref = *--bin->top;
    } else if (hwt_slab_take(0, cls, &ref, 1) != 1) {
        return NULL;
    }
    HWT_COUNT(small_allocs, 1);
    return hwt_slot_prepare_ref(ref, size, zero, stack, hwt_mte_active,
                                hwt_tail_active ? &hwt_tail_key : NULL,
                                hwt_size_class_plan_for(cls, size), &hwt_size_class_bytes[cls],
                                &hwt_size_classes.dc_block, slot_history(tc, ref));
}

static struct hwt_large_stash *large_stash(struct hwt_tcache *tc)
{
    return hwt_tcache_live(tc) ? &tc->large_stash : NULL;
}

static void *alloc_stacked_once(size_t size, size_t align, bool zero, struct hwt_tcache *tc,
                                uint32_t stack)
{
    if (align <= HWT_GRANULE && size <= HWT_SMALL_MAX)
        return alloc_small(tc, hwt_size_class_of(size), size, zero, stack);
    if (align > HWT_GRANULE) {
        unsigned cls = hwt_size_class_aligned(size, align);
        if (cls < HWT_NUM_CLASSES)
            return alloc_small(tc, cls, size, zero, stack);
    }
    /* page-backed objects have events of their own in the history ring (history.h) */
    void *p = hwt_large_alloc(size, align, zero, stack, large_stash(tc));
    if (hwt_mte_active && p != NULL)
        record(tc, p, size, stack, false);
    return p;
}

/* When the OS refuses memory, every cache gives back what it holds and the request is tried
 * once more: a program that freed everything must be able to allocate again, whatever
 * sizes it used before. */
static void *alloc_stacked(size_t size, size_t align, bool zero, struct hwt_tcache *tc,
                           uint32_t stack)
{
    void *p = alloc_stacked_once(size, align, zero, tc, stack);
    if (unlikely(p == NULL)) {
        hwt_trim_for_memory(tc);
        p = alloc_stacked_once(size, align, zero, tc, stack);
    }
    return p;
}

/* errno after a call: as the program left it on success (the allocator's own system calls
 * may fail on the way, e.g. a thread's first call reading its stack's bounds under qemu,
 * which has no process_vm_readv), ENOMEM on failure, as glibc sets it. */
static inline void *outcome(void *p, int saved)
{
    errno = p != NULL ? saved : ENOMEM;
    return p;
}

/* Every entry runs with Tag Check Override set: the allocator's own loads and stores touch
 * untagged metadata or memory it is retagging, so checking them buys nothing, and under
 * QEMU each checked access costs a page-table walk (see README, Performance). */
static inline __attribute__((always_inline)) void *alloc_general(size_t size, size_t align,
                                                                 bool zero, struct hwt_caller c)
{
    if (unlikely(size > HWT_ALLOC_MAX_REQUEST || align > HWT_ALLOC_MAX_REQUEST)) {
        errno = ENOMEM; /* glibc: NULL and ENOMEM for SIZE_MAX bytes */
        return NULL;
    }
    int saved = errno;
    if (align < HWT_GRANULE)
        align = HWT_GRANULE;
    hwt_init_ensure();
    hwt_busy_enter();
    mte_tco_set();
    struct hwt_tcache *tc = tcache();
    uint32_t stack = hwt_alloc_stack_capture(tc, c);
    void *p = alloc_stacked(size, align, zero, tc, stack);
    mte_tco_clear();
    hwt_busy_leave();
    return outcome(p, saved);
}

/* An object allocated inside hwtag_leak_disable: the leak check leaves it out. */
static __attribute__((noinline)) void *unreported(void *p)
{
    if (p != NULL && hwt_leak_disabled())
        hwt_leak_ignore(p);
    return p;
}

void *hwt_alloc(size_t size, size_t align, bool zero, struct hwt_caller c)
{
    if (unlikely(hwt_self.flags & HWT_TCACHE_NOLEAK))
        return unreported(alloc_general(size, align, zero, c));
    return alloc_general(size, align, zero, c);
}

/* Never inlined: the entry points reach it by a tail call and keep no frame of their own. */
__attribute__((noinline)) void *hwt_alloc_malloc(size_t size, bool zero, struct hwt_caller c)
{
    struct hwt_thread_state *self = &hwt_self;
    if (unlikely(self->flags & HWT_TCACHE_NOLEAK))
        return unreported(alloc_general(size, HWT_GRANULE, zero, c));
    if (size <= HWT_SMALL_MAX) {
        struct hwt_tcache *tc = other_flags_cache(self);
        void *p = tc != NULL ? malloc_flags(self, tc, size, zero, c) : NULL;
        if (p != NULL)
            return p;
    }
    /* inlined with the default alignment, whose checks then fold away */
    return alloc_general(size, HWT_GRANULE, zero, c);
}

size_t hwt_alloc_page_size(void)
{
    int saved = errno;
    hwt_init_ensure();
    errno = saved;
    return hwt_os_page_size;
}

static inline __attribute__((always_inline)) void
free_small(struct hwt_tcache *tc, struct hwt_span *s, uint32_t idx, uint32_t stack)
{
    uintptr_t addr = hwt_slot_release(s, idx, stack);
    if (addr == 0) {
        /* another thread freed it between our check and now */
        hwt_fault_bad_free(HWTAG_BUG_DOUBLE_FREE,
                           (void *)(s->base + (uintptr_t)idx * s->slot_size));
        return;
    }
    unsigned cls = s->cls;
    struct hwt_slab_ref ref = {addr, &s->slots[idx]};
    if (likely(hwt_tcache_live(tc))) {
        struct hwt_tcache_bin *bin = &tc->bins[cls];
        if (unlikely(bin->top == bin->limit))
            hwt_tcache_drain(tc, bin, cls);
        *bin->top++ = ref;
        return;
    }
    hwt_slab_give(cls, &ref, 1);
}

/* Checks ptr before anything is modified. Returns false (after reporting) when it must
 * not be freed. */
static inline __attribute__((always_inline)) bool
check_pointer(const void *ptr, struct hwt_span **s, uint32_t *idx, struct hwt_large **l)
{
    *s = NULL;
    *l = NULL;
    enum hwt_free_check r = hwt_slab_check(ptr, s, idx);
    if (r == HWT_FREE_NOT_OURS) {
        *s = NULL;
        r = hwt_large_check(ptr, l);
        if (r == HWT_FREE_NOT_OURS)
            r = HWT_FREE_INVALID;
    }
    if (r == HWT_FREE_OK)
        return true;
    hwt_fault_bad_free(r == HWT_FREE_DOUBLE ? HWTAG_BUG_DOUBLE_FREE : HWTAG_BUG_INVALID_FREE, ptr);
    return false;
}

/* tail_checked: realloc, which checked the tail (and rewrote a broken one) already. */
static void free_checked(struct hwt_tcache *tc, const void *ptr, struct hwt_span *s, uint32_t idx,
                         struct hwt_large *l, uint32_t stack, bool tail_checked)
{
    /* one read of the object's size serves the tail check, the history ring and the counters */
    size_t size = s != NULL ? hwt_slab_requested(s, idx) : hwt_large_requested(l);
    if (!tail_checked && unlikely(!hwt_tail_intact(ptr, size)))
        hwt_fault_tail(ptr, size, false); /* returns when HWTAG_FAULT lets the program go on */
    if (hwt_mte_active && s == NULL)
        record(tc, ptr, size, stack, true);
    if (s != NULL)
        free_small(tc, s, idx, stack);
    else
        hwt_large_free(l, stack, large_stash(tc));
}

/* Never inlined, as hwt_alloc_malloc. */
__attribute__((noinline)) void hwt_alloc_free(void *ptr, struct hwt_caller c)
{
    struct hwt_thread_state *self = &hwt_self;
    struct hwt_tcache *tc = other_flags_cache(self);
    if (tc != NULL && free_flags(self, tc, ptr, c))
        return;
    struct hwt_span *s;
    struct hwt_large *l;
    uint32_t idx = 0;
    if (ptr == NULL)
        return;
    int saved = errno; /* free leaves errno alone (POSIX.1-2024) */
    hwt_init_ensure();
    hwt_busy_enter();
    mte_tco_set();
    if (check_pointer(ptr, &s, &idx, &l)) {
        tc = tcache();
        free_checked(tc, ptr, s, idx, l, hwt_alloc_stack_capture(tc, c), false);
    }
    mte_tco_clear();
    hwt_busy_leave();
    errno = saved;
}

static void *realloc_checked(void *ptr, size_t size, bool *bad, struct hwt_caller c);

/* Where realloc moves an object of old_size bytes that must grow to size: a small one into
 * the class of size + size / HWT_REALLOC_ROOM_DIV, which leaves it room to grow in place
 * (hwt_slot_resize) the next times, as glibc grows a chunk into its free neighbour. The
 * object is size bytes all the same: malloc_usable_size, the tail and the tags end there.
 * perl's strings grow by a few bytes at a time: 12.4k of its 15.0k reallocs moved, 8.9k
 * with this room (glibc's malloc: 10.1k); a quarter, where a half saved 1.5k more moves at
 * twice the slack. */
#define HWT_REALLOC_ROOM_DIV 4u
static void *realloc_alloc(struct hwt_tcache *tc, size_t size, size_t old_size, uint32_t stack)
{
    if (size > old_size && size <= HWT_SMALL_MAX) {
        size_t room = size + size / HWT_REALLOC_ROOM_DIV;
        void *p = alloc_small(tc, hwt_size_class_of(room < HWT_SMALL_MAX ? room : HWT_SMALL_MAX),
                              size, false, stack);
        if (p != NULL)
            return p;
    }
    return alloc_stacked(size, HWT_GRANULE, false, tc, stack);
}

void *hwt_alloc_realloc(void *ptr, size_t size, struct hwt_caller c)
{
    if (unlikely(size > HWT_ALLOC_MAX_REQUEST)) {
        errno = ENOMEM; /* the old block is left untouched */
        return NULL;
    }
    bool bad;
    int saved = errno;
    hwt_init_ensure();
    hwt_busy_enter();
    mte_tco_set();
    void *p = realloc_checked(ptr, size, &bad, c);
    mte_tco_clear();
    hwt_busy_leave();
    outcome(p, saved);
    if (unlikely(p == NULL && bad))
        errno = EINVAL; /* a freed or foreign pointer, reported */
    if (unlikely(hwt_self.flags & HWT_TCACHE_NOLEAK))
        return unreported(p);
    return p;
}

static void *realloc_checked(void *ptr, size_t size, bool *bad, struct hwt_caller c)
{
    struct hwt_span *s;
    struct hwt_large *l;
    uint32_t idx = 0;
    *bad = false;
    if (!check_pointer(ptr, &s, &idx, &l)) {
        *bad = true;
        return NULL;
    }
    /* malloc_usable_size is the requested size: every byte of it is kept */
    size_t old_requested = s != NULL ? hwt_slab_requested(s, idx) : hwt_large_requested(l);
    if (unlikely(!hwt_tail_intact(ptr, old_requested))) {
        hwt_fault_tail(ptr, old_requested, true);
        hwt_tail_write(ptr, old_requested, true); /* reported once, not again at the free */
    }
    if ((s != NULL && hwt_slot_resize(s, idx, size)) || (l != NULL && hwt_large_resize(l, size))) {
        hwt_tail_write(ptr, size, true);
        return ptr;
    }
    struct hwt_tcache *tc = tcache();
    uint32_t stack = hwt_alloc_stack_capture(tc, c);
    void *fresh = realloc_alloc(tc, size, old_requested, stack);
    if (fresh == NULL)
        return NULL;
    memcpy(fresh, ptr, old_requested < size ? old_requested : size);
    free_checked(tc, ptr, s, idx, l, stack, true);
    return fresh;
}

size_t hwt_alloc_usable(const void *ptr)
{
    struct hwt_span *s;
    struct hwt_large *l = NULL;
    uint32_t idx = 0;
    if (ptr == NULL)
        return 0;
    hwt_init_ensure();
    /* The requested size, as HWASan and Scudo report it: a correct program then never
     * writes into the checked tail of the last granule. */
    enum hwt_free_check r = hwt_slab_check(ptr, &s, &idx);
    if (r == HWT_FREE_OK)
        return hwt_slab_requested(s, idx);
    if (r == HWT_FREE_NOT_OURS && hwt_large_check(ptr, &l) == HWT_FREE_OK)
        return hwt_large_requested(l);
    return 0;
}
