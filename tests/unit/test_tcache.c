/* SPDX-License-Identifier: MIT */
/* The thread cache's stack cache: two ways a set, so two stacks whose keys fall in one set
 * (a loop's malloc and free sites) are both kept. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tcache.h"

static struct hwt_tcache tc; /* zeroed: an empty stack cache */

/* A stack key (odd, as hwt_unwind_key_end makes them) in set `set`, told apart by n. */
static uint64_t key_in(unsigned set, uint64_t n)
{
    return (uint64_t)set << (64 - HWT_TCACHE_STACK_SET_BITS) | n << 1 | 1;
}

static void test_two_stacks_of_one_set_both_stay(void **state)
{
    (void)state;
    memset(&tc, 0, sizeof(tc));
    uint64_t a = key_in(5, 1), b = key_in(5, 2);
    uint32_t id = 0;
    assert_false(hwt_tcache_stack_find(&tc, a, &id));
    hwt_tcache_stack_put(&tc, a, 11);
    hwt_tcache_stack_put(&tc, b, 22);
    /* in turns, as a malloc/free loop asks: each is found, neither evicts the other */
    for (int i = 0; i < 4; i++) {
        assert_true(hwt_tcache_stack_find(&tc, a, &id));
        assert_int_equal(id, 11);
        assert_true(hwt_tcache_stack_find(&tc, b, &id));
        assert_int_equal(id, 22);
    }
}

static void test_third_stack_evicts_the_oldest(void **state)
{
    (void)state;
    memset(&tc, 0, sizeof(tc));
    uint64_t a = key_in(9, 1), b = key_in(9, 2), c = key_in(9, 3), other = key_in(10, 1);
    uint32_t id = 0;
    hwt_tcache_stack_put(&tc, other, 99);
    hwt_tcache_stack_put(&tc, a, 11);
    hwt_tcache_stack_put(&tc, b, 22);
    hwt_tcache_stack_put(&tc, c, 33);
    assert_false(hwt_tcache_stack_find(&tc, a, &id));
    assert_true(hwt_tcache_stack_find(&tc, b, &id));
    assert_int_equal(id, 22);
    assert_true(hwt_tcache_stack_find(&tc, c, &id));
    assert_int_equal(id, 33);
    /* another set is untouched */
    assert_true(hwt_tcache_stack_find(&tc, other, &id));
    assert_int_equal(id, 99);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_stacks_of_one_set_both_stay),
        cmocka_unit_test(test_third_stack_evicts_the_oldest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
