/* SPDX-License-Identifier: MIT */
/* Per-thread caches of free slots. A cache is owned by one thread; only the central
 * lists (slab.c) are shared. Caches come from metadata memory and are reused, never freed. */
#include "tcache.h"

#include "arch/mte.h"
#include "large.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "slab.h"
#include "tail.h"
#include "transfer.h"
#include "unwind.h"

__thread struct hwt_thread_state hwt_self
    __attribute__((tls_model("initial-exec"))) = {.flags = HWT_TCACHE_NONE};

static struct hwt_lock list_lock = HWT_LOCK_INIT;
static struct hwt_tcache *all_caches; /* list_lock */
static uint32_t caches_made;          /* list_lock */

/* A bin's max when its cache is made (base; half of it is a refill's batch, bin_batch),
 * and the most it grows to (cap), by slot size.
 * base: every cached slot is memory the program is not using, but a bin shorter than the
 * program's bursts sends each burst through the central lists (a refill takes half a bin, a
 * drain gives half back): 16 blocks of 4000 B allocated, then freed, cost 555 guest
 * instructions a pair with bins of 4, 270 with 16. Bins of 16 up to 4 KiB cost python3
 * start-up 36 KiB; above that, bins of 4 would cost 84 KiB more, so they stay at 2.
 * cap: a bin whose refills keep coming (a thread that allocates in bursts longer than its
 * bin) grows by a batch at each, so that the burst's frees stay in the cache for the next
 * burst instead of going through the central lists batch by batch (glibc-simple: bursts of
 * 25 to 1600 blocks of 16..64 B; tcmalloc's thread caches grow the same way). Only refills
 * grow it: a thread that frees what others allocate (a consumer) keeps its bins short and
 * hands the slots back. A class up to 256 B grows to 32 KiB of slots (2048 of 16 B, so
 * that glibc-simple's bursts of 1600 stay in the cache; 128 of 256 B), one up to 4 KiB to
 * 32 slots (128 KiB). */
static const struct bin_size {
    size_t upto; /* slot sizes up to this */
    uint32_t base;
    uint32_t cap;     /* in slots; or, when 0, */
    size_t cap_bytes; /* this many bytes of slots, rounded down to a batch */
} bin_sizes[] = {{256, 32, 0, 32768}, {4096, 16, 32, 0}, {SIZE_MAX, 2, 2, 0}};

/* Each class's bin sizes from bin_sizes, worked out once at start-up (hwt_tcache_init):
 * every refill and drain reads them. batch: half of base, a refill's take. cap: a multiple
 * of a batch, since refills grow a bin a batch at a time, up to exactly this. */
static struct {
    uint32_t base, batch, cap;
} bin_limits[HWT_NUM_CLASSES];

void hwt_tcache_init(void)
{
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        size_t size = hwt_size_class_size(cls);
        const struct bin_size *b = bin_sizes;
        while (size > b->upto)
            b++;
        uint32_t batch = b->base / 2 ? b->base / 2 : 1;
        bin_limits[cls].base = b->base;
        bin_limits[cls].batch = batch;
        bin_limits[cls].cap = b->cap ? b->cap : (uint32_t)(b->cap_bytes / size) / batch * batch;
    }
}

static uint32_t bin_base(unsigned cls)
{
    return bin_limits[cls].base;
}

static uint32_t bin_cap(unsigned cls)
{
    return bin_limits[cls].cap;
}

static uint32_t bin_batch(unsigned cls)
{
    return bin_limits[cls].batch;
}

static void flush_all(struct hwt_tcache *tc)
{
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        uint32_t n = hwt_tcache_bin_count(tc, cls);
        if (n > 0)
            hwt_slab_give(cls, hwt_tcache_bin_base(tc, cls), n);
        tc->bins[cls].top = hwt_tcache_bin_base(tc, cls);
    }
}

void hwt_tcache_flush(struct hwt_tcache *tc)
{
    flush_all(tc);
}

void hwt_tcache_exit(struct hwt_tcache *tc)
{
    /* the flag before the pointer: a signal's malloc in between takes the general path */
    hwt_self.flags |= HWT_TCACHE_NONE;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hwt_self.tc = HWT_TCACHE_DEAD;
    hwt_counters_bind(NULL);
    flush_all(tc);
    hwt_large_stash_flush(&tc->large_stash);
    hwt_lock(&list_lock);
    tc->in_use = 0;
    hwt_unlock(&list_lock);
}

/* Every bin of tc back to its first size (a reused cache's bins are empty, flush_all, but
 * may have grown). */
static void bins_resize(struct hwt_tcache *tc)
{
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++)
        tc->bins[cls].limit = hwt_tcache_bin_base(tc, cls) + bin_base(cls);
}

