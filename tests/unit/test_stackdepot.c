/* SPDX-License-Identifier: MIT */
/* Unit tests of the stack depot: deduplication, round trips, threads and a full pool.
 * The full-pool test fills the depot for good, so it runs last. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stackdepot.h"

#define THREAD_STACKS 2000u

static void make_stack(uintptr_t *pcs, unsigned n, uintptr_t seed)
{
    for (unsigned i = 0; i < n; i++)
        pcs[i] = 0x400000u + seed * 0x1000u + i * 4u;
}

static void test_same_stack_same_id(void **state)
{
    uintptr_t pcs[8];
    uint32_t a, b;

    (void)state;
    make_stack(pcs, 8, 1);
    a = hwt_stackdepot_put(7, pcs, 8);
    b = hwt_stackdepot_put(7, pcs, 8);
    assert_int_not_equal(a, 0);
    assert_int_equal(a, b);
}

static void test_distinct_stacks_distinct_ids(void **state)
{
    uintptr_t pcs[8];
    uint32_t a, b, c;

    (void)state;
    make_stack(pcs, 8, 2);
    a = hwt_stackdepot_put(7, pcs, 8);
    b = hwt_stackdepot_put(8, pcs, 8); /* other thread, same frames */
    c = hwt_stackdepot_put(7, pcs, 7); /* shorter */
    pcs[3]++;
    assert_int_not_equal(a, b);
    assert_int_not_equal(a, c);
    assert_int_not_equal(b, c);
    assert_int_not_equal(hwt_stackdepot_put(7, pcs, 8), a);
}

static void test_get_round_trip(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES], out[HWT_STACK_MAX_FRAMES];
    uint32_t id, tid = 0;

    (void)state;
    make_stack(pcs, HWT_STACK_MAX_FRAMES, 3);
    id = hwt_stackdepot_put(1234, pcs, 5);
    assert_int_equal(hwt_stackdepot_get(id, &tid, out, HWT_STACK_MAX_FRAMES), 5);
    assert_int_equal(tid, 1234);
    assert_memory_equal(out, pcs, 5 * sizeof(uintptr_t));
    /* a shorter buffer gets the innermost frames */
    assert_int_equal(hwt_stackdepot_get(id, &tid, out, 2), 2);
    assert_memory_equal(out, pcs, 2 * sizeof(uintptr_t));
    /* the deepest stack the depot takes */
    id = hwt_stackdepot_put(1, pcs, HWT_STACK_MAX_FRAMES);
    assert_int_equal(hwt_stackdepot_get(id, NULL, out, HWT_STACK_MAX_FRAMES), HWT_STACK_MAX_FRAMES);
    assert_memory_equal(out, pcs, sizeof(pcs));
}

static void test_empty_and_unknown(void **state)
{
    uintptr_t pcs[4] = {1, 2, 3, 4};
    uint32_t tid = 99;

    (void)state;
    assert_int_equal(hwt_stackdepot_put(1, pcs, 0), 0);
    assert_int_equal(hwt_stackdepot_get(0, &tid, pcs, 4), 0);
    assert_int_equal(hwt_stackdepot_get(UINT32_MAX, &tid, pcs, 4), 0);
    assert_int_equal(hwt_stackdepot_get(0x7fffffu, &tid, pcs, 4), 0); /* never handed out */
    assert_int_equal(tid, 99);
}

static void test_usage_counts_stacks(void **state)
{
    uintptr_t pcs[4];
    uint64_t stacks0, bytes0, stacks1, bytes1;

    (void)state;
    hwt_stackdepot_usage(&stacks0, &bytes0);
    make_stack(pcs, 4, 4);
    hwt_stackdepot_put(5, pcs, 4);
    hwt_stackdepot_put(5, pcs, 4);
    hwt_stackdepot_usage(&stacks1, &bytes1);
    assert_int_equal(stacks1, stacks0 + 1);
    assert_true(bytes1 >= bytes0 + 4 * sizeof(uintptr_t));
}

struct put_job {
    uint32_t ids[THREAD_STACKS];
};

static void *put_many(void *arg)
{
    struct put_job *job = arg;
    uintptr_t pcs[6];

    for (unsigned i = 0; i < THREAD_STACKS; i++) {
        make_stack(pcs, 6, 1000 + i);
        job->ids[i] = hwt_stackdepot_put(42, pcs, 6);
    }
    return NULL;
}

static void test_concurrent_puts_agree(void **state)
{
    static struct put_job jobs[2];
    pthread_t threads[2];
    uintptr_t pcs[6], out[6];

    (void)state;
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, put_many, &jobs[t]), 0);
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    for (unsigned i = 0; i < THREAD_STACKS; i++) {
        make_stack(pcs, 6, 1000 + i);
        assert_int_not_equal(jobs[0].ids[i], 0);
        assert_int_equal(jobs[0].ids[i], jobs[1].ids[i]);
        assert_int_equal(hwt_stackdepot_put(42, pcs, 6), jobs[0].ids[i]);
        assert_int_equal(hwt_stackdepot_get(jobs[0].ids[i], NULL, out, 6), 6);
        assert_memory_equal(out, pcs, sizeof(pcs));
    }
}

/* Must run last: the depot stays full. */
static void test_full_depot_returns_zero(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES], out[HWT_STACK_MAX_FRAMES];
    uint32_t first, id = 1;
    uint64_t stacks, bytes;
    unsigned i;

    (void)state;
    make_stack(pcs, HWT_STACK_MAX_FRAMES, 5);
    first = hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES);
    assert_int_not_equal(first, 0);
    /* 64 MiB of 32-frame stacks: far more than any pool this test could be built with */
    for (i = 0; i < (64u << 20) / sizeof(pcs) && id != 0; i++) {
        pcs[0] = 0x10000000u + i;
        id = hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES);
    }
    assert_int_equal(id, 0);
    /* still full, still serving old stacks */
    pcs[0] = 0x20000000u;
    assert_int_equal(hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES), 0);
    make_stack(pcs, HWT_STACK_MAX_FRAMES, 5);
    assert_int_equal(hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES), first);
    assert_int_equal(hwt_stackdepot_get(first, NULL, out, HWT_STACK_MAX_FRAMES),
                     HWT_STACK_MAX_FRAMES);
    assert_memory_equal(out, pcs, sizeof(pcs));
    hwt_stackdepot_usage(&stacks, &bytes);
    assert_true(stacks >= i);
    assert_true(bytes > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_stack_same_id),
        cmocka_unit_test(test_distinct_stacks_distinct_ids),
        cmocka_unit_test(test_get_round_trip),
        cmocka_unit_test(test_empty_and_unknown),
        cmocka_unit_test(test_usage_counts_stacks),
        cmocka_unit_test(test_concurrent_puts_agree),
        cmocka_unit_test(test_full_depot_returns_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
