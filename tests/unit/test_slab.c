/* SPDX-License-Identifier: MIT */
/* Slab slots: taking, preparing, checking, releasing and describing small objects. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "arch/mte.h"
#include "lookup.h"
#include "meta.h"
#include "init.h"
#include "os.h"
#include "size_class.h"
#include "slab.h"
#include "slab_region.h"
#include "slab_span.h"
#include "slot.h"

#define ALLOC_STACK 0x1234u
#define FREE_STACK 0x5678u

/* The slab's take and give on bare addresses (the thread caches keep slot words too). */
static unsigned take_addrs(unsigned cls, uintptr_t *out, unsigned n)
{
    struct hwt_slab_ref refs[1024];
    assert_true(n <= 1024);
    unsigned got = hwt_slab_take(0, cls, refs, n);
    for (unsigned i = 0; i < got; i++) {
        struct hwt_span *s = hwt_slab_span_of(refs[i].addr);
        assert_ptr_equal(refs[i].slot, &s->slots[hwt_slab_index(s, refs[i].addr)]);
        out[i] = refs[i].addr;
    }
    return got;
}

static void give_refs(unsigned cls, const uintptr_t *in, unsigned n)
{
    struct hwt_slab_ref refs[1024];
    assert_true(n <= 1024);
    for (unsigned i = 0; i < n; i++) {
        struct hwt_span *s = hwt_slab_span_of(in[i]);
        refs[i] = (struct hwt_slab_ref){in[i], &s->slots[hwt_slab_index(s, in[i])]};
    }
    hwt_slab_give(cls, refs, n);
}

/* Gives slots back, and lets the spans that retired go back (two ticks), as they do once
 * unused for longer than a tick. */
static void give_addrs(unsigned cls, const uintptr_t *in, unsigned n)
{
    give_refs(cls, in, n);
    hwt_slab_tick();
    hwt_slab_tick();
}

static int group_setup(void **state)
{
    (void)state;
    hwt_init_ensure();
    return 0;
}

/* In the slab heap: some span holds the address. */
static bool in_heap(uintptr_t addr)
{
    return hwt_slab_span_of(addr) != NULL;
}

/* Largest power of two dividing x. */
static size_t pow2_factor(size_t x)
{
    return x & (~x + 1);
}

static uintptr_t take_one(unsigned cls)
{
    uintptr_t addr = 0;
    assert_int_equal(take_addrs(cls, &addr, 1), 1);
    return addr;
}

/* Takes a slot of the class of requested bytes and makes it live. */
static void *new_object(size_t requested, uintptr_t *addr_out)
{
    uintptr_t addr = take_one(hwt_size_class_of(requested));
    void *p = hwt_slot_prepare(addr, requested, false, ALLOC_STACK);
    assert_non_null(p);
    assert_int_equal(mte_untag(p), addr);
    if (addr_out != NULL)
        *addr_out = addr;
    return p;
}

/* Frees a live object through check + release and gives the slot back. */
static void free_object(void *p)
{
    struct hwt_span *s = NULL;
    uint32_t idx = 0;
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    uintptr_t addr = hwt_slot_release(s, idx, FREE_STACK);
    assert_int_equal(addr, mte_untag(p));
    give_addrs(s->cls, &addr, 1);
}

static void test_taken_slots_are_in_the_heap_and_slot_aligned(void **state)
{
    (void)state;
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        size_t size = hwt_size_class_size(cls);
        uintptr_t slots[16];
        unsigned n = take_addrs(cls, slots, 16);
        assert_int_equal(n, 16);
        for (unsigned i = 0; i < n; i++) {
            assert_true(in_heap(slots[i]));
            assert_true(in_heap(slots[i] + size - 1));
            assert_int_equal(slots[i] % 16, 0);
            assert_int_equal(slots[i] % pow2_factor(size), 0);
            struct hwt_span *s = hwt_slab_span_of(slots[i]);
            assert_non_null(s);
            assert_int_equal(s->cls, cls);
            assert_int_equal(s->slot_size, size);
            assert_int_equal(s->base % hwt_span_bytes(s), 0);
            assert_int_equal((slots[i] - s->base) % size, 0);
            assert_true(slots[i] + size <= s->base + hwt_span_bytes(s));
            /* slots never overlap */
            for (unsigned j = 0; j < i; j++)
                assert_true(slots[j] + size <= slots[i] || slots[i] + size <= slots[j]);
        }
        give_addrs(cls, slots, n);
    }
}

