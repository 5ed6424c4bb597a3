/* SPDX-License-Identifier: MIT */
/* Size-class arithmetic checked against an independent model of the class table. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch/mte.h"
#include "init.h"
#include "os.h"
#include "size_class.h"
#include "../common/size_class_model.h"

static void test_every_small_size_fits_its_class(void **state)
{
    (void)state;
    for (size_t n = 1; n <= HWT_SMALL_MAX; n++) {
        unsigned cls = hwt_size_class_of(n);
        assert_in_range(cls, 0, HWT_NUM_CLASSES - 1);
        assert_true(hwt_size_class_size(cls) >= n);
    }
}

static void test_slot_size_matches_the_documented_table(void **state)
{
    (void)state;
    for (size_t n = 1; n <= HWT_SMALL_MAX; n++)
        assert_int_equal(hwt_size_class_size(hwt_size_class_of(n)), model_slot_size(n));
}

static void test_known_slot_sizes(void **state)
{
    (void)state;
    static const struct {
        size_t request, slot;
    } cases[] = {
        {1, 16},      {16, 16},       {17, 32},       {255, 256},     {256, 256},
        {257, 288},   {288, 288},     {289, 320},     {511, 512},     {512, 512},
        {513, 576},   {1000, 1024},   {1025, 1152},   {4096, 4096},   {4097, 4608},
        {9000, 9216}, {15000, 15360}, {16383, 16384}, {16384, 16384},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(hwt_size_class_size(hwt_size_class_of(cases[i].request)), cases[i].slot);
}

static void test_zero_maps_to_the_smallest_class(void **state)
{
    (void)state;
    assert_int_equal(hwt_size_class_of(0), 0);
    assert_int_equal(hwt_size_class_size(0), 16);
}

static void test_classes_are_monotonic(void **state)
{
    (void)state;
    unsigned prev_cls = hwt_size_class_of(1);
    for (size_t n = 2; n <= HWT_SMALL_MAX; n++) {
        unsigned cls = hwt_size_class_of(n);
        assert_true(cls == prev_cls || cls == prev_cls + 1);
        prev_cls = cls;
    }
    for (unsigned cls = 1; cls < HWT_NUM_CLASSES; cls++)
        assert_true(hwt_size_class_size(cls) > hwt_size_class_size(cls - 1));
}

static void test_every_class_is_reached(void **state)
{
    (void)state;
    assert_int_equal(hwt_size_class_of(1), 0);
    assert_int_equal(hwt_size_class_of(HWT_SMALL_MAX), HWT_NUM_CLASSES - 1);
    assert_int_equal(hwt_size_class_size(HWT_NUM_CLASSES - 1), HWT_SMALL_MAX);
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        size_t size = hwt_size_class_size(cls);
        /* a class is the smallest one that holds its own slot size */
        assert_int_equal(hwt_size_class_of(size), cls);
        if (cls > 0)
            assert_int_equal(hwt_size_class_of(hwt_size_class_size(cls - 1) + 1), cls);
    }
}

static void test_slot_sizes_are_granule_aligned(void **state)
{
    (void)state;
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++)
        assert_int_equal(hwt_size_class_size(cls) % 16, 0);
}

static void test_internal_waste_is_bounded(void **state)
{
    (void)state;
    for (size_t n = 1; n <= HWT_SMALL_MAX; n++) {
        size_t waste = hwt_size_class_size(hwt_size_class_of(n)) - n;
        if (n > 256)
            assert_true(waste <= n / 8);
        else
            assert_true(waste < 16);
    }
}

/* Spans hold at least 8 slots up to 4 KiB objects and at least 4 above (fewer big objects
 * idle in a half-used span). */
static void test_span_holds_enough_slots(void **state)
{
    (void)state;
    hwt_init_ensure();
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        size_t span = hwt_size_class_span(cls);
        assert_int_equal(span & (span - 1), 0);
        assert_true(span >= hwt_os_page_size);
        assert_true(span / hwt_size_class_size(cls) >= (hwt_size_class_size(cls) > 4096 ? 4u : 8u));
    }
}

static void test_aligned_class_gives_aligned_slots(void **state)
{
    (void)state;
    static const size_t sizes[] = {0,    1,    15,   16,   17,   100,  255,   256,   257,
                                   1000, 3000, 4096, 5000, 8191, 8192, 12000, 16383, 16384};
    for (size_t align = 1; align <= HWT_SMALL_MAX; align *= 2) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            size_t size = sizes[i];
            unsigned cls = hwt_size_class_aligned(size, align);
            /* the 16384 class is aligned to every power of two up to itself */
            assert_in_range(cls, 0, HWT_NUM_CLASSES - 1);
            size_t slot = hwt_size_class_size(cls);
            assert_true(slot >= size);
            assert_true(slot >= align);
            assert_int_equal(slot % align, 0);
            /* and nothing smaller would have done */
            for (unsigned c = 0; c < cls; c++) {
                size_t s = hwt_size_class_size(c);
                assert_true(s < size || s < align || s % align != 0);
            }
        }
    }
}

