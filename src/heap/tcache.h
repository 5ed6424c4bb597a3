/* SPDX-License-Identifier: MIT */
/* Per-thread caches of free small slots, one bin per size class, plus the thread's
 * counters (bound to it through counters.c). Reached through an initial-exec TLS pointer;
 * flushed at thread exit and adopted by the child after fork. Knows nothing of signals or
 * reports. */
#ifndef HWT_TCACHE_H
#define HWT_TCACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/opaque.h"
#include "check.h"
#include "counters.h"
#include "history.h"
#include "large_stash.h"
#include "size_class.h"
#include "slab.h"
#include "stackdepot.h"
#include "tail.h"

/* The thread's cache of recent stacks: 512 sets of two ways, 16 KiB. A miss costs a copy of
 * the frames and the depot's shared lookups, far more than a hit; misses fall as sets are
 * added, and this size is where they were weighed against the memory, 16 KiB a thread. */
#define HWT_TCACHE_STACK_SET_BITS 9u
#define HWT_TCACHE_STACK_SETS (1u << HWT_TCACHE_STACK_SET_BITS)
#define HWT_TCACHE_STACK_WAYS 2u

/* A bin of free slots of one class, as the fast paths use it: two pointers into its
 * entries, which start at its base (hwt_tcache_bin_base). [base, top) are free slots,
 * memory tag HWT_TAG_FREE; the bin is full at top == limit (base + the bin's size, which
 * refills grow). The entry below base is all zero, never written: popping an empty bin
 * reads address 0 there, so malloc's pop is its own test, and free's push is one store
 * pair that moves top (a count and the entries' address took four instructions more a
 * malloc and free). */
struct hwt_tcache_bin {
    struct hwt_slab_ref *top;
    struct hwt_slab_ref *limit;
};

/* What the fast paths do, fixed when the cache is made (the options are final by then). */
enum {
    HWT_TCACHE_MTE = 1,   /* tag objects (hwt_mte_active) */
    HWT_TCACHE_STACK = 2, /* capture allocation and free stacks */
    HWT_TCACHE_TAIL = 4,  /* write and check tail patterns (hwt_tail_active) */
    /* a report went on with Tag Check Override set (HWTAG_FAULT=report): the thread's
     * next allocator call clears it, which brings its checks back */
    HWT_TCACHE_RESUME = 8,
    /* inside hwtag_leak_disable: no inlined copy matches, so every allocation reaches the
     * general path, which tells the leak check to leave the object out */
    HWT_TCACHE_NOLEAK = 16,
    /* stacks of HWTAG_STACK_DEPTH frames, not HWT_STACK_DEFAULT_DEPTH: no inlined copy
     * matches, and alloc.c's copies walk to the option's depth */
    HWT_TCACHE_DEPTH = 32,
    /* the thread has no cache (none yet, or gone at its exit; hwt_self.tc is then NULL or
     * HWT_TCACHE_DEAD): no inlined copy matches, so the fast paths, which the gate let in,
     * need not test the cache pointer. Set first: the thread's initial value */
    HWT_TCACHE_NONE = 64,
    /* the CPU has no single-instruction compare-and-swap (aarch64 without LSE, which a CPU
     * with MTE always has): free's swap on the slot word is the compiler's LL/SC loop, one
     * CASAL without this flag (arch/cas.h). The allocator alone here has an inlined copy
     * of its own (alloc_fast.h) */
    HWT_TCACHE_LLSC = 128,
};