static void test_slots_span_more_than_one_span(void **state)
{
    (void)state;
    unsigned cls = hwt_size_class_of(4000);
    size_t size = hwt_size_class_size(cls);
    unsigned per_span = (unsigned)(hwt_size_class_span(cls) / size);
    enum { MAX = 256 };
    assert_true(2 * per_span + 1 <= MAX);
    uintptr_t slots[MAX];
    unsigned n = 2 * per_span + 1;
    for (unsigned i = 0; i < n; i++)
        slots[i] = take_one(cls);
    for (unsigned i = 0; i < n; i++) {
        assert_true(in_heap(slots[i]));
        for (unsigned j = 0; j < i; j++)
            assert_true(slots[j] + size <= slots[i] || slots[i] + size <= slots[j]);
    }
    give_addrs(cls, slots, n);
    /* every span is now empty: one kept, the others released; taking again works */
    for (unsigned i = 0; i < n; i++) {
        slots[i] = take_one(cls);
        assert_true(in_heap(slots[i]));
        if (hwt_mte_active)
            assert_int_equal(mte_load_tag(slots[i]), HWT_TAG_FREE);
    }
    for (unsigned i = 0; i < n; i++) {
        void *p = hwt_slot_prepare(slots[i], size, true, ALLOC_STACK);
        unsigned char *b = p;
        for (size_t k = 0; k < size; k++)
            assert_int_equal(b[k], 0);
        memset(p, 0x5a, size);
        free_object(p);
    }
}

/* Takes n slots of cls, or gives them back, in calls of at most 1024. */
static void take_many(unsigned cls, uintptr_t *slots, unsigned n)
{
    for (unsigned i = 0; i < n; i += 1024) {
        unsigned k = n - i < 1024 ? n - i : 1024;
        assert_int_equal(take_addrs(cls, slots + i, k), k);
    }
}

static void give_many(unsigned cls, const uintptr_t *slots, unsigned n)
{
    for (unsigned i = 0; i < n; i += 1024)
        give_addrs(cls, slots + i, n - i < 1024 ? n - i : 1024);
}

/* Takes CHURN_SPANS spans' worth of cls's slots and gives them back, rounds times; kept[i]:
 * the bytes mapped above base after round i. */
enum { CHURN_SPANS = 6, CHURN_MAX = 256, CHURN_ROUNDS_MAX = 16 };
static void churn_rounds(unsigned cls, unsigned rounds, uint64_t base, uint64_t *kept)
{
    unsigned per_span = (unsigned)(hwt_size_class_span(cls) / hwt_size_class_size(cls));
    unsigned n = CHURN_SPANS * per_span;
    uintptr_t slots[CHURN_MAX];
    assert_true(n <= CHURN_MAX && rounds <= CHURN_ROUNDS_MAX);
    for (unsigned round = 0; round < rounds; round++) {
        assert_int_equal(take_addrs(cls, slots, n), n);
        give_addrs(cls, slots, n);
        kept[round] = hwt_slab_mapped() - base;
    }
}

/* A class of slots above 4 KiB keeps no empty span: its spans go back to the OS as they
 * empty. Once it has taken 64 of them back, it churns them: it keeps as many as it had in use
 * at its recent peak. Two windows of span events later, with one span in use at a time, it
 * keeps four. A trim gives those back too. */
static void test_churning_class_keeps_its_peak_of_spans(void **state)
{
    (void)state;
    unsigned cls = hwt_size_class_of(12000); /* no other test of this file uses it */
    size_t span = hwt_size_class_span(cls);
    unsigned per_span = (unsigned)(span / hwt_size_class_size(cls));
    enum { SPANS = CHURN_SPANS, ROUNDS = 64 / CHURN_SPANS + 2 };
    uintptr_t slots[CHURN_MAX];
    uint64_t kept_after[ROUNDS];
    const uint64_t base = hwt_slab_mapped();
    churn_rounds(cls, ROUNDS, base, kept_after);
    if (kept_after[0] != 0)
        fail_msg("a class of %zu-byte slots kept %llu bytes of empty spans",
                 hwt_size_class_size(cls), (unsigned long long)kept_after[0]);
    if (kept_after[ROUNDS - 1] != SPANS * span)
        fail_msg("after %u rounds of %d spans, a churning class kept %llu bytes of empty "
                 "spans, not its peak of %d spans of %zu",
                 ROUNDS, SPANS, (unsigned long long)kept_after[ROUNDS - 1], SPANS, span);
    /* one span in use at a time: 2 events a round */
    for (unsigned round = 0; round < HWT_SLAB_PEAK_WINDOW + SPANS; round++) {
        assert_int_equal(take_addrs(cls, slots, per_span), per_span);
        give_addrs(cls, slots, per_span);
        uint64_t kept = hwt_slab_mapped() - base;
        /* past the first window's end: the peak is the last window's */
        if (round == HWT_SLAB_PEAK_WINDOW / 2 + 64 && kept != SPANS * span)
            fail_msg("a churning class gave back its peak's spans after %u events",
                     2 * (round + 1));
    }
    uint64_t kept = hwt_slab_mapped() - base;
    if (kept != 4 * span)
        fail_msg("two windows after its peak, a churning class kept %llu bytes of empty spans, "
                 "not 4 spans of %zu",
                 (unsigned long long)kept, span);
    uint64_t before = hwt_slab_mapped();
    hwt_slab_trim();
    assert_true(before - hwt_slab_mapped() >= 4 * span); /* other classes' kept spans too */
}

