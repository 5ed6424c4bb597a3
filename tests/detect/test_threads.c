/* SPDX-License-Identifier: MIT */
/* Threads in reports: each stack's thread says who created it and where ("Thread T3
 * "toucher" created by T2 here:" and the creation stack), up to the main thread, and names
 * survive their thread (kept when named with pthread_setname_np or prctl, and at exit). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "report_text.h"

static unsigned char *volatile object;
static volatile int freer_gone;

static __attribute__((noinline)) void *allocator_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "allocator");
    object = malloc(40);
    object[0] = 1;
    return NULL;
}

static __attribute__((noinline)) void touch_after_free(void)
{
    volatile unsigned char c = object[3];
    (void)c;
}

static __attribute__((noinline)) void *toucher_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "toucher");
    while (!__atomic_load_n(&freer_gone, __ATOMIC_ACQUIRE))
        usleep(1000);
    touch_after_free();
    return NULL;
}

static __attribute__((noinline)) pthread_t spawn_toucher(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, toucher_main, NULL) != 0)
        _exit(91);
    return t;
}

/* Named by prctl, which only the kept-at-exit name records; gone before the report. */
static __attribute__((noinline)) void *freer_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "freer", 0, 0, 0);
    free(object);
    pthread_detach(spawn_toucher());
    return NULL;
}

static __attribute__((noinline)) pthread_t spawn_allocator(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, allocator_main, NULL) != 0)
        _exit(92);
    return t;
}

static __attribute__((noinline)) pthread_t spawn_freer(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, freer_main, NULL) != 0)
        _exit(93);
    return t;
}

static __attribute__((noinline)) void three_threads(void *arg)
{
    (void)arg;
    pthread_join(spawn_allocator(), NULL);
    pthread_join(spawn_freer(), NULL);
    __atomic_store_n(&freer_gone, 1, __ATOMIC_RELEASE);
    for (;;)
        pause(); /* the toucher's report ends the process */
}

static void test_created_by_and_kept_names(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, three_threads, NULL, &r));
    expect_abort(&r);
    expect_text(&r, "BUG: KASAN: slab-use-after-free in touch_after_free+0x");
    expect_text(&r, " (thread toucher)\n");
    /* the access's thread, then its creator, which the toucher outlived */
    expect_text(&r, "\nThread T3 \"toucher\" created by T2 here:\n spawn_toucher+0x");
    expect_text(&r, "\nThread T2 \"freer\" created by T0 here:\n spawn_freer+0x");
    /* the allocating thread, gone too */
    expect_text(&r, "Allocated by task ");
    expect_text(&r, " (thread allocator):\n allocator_main+0x");
    expect_text(&r, "\nThread T1 \"allocator\" created by T0 here:\n spawn_allocator+0x");
    expect_text(&r, " (thread freer):\n freer_main+0x");
    /* each thread once */
    assert_int_equal(count_text(r.output, "\nThread T2 "), 1);
    assert_int_equal(count_text(r.output, " created by "), 3);
    /* the order: after the stack that ran in the thread */
    const char *trace = strstr(r.output, "\nCall trace:\n");
    const char *t3 = strstr(r.output, "\nThread T3 ");
    const char *alloc = strstr(r.output, "\nAllocated by task ");
    const char *t1 = strstr(r.output, "\nThread T1 ");
    const char *freed = strstr(r.output, "\nFreed by task ");
    assert_non_null(trace);
    assert_true(trace < t3 && t3 < alloc && alloc < t1 && t1 < freed);
    expect_text(&r, "three_threads+0x");
}

/* A thread that forks: in the child it is the only thread, and its reports still say
 * where it was created; the others are gone. */
static __attribute__((noinline)) void *forker_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "forker");
    pid_t pid = fork();
    if (pid == 0) {
        unsigned char *volatile p = malloc(24);
        free(p);
        p[1] = 2;
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    _exit(WIFSIGNALED(status) ? 0 : 94);
}

static __attribute__((noinline)) pthread_t spawn_forker(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, forker_main, NULL) != 0)
        _exit(95);
    return t;
}

static __attribute__((noinline)) void fork_in_thread(void *arg)
{
    (void)arg;
    pthread_join(spawn_forker(), NULL);
    _exit(96);
}

static void test_fork_from_a_thread(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fork_in_thread, NULL, &r));
    expect_exit(&r, 0);
    expect_text(&r, "BUG: KASAN: slab-use-after-free in forker_main+0x");
    expect_text(&r, "\nThread T1 \"forker\" created by T0 here:\n spawn_forker+0x");
    assert_int_equal(count_text(r.output, " created by "), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_created_by_and_kept_names),
        cmocka_unit_test(test_fork_from_a_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
