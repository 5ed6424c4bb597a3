/* SPDX-License-Identifier: MIT */
/* The history ring: events found by tag and address, a free after its allocation names the
 * object freed, a later allocation makes it live again, events are ordered by time
 * whichever thread's batch holds them, a slot entry gives both stacks, and the freed
 * objects of a span whose metadata is given up stay named. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/mte.h"
#include "history.h"
#include "init.h"
#include "size_class.h"
#include "slab.h"
#include "slab_region.h"
#include "slab_slot.h"
#include "slot.h"

/* A made-up object: tag 3, 64 bytes at an address no other test uses. */
#define ADDR ((uintptr_t)0x7e5a000100)
#define AT(off, tag) ((ADDR + (off)) | (uintptr_t)(tag) << 56)
#define PTR(tag) ((const void *)AT(0, tag))

static int group_setup(void **state)
{
    (void)state;
    hwt_init_ensure();
    return hwt_history_init() ? 0 : -1;
}

/* Waits for the clock to move, so the next event is strictly later. */
static void tick(void)
{
    uint64_t t = hwt_history_clock();
    while (hwt_history_clock() == t)
        ;
}

static void test_free_after_alloc_names_the_freed_object(void **state)
{
    (void)state;
    struct hwt_history_cursor a = {0};
    struct hwt_history_event alloc, freed;
    hwt_history_put(&a, PTR(3), 64, 11, false);
    tick();
    hwt_history_put(&a, PTR(3), 64, 22, true);
    assert_true(hwt_history_find(AT(8, 3), &alloc, &freed));
    assert_int_equal(alloc.stack, 11);
    assert_int_equal(alloc.size, 64);
    assert_int_not_equal(freed.seq, 0);
    assert_int_equal(freed.stack, 22);
    assert_true(hwt_history_is_free(&freed));
    /* another tag, or an address past the object, is another object */
    assert_false(hwt_history_find(AT(8, 5), &alloc, &freed));
    assert_false(hwt_history_find(AT(64, 3), &alloc, &freed));
}

static void test_later_allocation_is_live(void **state)
{
    (void)state;
    struct hwt_history_cursor a = {0};
    struct hwt_history_event alloc, freed;
    tick();
    hwt_history_put(&a, PTR(3), 64, 33, false);
    assert_true(hwt_history_find(AT(0, 3), &alloc, &freed));
    assert_int_equal(alloc.stack, 33);
    assert_int_equal(freed.seq, 0);
}

/* Two threads' batches: the free sits in the batch claimed first (lower in the ring) but
 * happens after the allocation in the other batch; time decides, not place. */
static void test_events_are_ordered_by_time_not_place(void **state)
{
    (void)state;
    struct hwt_history_cursor first = {0}, second = {0};
    struct hwt_history_event alloc, freed;
    assert_true(hwt_history_claim(&first));
    assert_true(hwt_history_claim(&second));
    assert_true(first.next < second.next || first.next >= second.end);
    tick();
    hwt_history_put(&second, PTR(4), 48, 44, false);
    tick();
    hwt_history_put(&first, PTR(4), 48, 55, true);
    assert_true(hwt_history_find(AT(16, 4), &alloc, &freed));
    assert_int_equal(alloc.stack, 44);
    assert_int_not_equal(freed.seq, 0);
    assert_int_equal(freed.stack, 55);
}

/* A slot entry (the word of a freed object whose slot is reused) names the object with
 * both its stacks; a word of a slot never used names nothing. */