struct hwt_tcache {
    /* First the fields the fast paths read at fixed places, all within reach of a load
     * pair's offset from the cache's address (504 bytes), so that each pair of them is one
     * load with no address formed for it; then the first way of the stack cache, whose
     * entry (key and id) is then one load pair at the set's address. */
    struct hwt_history_cursor history; /* this thread's entries of the history ring */
    /* The thread's stack mapping, where its frame records are: [stack_lo, stack_last + 16);
     * an empty range (both 0) when unknown. One load pair. */
    uintptr_t stack_lo, stack_last;
    /* this cache's key seed (tcache.c), hwt_unwind_key_constants[1]: one load pair away */
    uint64_t stack_key_constants[2];
    struct hwt_tail_key tail_key; /* hwt_tail_key, one load pair away */
    uint32_t tid;
    uint16_t arena;    /* the central lists and transfer caches it uses (slab.h) */
    uint16_t dc_block; /* hwt_size_classes.dc_block, one load away */
    /* &hwt_size_classes and hwt_slab_regmap: one load from here where forming a global's
     * address takes two instructions */
    const struct hwt_size_class_tables *classes;
    struct hwt_span **const *regmap;
    /* Recent stacks of this thread: 64-bit hash of the frames -> depot id, so a repeated
     * call site skips the depot's shared lookup; key and id side by side, one address
     * for both. Two ways a set, not one: a loop's malloc and free stacks whose keys fell
     * in one set (1 process in 64 with 64 sets, by where ASLR put the code) took turns to
     * evict each other, and every call went to the depot, which made such a loop several
     * times slower. The first way (stacks, the set's newest) here, the second
     * (stacks_older) after the bins, which stay within reach of a 32-bit load's offset.
     * Cleared when the tid changes (fork). */
    /* on 16 bytes: a set is one load pair */
    _Alignas(16) struct hwt_tcache_stack {
        uint64_t key;
        uint64_t id;
    } stacks[HWT_TCACHE_STACK_SETS];
    struct hwt_tcache_bin bins[HWT_NUM_CLASSES];
    struct hwt_counters counters;                    /* written only by the owning thread */
    struct hwt_large_stash large_stash;              /* its last freed untagged large mappings */
    struct hwt_slab_ref *bin_bases[HWT_NUM_CLASSES]; /* where each bin's entries start */
    struct hwt_tcache *all_next;                     /* every cache ever made; never unlinked */
    int in_use;                                      /* owned by a live thread; tcache list lock */
    /* The caller (return address, frame record) whose stack a fast path of this thread last
     * failed to find in the stack cache, or 0: the general path's capture of that same call
     * then skips the look-up it would repeat. A hint, only ever a cost when stale. */
    uintptr_t stack_missed_pc, stack_missed_fp;
    struct hwt_tcache_stack stacks_older[HWT_TCACHE_STACK_SETS];
    struct hwt_stackdepot_cache depot_cache; /* behind the stacks, for their misses */
};
_Static_assert(__builtin_offsetof(struct hwt_tcache, bins) == HWT_SPAN_BINS_AT &&
                   sizeof(struct hwt_tcache_bin) == 16,
               "a span's bin_offset finds its class's bin");
_Static_assert(__builtin_offsetof(struct hwt_tcache, stacks) <= 504 &&
                   __builtin_offsetof(struct hwt_tcache, stacks) % 16 == 0,
               "the stack cache's first way is a load pair's offset away, on 16 bytes");
_Static_assert(__builtin_offsetof(struct hwt_tcache, bins[HWT_NUM_CLASSES]) <= 32760,
               "a bin's top is a 64-bit load's offset away");

/* The set of tc's stack cache where a stack of key is kept: the key's top bits. */
static inline unsigned hwt_tcache_stack_set(uint64_t key)
{
    return (unsigned)(key >> (64 - HWT_TCACHE_STACK_SET_BITS));
}

/* Depot id of the stack of key in tc's stack cache; false when it holds none. The first
 * way first: it holds the set's newest stack. 64 bits as the entry keeps it (ids are below
 * 2^HWT_STACKDEPOT_ID_BITS): free shifts it into its slot word with no zero-extension. */
static inline __attribute__((always_inline)) bool hwt_tcache_stack_find(const struct hwt_tcache *tc,
                                                                        uint64_t key, uint64_t *id)
{
    unsigned set = hwt_tcache_stack_set(key);
    /* key and id in one load pair */
    struct hwt_tcache_stack first = tc->stacks[set];
    if (likely(first.key == key)) {
        *id = first.id;
        return true;
    }
    *id = tc->stacks_older[set].id;
    return tc->stacks_older[set].key == key;
}

/* Puts a stack tc's cache does not hold into its set's first way; the one there moves to
 * the second, whose stack (the least recently put) leaves. */
static inline void hwt_tcache_stack_put(struct hwt_tcache *tc, uint64_t key, uint32_t id)
{
    unsigned set = hwt_tcache_stack_set(key);
    _Static_assert(HWT_TCACHE_STACK_WAYS == 2, "one move per put");
    tc->stacks_older[set] = tc->stacks[set];
    tc->stacks[set] = (struct hwt_tcache_stack){key, id};
}