static struct hwt_tcache *cache_new(void)
{
    struct hwt_tcache *tc = NULL;
    hwt_lock(&list_lock);
    for (struct hwt_tcache *c = all_caches; c != NULL; c = c->all_next) {
        if (!c->in_use) {
            tc = c;
            break;
        }
    }
    if (tc != NULL)
        tc->in_use = 1;
    hwt_unlock(&list_lock);
    if (tc != NULL) {
        bins_resize(tc);
        return tc;
    }

    /* each bin's entries, after the all-zero one below them (struct hwt_tcache_bin) */
    size_t slots = 0;
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++)
        slots += 1 + bin_cap(cls);
    tc = hwt_meta_alloc(sizeof(*tc) + slots * sizeof(struct hwt_slab_ref), 64);
    if (tc == NULL)
        return NULL;
    struct hwt_slab_ref *storage = (struct hwt_slab_ref *)(tc + 1);
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        storage->addr = 0; /* metadata memory is zeroed: never written after this */
        storage->slot = NULL;
        storage++;
        tc->bin_bases[cls] = tc->bins[cls].top = storage;
        storage += bin_cap(cls);
    }
    bins_resize(tc); /* whole before it joins the list: a fork in between adopts it */
    tc->in_use = 1;
    hwt_lock(&list_lock);
    /* caches take the arenas in turn; a cache keeps its arena when a new thread reuses it */
    tc->arena = (uint16_t)(caches_made++ % HWT_ARENAS);
    tc->all_next = all_caches;
    all_caches = tc;
    hwt_unlock(&list_lock);
    hwt_counters_register(&tc->counters);
    return tc;
}

/* Seeds given out, a process's and its forebears' (a fork child counts on from its
 * parent's count): each is the global seed plus a multiple of an odd constant, so no two
 * are the same. */
static uint64_t stack_seeds;

/* A stack cache key seed no cache of this process or of those it was forked from has used.
 * A cache's stacks carry its thread's tid (the depot's ids do); a new owner (a reused cache,
 * a fork child) takes a new seed, and its keys then match none of them: what it holds is
 * never found again and is overwritten in time, where clearing it wrote 16 KiB (4 pages,
 * each a copy-on-write fault in a fork child). */
static uint64_t fresh_stack_seed(void)
{
    uint64_t n = __atomic_add_fetch(&stack_seeds, 1, __ATOMIC_RELAXED);
    return hwt_unwind_key_constants[0] + n * UINT64_C(0xbf58476d1ce4e5b9);
}

struct hwt_tcache *hwt_tcache_create(void)
{
    struct hwt_tcache *tc = cache_new();
    if (tc == NULL)
        return NULL;
    tc->tid = (uint32_t)hwt_os_gettid();
    /* a reused cache had another tid: its stacks are left behind by a new seed */
    tc->stack_key_constants[0] = fresh_stack_seed();
    tc->stack_missed_pc = tc->stack_missed_fp = 0;
    uint32_t flags = (hwt_mte_active ? HWT_TCACHE_MTE : 0u) |
                     (hwt_opts.stacktrace == HWT_ON ? HWT_TCACHE_STACK : 0u) |
                     (hwt_tail_active ? HWT_TCACHE_TAIL : 0u) |
                     (hwt_os_has_cas() ? 0u : HWT_TCACHE_LLSC);
    if ((flags & HWT_TCACHE_STACK) && hwt_opts.stack_depth != HWT_STACK_DEFAULT_DEPTH)
        flags |= HWT_TCACHE_DEPTH;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uintptr_t lo, hi;
    /* Only a cache that captures stacks walks them: the bounds cost a read of
     * /proc/self/maps (mstress, 50 threads of 2 ms each, stacks off: 51 reads) */
    if ((flags & HWT_TCACHE_STACK) && hwt_unwind_stack_bounds(here, &lo, &hi) &&
        hi - lo > 2 * sizeof(uintptr_t)) {
        tc->stack_lo = lo;
        tc->stack_last = hi - 2 * sizeof(uintptr_t);
    } else {
        /* no frame pointer is ever inside: the general walk runs */
        tc->stack_lo = tc->stack_last = 0;
    }
    tc->stack_key_constants[1] = hwt_unwind_key_constants[1];
    tc->tail_key = hwt_tail_key;
    tc->classes = &hwt_size_classes;
    tc->regmap = hwt_slab_regmap;
    tc->dc_block = hwt_size_classes.dc_block;
    hwt_self.tc = tc;
    /* the pointer before the flags that clear HWT_TCACHE_NONE (see hwt_tcache_exit) */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hwt_self.flags = (hwt_self.flags & HWT_TCACHE_NOLEAK) | flags;
    hwt_counters_bind(&tc->counters);
    return tc;
}