static void test_slot_entry_names_alloc_and_free(void **state)
{
    (void)state;
    struct hwt_history_cursor a = {0};
    struct hwt_history_event alloc, freed;
    uintptr_t addr = ADDR + 0x1000;
    tick();
    hwt_history_put_slot(&a, addr, hwt_slab_slot_word(HWT_SLOT_FREED, 6, 40, 66, 77));
    hwt_history_put_slot(&a, addr + 64, hwt_slab_slot_word(HWT_SLOT_UNUSED, 0, 0, 0, 0));
    assert_true(hwt_history_find((addr + 32) | (uintptr_t)6 << 56, &alloc, &freed));
    assert_int_equal(alloc.stack, 66);
    assert_int_equal(alloc.size, 40);
    assert_int_equal(alloc.ptr, addr | (uintptr_t)6 << 56);
    assert_false(hwt_history_is_free(&alloc));
    assert_int_not_equal(freed.seq, 0);
    assert_true(hwt_history_is_free(&freed));
    assert_int_equal(freed.stack, 77);
    /* past the object's granules, another tag, or the never-used slot: nothing */
    assert_false(hwt_history_find((addr + 48) | (uintptr_t)6 << 56, &alloc, &freed));
    assert_false(hwt_history_find((addr + 8) | (uintptr_t)5 << 56, &alloc, &freed));
    assert_false(hwt_history_find(addr + 64, &alloc, &freed));
    /* a later allocation of the same tag there is live */
    tick();
    hwt_history_put(&a, (const void *)(addr | (uintptr_t)6 << 56), 40, 88, false);
    assert_true(hwt_history_find((addr + 8) | (uintptr_t)6 << 56, &alloc, &freed));
    assert_int_equal(alloc.stack, 88);
    assert_int_equal(freed.seq, 0);
}

/* A whole span of objects allocated and freed, its span released and its region given
 * back: the span's metadata becomes a husk and its slot words are forgotten, so only the
 * entries hwt_slab_span_husk wrote can still name an object of it, with both stacks. */
static void test_given_up_span_keeps_its_freed_objects(void **state)
{
    (void)state;
    if (!hwt_mte_active || !hwt_history_recording())
        skip(); /* the husk records only tagged objects' words, with stacks on */
    enum { ALLOC_STACK = 0x1234, FREE_STACK = 0x5678, SIZE = 40 };
    unsigned cls = hwt_size_class_of(SIZE);
    unsigned n = (unsigned)(hwt_size_class_span(cls) / hwt_size_class_size(cls));
    struct hwt_slab_ref refs[1024];
    assert_true(n <= 1024);
    for (unsigned got = 0; got < n;) {
        unsigned k = hwt_slab_take(0, cls, refs + got, n - got);
        assert_int_not_equal(k, 0);
        got += k;
    }
    const void *first = NULL, *last = NULL;
    for (unsigned i = 0; i < n; i++) {
        void *p = hwt_slot_prepare(refs[i].addr, SIZE, false, ALLOC_STACK);
        assert_non_null(p);
        first = first != NULL ? first : p;
        last = p;
    }
    for (unsigned i = 0; i < n; i++) {
        struct hwt_span *s = hwt_slab_span_of(refs[i].addr);
        assert_int_equal(hwt_slot_release(s, hwt_slab_index(s, refs[i].addr), FREE_STACK),
                         refs[i].addr);
    }
    hwt_slab_give(cls, refs, n);
    hwt_slab_trim(); /* the empty span released ... */
    /* ... and its region (this binary's only slab objects) given back, the span a husk */
    assert_true(hwt_slab_unmap_free_regions() >= HWT_REGION_SIZE);
    assert_null(hwt_slab_span_of(refs[0].addr));
    const void *objs[] = {first, last};
    for (unsigned i = 0; i < 2; i++) {
        struct hwt_history_event alloc, freed;
        assert_true(hwt_history_find((uintptr_t)objs[i] + 8, &alloc, &freed));
        assert_int_equal(alloc.ptr, (uintptr_t)objs[i]);
        assert_int_equal(alloc.size, SIZE);
        assert_int_equal(alloc.stack, ALLOC_STACK);
        assert_int_not_equal(freed.seq, 0);
        assert_int_equal(freed.stack, FREE_STACK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_after_alloc_names_the_freed_object),
        cmocka_unit_test(test_later_allocation_is_live),
        cmocka_unit_test(test_events_are_ordered_by_time_not_place),
        cmocka_unit_test(test_slot_entry_names_alloc_and_free),
        cmocka_unit_test(test_given_up_span_keeps_its_freed_objects),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
