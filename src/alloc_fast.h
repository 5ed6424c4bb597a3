/* SPDX-License-Identifier: MIT */
/* The front end's fast paths of malloc and free: a small object through the thread cache,
 * inline in interpose.c's entry points, so no call or frame stands between the program and
 * the cache and the stack they capture starts at the program's call. Whatever they do not
 * handle (a thread's first call, an empty or full bin, a large or aligned request, a bad
 * pointer, a report) they leave untouched and return NULL / false, and the entry point
 * tail-calls alloc.c (alloc.h), which checks everything again. */
#ifndef HWT_ALLOC_FAST_H
#define HWT_ALLOC_FAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/caller.h"
#include "arch/cas.h"
#include "arch/mte.h"
#include "arch/mte_range.h"
#include "arch/opaque.h"
#include "history.h"
#include "options.h"
#include "size_class.h"
#include "slab.h"
#include "slot.h"
#include "tail.h"
#include "tcache.h"
#include "unwind.h"

/* Frames kept of an allocation or free stack for flags: HWTAG_STACK_DEPTH, a constant in
 * the copies of the default depth (the only ones inlined into the entry points). */
static inline __attribute__((always_inline)) unsigned hwt_alloc_stack_depth(unsigned flags)
{
    return (flags & HWT_TCACHE_DEPTH) ? hwt_opts.stack_depth : HWT_STACK_DEFAULT_DEPTH;
}

/* Depot id of the stack from c: a walk of the thread's own stack that only hashes, then
 * the thread's stack cache. False (a miss) when the general path must capture it. */
static inline __attribute__((always_inline)) bool
hwt_alloc_fast_stack(const struct hwt_tcache *tc, struct hwt_caller c, unsigned depth, uint64_t *id)
{
    uint64_t key;
    hwt_unwind_caller_key(c, tc->stack_lo, tc->stack_last, depth, tc->stack_key_constants, &key);
    return hwt_tcache_stack_find(tc, key, id);
}

/* hwt_alloc_fast_stack in a frameless entry point (HWT_ALLOC_CALLER_REGS), for its caller:
 * the walk starts from the registers themselves (hwt_unwind_entry_key). */
static inline __attribute__((always_inline)) bool
hwt_alloc_fast_stack_regs(const struct hwt_tcache *tc, unsigned depth, uint64_t *id)
{
    uint64_t key;
    hwt_unwind_entry_key(tc->stack_lo, tc->stack_last, depth, tc->stack_key_constants, &key);
    return hwt_tcache_stack_find(tc, key, id);
}

/* hwt_alloc_fast_stack's miss, noted for the general path (hwt_alloc_stack_capture), which
 * runs next for the same call: c, the caller the walk started at. Only on the miss branch:
 * a hit pays nothing for it. */
static inline __attribute__((always_inline)) void hwt_alloc_fast_stack_missed(struct hwt_tcache *tc,
                                                                              struct hwt_caller c)
{
    tc->stack_missed_pc = c.pc;
    tc->stack_missed_fp = c.fp;
}

/* Not a cache flag: set by the copies inlined into the frameless entry points (malloc and
 * free where arch/caller.h allows), whose caller is then read from x30 and x29 where the
 * stack walk needs it rather than passed in: read at the entry, the two moves were paid by
 * every path, also those without stacks. */
#define HWT_ALLOC_CALLER_REGS (1u << 30)

/* The caller the stack walk of a fast path of flags starts at: c, or the registers. */
static inline __attribute__((always_inline)) struct hwt_caller
hwt_alloc_fast_caller(unsigned flags, struct hwt_caller c)
{
#if HWT_ARCH_HAVE_FRAMELESS
    if (flags & HWT_ALLOC_CALLER_REGS)
        hwt_arch_entry_caller_here(&c.pc, &c.fp);
#else
    (void)flags;
#endif
    return c;
}

