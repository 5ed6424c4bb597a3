/* SPDX-License-Identifier: MIT */
/* Two threads free one pointer at the same moment: exactly one free may win, the other is
 * a double free. If both won, the slot would sit in both threads' caches, and the next
 * malloc of each (the caches are LIFO) would hand out the same memory twice. Each trial
 * releases both threads from a spin barrier (a futex wake-up is too slow to overlap two
 * frees), and once both frees are done both malloc once and the results are compared. The rate line
 * goes to stderr, where the parent reads it. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "options.h"
#include "report_text.h"

#define TRIALS 4000
#define SIZE 48

static void *volatile shared;
static void *volatile got[2];
static unsigned arrived[3]; /* spin barriers, one per phase; counts up forever */

/* Waits until both threads have reached the barrier for the round-th time. */
static void spin_barrier(unsigned *count, unsigned round)
{
    __atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL);
    /* spin, and yield now and then: CI runs other tests on the same two cores */
    for (unsigned spins = 1; __atomic_load_n(count, __ATOMIC_ACQUIRE) < 2 * round; spins++)
        if (spins % 1024 == 0)
            sched_yield();
}

static void race(int self, unsigned round)
{
    spin_barrier(&arrived[0], round);
    free(shared);
    /* both frees are done before either thread mallocs: a malloc in between could take
     * the slot back, and the late free would then free a live object (a use after free
     * that only a tag can tell from a correct free) */
    spin_barrier(&arrived[1], round);
    got[self] = malloc(SIZE);
    spin_barrier(&arrived[2], round);
}

static void *helper(void *arg)
{
    (void)arg;
    for (unsigned round = 1; round <= TRIALS; round++)
        race(1, round);
    return NULL;
}

static void free_races(void *arg)
{
    (void)arg;
    pthread_t t;
    unsigned lost = 0, won_by_main = 0;
    hwt_opts.fault = HWT_FAULT_REPORT; /* a double free is reported and the program goes on */
    shared = malloc(SIZE);
    if (shared == NULL || pthread_create(&t, NULL, helper, NULL) != 0)
        _exit(93);
    for (unsigned round = 1; round <= TRIALS; round++) {
        void *p = shared;
        race(0, round);
        /* both threads are past their malloc: compare, then set up the next trial */
        if (untag(got[0]) == untag(got[1]))
            lost++;
        if (untag(got[0]) == untag(p))
            won_by_main++;
        free(got[0]);
        if (untag(got[1]) != untag(got[0]))
            free(got[1]);
        shared = malloc(SIZE);
        if (shared == NULL)
            _exit(94);
    }
    pthread_join(t, NULL);
    fprintf(stderr, "double-free races: %u trials, %u won by the main thread, %u lost\n", TRIALS,
            won_by_main, lost);
    _exit(lost == 0 ? 0 : 1);
}

static void test_one_of_two_racing_frees_wins(void **state)
{
    (void)state;
    struct child_result r;
    assert_true(run_child(LIBRARY_REPORT, free_races, NULL, &r));
    const char *line = strstr(r.output, "double-free races: ");
    assert_non_null(line);
    unsigned trials, main_won, lost;
    assert_int_equal(sscanf(line,
                            "double-free races: %u trials, %u won by the main thread, %u lost",
                            &trials, &main_won, &lost),
                     3);
    print_message("%.*s", (int)(strchr(line, '\n') - line + 1), line);
    assert_int_equal(lost, 0);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 0);
    /* the losing free of every trial is a double free (printed once: one call site) */
    assert_true(strstr(r.output, "BUG: KASAN: double-free") != NULL);
    assert_int_equal(trials, TRIALS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_of_two_racing_frees_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