/* A churning class keeps at most HWT_SLAB_KEEP_CHURN_MAX_BYTES of empty spans, whatever its
 * peak was. */
static void test_churning_class_keeps_a_bounded_peak(void **state)
{
    (void)state;
    unsigned cls = hwt_size_class_of(HWT_SMALL_MAX); /* no other test of this file uses it */
    size_t span = hwt_size_class_span(cls);
    unsigned per_span = (unsigned)(span / hwt_size_class_size(cls));
    unsigned spans = (unsigned)(HWT_SLAB_KEEP_CHURN_MAX_BYTES / span) + 8;
    assert_true(spans >= 64); /* one round takes back enough to churn */
    unsigned n = spans * per_span;
    uintptr_t *slots = hwt_meta_alloc(n * sizeof(*slots), 16);
    assert_non_null(slots);
    const uint64_t base = hwt_slab_mapped();
    for (unsigned round = 0; round < 3; round++) {
        take_many(cls, slots, n);
        give_many(cls, slots, n);
    }
    uint64_t kept = hwt_slab_mapped() - base;
    if (kept != HWT_SLAB_KEEP_CHURN_MAX_BYTES)
        fail_msg("a churning class with a peak of %u spans of %zu kept %llu bytes, not %zu", spans,
                 span, (unsigned long long)kept, HWT_SLAB_KEEP_CHURN_MAX_BYTES);
    hwt_slab_trim();
}

/* A class that keeps no empty span (slots above 4 KiB, not churning) retires an emptied
 * span: it stays committed, the next take reuses it, and unused it goes back at the second
 * tick after it retired, not at the first. */
static void test_emptied_span_retires_before_it_goes_back(void **state)
{
    (void)state;
    unsigned cls = hwt_size_class_of(6000); /* no other test of this file uses it */
    size_t span = hwt_size_class_span(cls);
    unsigned per_span = (unsigned)(span / hwt_size_class_size(cls));
    uintptr_t slots[CHURN_MAX], again[CHURN_MAX];
    assert_true(hwt_size_class_size(cls) > 4096 && per_span <= CHURN_MAX);
    hwt_slab_tick(); /* whatever other tests retired goes back */
    hwt_slab_tick();
    const uint64_t base = hwt_slab_mapped();
    assert_int_equal(take_addrs(cls, slots, per_span), per_span);
    assert_int_equal(hwt_slab_mapped() - base, span);
    give_refs(cls, slots, per_span);
    if (hwt_slab_mapped() - base != span)
        fail_msg("an emptied span of %zu went back at once: %llu bytes left committed", span,
                 (unsigned long long)(hwt_slab_mapped() - base));
    assert_int_equal(take_addrs(cls, again, per_span), per_span);
    assert_ptr_equal(hwt_slab_span_of(again[0]), hwt_slab_span_of(slots[0]));
    assert_int_equal(hwt_slab_mapped() - base, span);
    give_refs(cls, again, per_span);
    hwt_slab_tick();
    if (hwt_slab_mapped() - base != span)
        fail_msg("a retired span went back at the first tick");
    hwt_slab_tick();
    if (hwt_slab_mapped() != base)
        fail_msg("a retired span was still committed after two ticks (%llu bytes)",
                 (unsigned long long)(hwt_slab_mapped() - base));
}

/* Spans retire up to HWT_SLAB_RETIRE_MAX_BYTES in all: past it an emptied span goes back at
 * once, so a program that frees much and then stops allocating holds no more than that. */
static void test_retired_spans_are_bounded(void **state)
{
    (void)state;
    unsigned cls = hwt_size_class_of(5000); /* no other test of this file uses it */
    size_t span = hwt_size_class_span(cls);
    unsigned per_span = (unsigned)(span / hwt_size_class_size(cls));
    unsigned spans = (unsigned)(HWT_SLAB_RETIRE_MAX_BYTES / span) + 16;
    unsigned n = spans * per_span;
    uintptr_t *slots = hwt_meta_alloc(n * sizeof(*slots), 16);
    assert_non_null(slots);
    assert_true(hwt_size_class_size(cls) > 4096 && hwt_size_class_size(cls) != 6144);
    hwt_slab_tick(); /* whatever other tests retired goes back */
    hwt_slab_tick();
    const uint64_t base = hwt_slab_mapped();
    take_many(cls, slots, n);
    assert_true(hwt_slab_mapped() - base >= (uint64_t)spans * span);
    for (unsigned i = 0; i < n; i += 1024)
        give_refs(cls, slots + i, n - i < 1024 ? n - i : 1024);
    uint64_t held = hwt_slab_mapped() - base;
    if (held == 0 || held > HWT_SLAB_RETIRE_MAX_BYTES)
        fail_msg("%u emptied spans of %zu left %llu bytes committed, not 1 to %zu", spans, span,
                 (unsigned long long)held, HWT_SLAB_RETIRE_MAX_BYTES);
    hwt_slab_tick();
    hwt_slab_tick();
    assert_int_equal(hwt_slab_mapped(), base);
}