/* hwt_alloc_fast_stack from the caller of a fast path of how (its flags, with
 * HWT_ALLOC_CALLER_REGS when inlined into a frameless entry point); a miss is noted for the
 * general path. The caller is formed again there, not kept across the walk: from the
 * registers, which a leaf entry point leaves alone, or c, which the general path takes. */
static inline __attribute__((always_inline)) bool
hwt_alloc_fast_stack_of(struct hwt_tcache *tc, unsigned how, struct hwt_caller c, uint64_t *id)
{
    unsigned depth = hwt_alloc_stack_depth(how & ~HWT_ALLOC_CALLER_REGS);
    if ((how & HWT_ALLOC_CALLER_REGS) ? likely(hwt_alloc_fast_stack_regs(tc, depth, id))
                                      : likely(hwt_alloc_fast_stack(tc, c, depth, id)))
        return true;
    hwt_alloc_fast_stack_missed(tc, hwt_alloc_fast_caller(how, c));
    return false;
}

/* busy = 0 at the end of a fast path of flags. Where flags cannot have changed since the
 * entry (no tagging: no tag fault sets HWT_TCACHE_RESUME; flags 0: no object memory is
 * touched), one store of the whole gate: the next call's 64-bit load of the gate then
 * forwards from it, where after a 32-bit store of busy it stalls until the store drains. */
static inline __attribute__((always_inline)) void
hwt_alloc_fast_unbusy(struct hwt_thread_state *self, unsigned flags)
{
    _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "flags are the gate's low half");
    if (!HWTAG_MTE || flags == 0)
        self->gate = flags;
    else
        self->busy = 0;
}

/* The fast paths make no call: each rare case (an empty or full bin, a stack not in the
 * thread's cache, a history batch used up, a bad pointer) leaves before anything has
 * changed, and the general path does it. Their only accesses to object memory, the tail
 * pattern's, carry the object's own tag, so they need no Tag Check Override; with stacks
 * they set it all the same (hwt_alloc_fast_tco). */

/* Whether a fast path of flags records in the history ring: tagged ones, with stacks
 * (hwt_history_recording, from the thread's flags); malloc only, the object a reused
 * slot's word describes. */
static inline bool hwt_alloc_fast_history(unsigned flags)
{
    return HWTAG_MTE && (flags & HWT_TCACHE_MTE) && (flags & HWT_TCACHE_STACK);
}

/* Whether a fast path of flags runs with Tag Check Override set: tagged ones with stacks.
 * Under QEMU each checked load or store of the program is a helper call, and the default's
 * fast path makes dozens (the walk's frame loads, the stack cache's, the history ring's);
 * two TCO writes make them plain, which outweighs the writes under QEMU; on hardware the
 * writes are pure cost. Without stacks the path has few accesses, and its instruction
 * count is the tight one: it runs checked. */
static inline bool hwt_alloc_fast_tco(unsigned flags)
{
    return hwt_alloc_fast_history(flags);
}

/* The bin of span s's class in tc (free): one add of the span's bin_offset, formed in a
 * register the compiler cannot see into: the bin's two words are then one load pair at
 * that address. */
static inline __attribute__((always_inline)) struct hwt_tcache_bin *
hwt_alloc_fast_bin(struct hwt_tcache *tc, const struct hwt_span *s)
{
    struct hwt_tcache_bin *b = (struct hwt_tcache_bin *)((char *)tc + s->bin_offset);
    hwt_arch_opaque(b);
    return b;
}

/* The bin of the class in lut's low byte in tc (malloc): one add of the byte, scaled, and
 * the bins' offset in the load (tcache.h checks a bin's 16 bytes). */
static inline __attribute__((always_inline)) struct hwt_tcache_bin *
hwt_alloc_fast_bin_of(struct hwt_tcache *tc, uint32_t lut)
{
    return (struct hwt_tcache_bin *)((char *)hwt_arch_index16_low8(tc, lut) +
                                     __builtin_offsetof(struct hwt_tcache, bins));
}

