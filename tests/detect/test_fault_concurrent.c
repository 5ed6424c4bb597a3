/* SPDX-License-Identifier: MIT */
/* Several threads fault at the same moment: exactly one whole report is printed, never
 * interleaved text, whatever HWTAG_FAULT says. */
#include <pthread.h>

#include "options.h"
#include "report_text.h"

#define THREADS 4

static pthread_barrier_t start_line;

static void *overflow_now(void *arg)
{
    volatile unsigned char *volatile p = arg;
    pthread_barrier_wait(&start_line);
    p[64] = 1; /* past the 64-byte object: every thread faults at once */
    return NULL;
}

static void fault_in_threads(void *arg)
{
    pthread_t t[THREADS];
    hwt_opts.fault = arg != NULL ? HWT_FAULT_REPORT : HWT_FAULT_PANIC;
    pthread_barrier_init(&start_line, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) {
        void *obj = malloc(64);
        if (obj == NULL || pthread_create(&t[i], NULL, overflow_now, obj) != 0)
            _exit(93);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}

static void check_one_report(const struct child_result *r)
{
    assert_int_equal(count_text(r->output, "BUG: KASAN: "), 1);
    assert_int_equal(count_text(r->output, RULE "\n"), 2);
    assert_int_equal(count_text(r->output, "SUMMARY: KASAN: "), 1);
    /* whole: the report runs from the first rule to the second without foreign lines */
    const char *first = strstr(r->output, RULE "\n");
    const char *summary = strstr(r->output, "SUMMARY: KASAN: slab-out-of-bounds in overflow_now");
    assert_non_null(first);
    assert_non_null(summary);
    assert_true(strstr(first, "BUG: KASAN: slab-out-of-bounds in overflow_now+0x") < summary);
}

static void test_panic_prints_one_report(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    for (int round = 0; round < 3; round++) {
        assert_true(run_child(LIBRARY_REPORT, fault_in_threads, NULL, &r));
        assert_true(r.signaled);
        check_one_report(&r);
    }
}

static void test_report_mode_prints_only_the_first(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fault_in_threads, (void *)1, &r));
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    check_one_report(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_panic_prints_one_report),
        cmocka_unit_test(test_report_mode_prints_only_the_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
