/* SPDX-License-Identifier: MIT */
/* Small objects' central lists: taking slots from spans and giving them back, which spans a
 * class keeps committed and which it releases, and the locks over them. It never stores
 * anything inside user memory, and leaves span metadata to slab_span.c and address space to
 * slab_region.c. */
#include "slab.h"

#include "arch/mte.h"
#include "check.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "size_class.h"
#include "slab_region.h"
#include "slab_span.h"
#include "tag.h"

#define BITS_PER_WORD 64u
/* Fully free spans kept committed, per class: one up to KEEP_EMPTY_MAX_SLOT, none above
 * (python3 start-up frees 8 KiB buffers now and then; each empty 64 KiB span kept would be
 * resident at its end). A class that took back KEEP_CHURN_RETAKES spans it gave away churns
 * (python3 start-up: 41 at most in one): it keeps up to the most spans it had in use lately
 * (HWT_SLAB_PEAK_WINDOW), KEEP_CHURN to HWT_SLAB_KEEP_CHURN_MAX_BYTES; else rptest refaulted
 * spans thousands of times, and xmalloc-test cycled one span many times a second. */
#define KEEP_EMPTY_MAX_SLOT 4096u
#define KEEP_CHURN 4u
#define KEEP_CHURN_RETAKES 64u
/* Once an arena's classes have taken back KEEP_CHURN_ARENA_RETAKES spans together, a class of
 * it churns from KEEP_CHURN_JOIN_RETAKES: rptest churns some 40 classes an arena, and gave
 * back 2613 spans (27k faults, glibc 14k), with this rule 978. python3 start-up: 68. */
#define KEEP_CHURN_ARENA_RETAKES 256u
#define KEEP_CHURN_JOIN_RETAKES 8u
/* A fully free span beyond what its class keeps retires: it goes back once unused from one
 * tick of RETIRE_TICK_MS to the next (10-20 ms; mimalloc delays its purges by 10 ms too),
 * and a class that soon needs a span again reuses it warm: rptest gave back 1260 spans a
 * run and faulted most in again before its classes learnt to churn (above). */
#define RETIRE_TICK_MS 10u

struct central {
    struct hwt_span *partial;  /* nfree > 0 */
    struct hwt_span *empty;    /* fully free, committed spans kept for reuse, newest first */
    struct hwt_span *released; /* fully free, pages given back to the OS */
    /* fully free, committed spans retired since the last tick, and before it */
    struct hwt_span *young, *old;
    struct hwt_lock lock;
    uint16_t nempty;  /* spans on empty */
    uint16_t retakes; /* released spans taken back, up to KEEP_CHURN_RETAKES */
    uint32_t in_use;  /* spans with a slot taken (not empty, retired or released) */
    /* the most spans in use in this window of span events, and in the last one */
    uint32_t peak_now, peak_last;
    uint32_t events; /* spans taken into use or emptied in this window */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct central) == 64, "one line a class");

/* From a page boundary: arena 0's lists (4 KiB) take one page, not two. */
static struct central centrals[HWT_ARENAS][HWT_NUM_CLASSES] __attribute__((aligned(4096)));

/* released spans taken back by each arena's classes, up to KEEP_CHURN_ARENA_RETAKES (atomic) */
static uint32_t arena_retakes[HWT_ARENAS];
/* 1 + the highest arena whose central locks were taken (hwt_lock_mark; a span's arena was a
 * take's), for the fork child's reset. */
static unsigned arenas_locked;
static uint64_t heap_mapped_bytes; /* committed span bytes, less released ones */
static uint64_t retired_bytes;     /* on the classes' young and old lists (atomic) */
/* per arena, a bit a class with retired spans, which ticks visit (changed under its lock) */
static uint64_t retiring[HWT_ARENAS];
static uint32_t next_tick_ms; /* when the next tick is due (atomic; hwt_os_clock_ms) */

void hwt_slab_init(void)
{
    hwt_size_class_init(hwt_mte_dcz_block);
}

/* Out of address space: takes a released span of another class that is at least as big
 * (its pages are already given back) and cuts it into spans of cls: the first is returned,
 * tagged; the others join cls's released list. Only try-locks the other class (the caller
 * holds cls's lock), so two classes stealing from each other cannot deadlock. */