/* The malloc fast path for flags (HWT_TCACHE_*). Inlined with flags 0 (the allocator alone:
 * no tags, stacks or tails) into the entry points and with each cache's flags as constants
 * into alloc.c. c: the entry point's caller, where stacks start. */
static inline __attribute__((always_inline)) void *
hwt_alloc_fast_malloc_with(struct hwt_thread_state *self, struct hwt_tcache *tc, size_t size,
                           bool zero, unsigned flags, struct hwt_caller c)
{
    unsigned how = flags;
    flags &= ~HWT_ALLOC_CALLER_REGS;
    /* busy before the bin is read: a signal handler's malloc must not pop the same slot.
     * Any nonzero value will do: with tagging, flags | 1 is the flags, the gate value this
     * path was chosen by and still in a register, where 1 would cost a move; without, the
     * lut's index before its shift, size + 15, which is 15 to HWT_SMALL_MAX + 15 here */
    uintptr_t size15 = size + 15;
    if (flags == 0)
        hwt_arch_opaque(size15); /* one add for both uses (GCC made a 32-bit one for busy) */
    self->busy = flags ? flags | 1 : (uint32_t)size15;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (hwt_alloc_fast_tco(flags))
        mte_tco_set_on();
    const struct hwt_size_class_tables *classes = tc->classes;
    uint32_t lut = classes->lut[size15 >> HWT_GRANULE_SHIFT];
    unsigned cls = HWT_LUT_CLASS(lut);
    struct hwt_tcache_bin *bin = hwt_alloc_fast_bin_of(tc, lut);
    /* the entry below top; below an empty bin's base, the all-zero one (tcache.h) */
    struct hwt_slab_ref *top = bin->top;
    struct hwt_slab_ref ref;
    hwt_tcache_pop(&top, &ref);
    bool tagged = HWTAG_MTE && (flags & HWT_TCACHE_MTE);
    bool history = hwt_alloc_fast_history(flags);
    uint64_t stack = 0;
    void *p = NULL;
    if (unlikely(ref.addr == 0) || (history && unlikely(tc->history.next == tc->history.end)) ||
        ((flags & HWT_TCACHE_STACK) && !hwt_alloc_fast_stack_of(tc, how, c, &stack)))
        goto out;
    bin->top = top;
    p = hwt_slot_prepare_ref(ref, size, zero, stack, tagged,
                             (flags & HWT_TCACHE_TAIL) ? &tc->tail_key : NULL, lut,
                             &classes->bytes[cls], &tc->dc_block, history ? &tc->history : NULL);
    /* a slot is never at address 0, whatever its tag: the entry point's test of p then
     * folds away here */
    if (p == NULL)
        __builtin_unreachable();
    HWT_COUNT_IN(&tc->counters, small_allocs, 1);
out:
    if (hwt_alloc_fast_tco(flags))
        mte_tco_clear_on();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hwt_alloc_fast_unbusy(self, flags);
    return p;
}

#define HWT_ALLOC_TAIL_AFTER_SWAP (!HWTAG_MTE) /* see hwt_alloc_fast_free_with */
/* Natively, free prefetches the line of its slot's last byte once it has the span, before
 * it reads the slot word: the tail's address follows from the word, so the tail's miss
 * otherwise began only after the word's and after the swap, which orders the load behind
 * it. Objects freed long after their malloc (larson: 10000 live objects of 8..1000 B)
 * missed on both, and the tail's load took half of free's time. The slot's last byte
 * shares the tail's line unless the request is well short of its class. Tagged builds:
 * one instruction more on the counted path, where the hardware reads the line anyway. */
#define HWT_ALLOC_PREFETCH_TAIL (!HWTAG_MTE)
/* Natively, free walks the stack before it looks the object up: the walk needs most
 * registers, and then no value of the object's is live across it (x86_64 otherwise spilled
 * and saved registers for it). Tagged builds look the object up first: aarch64 has the
 * registers, and the other order costs instructions there. */
