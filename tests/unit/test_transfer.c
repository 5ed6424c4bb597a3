/* SPDX-License-Identifier: MIT */
/* Transfer caches: batches kept and handed out whole, a bounded number per class, and
 * flushed back to their spans. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "init.h"
#include "size_class.h"
#include "slab.h"
#include "transfer.h"

#define CLS 3u      /* 64-byte slots */
#define BIG_CLS 40u /* above the largest class kept */
#define BATCH 16u

static int group_setup(void **state)
{
    (void)state;
    hwt_init_ensure();
    hwt_transfer_flush();
    return 0;
}

static void test_batch_round_trip(void **state)
{
    (void)state;
    struct hwt_slab_ref in[BATCH], out[BATCH];
    assert_int_equal(hwt_slab_take(0, CLS, in, BATCH), BATCH);
    assert_true(hwt_transfer_put(0, CLS, in, BATCH));
    assert_true(hwt_transfer_holds(CLS, in[5].addr));
    /* a batch bigger than the taker wants stays */
    assert_int_equal(hwt_transfer_take(0, CLS, out, BATCH - 1), 0);
    assert_int_equal(hwt_transfer_take(0, CLS, out, BATCH), BATCH);
    for (unsigned i = 0; i < BATCH; i++)
        assert_int_equal(out[i].addr, in[i].addr);
    assert_false(hwt_transfer_holds(CLS, in[5].addr));
    assert_int_equal(hwt_transfer_take(0, CLS, out, BATCH), 0);
    hwt_slab_give(CLS, out, BATCH);
}

static void test_bounded_and_flushed(void **state)
{
    (void)state;
    struct hwt_slab_ref refs[8][BATCH];
    unsigned kept = 0;
    for (unsigned b = 0; b < 8; b++) {
        assert_int_equal(hwt_slab_take(0, CLS, refs[b], BATCH), BATCH);
        if (hwt_transfer_put(0, CLS, refs[b], BATCH))
            kept++;
        else
            hwt_slab_give(CLS, refs[b], BATCH);
    }
    assert_true(kept > 0 && kept < 8);
    /* the flush gives every kept slot back to its span: taking them again must not trap */
    hwt_transfer_flush();
    assert_false(hwt_transfer_holds(CLS, refs[0][0].addr));
    struct hwt_slab_ref again[BATCH];
    assert_int_equal(hwt_slab_take(0, CLS, again, BATCH), BATCH);
    hwt_slab_give(CLS, again, BATCH);
}

static void test_big_classes_not_kept(void **state)
{
    (void)state;
    struct hwt_slab_ref ref;
    assert_true(hwt_size_class_size(BIG_CLS) > 1024);
    assert_int_equal(hwt_slab_take(0, BIG_CLS, &ref, 1), 1);
    assert_false(hwt_transfer_put(0, BIG_CLS, &ref, 1));
    hwt_slab_give(BIG_CLS, &ref, 1);
}

/* Arenas share nothing: a batch kept in one is not taken from another, and two arenas
 * take their slots from different spans; a slot freed through any arena goes back to
 * its own span's. */
static void test_arenas_apart(void **state)
{
    (void)state;
    struct hwt_slab_ref a[BATCH], b[BATCH], out[BATCH];
    hwt_transfer_flush();
    assert_int_equal(hwt_slab_take(0, CLS, a, BATCH), BATCH);
    assert_int_equal(hwt_slab_take(1, CLS, b, BATCH), BATCH);
    for (unsigned i = 0; i < BATCH; i++) {
        struct hwt_span *sa = hwt_slab_span_of(a[i].addr), *sb = hwt_slab_span_of(b[i].addr);
        assert_int_equal(sa->arena, 0);
        assert_int_equal(sb->arena, 1);
        for (unsigned k = 0; k < BATCH; k++)
            assert_ptr_not_equal(sa, hwt_slab_span_of(b[k].addr));
    }
    assert_true(hwt_transfer_put(1, CLS, b, BATCH));
    assert_int_equal(hwt_transfer_take(0, CLS, out, BATCH), 0);
    assert_int_equal(hwt_transfer_take(2, CLS, out, BATCH), 0);
    assert_int_equal(hwt_transfer_take(1, CLS, out, BATCH), BATCH);
    /* arena 1's slots given back through one call with arena 0's: each to its own span */
    struct hwt_slab_ref mixed[2 * BATCH];
    for (unsigned i = 0; i < BATCH; i++) {
        mixed[2 * i] = a[i];
        mixed[2 * i + 1] = out[i];
    }
    hwt_slab_give(CLS, mixed, 2 * BATCH);
    struct hwt_slab_ref again[BATCH];
    assert_int_equal(hwt_slab_take(0, CLS, again, BATCH), BATCH);
    for (unsigned i = 0; i < BATCH; i++)
        assert_int_equal(hwt_slab_span_of(again[i].addr)->arena, 0);
    hwt_slab_give(CLS, again, BATCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_round_trip),
        cmocka_unit_test(test_bounded_and_flushed),
        cmocka_unit_test(test_big_classes_not_kept),
        cmocka_unit_test(test_arenas_apart),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