/* Once the arena's classes have taken back 256 spans together, a class churns from its
 * eighth take-back: it keeps its peak of spans after 2 rounds of 6, not after 64 take-backs. */
static void test_churning_arena_makes_a_class_churn_sooner(void **state)
{
    (void)state;
    /* no other test of this file uses these classes */
    unsigned big = hwt_size_class_of(14000), cls = hwt_size_class_of(10000);
    assert_true(big != cls && hwt_size_class_size(big) > 4096 && hwt_size_class_size(cls) > 4096);
    unsigned big_per_span = (unsigned)(hwt_size_class_span(big) / hwt_size_class_size(big));
    unsigned big_n = 260 * big_per_span;
    uintptr_t *many = hwt_meta_alloc(big_n * sizeof(*many), 16);
    assert_non_null(many);
    /* 260 spans given back, then taken back: the arena's 256 */
    take_many(big, many, big_n);
    give_many(big, many, big_n);
    take_many(big, many, big_n);
    give_many(big, many, big_n);
    hwt_slab_trim();

    size_t span = hwt_size_class_span(cls);
    uint64_t kept[3];
    churn_rounds(cls, 3, hwt_slab_mapped(), kept);
    if (kept[2] != CHURN_SPANS * span)
        fail_msg("after 12 take-backs in a churning arena, a class kept %llu bytes of empty "
                 "spans, not its peak of %d spans of %zu",
                 (unsigned long long)kept[2], CHURN_SPANS, span);
    hwt_slab_trim();
}

/* One give of slots from three spans, interleaved: each span gets back exactly its own (give
 * keeps the span it looked up while the slots are in it, and looks again when they leave
 * it or when the span became empty and went back). */
static void test_give_of_interleaved_spans_counts_each_span(void **state)
{
    (void)state;
    unsigned cls = hwt_size_class_of(4000);
    unsigned per_span = (unsigned)(hwt_size_class_span(cls) / hwt_size_class_size(cls));
    enum { MAX = 256, SPANS = 8 };
    unsigned n = 2 * per_span + 1;
    assert_true(n <= MAX);
    uintptr_t taken[MAX], order[MAX];
    for (unsigned i = 0; i < n; i++)
        taken[i] = take_one(cls);
    /* the spans, and the slots of each in turn: a, b, c, a, b, c, ... */
    struct hwt_span *span[SPANS] = {0};
    unsigned of[SPANS] = {0}, before[SPANS], seen = 0;
    uintptr_t by[SPANS][MAX];
    for (unsigned i = 0; i < n; i++) {
        struct hwt_span *sp = hwt_slab_span_of(taken[i]);
        unsigned k = 0;
        while (k < seen && span[k] != sp)
            k++;
        assert_true(k < SPANS);
        if (k == seen)
            span[seen++] = sp;
        by[k][of[k]++] = taken[i];
    }
    assert_true(seen >= 2);
    unsigned m = 0;
    for (unsigned j = 0; m < n; j++)
        for (unsigned k = 0; k < seen; k++)
            if (j < of[k])
                order[m++] = by[k][j];
    for (unsigned k = 0; k < seen; k++)
        before[k] = span[k]->nfree;
    give_addrs(cls, order, n);
    for (unsigned k = 0; k < seen; k++) {
        assert_int_equal(span[k]->nfree, before[k] + of[k]);
        assert_true(hwt_slab_span_consistent(span[k]));
    }
}

static void test_aligned_classes_give_aligned_slots(void **state)
{
    (void)state;
    for (size_t align = 16; align <= HWT_SMALL_MAX; align *= 2) {
        unsigned cls = hwt_size_class_aligned(100, align);
        assert_true(cls < HWT_NUM_CLASSES);
        uintptr_t slots[9];
        unsigned n = take_addrs(cls, slots, 9);
        assert_int_equal(n, 9);
        for (unsigned i = 0; i < n; i++) {
            assert_true(in_heap(slots[i]));
            if (slots[i] % align != 0)
                fail_msg("class %u slot %#lx not aligned to %zu", cls, (unsigned long)slots[i],
                         align);
        }
        give_addrs(cls, slots, n);
    }
}

