/* SPDX-License-Identifier: MIT */
/* Stack capture: a bounded frame-record walk for malloc/free, and libunwind from a
 * signal context for the faulting stack. Never calls malloc. */
#ifndef HWT_UNWIND_H
#define HWT_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/caller.h"
#include "arch/opaque.h"

/* Reads the first thread's stack bounds. Called once at start-up; libunwind is set up by
 * the first fault that needs it (unwind.c). */
void hwt_unwind_init(void);

/* Return addresses of the caller's callers, starting skip frames above the caller,
 * by walking frame records (x29 chain); bounded and validated so a frame without a
 * record never makes it fault. Returns the number stored. */
unsigned hwt_unwind_fast(uintptr_t *pcs, unsigned max, unsigned skip);
/* Where an entry point was called from: the return address into the program and the
 * program's frame record at the call (x29 / rbp). The stacks it records start there. */
struct hwt_caller {
    uintptr_t pc, fp;
};

/* The caller of a function still running on this thread's stack, from its frame record
 * fp (__builtin_frame_address(0) there). The two words are read one by one: the record
 * was just stored, and on x86_64 by two stores (call, then push), which one 16-byte load
 * cannot take from the store buffer (a merged load drew a third of malloc's and free's
 * perf samples natively). Relaxed atomic loads are never merged. */
static inline struct hwt_caller hwt_caller_of_record(uintptr_t fp)
{
    const uintptr_t *record = (const uintptr_t *)fp;
    return (struct hwt_caller){__atomic_load_n(&record[1], __ATOMIC_RELAXED),
                               __atomic_load_n(&record[0], __ATOMIC_RELAXED)};
}

/* The stack from c on: pcs[0] is c.pc, then the return addresses of the frame records
 * from c.fp. key: NULL, or where to put the stack-cache key of what was stored, from seed
 * (as hwt_unwind_caller_key computes it from constants {seed, the multiplier}: a thread
 * cache's own seed, so that a caller whose frame pointer the fast walk cannot follow gets
 * the key the fast path looks for). more: NULL, or where to put the number of frames past
 * max (at most HWT_STACK_MORE_MAX). Called on the stack c was read on. */
unsigned hwt_unwind_caller(struct hwt_caller c, uintptr_t *pcs, unsigned max, uint64_t seed,
                           uint64_t *key, unsigned *more);

/* Bounds [*lo, *hi) of the readable stack mapping holding addr (an address in a live
 * frame of this thread); false when they cannot be known. */
