/* SPDX-License-Identifier: MIT */
/* Page orders and the per-thread 1-in-N sampling countdown of large allocations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "init.h"
#include "options.h"
#include "os.h"
#include "sample.h"

static struct hwt_options saved_opts;

static int setup(void **state)
{
    (void)state;
    hwt_init_ensure();
    saved_opts = hwt_opts;
    hwt_sample_reset_thread();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hwt_opts = saved_opts;
    hwt_sample_reset_thread();
    return 0;
}

static void set_sampling(uint32_t every, uint8_t order)
{
    hwt_opts.sample = every;
    hwt_opts.sample_order = order;
    hwt_sample_reset_thread();
}

static void test_page_order_rounds_up(void **state)
{
    (void)state;
    size_t page = hwt_os_page_size;
    assert_int_equal(hwt_sample_order(0), 0);
    assert_int_equal(hwt_sample_order(1), 0);
    assert_int_equal(hwt_sample_order(page), 0);
    assert_int_equal(hwt_sample_order(page + 1), 1);
    assert_int_equal(hwt_sample_order(2 * page), 1);
    assert_int_equal(hwt_sample_order(2 * page + 1), 2);
    assert_int_equal(hwt_sample_order(3 * page), 2);
    assert_int_equal(hwt_sample_order(4 * page), 2);
    assert_int_equal(hwt_sample_order(5 * page), 3);
    assert_int_equal(hwt_sample_order(8 * page), 3);
    assert_int_equal(hwt_sample_order(8 * page + 1), 4);
    for (unsigned order = 1; order < 40; order++) {
        size_t pages = (size_t)1 << order;
        assert_int_equal(hwt_sample_order(pages * page), order);
        assert_int_equal(hwt_sample_order(pages * page - page + 1), order);
        assert_int_equal(hwt_sample_order(pages * page + 1), order + 1);
    }
}

static void test_order_three_is_32k_with_4k_pages(void **state)
{
    (void)state;
    if (hwt_os_page_size != 4096)
        skip();
    assert_int_equal(hwt_sample_order(32 * 1024), 3);
    assert_int_equal(hwt_sample_order(32 * 1024 + 1), 4);
    assert_int_equal(hwt_sample_order(16 * 1024 + 1), 3);
}

static void test_one_in_ten_starting_with_the_first(void **state)
{
    (void)state;
    set_sampling(10, 3);
    unsigned tagged = 0;
    for (unsigned i = 0; i < 100; i++) {
        bool t = hwt_sample_should_tag(3 + i % 5);
        assert_int_equal(t, i % 10 == 0);
        tagged += t;
    }
    assert_int_equal(tagged, 10);
}

static void test_small_orders_are_always_tagged_and_not_counted(void **state)
{
    (void)state;
    set_sampling(10, 3);
    unsigned seen = 0;
    for (unsigned i = 0; i < 300; i++) {
        if (i % 3 != 0) {
            /* below the sampling order: always tagged, and invisible to the countdown */
            assert_true(hwt_sample_should_tag(i % 3 == 1 ? 0 : 2));
            continue;
        }
        assert_int_equal(hwt_sample_should_tag(3), seen % 10 == 0);
        seen++;
    }
}

static void test_sample_one_tags_everything(void **state)
{
    (void)state;
    set_sampling(1, 0);
    for (unsigned i = 0; i < 100; i++)
        assert_true(hwt_sample_should_tag(i % 20));
}

static void test_sample_order_zero_samples_every_size(void **state)
{
    (void)state;
    set_sampling(3, 0);
    for (unsigned i = 0; i < 30; i++)
        assert_int_equal(hwt_sample_should_tag(0), i % 3 == 0);
}

static void test_huge_sample_tags_only_the_first(void **state)
{
    (void)state;
    set_sampling(UINT32_MAX, 3);
    assert_true(hwt_sample_should_tag(3));
    for (unsigned i = 0; i < 10000; i++)
        assert_false(hwt_sample_should_tag(3));
    assert_true(hwt_sample_should_tag(2));
}

static void test_reset_restarts_the_sequence(void **state)
{
    (void)state;
    set_sampling(4, 3);
    assert_true(hwt_sample_should_tag(3));
    assert_false(hwt_sample_should_tag(3));
    hwt_sample_reset_thread();
    assert_true(hwt_sample_should_tag(3));
    assert_false(hwt_sample_should_tag(3));
    assert_false(hwt_sample_should_tag(3));
    assert_false(hwt_sample_should_tag(3));
    assert_true(hwt_sample_should_tag(3));
}

struct thread_run {
    unsigned count;
    bool result[32];
};

static void *sample_in_thread(void *arg)
{
    struct thread_run *run = arg;
    for (unsigned i = 0; i < run->count; i++)
        run->result[i] = hwt_sample_should_tag(5);
    return NULL;
}

static void test_each_thread_has_its_own_countdown(void **state)
{
    (void)state;
    set_sampling(10, 3);
    /* main thread: the 1st is tagged, the next two are skipped */
    assert_true(hwt_sample_should_tag(4));
    assert_false(hwt_sample_should_tag(4));
    assert_false(hwt_sample_should_tag(4));

    /* a new thread starts fresh: its own 1st is tagged, then 9 skipped, then tagged */
    struct thread_run run = {.count = 21};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, sample_in_thread, &run), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    for (unsigned i = 0; i < run.count; i++)
        assert_int_equal(run.result[i], i % 10 == 0);

    /* and it did not disturb the main thread: its 4th..10th are skipped, 11th tagged */
    for (unsigned i = 3; i < 10; i++)
        assert_false(hwt_sample_should_tag(4));
    assert_true(hwt_sample_should_tag(4));
    assert_false(hwt_sample_should_tag(4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_page_order_rounds_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_three_is_32k_with_4k_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_in_ten_starting_with_the_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_orders_are_always_tagged_and_not_counted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sample_one_tags_everything, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sample_order_zero_samples_every_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_sample_tags_only_the_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_restarts_the_sequence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_thread_has_its_own_countdown, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