static void test_prepared_object_is_usable_and_live(void **state)
{
    (void)state;
    uintptr_t addr;
    unsigned char *p = new_object(100, &addr);
    memset(p, 0xab, 100);
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(p[i], 0xab);

    struct hwt_span *s = NULL;
    uint32_t idx = UINT32_MAX;
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    assert_ptr_equal(s, hwt_slab_span_of(addr));
    assert_int_equal(idx, (addr - s->base) / s->slot_size);
    assert_int_equal(hwt_slab_usable(s, idx), 112);

    if (hwt_mte_active) {
        unsigned tag = mte_ptr_tag(p);
        assert_true(tag != HWT_TAG_UNTAGGED && tag != HWT_TAG_FREE);
        for (size_t off = 0; off < 112; off += 16)
            assert_int_equal(mte_load_tag(addr + off), tag);
        /* the slot's tail past the requested size stays free-tagged */
        assert_int_equal(mte_load_tag(addr + 112), HWT_TAG_FREE);
    } else {
        assert_int_equal(mte_ptr_tag(p), HWT_TAG_UNTAGGED);
    }
    free_object(p);
}

static void test_zeroing_prepare_clears_old_contents(void **state)
{
    (void)state;
    uintptr_t addr;
    unsigned char *p = new_object(200, &addr);
    memset(p, 0xee, 200);
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    assert_int_equal(hwt_slot_release(s, idx, FREE_STACK), addr);
    /* the thread cache reuses a released slot directly */
    unsigned char *q = hwt_slot_prepare(addr, 200, true, ALLOC_STACK);
    assert_int_equal(mte_untag(q), addr);
    for (size_t i = 0; i < 200; i++)
        assert_int_equal(q[i], 0);
    free_object(q);
}

static void test_interior_pointer_is_invalid(void **state)
{
    (void)state;
    unsigned char *p = new_object(64, NULL);
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check(p + 16, &s, &idx), HWT_FREE_INVALID);
    assert_int_equal(hwt_slab_check(p + 1, &s, &idx), HWT_FREE_INVALID);
    assert_int_equal(hwt_slab_check(p + 63, &s, &idx), HWT_FREE_INVALID);
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    free_object(p);
}

static void test_released_pointer_is_a_double_free(void **state)
{
    (void)state;
    uintptr_t addr;
    void *p = new_object(48, &addr);
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    assert_int_equal(hwt_slot_release(s, idx, FREE_STACK), addr);
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_DOUBLE);
    /* a second release of the same slot loses */
    assert_int_equal(hwt_slot_release(s, idx, FREE_STACK), 0);
    if (hwt_mte_active)
        assert_int_equal(mte_load_tag(addr), HWT_TAG_FREE);
    give_addrs(s->cls, &addr, 1);
    /* still a double free once the slot is back in its span */
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_DOUBLE);
}

static void test_never_used_slot_is_invalid(void **state)
{
    (void)state;
    /* 12 KiB objects: no other test uses this class */
    unsigned cls = hwt_size_class_of(12 * 1024);
    uintptr_t addr = take_one(cls);
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check((void *)addr, &s, &idx), HWT_FREE_INVALID);
    give_addrs(cls, &addr, 1);
}

static void test_pointers_outside_the_heap_are_not_ours(void **state)
{
    (void)state;
    int local = 0;
    static int global;
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check(&local, &s, &idx), HWT_FREE_NOT_OURS);
    assert_int_equal(hwt_slab_check(&global, &s, &idx), HWT_FREE_NOT_OURS);
    assert_int_equal(hwt_slab_check(NULL, &s, &idx), HWT_FREE_NOT_OURS);
    assert_int_equal(hwt_slab_check((void *)UINTPTR_MAX, &s, &idx), HWT_FREE_NOT_OURS);
    struct hwt_object o;
    assert_false(hwt_lookup_addr((uintptr_t)&local, &o));
    assert_false(hwt_lookup_addr((uintptr_t)&global, &o));
    assert_null(hwt_slab_span_of((uintptr_t)&local));
}

static void test_span_tail_past_the_last_slot_is_invalid(void **state)
{
    (void)state;
    /* 48-byte slots do not divide a span: the bytes after the last slot hold no object */
    unsigned cls = hwt_size_class_of(48);
    uintptr_t addr = take_one(cls);
    struct hwt_span *span = hwt_slab_span_of(addr);
    assert_non_null(span);
    size_t slot = hwt_size_class_size(cls);
    assert_int_equal(slot, 48);
    assert_int_not_equal(hwt_span_bytes(span) % slot, 0);
    uintptr_t tail = span->base + (hwt_span_bytes(span) / slot) * slot;
    assert_int_equal(tail % 16, 0);
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check((void *)tail, &s, &idx), HWT_FREE_INVALID);
    struct hwt_object o;
    assert_false(hwt_lookup_addr(tail, &o));
    give_addrs(cls, &addr, 1);
}