static void test_aligned_class_rejects_what_cannot_fit(void **state)
{
    (void)state;
    assert_int_equal(hwt_size_class_aligned(HWT_SMALL_MAX + 1, 16), HWT_NUM_CLASSES);
    assert_int_equal(hwt_size_class_aligned(16, HWT_SMALL_MAX * 2), HWT_NUM_CLASSES);
    assert_int_equal(hwt_size_class_aligned(SIZE_MAX, 16), HWT_NUM_CLASSES);
    assert_int_equal(hwt_size_class_aligned(SIZE_MAX - 15, 16), HWT_NUM_CLASSES);
    assert_int_equal(hwt_size_class_aligned(16, (size_t)1 << 63), HWT_NUM_CLASSES);
}

/* The tagging plans for every DC G(Z)VA block size the architecture allows: blocks exactly
 * where they apply (slots that start on blocks, more than four granules, at most
 * HWT_PLAN_REST_MAX granules past the size), covering the usable bytes and staying in the
 * slot, with the rest what lies past them; granule stores where no block fits. Then the live lut:
 * the class and the plan for this machine's block, which a slot of another class does not get. */
static void test_tagging_plans_cover_exactly(void **state)
{
    (void)state;
    hwt_init_ensure();
    unsigned planned = 0, granules = 0;
    for (size_t blk = 16; blk <= 2048; blk *= 2) {
        for (size_t g = 0; g <= HWT_SMALL_MAX / 16; g++) {
            size_t slot = hwt_size_class_size(hwt_size_class_of(g * 16)), usable = g * 16;
            size_t blocks = (usable + blk - 1) / blk, rest = (blocks * blk - usable) / 16;
            bool applies = g > 4 && slot % blk == 0 && rest <= HWT_PLAN_REST_MAX;
            unsigned plan = hwt_size_class_plan(g, blk);
            if (!applies) {
                /* under a block, granule stores alone; otherwise no plan */
                assert_int_equal(plan, g > 4 && usable < blk ? HWT_PLAN_GRANULES : 0);
                granules += plan != 0;
                continue;
            }
            assert_int_equal(HWT_PLAN_BLOCKS(plan), blocks);
            assert_int_equal(HWT_PLAN_REST(plan), rest);
            assert_true(blocks * blk >= usable && blocks * blk <= slot);
            planned++;
        }
    }
    assert_true(planned > 1000 && granules > 100);
    /* 1000 bytes (1008 usable) in the 1024 class with QEMU's 512-byte blocks */
    assert_int_equal(hwt_size_class_plan(63, 512), 2 << 4 | 1);
    assert_int_equal(hwt_size_classes.dc_block, hwt_mte_dcz_block);
    for (size_t g = 0; g <= HWT_SMALL_MAX / 16; g++) {
        uint32_t e = hwt_size_class_lut[g];
        unsigned cls = HWT_LUT_CLASS(e);
        assert_int_equal(cls, hwt_size_class_of(g * 16));
        assert_int_equal(e >> 8 & 0xff, 0);
        assert_int_equal(HWT_LUT_PLAN(e), hwt_size_class_plan(g, hwt_mte_dcz_block));
        assert_int_equal(hwt_size_class_plan_for(cls, g * 16), e);
        if (cls + 1 < HWT_NUM_CLASSES)
            assert_int_equal(hwt_size_class_plan_for(cls + 1, g * 16), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_small_size_fits_its_class),
        cmocka_unit_test(test_slot_size_matches_the_documented_table),
        cmocka_unit_test(test_known_slot_sizes),
        cmocka_unit_test(test_zero_maps_to_the_smallest_class),
        cmocka_unit_test(test_classes_are_monotonic),
        cmocka_unit_test(test_every_class_is_reached),
        cmocka_unit_test(test_slot_sizes_are_granule_aligned),
        cmocka_unit_test(test_internal_waste_is_bounded),
        cmocka_unit_test(test_span_holds_enough_slots),
        cmocka_unit_test(test_aligned_class_gives_aligned_slots),
        cmocka_unit_test(test_aligned_class_rejects_what_cannot_fit),
        cmocka_unit_test(test_tagging_plans_cover_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
