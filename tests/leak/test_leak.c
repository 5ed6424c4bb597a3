/* SPDX-License-Identifier: MIT */
/* The leak check: each case builds its heap in a forked child, calls hwtag_leak_check()
 * (or exits with HWTAG_DETECT_LEAKS=on) and the parent checks the report's lines. A pointer
 * held only in a register of a blocked thread, in TLS, in a dlopen'ed library's global, as
 * an interior pointer or through a chain keeps its object; a stale pointer whose tag is
 * another object's does not (HWTAG_LEAK_TAGS=match). Runs natively and under qemu. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "hwtag.h"
#include "options.h"
#include "report_text.h"
#include "slab_region.h"

/* LeakSanitizer's interface, as <sanitizer/lsan_interface.h> declares it. */
void __lsan_ignore_object(const void *p);
void __lsan_disable(void);
void __lsan_enable(void);
void __lsan_register_root_region(const void *p, size_t size);

static struct child_result result;
static void *volatile global_ptr;
static __thread void *volatile tls_ptr;
static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

/* Child side: checks now and says the outcome as "check=N". */
static void check_now(void)
{
    say("check", (uintptr_t)(hwtag_leak_check() + 1));
}

/* The frames below main's that held pointers on the way are overwritten, so a pointer the
 * test dropped is not found in a stale stack slot. */
static __attribute__((noinline)) void scrub_stack(void)
{
    volatile char pad[4096];
    memset((char *)pad, 0, sizeof(pad));
}

static void run(void (*fn)(void *), void *arg)
{
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
}

static unsigned check_result(void)
{
    return (unsigned)hex_after(result.output, "check=0x") - 1;
}

static __attribute__((noinline)) void *leak_one(size_t n)
{
    char *p = malloc(n);
    memset(p, 'L', n);
    return NULL;
}

static void leaked_by_nothing(void *arg)
{
    (void)arg;
    leak_one(48);
    scrub_stack();
    check_now();
}

static void test_leak_held_by_nothing(void **state)
{
    (void)state;
    run(leaked_by_nothing, NULL);
    assert_int_equal(check_result(), 1);
    expect_text(&result, "ERROR: LeakSanitizer: detected memory leaks");
    expect_text(&result, "Direct leak of 48 byte(s) in 1 object(s) allocated from:\n leak_one+0x");
    expect_text(&result, "4c 4c 4c 4c");
    expect_text(&result, "SUMMARY: LeakSanitizer: 48 byte(s) leaked in 1 allocation(s).\n");
}

static void nothing_leaked(void *arg)
{
    (void)arg;
    global_ptr = malloc(32);
    free(malloc(64));
    check_now();
}

static void test_no_leak_prints_nothing(void **state)
{
    (void)state;
    run(nothing_leaked, NULL);
    assert_int_equal(check_result(), 0);
    expect_no_text(&result, "LeakSanitizer");
}

/* A thread that keeps the only pointer in a callee-saved register while it sleeps in a
 * system call: its handler's saved context is the only place the check can find it. */
static void *hold_in_register(void *arg)
{
#if defined(__aarch64__)
    register void *p __asm__("x19") = arg;
#elif defined(__x86_64__)
    register void *p __asm__("rbx") = arg;
#else
    void *volatile p = arg;
#endif
    global_ptr = NULL;
    __asm__ volatile("" : "+r"(p));
    pthread_mutex_lock(&hold);
    __asm__ volatile("" : "+r"(p));
    pthread_mutex_unlock(&hold);
    return NULL;
}

static void pointer_in_register(void *arg)
{
    (void)arg;
    pthread_t t;
    pthread_mutex_lock(&hold);
    global_ptr = malloc(40);
    void *p = global_ptr;
    global_ptr = NULL;
    pthread_create(&t, NULL, hold_in_register, p);
    p = NULL;
    while (global_ptr != NULL)
        ;
    usleep(200000); /* it is in the mutex's futex wait by now */
    scrub_stack();
    check_now();
    pthread_mutex_unlock(&hold);
    pthread_join(t, NULL);
}