static void test_lookup_describes_live_and_freed_objects(void **state)
{
    (void)state;
    uintptr_t addr;
    void *p = new_object(300, &addr);
    size_t cls_size = hwt_size_class_size(hwt_size_class_of(300));
    assert_int_equal(cls_size, 320);

    struct hwt_object o;
    memset(&o, 0xff, sizeof(o));
    assert_true(hwt_lookup_addr(addr + 37, &o));
    assert_int_equal(o.start, addr);
    assert_int_equal(o.requested, 300);
    assert_int_equal(o.size, 304);
    assert_int_equal(o.class_size, 320);
    assert_int_equal(o.region_size, 320);
    assert_int_equal(o.tag, mte_ptr_tag(p));
    assert_false(o.large);
    assert_true(o.live);
    assert_true(o.ever_used);
    assert_true(o.sampled);
    assert_int_equal(o.alloc_stack, ALLOC_STACK);
    assert_int_equal(o.free_stack, 0);

    /* the last byte of the slot, past the requested size, still belongs to it */
    assert_true(hwt_lookup_addr(addr + cls_size - 1, &o));
    assert_int_equal(o.start, addr);

    unsigned live_tag = mte_ptr_tag(p);
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    assert_int_equal(hwt_slot_release(s, idx, FREE_STACK), addr);
    memset(&o, 0xff, sizeof(o));
    assert_true(hwt_lookup_addr(addr + 299, &o));
    assert_int_equal(o.start, addr);
    assert_int_equal(o.requested, 300);
    assert_int_equal(o.class_size, 320);
    assert_int_equal(o.tag, live_tag);
    assert_false(o.large);
    assert_false(o.live);
    assert_true(o.ever_used);
    assert_int_equal(o.alloc_stack, ALLOC_STACK);
    assert_int_equal(o.free_stack, FREE_STACK);
    give_addrs(s->cls, &addr, 1);
}

static void test_lookup_neighbor_walks_the_span(void **state)
{
    (void)state;
    /* 7 KiB objects: no other test uses this class */
    unsigned cls = hwt_size_class_of(7 * 1024);
    size_t size = hwt_size_class_size(cls);
    uintptr_t a = take_one(cls);
    struct hwt_span *s = hwt_slab_span_of(a);
    uint32_t idx = (uint32_t)((a - s->base) / size);
    struct hwt_object o;
    if (idx + 1 < s->nslots) {
        assert_true(hwt_lookup_neighbor(a, 1, &o));
        assert_int_equal(o.start, a + size);
    }
    if (idx > 0) {
        assert_true(hwt_lookup_neighbor(a, -1, &o));
        assert_int_equal(o.start, a - size);
    }
    assert_false(hwt_lookup_neighbor(a, -(long)idx - 1, &o));
    assert_false(hwt_lookup_neighbor(a, (long)(s->nslots - idx), &o));
    give_addrs(cls, &a, 1);
}

static void test_neighbours_get_different_tags(void **state)
{
    (void)state;
    if (!hwt_mte_active)
        skip();
    unsigned cls = hwt_size_class_of(32);
    enum { N = 64 };
    uintptr_t slots[N];
    void *ptrs[N];
    assert_int_equal(take_addrs(cls, slots, N), N);
    for (unsigned i = 0; i < N; i++)
        ptrs[i] = hwt_slot_prepare(slots[i], 32, false, ALLOC_STACK);
    for (unsigned i = 0; i < N; i++) {
        unsigned tag = mte_ptr_tag(ptrs[i]);
        assert_true(tag != HWT_TAG_UNTAGGED && tag != HWT_TAG_FREE);
        for (unsigned j = 0; j < N; j++) {
            if (slots[j] == slots[i] + 32 || slots[j] + 32 == slots[i])
                assert_int_not_equal(tag, mte_ptr_tag(ptrs[j]));
        }
    }
    for (unsigned i = 0; i < N; i++)
        free_object(ptrs[i]);
}

/* Frees a live object of a slot the test keeps (not given back). */
static void release_kept(void *p)
{
    struct hwt_span *s = NULL;
    uint32_t idx = 0;
    assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
    assert_int_equal(hwt_slot_release(s, idx, FREE_STACK), mte_untag(p));
}

/* A slot made live again and again, with a live neighbour: its tag is never the
 * neighbour's. */
static void expect_tag_apart_from(uintptr_t addr, unsigned neighbour_tag)
{
    for (int round = 0; round < 64; round++) {
        void *p = hwt_slot_prepare(addr, 32, false, ALLOC_STACK);
        assert_int_not_equal(mte_ptr_tag(p), neighbour_tag);
        release_kept(p);
    }
}

/* The last slot of one span and the first of the next, side by side: each one's tag pick
 * meets a guard word on that side and reads the other span's slot word instead (slot.h),
 * so the two never share a tag either. */
