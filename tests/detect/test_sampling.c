/* SPDX-License-Identifier: MIT */
/* HWTAG_SAMPLE=10 (set by CMake for this test): 1 of every 10 allocations of order >= 3 is
 * tagged, the others are left untagged; smaller ones are always tagged; the counters add
 * up; an overflow past a sampled large object is caught, past an untagged one it is not
 * (the documented trade, as the kernel's kasan.page_alloc.sample). */
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "hwtag.h"

#define N 1000
#define SAMPLE 10

static void test_one_in_ten_large_allocations_is_tagged(void **state)
{
    (void)state;
    static void *objs[N];
    struct hwtag_stats before, after;
    if (!tagging_active())
        skip();
    assert_int_equal(hwtag_get_stats(&before, sizeof(before)), 0);
    unsigned tagged = 0, first = N;
    for (int i = 0; i < N; i++) {
        objs[i] = malloc(64 * 1024); /* order 4 with 4 KiB pages */
        assert_non_null(objs[i]);
        memset(objs[i], 1, 64 * 1024);
        if (ptr_tag(objs[i]) != 0) {
            tagged++;
            if (first == N)
                first = (unsigned)i;
        }
    }
    assert_int_equal(hwtag_get_stats(&after, sizeof(after)), 0);
    for (int i = 0; i < N; i++)
        free(objs[i]);
    /* the per-thread countdown tags exactly the 1st of every 10 */
    assert_int_equal(tagged, N / SAMPLE);
    for (int i = 0; i < N; i++) {
        if (ptr_tag(objs[i]) != 0)
            assert_int_equal((unsigned)i % SAMPLE, first % SAMPLE);
    }
    assert_int_equal(after.large_allocs - before.large_allocs, N);
    assert_int_equal(after.large_tagged - before.large_tagged, N / SAMPLE);
    assert_int_equal(after.large_skipped - before.large_skipped, N - N / SAMPLE);
    assert_int_equal(after.large_by_order[4] - before.large_by_order[4], N);
    assert_int_equal(after.large_skipped_by_order[4] - before.large_skipped_by_order[4],
                     N - N / SAMPLE);
}

static void test_smaller_allocations_are_always_tagged(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    static const size_t sizes[] = {16, 1000, 9000, 16384};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (int i = 0; i < 200; i++) {
            void *p = malloc(sizes[s]); /* up to order 2: below HWTAG_SAMPLE_ORDER */
            assert_int_not_equal(ptr_tag(p), 0);
            free(p);
        }
    }
}

static void overflow_sampled(void *arg)
{
    (void)arg;
    /* find a tagged one: at most SAMPLE allocations away */
    for (int i = 0; i < 2 * SAMPLE; i++) {
        unsigned char *volatile p = malloc(40000);
        if (ptr_tag(p) != 0) {
            if (write(1, (const void *)&p, sizeof(p)) < 0)
                _exit(5);
            p[40000] = 1;
            _exit(0);
        }
    }
    _exit(6);
}

static void test_overflow_past_sampled_large_object_is_caught(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(CATCH_SEGV, overflow_sampled, NULL, &r));
    assert_true(r.faulted);
    assert_int_equal(r.si_code, SEGV_MTESERR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_in_ten_large_allocations_is_tagged),
        cmocka_unit_test(test_smaller_allocations_are_always_tagged),
        cmocka_unit_test(test_overflow_past_sampled_large_object_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