static struct hwt_span *steal_locked(struct central *c, unsigned arena, unsigned cls)
{
    size_t span_size = hwt_size_class_span(cls);
    struct hwt_span *victim = NULL;
    hwt_lock_mark(&arenas_locked, HWT_ARENAS);
    for (unsigned k = 0; k < HWT_ARENAS * HWT_NUM_CLASSES && victim == NULL; k++) {
        unsigned other = k % HWT_NUM_CLASSES;
        struct central *oc = &centrals[k / HWT_NUM_CLASSES][other];
        if (other == cls || !hwt_trylock(&oc->lock))
            continue;
        for (struct hwt_span *v = oc->released; v != NULL; v = v->next) {
            if (hwt_span_bytes(v) >= span_size) {
                hwt_slab_span_unlink(&oc->released, v);
                victim = v;
                break;
            }
        }
        hwt_unlock(&oc->lock);
    }
    return victim != NULL ? hwt_slab_span_cut(victim, arena, cls, &c->released) : NULL;
}

/* A new span for cls, tagged free; when the address space is gone, a released span of
 * another class is cut up instead. Counted committed. */
static struct hwt_span *span_new(struct central *c, unsigned arena, unsigned cls)
{
    bool no_space;
    struct hwt_span *s = hwt_slab_span_new(arena, cls, &no_space);
    if (s == NULL && no_space)
        s = steal_locked(c, arena, cls);
    if (s != NULL)
        __atomic_add_fetch(&heap_mapped_bytes, hwt_span_bytes(s), __ATOMIC_RELAXED);
    return s;
}

/* Gives a fully free span's pages back; it waits on the released list, untagged. */
static void release_locked(struct central *c, struct hwt_span *s)
{
    hwt_os_decommit((void *)s->base, hwt_span_bytes(s));
    __atomic_sub_fetch(&heap_mapped_bytes, hwt_span_bytes(s), __ATOMIC_RELAXED);
    hwt_slab_span_push(&c->released, s, HWT_SPAN_LIST_RELEASED);
}

/* s, fully free and beyond what c keeps, waits a tick or two before it goes back; at once
 * when HWT_SLAB_RETIRE_MAX_BYTES wait already. */
static void retire_locked(struct central *c, struct hwt_span *s)
{
    size_t bytes = hwt_span_bytes(s);
    if (__atomic_load_n(&retired_bytes, __ATOMIC_RELAXED) + bytes > HWT_SLAB_RETIRE_MAX_BYTES) {
        release_locked(c, s);
        return;
    }
    hwt_slab_span_push(&c->young, s, HWT_SPAN_LIST_EMPTY);
    __atomic_add_fetch(&retired_bytes, bytes, __ATOMIC_RELAXED);
    __atomic_or_fetch(&retiring[s->arena], UINT64_C(1) << s->cls, __ATOMIC_RELAXED);
}

/* Takes s off list, c's empty or a retired one, and off its count. */
static void unlink_unused_locked(struct central *c, struct hwt_span **list, struct hwt_span *s)
{
    hwt_slab_span_unlink(list, s);
    if (list == &c->empty)
        c->nempty--;
    else
        __atomic_sub_fetch(&retired_bytes, hwt_span_bytes(s), __ATOMIC_RELAXED);
}

/* Gives back every span of list, c's empty or a retired one; returns the bytes. */
static size_t release_all_locked(struct central *c, struct hwt_span **list)
{
    size_t given = 0;
    struct hwt_span *s;
    while ((s = *list) != NULL) {
        unlink_unused_locked(c, list, s);
        release_locked(c, s);
        given += hwt_span_bytes(s);
    }
    return given;
}

void hwt_slab_tick(void)
{
    for (unsigned a = 0; a < HWT_ARENAS; a++) {
        uint64_t bits = __atomic_load_n(&retiring[a], __ATOMIC_RELAXED);
        for (; bits != 0; bits &= bits - 1) {
            unsigned cls = (unsigned)__builtin_ctzll(bits);
            struct central *c = &centrals[a][cls];
            if (!hwt_trylock(&c->lock))
                continue;
            release_all_locked(c, &c->old);
            c->old = c->young;
            c->young = NULL;
            if (c->old == NULL) /* nothing left to age: the next tick need not look */
                __atomic_and_fetch(&retiring[a], ~(UINT64_C(1) << cls), __ATOMIC_RELAXED);
            hwt_unlock(&c->lock);
        }
    }
}