#define HWT_ALLOC_FREE_STACK_FIRST (!HWTAG_MTE)

/* Whether free may go on as far as the tail of ptr's object says: intact, or none kept. */
static inline __attribute__((always_inline)) bool
hwt_alloc_fast_tail_ok(const struct hwt_tcache *tc, unsigned flags, const void *ptr,
                       size_t requested)
{
    return !(flags & HWT_TCACHE_TAIL) || hwt_tail_ok(&tc->tail_key, ptr, requested);
}

/* The free fast path (see hwt_alloc_fast_malloc_with); false, with nothing changed, when
 * the general path must do it. */
static inline __attribute__((always_inline)) bool
hwt_alloc_fast_free_with(struct hwt_thread_state *self, struct hwt_tcache *tc, void *ptr,
                         unsigned flags, struct hwt_caller c)
{
    unsigned how = flags;
    flags &= ~HWT_ALLOC_CALLER_REGS;
    self->busy = flags | 1; /* as malloc's */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (hwt_alloc_fast_tco(flags))
        mte_tco_set_on();
    bool tagged = HWTAG_MTE && (flags & HWT_TCACHE_MTE);
    bool ok = false;
    uint64_t stack = 0;
    uint64_t w = 0;
    size_t requested = 0;
    struct hwt_slot *slot = NULL;
    struct hwt_tcache_bin *bin = NULL;
    /* untagged, the pointer as it is: one with a top byte then matches no slot's address,
     * and the general path takes it */
    uintptr_t addr = tagged ? mte_heap_addr(ptr) : (uintptr_t)ptr;
    struct hwt_span *s;
    uint32_t idx;
    if (HWT_ALLOC_FREE_STACK_FIRST && (flags & HWT_TCACHE_STACK) &&
        !hwt_alloc_fast_stack_of(tc, how, c, &stack))
        goto out;
    s = hwt_slab_span_in(tc->regmap, addr);
    if (unlikely(s == NULL))
        goto out;
    /* both words the span's first two, read together (one load pair) */
    uintptr_t base = s->base;
    struct hwt_slot *slots = s->slots;
    if (unlikely(!hwt_slab_index_exact(s, base, addr, &idx)))
        goto out;
    /* the tail's line, fetched while the slot word is read (HWT_ALLOC_PREFETCH_TAIL) */
    if (HWT_ALLOC_PREFETCH_TAIL && (flags & HWT_TCACHE_TAIL))
        __builtin_prefetch((const void *)(addr + s->slot_size - 1));
    slot = &slots[idx];
    /* its top and its limit then in one load pair (indexed, two loads) */
    bin = hwt_alloc_fast_bin(tc, s);
    w = __atomic_load_n(&slot->word, __ATOMIC_RELAXED);
    requested = hwt_slab_slot_requested(w);
    /* live, and tagged: the pointer's tag is the word's. One compare for both, of the
     * word's bits 0-7 (tag, two zero bits, state) with the pointer's tag */
    uint64_t live = (uint64_t)HWT_SLOT_LIVE << HWT_SLOT_STATE_SHIFT;
    struct hwt_slab_ref *top = bin->top;
    /* untagged, one bit test: a slot's own word is never HWT_SLOT_EDGE (the guard words
     * lie outside [0, nslots)), so HWT_SLOT_LIVE is the one state with its low bit set */
    _Static_assert(HWT_SLOT_LIVE == 1 && HWT_SLOT_FREED == 2 && HWT_SLOT_UNUSED == 0,
                   "the state's low bit tells live from freed and unused");
    ok = top != bin->limit &&
         (tagged ? ((w ^ mte_ptr_tag(ptr)) & 0xff) == live : (w & live) != 0) &&
         (HWT_ALLOC_TAIL_AFTER_SWAP || hwt_alloc_fast_tail_ok(tc, flags, ptr, requested)) &&
         (HWT_ALLOC_FREE_STACK_FIRST || !(flags & HWT_TCACHE_STACK) ||
          hwt_alloc_fast_stack_of(tc, how, c, &stack));
    if (ok) {
        /* a live word's free stack is 0 (slab.h): flip the state, add the stack */
        uint64_t freed = (w ^ (uint64_t)(HWT_SLOT_LIVE ^ HWT_SLOT_FREED) << HWT_SLOT_STATE_SHIFT) |
                         (uint64_t)stack << HWT_SLOT_FREE_SHIFT;
        /* one CASAL where the CPU has it, as every CPU with MTE does (HWT_TCACHE_LLSC) */
        ok = !(flags & HWT_TCACHE_LLSC)
                 ? hwt_arch_cas_lse(&slot->word, w, freed)
                 : __atomic_compare_exchange_n(&slot->word, &w, freed, false, __ATOMIC_ACQ_REL,
                                               __ATOMIC_RELAXED);
    }
    /* Natively, the tail after the swap: x86_64's swap is a full barrier, which waited for
     * the tail's load, often a miss (the object's last granule, untouched since its
     * malloc); after it, the load overlaps what follows. A broken tail
     * puts the word back as it was, before any other change, and the general path reports
     * it; only a second free of the pointer racing this one could see it freed in between,
     * and that is a double free. Tagged builds check first: CASAL orders the load either
     * way, and the way back would only add instructions. */
    if (HWT_ALLOC_TAIL_AFTER_SWAP && ok &&
        unlikely(!hwt_alloc_fast_tail_ok(tc, flags, ptr, requested))) {
        __atomic_store_n(&slot->word, w, __ATOMIC_RELAXED);
        ok = false;
    }
    if (ok) {
        size_t usable = hwt_align_up(requested, HWT_GRANULE);
        /* the slot's bytes past usable have HWT_TAG_FREE already (slot.h); the history
         * ring learns of the object from its word when the slot is reused (history.h) */
        if (tagged && usable != 0)
            hwt_slot_tag_freed(addr, usable, s, &tc->dc_block);
        /* the bin as read before the swap (only this thread changes it, and not while
         * busy): no reload, and one store pair at top */
        hwt_tcache_push(&top, (struct hwt_slab_ref){addr, slot});
        bin->top = top;
    }
out:
    if (hwt_alloc_fast_tco(flags))
        mte_tco_clear_on();
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hwt_alloc_fast_unbusy(self, flags);
    return ok;
}

