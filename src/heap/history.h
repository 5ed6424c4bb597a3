/* SPDX-License-Identifier: MIT */
/* A ring of recent allocation and free events (the kernel's KASAN stack ring), so a report
 * can name the object a stale pointer belonged to after its slot was reused. A small
 * object needs no event while its slot word describes it (its tag, size and both stacks,
 * slab_slot.h): one entry holding that word is written when the word is about to be
 * forgotten, as the slot is reused or its span's metadata given up; page-backed objects
 * have an event at allocation and at free. Lock-free:
 * a thread claims entries a batch at a time with one atomic add and fills them with plain
 * stores; each entry carries its own time, so readers order events by time and not by
 * place, and never block. Two events of one object at the same clock tick are taken as
 * alloc-then-free; a tick is 1 ns on Armv8.6 timers and 16 ns on older ones and under QEMU,
 * less than any malloc and free of one object take. */
#ifndef HWT_HISTORY_H
#define HWT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/clock.h"
#include "arch/mte.h"
#include "check.h"
#include "options.h"

#define HWT_HISTORY_ENTRIES 4096u /* a power of two; 96 KiB */
#define HWT_HISTORY_BATCH 64u     /* entries a thread claims at once; divides the ring */

struct hwt_history_event {
    /* time << HWT_HISTORY_TIME_SHIFT | event << 8 | is_free << 7 | check, written last; 0
     * while empty. Event clear: a slot entry (the flag is the rarer kind's, so the fast
     * path's entry needs no instruction for it). First: the release store takes no offset,
     * so here it needs no address of its own. */
    uint64_t seq;
    uintptr_t ptr; /* tagged pointer of the object; a slot entry's: its untagged address */
    union {
        struct {
            uint32_t size;  /* requested size (truncated to 32 bits) */
            uint32_t stack; /* depot id of the allocation or free (thread id is in the depot) */
        };
        uint64_t word; /* a slot entry's: the freed object's slot word */
    };
};

#define HWT_HISTORY_EVENT 0x100u
#define HWT_HISTORY_FREE 0x80u
#define HWT_HISTORY_CHECK 0x7fu
#define HWT_HISTORY_TIME_SHIFT 9u

static inline bool hwt_history_is_free(const struct hwt_history_event *e)
{
    return e->seq & HWT_HISTORY_FREE;
}

/* The time of an event, its clock ticks. */
static inline uint64_t hwt_history_time(const struct hwt_history_event *e)
{
    return e->seq >> HWT_HISTORY_TIME_SHIFT;
}

/* 7 bits of ptr in seq: a reader that copied an entry while its owner was rewriting it
 * finds the pointer and the check disagree (odds of missing it 1 in 128, for a report
 * racing the very event it looks for). Address bits 4-10, the tag folded onto bits 4-7:
 * a slot's next event usually has another tag. In the low bits, two instructions (one
 * for an untagged address, a slot entry's, whose word holds the tag); the time keeps 55
 * bits: years at 1 GHz. */
static inline uint64_t hwt_history_check(uintptr_t ptr)
{
    return ((ptr ^ (ptr >> 52)) >> 4) & HWT_HISTORY_CHECK;
}

/* Whether allocations and frees go to the ring: only with stacks (HWTAG_STACKTRACE=on), as
 * the kernel keeps its stack ring only with kasan.stacktrace on (off, it saves no
 * allocation or free information at all). The fast paths decide the same from their
 * thread's flags (HWT_TCACHE_STACK), the options as the cache took them. */
static inline bool hwt_history_recording(void)
{
    return hwt_opts.stacktrace == HWT_ON;
}

/* Whether a freed slot's word goes to the ring when the slot forgets it (reused, or its
 * span's metadata given up): tagged, with stacks. */
static inline bool hwt_history_keeps_slots(void)
{
    return hwt_mte_active && hwt_history_recording();
}