static void test_pointer_in_a_blocked_threads_register(void **state)
{
    (void)state;
    run(pointer_in_register, NULL);
    assert_int_equal(check_result(), 0);
    expect_no_text(&result, "leak of");
}

static void *hold_in_tls(void *arg)
{
    tls_ptr = malloc(56);
    pthread_mutex_lock(&hold);
    pthread_mutex_unlock(&hold);
    return arg;
}

static void pointer_in_tls(void *arg)
{
    (void)arg;
    pthread_t t;
    pthread_mutex_lock(&hold);
    tls_ptr = malloc(24); /* the main thread's TLS too */
    pthread_create(&t, NULL, hold_in_tls, NULL);
    usleep(200000);
    scrub_stack();
    check_now();
    pthread_mutex_unlock(&hold);
    pthread_join(t, NULL);
}

static void test_pointer_only_in_tls(void **state)
{
    (void)state;
    run(pointer_in_tls, NULL);
    assert_int_equal(check_result(), 0);
    expect_no_text(&result, "leak of");
}

static void pointer_in_dlopened_global(void *arg)
{
    (void)arg;
    void *h = dlopen(LEAK_DSO_PATH, RTLD_NOW);
    if (h == NULL) {
        say_line(dlerror());
        _exit(4);
    }
    void (*keep)(void *) = (void (*)(void *))dlsym(h, "leak_dso_keep");
    keep(malloc(72));
    scrub_stack();
    check_now();
    keep(NULL);
    scrub_stack();
    check_now();
}

static void test_pointer_only_in_a_dlopened_global(void **state)
{
    (void)state;
    run(pointer_in_dlopened_global, NULL);
    /* kept by the library's global, then leaked once it lets go */
    assert_int_equal(hex_after(result.output, "check=0x"), 1);
    expect_text(&result, "Direct leak of 72 byte(s) in 1 object(s)");
    assert_int_equal(count_text(result.output, "Direct leak of"), 1);
}

static void interior_pointer(void *arg)
{
    (void)arg;
    global_ptr = (char *)malloc(100) + 60;
    scrub_stack();
    check_now();
}

static void test_interior_pointer_keeps_the_object(void **state)
{
    (void)state;
    run(interior_pointer, NULL);
    assert_int_equal(check_result(), 0);
}

struct node {
    struct node *next;
    char pad[24];
};

static __attribute__((noinline)) struct node *chain(unsigned n)
{
    struct node *head = NULL;
    for (unsigned i = 0; i < n; i++) {
        struct node *x = malloc(sizeof(*x));
        memset(x->pad, 'C', sizeof(x->pad));
        x->next = head;
        head = x;
    }
    return head;
}

static void through_a_chain(void *arg)
{
    (void)arg;
    global_ptr = chain(4);
    scrub_stack();
    check_now();
    global_ptr = NULL;
    scrub_stack();
    check_now();
}

static void test_chain_direct_and_indirect(void **state)
{
    (void)state;
    run(through_a_chain, NULL);
    assert_int_equal(hex_after(result.output, "check=0x"), 1); /* held: no leak */
    expect_text(&result, "Direct leak of 32 byte(s) in 1 object(s) allocated from:\n chain+0x");
    expect_text(&result, "Indirect leak of 96 byte(s) in 3 object(s) allocated from:\n chain+0x");
    expect_text(&result, "SUMMARY: LeakSanitizer: 128 byte(s) leaked in 4 allocation(s).");
    /* direct leaks before indirect ones, as LeakSanitizer prints them */
    assert_true(strstr(result.output, "Direct leak of 32") <
                strstr(result.output, "Indirect leak of 96"));
}

/* A pointer kept to a freed object whose slot now holds a new one: with tags, the new
 * object is not referenced by it. */
static void stale_pointer(void *arg)
{
    hwt_opts.leak_tags = (uint8_t)(uintptr_t)arg;
    void *old = malloc(88);
    free(old);
    global_ptr = old; /* stale: the old tag */
    void *fresh = malloc(88);
    say("same_slot", untag(fresh) == untag(old));
    fresh = NULL;
    scrub_stack();
    check_now();
}

