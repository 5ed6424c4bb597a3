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

/* A forked child's objects are its own task's, also from a call site whose stack the
 * parent's thread cached before the fork: the cache may not give the child the parent's
 * stack ids, which carry the parent's task. */
static __attribute__((noinline)) unsigned char *site_alloc(void)
{
    return malloc(40);
}

static __attribute__((noinline)) void site_free(unsigned char *p)
{
    free(p);
}

static __attribute__((noinline)) unsigned char *alloc_and_free(void)
{
    unsigned char *p = site_alloc();
    site_free(p);
    return p;
}

/* fork in round 4, else -1 */
static __attribute__((noinline)) pid_t fork_in_round(int round)
{
    if (round != 4)
        return -1;
    pid_t pid = fork();
    if (pid == 0)
        dprintf(2, "child task %d\n", (int)getpid());
    return pid;
}

/* The parent's rounds and the child's make the same calls from one call site, so the
 * child's stacks are ones the parent's cache holds. */
static __attribute__((noinline)) void fork_after_caching(void *arg)
{
    (void)arg;
    pid_t pid = -1;
    for (int round = 0; round < 5 && pid != 0; round++) {
        pid = fork_in_round(round);
        unsigned char *volatile p = alloc_and_free();
        if (pid == 0)
            p[1] = 2;
        else if (pid > 0)
            break;
    }
    if (pid == 0)
        _exit(0);
    int status;
    waitpid(pid, &status, 0);
    _exit(WIFSIGNALED(status) ? 0 : 94);
}

/* The report's allocation and free stacks (site_alloc, site_free) name the task the output
 * printed after marker. */
static void expect_site_stacks_of(const struct child_result *r, const char *marker)
{
    const char *line = strstr(r->output, marker);
    assert_non_null(line);
    int task = atoi(line + strlen(marker));
    assert_true(task > 0);
    char want[64];
    snprintf(want, sizeof want, "\nAllocated by task %d:\n site_alloc+0x", task);
    expect_text(r, want);
    snprintf(want, sizeof want, "\nFreed by task %d:\n site_free+0x", task);
    expect_text(r, want);
}

static void test_forked_child_stacks_are_its_own_task(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fork_after_caching, NULL, &r));
    expect_exit(&r, 0);
    expect_site_stacks_of(&r, "child task ");
}

/* A thread's objects are its own task's, also from a call site whose stack the thread
 * before it cached in the same thread cache (a cache is reused when its thread is gone). */
static __attribute__((noinline)) void *same_site_main(void *arg)
{
    int touch = *(int *)arg;
    unsigned char *volatile p = NULL;
    for (int i = 0; i < 4; i++)
        p = alloc_and_free();
    if (touch) {
        dprintf(2, "second task %d\n", (int)gettid());
        p[1] = 2;
    }
    return NULL;
}

static __attribute__((noinline)) void threads_one_after_another(void *arg)
{
    (void)arg;
    static int first = 0, second = 1;
    pthread_t t;
    if (pthread_create(&t, NULL, same_site_main, &first) != 0)
        _exit(95);
    pthread_join(t, NULL);
    if (pthread_create(&t, NULL, same_site_main, &second) != 0)
        _exit(95);
    pthread_join(t, NULL);
    _exit(96);
}

static void test_reused_cache_stacks_are_the_new_task(void **state)
{
    (void)state;
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, threads_one_after_another, NULL, &r));
    expect_site_stacks_of(&r, "second task ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_created_by_and_kept_names),
        cmocka_unit_test(test_fork_from_a_thread),
        cmocka_unit_test(test_forked_child_stacks_are_its_own_task),
        cmocka_unit_test(test_reused_cache_stacks_are_the_new_task),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