/* A thread's claimed entries [next, end). Zeroed: nothing claimed. */
struct hwt_history_cursor {
    struct hwt_history_event *next, *end;
};

/* Claims the next batch for c; false when there is no ring. */
bool hwt_history_claim(struct hwt_history_cursor *c);

/* The time stamp of events: the generic timer's virtual count on aarch64 (the same clock
 * on every core, one instruction), a shared counter elsewhere. */
uint64_t hwt_history_clock_slow(void);
static inline uint64_t hwt_history_clock(void)
{
    return HWT_HAVE_ARCH_CLOCK ? hwt_arch_clock() : hwt_history_clock_slow();
}

/* Records an event through the thread's cursor, which has an entry left. Inline: every
 * tagged malloc and free. */
static inline __attribute__((always_inline)) void
hwt_history_put_claimed(struct hwt_history_cursor *c, const void *ptr, size_t size, uint32_t stack,
                        bool is_free)
{
    struct hwt_history_event *e = c->next;
    c->next = e + 1;
    e->ptr = (uintptr_t)ptr;
    e->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    e->stack = stack;
    /* the release orders the fields before seq; the check catches a reader that saw a
     * new pointer under an old seq */
    __atomic_store_n(&e->seq,
                     hwt_history_clock() << HWT_HISTORY_TIME_SHIFT | HWT_HISTORY_EVENT |
                         (is_free ? HWT_HISTORY_FREE : 0u) | hwt_history_check((uintptr_t)ptr),
                     __ATOMIC_RELEASE);
}

/* Records through the thread's cursor, which has an entry left, the object a slot word w
 * of the slot at the untagged address addr describes, as the slot is about to forget it:
 * its allocation and free both, at this time (hwt_history_find). Inline: every tagged
 * malloc that reuses a slot. */
static inline __attribute__((always_inline)) void
hwt_history_put_slot_claimed(struct hwt_history_cursor *c, uintptr_t addr, uint64_t w)
{
    struct hwt_history_event *e = c->next;
    c->next = e + 1;
    e->ptr = addr;
    e->word = w;
    /* hwt_history_check of an untagged address (below bit 52): one bit-field move */
    __atomic_store_n(
        &e->seq, hwt_history_clock() << HWT_HISTORY_TIME_SHIFT | ((addr >> 4) & HWT_HISTORY_CHECK),
        __ATOMIC_RELEASE);
}

/* Records an event through the thread's cursor, claiming a batch when it has none. */
static inline void hwt_history_put(struct hwt_history_cursor *c, const void *ptr, size_t size,
                                   uint32_t stack, bool is_free)
{
    if (unlikely(c->next == c->end) && !hwt_history_claim(c))
        return;
    hwt_history_put_claimed(c, ptr, size, stack, is_free);
}

/* hwt_history_put_slot_claimed, claiming a batch when the cursor has none. */
static inline void hwt_history_put_slot(struct hwt_history_cursor *c, uintptr_t addr, uint64_t w)
{
    if (unlikely(c->next == c->end) && !hwt_history_claim(c))
        return;
    hwt_history_put_slot_claimed(c, addr, w);
}

/* Records an event for a caller without a cursor of its own; no-op until
 * hwt_history_init() has run. */
void hwt_history_record(const void *ptr, size_t size, uint32_t stack, bool is_free);
/* The same for a slot word (hwt_history_put_slot_claimed); nothing for a word that
 * describes no freed object. */
void hwt_history_record_slot(uintptr_t addr, uint64_t w);
bool hwt_history_init(void);

/* Finds the most recent allocation event of an object that contained the tagged address
 * addr (same tag, addr inside [ptr, ptr+size)) and the most recent free event after it;
 * a slot entry gives both, as two events (tagged pointer, size, stack) of its time.
 * Either may be missing (its seq 0). Returns true when an allocation was found.
 * signal-safe */
bool hwt_history_find(uintptr_t addr, struct hwt_history_event *alloc,
                      struct hwt_history_event *freed);

#endif