/* The flag sets the entry points inline, with stacks and without (tagged where tagging is
 * compiled in); any other flags take alloc.c's out-of-line copies. */
#define HWT_ALLOC_FLAGS_NO_STACK ((HWTAG_MTE ? HWT_TCACHE_MTE : 0) | HWT_TCACHE_TAIL)
#define HWT_ALLOC_FLAGS_DEFAULT (HWT_ALLOC_FLAGS_NO_STACK | HWT_TCACHE_STACK)
/* The inlined copy the entry points test first after gate 0, one compare and branch ahead
 * of the other: the default, which most programs run. The copy without stacks pays the
 * second compare and branch, two instructions a call. */
#define HWT_ALLOC_FLAGS_FIRST HWT_ALLOC_FLAGS_DEFAULT
#define HWT_ALLOC_FLAGS_SECOND HWT_ALLOC_FLAGS_NO_STACK
/* The allocator alone on a CPU without LSE (HWT_TCACHE_LLSC) has an inlined copy too, tested
 * last, so no other gate pays for it: its swap is the compiler's LL/SC loop. Through
 * alloc.c's copies instead, its pair cost 279 instructions against 100. Only where the flag
 * can be set (tagged builds: aarch64). */
#define HWT_ALLOC_LLSC_INLINE HWTAG_MTE
/* hwt_thread_state.gate of a thread not busy with these flags (busy is the high word) */
#define HWT_ALLOC_GATE(flags) ((uint64_t)(flags))

/* The copies inlined into malloc's and calloc's entry points: the allocator alone (gate 0),
 * and the default flags or those without stacks. */