static void test_stale_pointer_hides_no_leak_with_tags(void **state)
{
    (void)state;
    if (!tagging_active())
        skip();
    run(stale_pointer, (void *)(uintptr_t)HWT_LEAK_TAGS_MATCH);
    assert_int_equal(hex_after(result.output, "same_slot=0x"), 1);
    assert_int_equal(check_result(), 1);
    expect_text(&result, "Direct leak of 88 byte(s) in 1 object(s)");
    expect_text(&result, "1 leaked object(s) would have been hidden with HWTAG_LEAK_TAGS=ignore");
    run(stale_pointer, (void *)(uintptr_t)HWT_LEAK_TAGS_IGNORE);
    assert_int_equal(check_result(), 0);
    expect_no_text(&result, "leak of");
}

static const char supp_path[] = "leak_suppressions.txt";

static __attribute__((noinline)) void *suppressed_site(void)
{
    void *p = malloc(200);
    memset(p, 0, 200);
    return NULL;
}

static void with_suppressions(void *arg)
{
    (void)arg;
    hwt_opts.suppressions = supp_path;
    suppressed_site();
    leak_one(16);
    scrub_stack();
    check_now();
}

static void test_suppressions(void **state)
{
    (void)state;
    FILE *f = fopen(supp_path, "w");
    assert_non_null(f);
    fputs("# ours\nleak:suppressed_si*\n", f);
    fclose(f);
    run(with_suppressions, NULL);
    remove(supp_path);
    assert_int_equal(check_result(), 1);
    expect_text(&result, "Direct leak of 16 byte(s) in 1 object(s)");
    expect_no_text(&result, "200 byte(s)");
    expect_text(&result, "Suppressions used:\n  count      bytes template\n      1        200 "
                         "suppressed_si*\n");
    expect_text(&result, "SUMMARY: LeakSanitizer: 16 byte(s) leaked in 1 allocation(s).");
}

static void ignored_and_disabled(void *arg)
{
    (void)arg;
    void *p = malloc(120);
    __lsan_ignore_object(p);
    __lsan_disable();
    void *q = malloc(130);
    __lsan_enable();
    p = q = NULL;
    leak_one(12);
    scrub_stack();
    check_now();
}

static void test_ignore_and_disable(void **state)
{
    (void)state;
    run(ignored_and_disabled, NULL);
    assert_int_equal(check_result(), 1);
    expect_text(&result, "SUMMARY: LeakSanitizer: 12 byte(s) leaked in 1 allocation(s).");
}

static void root_region(void *arg)
{
    (void)arg;
    void **heap_region = malloc(sizeof(void *) * 4);
    heap_region[1] = malloc(33);
    __lsan_register_root_region(heap_region, sizeof(void *) * 4);
    __lsan_ignore_object(heap_region); /* itself not a leak */
    heap_region = NULL;
    scrub_stack();
    check_now();
}

static void test_registered_root_region(void **state)
{
    (void)state;
    run(root_region, NULL);
    assert_int_equal(check_result(), 0);
}

/* A mapping of the program's right above a slab region: no thread stack, so its pointers
 * are roots. (Written when a region's reserved rest was inaccessible; regions are now
 * committed whole, so it no longer passes through leak_roots.c's skipped().) */