/* Where the entries of tc's bin of class cls start; its free slots are [base, top). */
static inline struct hwt_slab_ref *hwt_tcache_bin_base(const struct hwt_tcache *tc, unsigned cls)
{
    return tc->bin_bases[cls];
}

/* The number of free slots in tc's bin of class cls, and the most it holds now. */
static inline uint32_t hwt_tcache_bin_count(const struct hwt_tcache *tc, unsigned cls)
{
    return (uint32_t)(tc->bins[cls].top - tc->bin_bases[cls]);
}

static inline uint32_t hwt_tcache_bin_max(const struct hwt_tcache *tc, unsigned cls)
{
    return (uint32_t)(tc->bins[cls].limit - tc->bin_bases[cls]);
}

/* The entry below *top into *ref, and *top moved down to it (a bin's pop: one load pair
 * with writeback, arch/opaque.h). */
static inline __attribute__((always_inline)) void hwt_tcache_pop(struct hwt_slab_ref **top,
                                                                 struct hwt_slab_ref *ref)
{
    _Static_assert(sizeof(struct hwt_slab_ref) == 16, "an entry is two words");
    void *t = *top;
    uint64_t addr, slot;
    hwt_arch_pop16(&t, &addr, &slot);
    *top = t;
    *ref = (struct hwt_slab_ref){(uintptr_t)addr, (struct hwt_slot *)slot};
}

/* ref as the entry at *top, and *top moved past it (a bin's push: one store pair with
 * writeback). */
static inline __attribute__((always_inline)) void hwt_tcache_push(struct hwt_slab_ref **top,
                                                                  struct hwt_slab_ref ref)
{
    void *t = *top;
    hwt_arch_push16(&t, ref.addr, (uint64_t)(uintptr_t)ref.slot);
    *top = t;
}

#define HWT_TCACHE_DEAD ((struct hwt_tcache *)1)

/* Whether tc (a thread's hwt_self.tc) is a cache: not NULL (none yet), not HWT_TCACHE_DEAD. */
static inline bool hwt_tcache_live(const struct hwt_tcache *tc)
{
    return tc != NULL && tc != HWT_TCACHE_DEAD;
}

/* The calling thread's allocator state, one initial-exec TLS block. tc: NULL before the
 * thread's first allocation, HWT_TCACHE_DEAD after its exit destructor. busy: 1 while
 * the thread is inside malloc, free or realloc (a signal handler that finds it set has
 * interrupted one of them). flags: HWT_TCACHE_*, set with the cache, HWT_TCACHE_NONE
 * whenever tc is no cache. gate: busy and flags in one word, 0 when the fast paths have
 * nothing to do but the cache. */
struct hwt_thread_state {
    struct hwt_tcache *tc;
    union {
        struct {
            uint32_t flags; /* the low half: the gate of a thread not busy is its flags, a
                             * compare with an immediate */
            uint32_t busy;
        };
        uint64_t gate;
    };
};
extern __thread struct hwt_thread_state hwt_self;

/* Once at start-up, before the first cache is made. */
void hwt_tcache_init(void);
/* Gives the calling thread a cache (or NULL when none can be had). Called by the thread
 * lifecycle (thread.c), which also arranges for hwt_tcache_exit at thread exit. */
struct hwt_tcache *hwt_tcache_create(void);
/* Returns the exiting thread's cached slots to the central lists and frees the cache for
 * a later thread; the thread's cache pointer becomes HWT_TCACHE_DEAD. */
void hwt_tcache_exit(struct hwt_tcache *tc);
/* Refills an empty bin from the central lists; false when out of memory. */
bool hwt_tcache_refill(struct hwt_tcache *tc, struct hwt_tcache_bin *bin, unsigned cls);
/* Returns half of a full bin to the central lists. */
void hwt_tcache_drain(struct hwt_tcache *tc, struct hwt_tcache_bin *bin, unsigned cls);

/* Returns every slot of tc's bins to the central lists (out of memory: their spans may be
 * all that keeps the address space). tc: the calling thread's own, live. */
void hwt_tcache_flush(struct hwt_tcache *tc);

/* For fork: the list of caches and every cache's large stash. */
void hwt_tcache_lock(void);
void hwt_tcache_unlock(void);
/* Hands every thread's stashed large mappings to the shared cache (malloc_trim). */
void hwt_tcache_flush_large(void);
/* In a fork child: adopt the caches of the threads that did not survive the fork. */
void hwt_tcache_after_fork_child(void);

#endif