static inline bool hwt_alloc_fast_malloc_inline(uint64_t gate)
{
    return gate == 0 || gate == HWT_ALLOC_GATE(HWT_ALLOC_FLAGS_DEFAULT) ||
           gate == HWT_ALLOC_GATE(HWT_ALLOC_FLAGS_NO_STACK) ||
           (HWT_ALLOC_LLSC_INLINE && gate == HWT_ALLOC_GATE(HWT_TCACHE_LLSC));
}

/* malloc/calloc of size bytes (16-byte alignment) from the cache through an inlined copy;
 * NULL when another copy or the general path must do it (hwt_alloc_malloc, alloc.h).
 * Inline in the entry point, which makes no call on this way: it sets up no frame and
 * saves no register. c: the entry point's caller, where stacks start; regs:
 * HWT_ALLOC_CALLER_REGS in a frameless entry point, which passes no c, else 0. */
static inline __attribute__((always_inline)) void *
hwt_alloc_fast_malloc(size_t size, bool zero, struct hwt_caller c, unsigned regs)
{
    struct hwt_thread_state *self = &hwt_self;
    hwt_arch_tls_kept(self);
    if (unlikely(size > HWT_SMALL_MAX))
        return NULL;
    /* a gate that lets a copy in has no HWT_TCACHE_NONE: tc is a cache */
    uint64_t gate = self->gate;
    struct hwt_tcache *tc = self->tc;
    if (likely(gate == 0))
        return hwt_alloc_fast_malloc_with(self, tc, size, zero, regs, c);
    /* one compare each: the flags, and busy clear. calloc too: tagged, the zeroing tag
     * stores (STZG, DC GZVA) clear the bytes with the tags they set anyway */
    if (gate == HWT_ALLOC_GATE(HWT_ALLOC_FLAGS_FIRST))
        return hwt_alloc_fast_malloc_with(self, tc, size, zero, HWT_ALLOC_FLAGS_FIRST | regs, c);
    if (gate == HWT_ALLOC_GATE(HWT_ALLOC_FLAGS_SECOND))
        return hwt_alloc_fast_malloc_with(self, tc, size, zero, HWT_ALLOC_FLAGS_SECOND | regs, c);
    if (HWT_ALLOC_LLSC_INLINE && gate == HWT_ALLOC_GATE(HWT_TCACHE_LLSC))
        return hwt_alloc_fast_malloc_with(self, tc, size, zero, HWT_TCACHE_LLSC | regs, c);
    return NULL;
}

/* free of a live small object into the cache through an inlined copy; false when another
 * copy or the general path must do it (hwt_alloc_free, alloc.h). As hwt_alloc_fast_malloc. */
static inline __attribute__((always_inline)) bool
hwt_alloc_fast_free(void *ptr, struct hwt_caller c, unsigned regs)
{
    struct hwt_thread_state *self = &hwt_self;
    hwt_arch_tls_kept(self);
    uint64_t gate = self->gate; /* as hwt_alloc_fast_malloc's */
    struct hwt_tcache *tc = self->tc;
    if (likely(gate == 0))
        return hwt_alloc_fast_free_with(self, tc, ptr, regs, c);
    if (gate == HWT_ALLOC_GATE(HWT_ALLOC_FLAGS_FIRST))
        return hwt_alloc_fast_free_with(self, tc, ptr, HWT_ALLOC_FLAGS_FIRST | regs, c);
    if (gate == HWT_ALLOC_GATE(HWT_ALLOC_FLAGS_SECOND))
        return hwt_alloc_fast_free_with(self, tc, ptr, HWT_ALLOC_FLAGS_SECOND | regs, c);
    if (HWT_ALLOC_LLSC_INLINE && gate == HWT_ALLOC_GATE(HWT_TCACHE_LLSC))
        return hwt_alloc_fast_free_with(self, tc, ptr, HWT_TCACHE_LLSC | regs, c);
    return false;
}

#endif