static void test_neighbours_across_a_span_edge_get_different_tags(void **state)
{
    (void)state;
    if (!hwt_mte_active)
        skip();
    unsigned cls = hwt_size_class_of(32);
    enum { N = 4096 }; /* 8 spans' worth of 16 KiB */
    static uintptr_t slots[N];
    unsigned n = 0;
    while (n < N) {
        unsigned got = take_addrs(cls, slots + n, 1024);
        assert_int_equal(got, 1024);
        n += got;
    }
    uintptr_t last = 0, first = 0;
    for (unsigned i = 0; i < n && first == 0; i++)
        for (unsigned j = 0; j < n; j++)
            if (slots[j] == slots[i] + 32 &&
                hwt_slab_span_of(slots[j]) != hwt_slab_span_of(slots[i])) {
                last = slots[i];
                first = slots[j];
                break;
            }
    if (first == 0)
        fail_msg("no two spans of 32-byte slots side by side among %u slots", n);
    /* the right side: the next span's first slot live, the last one made live again */
    void *right = hwt_slot_prepare(first, 32, false, ALLOC_STACK);
    expect_tag_apart_from(last, mte_ptr_tag(right));
    release_kept(right);
    /* the left side */
    void *left = hwt_slot_prepare(last, 32, false, ALLOC_STACK);
    expect_tag_apart_from(first, mte_ptr_tag(left));
    release_kept(left);
    for (unsigned i = 0; i < n; i += 1024)
        give_addrs(cls, slots + i, 1024);
}

static void test_reused_slot_never_gets_its_old_tag(void **state)
{
    (void)state;
    if (!hwt_mte_active)
        skip();
    uintptr_t addr;
    void *p = new_object(80, &addr);
    for (int round = 0; round < 50; round++) {
        struct hwt_span *s;
        uint32_t idx;
        assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_OK);
        assert_int_equal(hwt_slot_release(s, idx, FREE_STACK), addr);
        void *q = hwt_slot_prepare(addr, 80, false, ALLOC_STACK);
        assert_int_equal(mte_untag(q), addr);
        assert_int_not_equal(mte_ptr_tag(q), mte_ptr_tag(p));
        /* the stale pointer to the reused slot is a double free, the new one is fine */
        assert_int_equal(hwt_slab_check(p, &s, &idx), HWT_FREE_DOUBLE);
        assert_int_equal(hwt_slab_check(q, &s, &idx), HWT_FREE_OK);
        p = q;
    }
    free_object(p);
}

/* The HWTAG_DEBUG=2 heap walk: a span agrees with itself, and a bitmap that marks a live
 * slot available, or a count that disagrees with the bitmap, is caught. */
static void test_span_walk_catches_inconsistency(void **state)
{
    (void)state;
    uintptr_t addr;
    void *p = new_object(48, &addr);
    struct hwt_span *s = hwt_slab_span_of(addr);
    uint32_t idx = hwt_slab_index(s, addr);
    uint64_t bit = UINT64_C(1) << (idx % 64);
    assert_true(hwt_slab_span_consistent(s));
    s->free_bits[idx / 64] |= bit; /* live, yet marked available */
    s->nfree++;
    assert_false(hwt_slab_span_consistent(s));
    s->free_bits[idx / 64] &= ~bit;
    assert_false(hwt_slab_span_consistent(s)); /* count one too high */
    s->nfree--;
    assert_true(hwt_slab_span_consistent(s));
    free_object(p);
}

/* The page maps' top level has an entry per region's size modulo 256 GiB: an address that far from
 * an object shares its region's entry, and must still be no object of ours. */
static void test_address_sharing_a_regions_entry_is_not_ours(void **state)
{
    (void)state;
    uintptr_t addr;
    void *p = new_object(64, &addr);
    uintptr_t alias = addr ^ ((uintptr_t)1 << (HWT_REGION_SHIFT + HWT_REGMAP_BITS));
    assert_int_equal(HWT_REGMAP_INDEX(alias), HWT_REGMAP_INDEX(addr));
    assert_non_null(hwt_slab_span_in(hwt_slab_regmap, alias)); /* the shared entry's span */
    assert_null(hwt_slab_span_of(alias));
    struct hwt_span *s;
    uint32_t idx;
    assert_int_equal(hwt_slab_check((void *)alias, &s, &idx), HWT_FREE_NOT_OURS);
    struct hwt_object o;
    assert_false(hwt_lookup_addr(alias, &o));
    assert_true(hwt_lookup_addr(addr, &o));
    free_object(p);
}

/* A new region never takes a top-level entry another region holds: with every free entry
 * taken, making one fails (out of memory) and overwrites none; freed again, it succeeds. */