/* A tick, once one is due, in whichever thread sees it after taking or giving slots. */
static void tick_if_due(void)
{
    if (__atomic_load_n(&retired_bytes, __ATOMIC_RELAXED) == 0)
        return;
    uint32_t now = hwt_os_clock_ms();
    uint32_t due = __atomic_load_n(&next_tick_ms, __ATOMIC_RELAXED);
    if ((int32_t)(now - due) >= 0 &&
        __atomic_compare_exchange_n(&next_tick_ms, &due, now + RETIRE_TICK_MS, false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        hwt_slab_tick();
}

/* A span to take slots from: partial first, then a kept empty one, then a retired one (the
 * older first: it would go back sooner), then a released one (re-tagged, as its pages came
 * back zeroed with tag 0), then a new one. */
static struct hwt_span *span_for_take_locked(struct central *c, unsigned arena, unsigned cls)
{
    if (c->partial != NULL)
        return c->partial;
    struct hwt_span **committed = c->empty != NULL ? &c->empty
                                  : c->old != NULL ? &c->old
                                                   : &c->young;
    struct hwt_span *s = *committed;
    if (s != NULL) {
        unlink_unused_locked(c, committed, s);
    } else if ((s = c->released) != NULL) {
        hwt_slab_span_unlink(&c->released, s);
        if (c->retakes < KEEP_CHURN_RETAKES)
            c->retakes++;
        if (__atomic_load_n(&arena_retakes[arena], __ATOMIC_RELAXED) < KEEP_CHURN_ARENA_RETAKES)
            __atomic_add_fetch(&arena_retakes[arena], 1, __ATOMIC_RELAXED);
        hwt_tag_range(s->base, hwt_span_bytes(s), HWT_TAG_FREE, false);
        __atomic_add_fetch(&heap_mapped_bytes, hwt_span_bytes(s), __ATOMIC_RELAXED);
    } else {
        s = span_new(c, arena, cls);
        if (s == NULL)
            return NULL;
    }
    hwt_slab_span_push(&c->partial, s, HWT_SPAN_LIST_PARTIAL);
    if (++c->in_use > c->peak_now)
        c->peak_now = c->in_use;
    c->events++;
    return s;
}

unsigned hwt_slab_take(unsigned arena, unsigned cls, struct hwt_slab_ref *out, unsigned n)
{
    struct central *c = &centrals[arena % HWT_ARENAS][cls];
    unsigned got = 0;
    hwt_lock_mark(&arenas_locked, arena % HWT_ARENAS + 1);
    hwt_lock(&c->lock);
    while (got < n) {
        struct hwt_span *s = span_for_take_locked(c, arena % HWT_ARENAS, cls);
        if (s == NULL)
            break;
        size_t words = (s->nslots + BITS_PER_WORD - 1) / BITS_PER_WORD;
        for (size_t w = 0; w < words && got < n; w++) {
            uint64_t bits = s->free_bits[w];
            while (bits != 0 && got < n) {
                unsigned b = (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                size_t idx = w * BITS_PER_WORD + b;
                HWT_CHECK(idx < s->nslots && s->nfree > 0); /* a free bit is a real slot */
                out[got].addr = s->base + idx * (size_t)s->slot_size;
                out[got++].slot = &s->slots[idx];
                s->nfree--;
            }
            s->free_bits[w] = bits;
        }
        if (s->nfree == 0)
            hwt_slab_span_unlink(&c->partial, s);
        if (HWT_HEAP_WALKS)
            HWT_CHECK(hwt_slab_span_consistent(s));
    }
    hwt_unlock(&c->lock);
    tick_if_due();
    return got;
}

/* Whether c, a class of arena, churns its spans (see KEEP_CHURN). */
static bool churning(const struct central *c, unsigned arena)
{
    return c->retakes >= KEEP_CHURN_RETAKES ||
           (c->retakes >= KEEP_CHURN_JOIN_RETAKES &&
            __atomic_load_n(&arena_retakes[arena], __ATOMIC_RELAXED) >= KEEP_CHURN_ARENA_RETAKES);
}

/* Empty spans c, a class of arena, keeps committed, one of them of span_size bytes (see
 * KEEP_CHURN). */
static unsigned keep_empty(const struct central *c, unsigned arena, size_t span_size,
                           uint32_t slot_size)
{
    if (!churning(c, arena))
        return slot_size <= KEEP_EMPTY_MAX_SLOT ? 1u : 0u;
    uint32_t peak = c->peak_now > c->peak_last ? c->peak_now : c->peak_last;
    size_t keep = peak - c->in_use;
    if (keep > HWT_SLAB_KEEP_CHURN_MAX_BYTES / span_size)
        keep = HWT_SLAB_KEEP_CHURN_MAX_BYTES / span_size;
    return keep > KEEP_CHURN ? (unsigned)keep : KEEP_CHURN;
}

static void span_became_empty_locked(struct central *c, struct hwt_span *s)
{
    HWT_CHECK(s->nfree == s->nslots);
    hwt_slab_span_unlink(&c->partial, s);
    c->in_use--;
    if (++c->events >= HWT_SLAB_PEAK_WINDOW) {
        c->peak_last = c->peak_now;
        c->peak_now = c->in_use;
        c->events = 0;
    }
    unsigned keep = keep_empty(c, s->arena, hwt_span_bytes(s), s->slot_size);
    /* more kept than the peak now allows: one retires at each event, as it falls */
    if (c->nempty > keep) {
        struct hwt_span *kept = c->empty;
        unlink_unused_locked(c, &c->empty, kept);
        retire_locked(c, kept);
    }
    if (c->nempty < keep) {
        hwt_slab_span_push(&c->empty, s, HWT_SPAN_LIST_EMPTY);
        c->nempty++;
        return;
    }
    retire_locked(c, s);
}

void hwt_slab_give(unsigned cls, const struct hwt_slab_ref *slots, unsigned n)
{
    /* each slot to its span's arena: one lock at a time, kept while the arena stays; and
     * the span kept while the slots are its own (a drain's are often one span's, in the
     * order a refill took them, so most slots skip the page map lookup) */
    struct central *c = NULL;
    struct hwt_span *s = NULL;
    for (unsigned i = 0; i < n; i++) {
        if (s == NULL || slots[i].addr - s->base >= hwt_span_bytes(s)) {
            s = hwt_slab_span_of(slots[i].addr);
            HWT_CHECK(s != NULL && s->cls == cls);
            struct central *sc = &centrals[s->arena][cls];
            if (sc != c) {
                if (c != NULL)
                    hwt_unlock(&c->lock);
                c = sc;
                hwt_lock(&c->lock);
            }
        }
        uint32_t idx = hwt_slab_index(s, slots[i].addr);
        /* a slot handed back is one of the span's, at its start */
        HWT_CHECK(idx < s->nslots && s->base + (uintptr_t)idx * s->slot_size == slots[i].addr);
        uint64_t bit = UINT64_C(1) << (idx % BITS_PER_WORD);
        HWT_CHECK((s->free_bits[idx / BITS_PER_WORD] & bit) == 0);
        s->free_bits[idx / BITS_PER_WORD] |= bit;
        if (s->nfree++ == 0)
            hwt_slab_span_push(&c->partial, s, HWT_SPAN_LIST_PARTIAL);
        if (HWT_HEAP_WALKS)
            HWT_CHECK(hwt_slab_span_consistent(s));
        if (s->nfree == s->nslots) {
            span_became_empty_locked(c, s);
            s = NULL; /* given back, maybe: none of the other slots is its */
        }
    }
    if (c != NULL)
        hwt_unlock(&c->lock);
    tick_if_due();
}

/* In a fork child: gives back one slot found in a dead thread's cache bin, which the fork
 * snapshot may have caught mid-update: a drain that had given its slots back but not yet
 * shortened the bin, a push whose count was ahead of its slot, so the entry may be stale,
 * a duplicate, already available in its span, or even a live object. Such entries are
 * dropped (a slot leaked at worst); only a slot that is certainly out of its span and not
 * live goes back. Single-threaded (the child), but takes the lock all the same. */
bool hwt_slab_give_adopted(unsigned cls, uintptr_t addr)
{
    struct hwt_span *s = hwt_slab_span_of(addr);
    if (s == NULL || s->cls != cls || s->slot_size == 0)
        return false;
    uint32_t idx = hwt_slab_index(s, addr);
    if (idx >= s->nslots || s->base + (uintptr_t)idx * s->slot_size != addr)
        return false;
    if (hwt_slab_slot_state(hwt_slab_slot_load(&s->slots[idx])) == HWT_SLOT_LIVE)
        return false;
    struct central *c = &centrals[s->arena][cls];
    uint64_t bit = UINT64_C(1) << (idx % BITS_PER_WORD);
    hwt_lock(&c->lock);
    bool ok = s->list != HWT_SPAN_LIST_RELEASED && s->list != HWT_SPAN_LIST_EMPTY &&
              (s->free_bits[idx / BITS_PER_WORD] & bit) == 0;
    hwt_unlock(&c->lock);
    if (ok)
        hwt_slab_give(cls, &(struct hwt_slab_ref){addr, &s->slots[idx]}, 1);
    return ok;
}

void hwt_slab_lock_all(void)
{
    hwt_lock_mark(&arenas_locked, HWT_ARENAS);
    for (unsigned a = 0; a < HWT_ARENAS; a++)
        for (unsigned i = 0; i < HWT_NUM_CLASSES; i++)
            hwt_lock(&centrals[a][i].lock);
    hwt_slab_region_lock();
}

void hwt_slab_unlock_all(void)
{
    hwt_slab_region_unlock();
    for (unsigned a = 0; a < HWT_ARENAS; a++)
        for (unsigned i = 0; i < HWT_NUM_CLASSES; i++)
            hwt_unlock(&centrals[a][i].lock);
}

void hwt_slab_reset_locks(void)
{
    unsigned n = __atomic_load_n(&arenas_locked, __ATOMIC_RELAXED);
    for (unsigned a = 0; a < n && a < HWT_ARENAS; a++)
        for (unsigned i = 0; i < HWT_NUM_CLASSES; i++)
            hwt_lock_reset(&centrals[a][i].lock);
    hwt_slab_span_reset_lock();
    hwt_slab_region_reset_lock();
}

uint64_t hwt_slab_mapped(void)
{
    return __atomic_load_n(&heap_mapped_bytes, __ATOMIC_RELAXED);
}

/* Clears *arg unless s is fully free with its pages given back (so no slot of it is live or
 * in any cache): a region whose spans all are can be given back. All locks held. */
static void note_unreleased(struct hwt_span *s, void *arg)
{
    if (s->list != HWT_SPAN_LIST_RELEASED)
        *(bool *)arg = false;
}

/* One span of a region about to be given back: off its released list, into the husks. */
static void forget_span(struct hwt_span *s, void *arg)
{
    (void)arg;
    hwt_slab_span_unlink(&centrals[s->arena][s->cls].released, s);
    hwt_slab_span_husk(s);
}

size_t hwt_slab_unmap_free_regions(void)
{
    size_t given = 0;
    hwt_slab_lock_all();
    for (uint32_t i = 0; i < hwt_slab_region_count; i++) {
        struct hwt_region *r = &hwt_slab_regions[i];
        bool released = true;
        if (r->base == HWT_REGION_DEAD)
            continue;
        hwt_slab_region_spans(r, r->cursor, note_unreleased, &released);
        if (released) {
            hwt_slab_region_spans(r, r->cursor, forget_span, NULL);
            hwt_slab_region_retire(r);
            given += HWT_REGION_SIZE;
        }
    }
    hwt_slab_unlock_all();
    return given;
}

size_t hwt_slab_trim(void)
{
    size_t given = 0;
    hwt_lock_mark(&arenas_locked, HWT_ARENAS);
    for (unsigned k = 0; k < HWT_ARENAS * HWT_NUM_CLASSES; k++) {
        struct central *c = &centrals[k / HWT_NUM_CLASSES][k % HWT_NUM_CLASSES];
        hwt_lock(&c->lock);
        given += release_all_locked(c, &c->empty) + release_all_locked(c, &c->young) +
                 release_all_locked(c, &c->old);
        hwt_unlock(&c->lock);
    }
    return given;
}