bool hwt_tcache_refill(struct hwt_tcache *tc, struct hwt_tcache_bin *bin, unsigned cls)
{
    HWT_CHECK(bin == &tc->bins[cls] && hwt_tcache_bin_count(tc, cls) == 0);
    struct hwt_slab_ref *slots = hwt_tcache_bin_base(tc, cls);
    unsigned want = bin_batch(cls);
    unsigned got = hwt_transfer_take(tc->arena, cls, slots, want);
    if (got == 0)
        got = hwt_slab_take(tc->arena, cls, slots, want);
    bin->top = slots + got;
    if (hwt_tcache_bin_max(tc, cls) < bin_cap(cls))
        bin->limit += want; /* see bin_cap */
    HWT_CHECK(got <= hwt_tcache_bin_max(tc, cls) && hwt_tcache_bin_max(tc, cls) <= bin_cap(cls));
    return got > 0;
}

void hwt_tcache_drain(struct hwt_tcache *tc, struct hwt_tcache_bin *bin, unsigned cls)
{
    HWT_CHECK(bin == &tc->bins[cls]);
    struct hwt_slab_ref *slots = hwt_tcache_bin_base(tc, cls);
    uint32_t count = hwt_tcache_bin_count(tc, cls);
    HWT_CHECK(count <= hwt_tcache_bin_max(tc, cls) && hwt_tcache_bin_max(tc, cls) <= bin_cap(cls));
    unsigned n = count / 2 ? count / 2 : count;
    /* Give back the oldest half: the most recently freed stay hot in the cache, and the
     * move of the rest costs a copy per slot given back, whatever the bin's size. A batch
     * goes to the arena's transfer cache while it has room, for its next refill; a grown
     * bin's half first leaves one there. */
    unsigned first = n < bin_batch(cls) ? n : bin_batch(cls);
    unsigned kept = hwt_transfer_put(tc->arena, cls, slots, first) ? first : 0;
    if (kept < n)
        hwt_slab_give(cls, slots + kept, n - kept);
    for (unsigned i = n; i < count; i++)
        slots[i - n] = slots[i];
    bin->top = slots + (count - n);
}

void hwt_tcache_lock(void)
{
    hwt_lock(&list_lock);
    for (struct hwt_tcache *c = all_caches; c != NULL; c = c->all_next)
        hwt_lock(&c->large_stash.lock);
}

void hwt_tcache_unlock(void)
{
    for (struct hwt_tcache *c = all_caches; c != NULL; c = c->all_next)
        hwt_unlock(&c->large_stash.lock);
    hwt_unlock(&list_lock);
}

void hwt_tcache_flush_large(void)
{
    /* list, then a stash, then the shared large lock: the order fork takes them in */
    hwt_lock(&list_lock);
    for (struct hwt_tcache *c = all_caches; c != NULL; c = c->all_next)
        hwt_large_stash_flush(&c->large_stash);
    hwt_unlock(&list_lock);
}

void hwt_tcache_after_fork_child(void)
{
    struct hwt_tcache *self = hwt_self.tc;
    hwt_lock_reset(&list_lock);
    bool own_given = !hwt_tcache_live(self);
    for (struct hwt_tcache *c = all_caches; c != NULL; c = c->all_next) {
        /* held by fork since before the parent's threads stopped: whole */
        hwt_lock_reset(&c->large_stash.lock);
        if (c == self || !c->in_use)
            continue;
        /* A stale entry of a dead thread's bin may name a slot that was reused since and
         * now sits in this thread's own bin. Those go back first, so that the slot's free
         * bit turns such an entry away (hwt_slab_give_adopted), where looking each entry up
         * in this thread's bins cost their product (up to 2048 by 2048 a class). There are
         * dead caches only when the parent had threads, and then fork's prepare handler
         * made sure this thread was in no allocator call (init.c): its bins are whole. */
        if (!own_given) {
            flush_all(self);
            own_given = true;
        }
        hwt_large_stash_flush(&c->large_stash);
        /* The fork caught that thread anywhere in its allocator call, its bins perhaps
         * mid-update: check every entry instead of trusting the bin (flush_all would trap
         * on a slot already given back, or free a live one). Entries past the count too:
         * a refill that had taken its slots but not yet set the count left them there.
         * And every entry of the bin's storage, not up to its limit: a cache being reset
         * for a new thread may have any limit then (zero entries were never written). */
        for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
            struct hwt_slab_ref *slots = hwt_tcache_bin_base(c, cls);
            uint32_t cap = bin_cap(cls);
            for (uint32_t i = 0; i < cap; i++) {
                /* a drain or refill caught mid-copy: the batch kept in the transfer
                 * cache is the entry's owner */
                if (slots[i].addr != 0 && !hwt_transfer_holds(cls, slots[i].addr))
                    hwt_slab_give_adopted(cls, slots[i].addr);
            }
            c->bins[cls].top = slots;
        }
        c->in_use = 0;
    }
    if (hwt_tcache_live(self)) {
        self->tid = (uint32_t)hwt_os_gettid();
        self->stack_key_constants[0] = fresh_stack_seed();
    }
}