static void test_new_region_never_takes_a_held_entry(void **state)
{
    (void)state;
    static struct hwt_span *empty_map[HWT_REGION_SIZE / HWT_MAP_PAGE];
    enum { ENTRIES = 1u << HWT_REGMAP_BITS };
    static bool faked[ENTRIES];
    assert_int_not_equal(hwt_slab_region_carve(HWT_SPAN_MIN), 0); /* the region is not empty */
    uint32_t regions = hwt_slab_region_count;
    for (unsigned i = 0; i < ENTRIES; i++) {
        faked[i] = hwt_slab_regmap[i] == NULL;
        if (faked[i])
            hwt_slab_regmap[i] = empty_map;
    }
    uintptr_t failed = hwt_slab_region_carve(HWT_REGION_SIZE);
    unsigned overwritten = 0;
    for (unsigned i = 0; i < ENTRIES; i++) {
        if (faked[i]) {
            overwritten += hwt_slab_regmap[i] != empty_map;
            hwt_slab_regmap[i] = NULL;
        }
    }
    assert_int_equal(failed, 0);
    assert_int_equal(overwritten, 0);
    assert_int_equal(hwt_slab_region_count, regions);
    uintptr_t base = hwt_slab_region_carve(HWT_REGION_SIZE);
    assert_int_not_equal(base, 0);
    assert_true(faked[HWT_REGMAP_INDEX(base)]);
    assert_ptr_not_equal(hwt_slab_regmap[HWT_REGMAP_INDEX(base)], NULL);
}

/* hwt_slab_index_exact, free's test of a slot start without a multiply back, against the
 * plain arithmetic: every class, every byte offset of a span and past it, and addresses in
 * the region sharing the page map's entry. */
static void test_exact_index_matches_division_for_every_class(void **state)
{
    (void)state;
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        size_t span = hwt_size_class_span(cls), size = hwt_size_class_size(cls);
        assert_true(span <= HWT_SPAN_MAX);
        struct hwt_span s = {0};
        s.base = (uintptr_t)1 << 40;
        s.slot_size = (uint32_t)size;
        s.nslots = (uint16_t)(span / size);
        s.slots_bytes = (uint32_t)(s.nslots * size);
        s.slot_recip = (uint32_t)(((UINT64_C(1) << 32) + size - 1) / size);
        unsigned wrong = 0;
        for (uintptr_t off = 0; off < span + 64; off++) {
            uint32_t idx = UINT32_MAX;
            bool exact = hwt_slab_index_exact(&s, s.base, s.base + off, &idx);
            bool want = off < s.slots_bytes && off % size == 0;
            wrong += exact != want || (want && idx != off / size);
        }
        uint32_t idx;
        wrong += hwt_slab_index_exact(&s, s.base, s.base + ((uintptr_t)1 << 38), &idx);
        wrong += hwt_slab_index_exact(&s, s.base, s.base - ((uintptr_t)1 << 38), &idx);
        wrong += hwt_slab_index_exact(&s, s.base, s.base - size, &idx);
        if (wrong != 0)
            fail_msg("class %u (%zu-byte slots, %zu-byte span): %u wrong", cls, size, span, wrong);
    }
    /* a span still being made (zeroed metadata) holds no slot */
    struct hwt_span blank = {0};
    uint32_t idx;
    assert_false(hwt_slab_index_exact(&blank, 0, 0, &idx));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_taken_slots_are_in_the_heap_and_slot_aligned),
        cmocka_unit_test(test_span_walk_catches_inconsistency),
        cmocka_unit_test(test_slots_span_more_than_one_span),
        cmocka_unit_test(test_give_of_interleaved_spans_counts_each_span),
        cmocka_unit_test(test_aligned_classes_give_aligned_slots),
        cmocka_unit_test(test_prepared_object_is_usable_and_live),
        cmocka_unit_test(test_zeroing_prepare_clears_old_contents),
        cmocka_unit_test(test_interior_pointer_is_invalid),
        cmocka_unit_test(test_released_pointer_is_a_double_free),
        cmocka_unit_test(test_never_used_slot_is_invalid),
        cmocka_unit_test(test_pointers_outside_the_heap_are_not_ours),
        cmocka_unit_test(test_address_sharing_a_regions_entry_is_not_ours),
        cmocka_unit_test(test_new_region_never_takes_a_held_entry),
        cmocka_unit_test(test_exact_index_matches_division_for_every_class),
        cmocka_unit_test(test_span_tail_past_the_last_slot_is_invalid),
        cmocka_unit_test(test_lookup_describes_live_and_freed_objects),
        cmocka_unit_test(test_lookup_neighbor_walks_the_span),
        cmocka_unit_test(test_neighbours_get_different_tags),
        cmocka_unit_test(test_neighbours_across_a_span_edge_get_different_tags),
        cmocka_unit_test(test_reused_slot_never_gets_its_old_tag),
        cmocka_unit_test(test_churning_class_keeps_its_peak_of_spans),
        cmocka_unit_test(test_churning_class_keeps_a_bounded_peak),
        cmocka_unit_test(test_churning_arena_makes_a_class_churn_sooner),
        cmocka_unit_test(test_emptied_span_retires_before_it_goes_back),
        cmocka_unit_test(test_retired_spans_are_bounded),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