bool hwt_unwind_stack_bounds(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

#if defined(__aarch64__)
/* Return addresses may carry a pointer authentication code above the 48-bit user VA. */
#define HWT_UNWIND_PC_MASK ((UINT64_C(1) << 48) - 1)
#else
#define HWT_UNWIND_PC_MASK UINTPTR_MAX
#endif

/* Key of a stack in the per-thread stack caches: a 64-bit hash of its return addresses,
 * mixed in as they are walked (a stack one frame longer mixes one more in, so the number
 * needs no mixing of its own); its top bits pick the cache set (hwt_tcache_stack_set).
 * A collision (a wrong stack in a report) has odds of 2^-64 a pair. A key of 0 matches an
 * empty cache entry (all zero) with the same odds, and gives id 0, no stack: not worth an
 * instruction a capture to make keys odd. The two constants are read from memory: one load
 * where building them takes eight instructions. On aarch64 an address costs one
 * multiply-add, key * mul + pc (an instruction fewer a frame of the fast paths' walk than a
 * multiply of key ^ pc). The last address is then not multiplied, so the end folds the low
 * byte, where it differs from a neighbour call site's, into the top byte (one instruction;
 * a final multiply cost one at each frame, as the compiler computed it ahead for each of
 * the walk's ways out). The set from the low bits instead (bits 4-12, no fold) cost more
 * than it saved: the whole-program instructions of bash and sed grew by 3 and 2%, from
 * stacks the cache then missed. x86_64 has no multiply-add: there (key ^ pc) * mul, which
 * mixes the last address itself, so the end has nothing to fold. */
extern const uint64_t hwt_unwind_key_constants[2]; /* seed, odd multiplier */
#define HWT_UNWIND_KEY_SEED (hwt_unwind_key_constants[0])
#if defined(__aarch64__)
static inline uint64_t hwt_unwind_key_mix(uint64_t key, uintptr_t pc, uint64_t mul)
{
    return key * mul + pc;
}
static inline uint64_t hwt_unwind_key_end(uint64_t key)
{
    return key ^ key << 56;
}
#else
static inline uint64_t hwt_unwind_key_mix(uint64_t key, uintptr_t pc, uint64_t mul)
{
    return (key ^ pc) * mul;
}
static inline uint64_t hwt_unwind_key_end(uint64_t key)
{
    return key;
}
#endif
static inline uint64_t hwt_unwind_key_step(uint64_t key, uintptr_t pc)
{
    return hwt_unwind_key_mix(key, pc, hwt_unwind_key_constants[1]);
}

struct hwt_unwind_record {
    uintptr_t next, pc;
};

/* Reads the frame record at fp (regs: at x29, in a frameless entry point, where fp is not
 * used: arch/caller.h) into *r; returns whether its link is the next record above it
 * (strictly: no loops, whatever the chain holds) and inside the stack, at most last.
 * Records cannot overlap in real code, so the walk need not say so. Both compared with
 * no branch between (&, not &&): for the first record GCC split them, to skip the test of
 * a zero link on the second's failure, two instructions more a capture than a compare
 * and a conditional compare. */
static inline __attribute__((always_inline)) bool
hwt_unwind_record_at(uintptr_t fp, bool regs, uintptr_t last, struct hwt_unwind_record *r)
{
#if HWT_ARCH_HAVE_FRAMELESS
    if (regs) {
        hwt_arch_entry_record(&r->next, &r->pc);
        return hwt_arch_entry_link_ok(r->next, last);
    }
#else
    (void)regs;
#endif
    __builtin_memcpy(r, (const void *)fp, sizeof(*r));
    return (r->next > fp) & (r->next <= last);
}

/* Mixes into *key the return addresses of the frame records from fp on, up to max of
 * them, while each record is above the last and at most last: the walk of
 * hwt_unwind_caller_key. It mixes them as they are on the stack, as hwt_unwind_caller's
 * key does (so both give one stack the same key; with pointer authentication a call
 * site's key depends on its stack pointer, which only costs cache misses), and does not
 * stop at a zero return address as that walk does: such a stack only misses the cache
 * and takes the general path. The first record, which no link vouches for, counts only
 * when the word it holds for the next record is 0 or a record above it (hwt_unwind_caller
 * checks it alike). Returns the number of records. fp must be a record of the calling
 * thread inside [lo, last]; regs: the first is at x29 instead, in a frameless entry point
 * (hwt_unwind_record_at). A record's two words are read together; they need not be
 * aligned (user memory of the stack mapping either way). pcs: NULL, or where the walk
 * also stores each record's return address without authentication code (room for max).
 * next: NULL, or where to put the record after the last one walked when the walk stopped
 * at max with more to come (checked as the walk checks its links), else 0. */
static inline __attribute__((always_inline)) unsigned
hwt_unwind_walk_key(uintptr_t fp, bool regs, uintptr_t last, unsigned max, uint64_t mul,
                    uint64_t *key, uintptr_t *pcs, uintptr_t *next)
{
    uint64_t k = *key;
    unsigned n = 0;
    if (next != NULL)
        *next = 0;
        /* unrolled: with max a constant, the frame count is the code position and only the
         * record checks remain in each step */
#pragma GCC unroll 16
    for (unsigned i = 0; i < max; i++) {
        struct hwt_unwind_record record;
        bool more = hwt_unwind_record_at(fp, regs && i == 0, last, &record);
        /* The first is only where the caller's frame pointer points; the others are reached
         * through a record's link. When it holds neither 0 nor a record above it for the
         * next, it is no record (code built without frame pointers keeps data in that
         * register) and its "return address" is data too: mixed in, it would give one call
         * site a key per value. */
        if (i == 0 && !more && record.next != 0)
            break;
        k = hwt_unwind_key_mix(k, record.pc, mul);
        n = i + 1;
        if (pcs != NULL) /* without any authentication code */
            pcs[i] = record.pc & HWT_UNWIND_PC_MASK;
        if (!more)
            break;
        fp = record.next;
        if (next != NULL && n == max)
            *next = fp;
    }
    *key = k;
    return n;
}

/* Frames past a depth limit: the return addresses of the records from fp (one a walk
 * reached through a checked link, or 0) up to the first zero one, while each record is
 * above the last and at most last; at most HWT_STACK_MORE_MAX. */
unsigned hwt_unwind_count_more(uintptr_t fp, uintptr_t last);

/* The key of the stack from c (of max frames at most), for the allocation fast paths'
 * stack caches: c.pc, then the records from c.fp when it lies in the thread's stack
 * [lo, last), last = hi - 16 (the highest record). Returns the number of frames.
 * constants: a copy of hwt_unwind_key_constants the caller has at hand. pcs: NULL (the fast paths),
 * or room for max frames, where the walk also stores the stack the key is of as hwt_unwind_caller
 * would (addresses without authentication code, up to the first zero one), and *stored
 * their count: for a miss of the cache, without hwt_unwind_caller's look-up of the stack's
 * bounds and its checks at each frame; and *more the frames past max (those of a stack
 * cut at its first zero address are not counted). regs (with pcs NULL): c is not used, the
 * caller is x30 and x29 of a frameless entry point (hwt_unwind_entry_key). */
static inline __attribute__((always_inline)) unsigned
hwt_unwind_walk_from(struct hwt_caller c, bool regs, uintptr_t lo, uintptr_t last, unsigned max,
                     const uint64_t *constants, uint64_t *key, uintptr_t *pcs, unsigned *stored,
                     unsigned *more)
{
    /* both in one load pair (GCC loaded them one by one in some copies) */
    uint64_t seed, mul;
    hwt_arch_load_pair(constants, &seed, &mul);
    uint64_t k;
    /* two compares, where one of c.fp - lo with a kept room took a subtraction, and the
     * walk's bound an addition */
    bool within;
#if HWT_ARCH_HAVE_FRAMELESS
    if (regs) {
        k = hwt_arch_entry_mix_pc(seed, mul);
        within = hwt_arch_entry_fp_within(lo, last);
    } else
#endif
    {
        k = hwt_unwind_key_mix(seed, c.pc, mul);
        within = c.fp >= lo && c.fp < last;
    }
    unsigned n = 1;
    uintptr_t next = 0;
    if (pcs != NULL)
        pcs[0] = c.pc & HWT_UNWIND_PC_MASK;
    if (__builtin_expect(within, 1)) {
        n += hwt_unwind_walk_key(c.fp, regs, last, max - 1, mul, &k, pcs == NULL ? NULL : pcs + 1,
                                 pcs == NULL ? NULL : &next);
        if (pcs != NULL && max == 1)
            next = c.fp;
    }
    *key = hwt_unwind_key_end(k);
    if (pcs != NULL) { /* the stack ends at its first zero address, as hwt_unwind_caller's */
        unsigned i = 0;
        while (i < n && pcs[i] != 0)
            i++;
        *stored = i;
        *more = i == max ? hwt_unwind_count_more(next, last) : 0;
    }
    return n;
}

static inline __attribute__((always_inline)) unsigned
hwt_unwind_caller_walk(struct hwt_caller c, uintptr_t lo, uintptr_t last, unsigned max,
                       const uint64_t *constants, uint64_t *key, uintptr_t *pcs, unsigned *stored,
                       unsigned *more)
{
    return hwt_unwind_walk_from(c, false, lo, last, max, constants, key, pcs, stored, more);
}

/* hwt_unwind_caller_walk for the key alone (the fast paths). */
static inline __attribute__((always_inline)) unsigned
hwt_unwind_caller_key(struct hwt_caller c, uintptr_t lo, uintptr_t last, unsigned max,
                      const uint64_t *constants, uint64_t *key)
{
    return hwt_unwind_walk_from(c, false, lo, last, max, constants, key, NULL, NULL, NULL);
}

/* hwt_unwind_caller_key in a frameless entry point, for its caller: from x30 and x29 as
 * they are (arch/caller.h), not copied into a struct hwt_caller first. Only called where
 * HWT_ARCH_HAVE_FRAMELESS (HWT_ALLOC_CALLER_REGS is never set elsewhere). */
static inline __attribute__((always_inline)) unsigned
hwt_unwind_entry_key(uintptr_t lo, uintptr_t last, unsigned max, const uint64_t *constants,
                     uint64_t *key)
{
    struct hwt_caller unused = {0, 0};
    return hwt_unwind_walk_from(unused, true, lo, last, max, constants, key, NULL, NULL, NULL);
}

/* The stack of the interrupted code: pcs[0] is the faulting pc. ucontext is the
 * third argument of an SA_SIGINFO handler. more: NULL, or where to put the number of frames
 * past max (at most HWT_STACK_MORE_MAX). signal-safe */
unsigned hwt_unwind_signal(void *ucontext, uintptr_t *pcs, unsigned max, unsigned *more);

#endif