static void pointer_above_a_region(void *arg)
{
    (void)arg;
    free(malloc(16)); /* a region exists */
    uintptr_t end = hwt_slab_regions[0].base + HWT_REGION_SIZE;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void **above = mmap((void *)end, page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (above != (void **)end) {
        say("skip", 1);
        return;
    }
    above[5] = malloc(40);
    scrub_stack();
    check_now();
}

static void test_pointer_above_a_region(void **state)
{
    (void)state;
    run(pointer_above_a_region, NULL);
    if (strstr(result.output, "skip=") != NULL)
        skip();
    assert_int_equal(check_result(), 0);
    expect_no_text(&result, "LeakSanitizer");
}

/* 64 threads, each with its object only on its own stack, blocked; one leak besides. */
static void *hold_on_stack(void *arg)
{
    void *volatile mine = malloc(64 + (size_t)(uintptr_t)arg);
    pthread_mutex_lock(&hold);
    pthread_mutex_unlock(&hold);
    (void)mine;
    return NULL;
}

static void many_threads(void *arg)
{
    (void)arg;
    pthread_t t[64];
    pthread_mutex_lock(&hold);
    for (uintptr_t i = 0; i < 64; i++)
        pthread_create(&t[i], NULL, hold_on_stack, (void *)i);
    usleep(500000);
    leak_one(8);
    scrub_stack();
    check_now();
    pthread_mutex_unlock(&hold);
    for (int i = 0; i < 64; i++)
        pthread_join(t[i], NULL);
}

static void test_64_threads(void **state)
{
    (void)state;
    run(many_threads, NULL);
    assert_int_equal(check_result(), 1);
    expect_text(&result, "SUMMARY: LeakSanitizer: 8 byte(s) leaked in 1 allocation(s).");
}

/* A million live objects, every one reachable (half from an array, half through a list):
 * none reported, and one leak besides found. */
#define MILLION 1000000u
static void *volatile *volatile million_table;
static void *volatile million_list;

static void million_objects(void *arg)
{
    (void)arg;
    million_table = malloc(sizeof(void *) * (MILLION / 2));
    void *list = NULL;
    for (unsigned i = 0; i < MILLION; i++) {
        void **p = malloc(16);
        p[0] = list;
        p[1] = NULL;
        if (i % 2 == 0)
            million_table[i / 2] = p;
        else
            list = p;
    }
    million_list = list;
    list = NULL;
    leak_one(24);
    scrub_stack();
    check_now();
}

static void test_a_million_live_objects(void **state)
{
    (void)state;
    run(million_objects, NULL);
    assert_int_equal(check_result(), 1);
    expect_text(&result, "SUMMARY: LeakSanitizer: 24 byte(s) leaked in 1 allocation(s).");
}

/* The check at exit, in a forked child that exits through exit(). */
static void exit_with_leak(void *arg)
{
    (void)arg;
    hwt_opts.detect_leaks = HWT_ON;
    hwt_opts.leak_exitcode = 23;
    fflush(NULL);
    if (fork() == 0) {
        leak_one(20);
        scrub_stack();
        exit(0);
    }
    int status = 0;
    wait(&status);
    say("child_status", (uintptr_t)WEXITSTATUS(status));
    exit(0); /* the parent leaks nothing */
}

static void test_fork_child_checked_at_exit(void **state)
{
    (void)state;
    run(exit_with_leak, NULL);
    expect_exit(&result, 0);
    assert_int_equal(hex_after(result.output, "child_status=0x"), 23);
    assert_int_equal(count_text(result.output, "detected memory leaks"), 1);
    expect_text(&result, "Direct leak of 20 byte(s) in 1 object(s)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_held_by_nothing),
        cmocka_unit_test(test_no_leak_prints_nothing),
        cmocka_unit_test(test_pointer_in_a_blocked_threads_register),
        cmocka_unit_test(test_pointer_only_in_tls),
        cmocka_unit_test(test_pointer_only_in_a_dlopened_global),
        cmocka_unit_test(test_interior_pointer_keeps_the_object),
        cmocka_unit_test(test_chain_direct_and_indirect),
        cmocka_unit_test(test_stale_pointer_hides_no_leak_with_tags),
        cmocka_unit_test(test_suppressions),
        cmocka_unit_test(test_ignore_and_disable),
        cmocka_unit_test(test_registered_root_region),
        cmocka_unit_test(test_pointer_above_a_region),
        cmocka_unit_test(test_64_threads),
        cmocka_unit_test(test_fork_child_checked_at_exit),
        cmocka_unit_test(test_a_million_live_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
