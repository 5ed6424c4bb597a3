/* SPDX-License-Identifier: MIT */
/* HWTAG_FAULT (panic, panic_on_write, report) and HWTAG_MODE=async as the report and the
 * child's fate show them. Options are read once at start-up, so each child sets the
 * hwt_opts field itself before its bug; the async child switches its own thread to async
 * checks (the mode is per thread). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "hwtag.h"
#include "options.h"
#include "os.h"
#include "report_text.h"

#ifndef PR_MTE_TCF_MASK
#define PR_MTE_TCF_MASK (3UL << 1)
#endif
#ifndef PR_MTE_TCF_SYNC
#define PR_MTE_TCF_SYNC (1UL << 1)
#endif

#define WENT_ON "the program went on\n"

static volatile unsigned char sink;
static struct child_result result;

/* This thread's tag-check mode bits (PR_MTE_TCF_*). */
static uintptr_t check_mode(void)
{
    return (uintptr_t)prctl(PR_GET_TAGGED_ADDR_CTRL, 0, 0, 0, 0) & PR_MTE_TCF_MASK;
}

static void run(void (*fn)(void *), void *arg)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
}

static int go_pipe[2];

/* Another thread, blocked until the main thread's report is done: its checks stay on. */
static void *other_thread(void *arg)
{
    char c;
    (void)arg;
    if (read(go_pipe[0], &c, 1) != 1)
        _exit(94);
    say("other_mode", check_mode());
    return NULL;
}

static __attribute__((noinline)) void report_mode_bugs(void *arg)
{
    (void)arg;
    pthread_t other;
    struct hwtag_stats st;
    hwt_opts.fault = HWT_FAULT_REPORT;
    if (pipe(go_pipe) != 0 || pthread_create(&other, NULL, other_thread, NULL) != 0)
        _exit(95);
    volatile unsigned char *volatile p = malloc(123);
    say("mode_before", check_mode());
    p[128] = 1; /* first bug: reported */
    say("mode_after", check_mode());
    if (write(go_pipe[1], "g", 1) != 1 || pthread_join(other, NULL) != 0)
        _exit(96);
    free((void *)p); /* the allocator call brings this thread's checks back */
    sink = p[0];     /* use after free: a second, distinct bug, reported */
    free((void *)p); /* double free: a third one */
    say_line(WENT_ON);
    if (hwtag_get_stats(&st, sizeof(st)) != 0)
        _exit(97);
    say("reports", (uintptr_t)st.reports);
    _exit(0);
}

/* The contract of HWTAG_FAULT=report (docs/design.md, section 5): each distinct bug once,
 * and the thread's checks resume; the mode (prctl) is never switched off. */
static void test_report_mode_reports_each_bug_and_goes_on(void **state)
{
    (void)state;
    run(report_mode_bugs, NULL);
    expect_exit(&result, 0);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in report_mode_bugs+0x");
    expect_text(&result, "BUG: KASAN: slab-use-after-free in report_mode_bugs+0x");
    expect_text(&result, "BUG: KASAN: double-free in report_mode_bugs+0x");
    assert_int_equal(count_text(result.output, "BUG: KASAN: "), 3);
    assert_int_equal(hex_after(result.output, "mode_before=0x"), PR_MTE_TCF_SYNC);
    assert_int_equal(hex_after(result.output, "mode_after=0x"), PR_MTE_TCF_SYNC);
    assert_int_equal(hex_after(result.output, "other_mode=0x"), PR_MTE_TCF_SYNC);
    assert_int_equal(hex_after(result.output, "reports=0x"), 3);
    expect_text(&result, WENT_ON);
}

static __attribute__((noinline)) void read_after_free(void *arg)
{
    hwt_opts.fault = (uint8_t)(uintptr_t)arg;
    volatile unsigned char *volatile p = malloc(100);
    free((void *)p);
    sink = p[40];
    say_line(WENT_ON);
    _exit(0);
}

static __attribute__((noinline)) void write_after_free(void *arg)
{
    hwt_opts.fault = (uint8_t)(uintptr_t)arg;
    volatile unsigned char *volatile p = malloc(100);
    free((void *)p);
    p[40] = 1;
    say_line(WENT_ON);
    _exit(0);
}

static __attribute__((noinline)) void free_twice(void *arg)
{
    hwt_opts.fault = (uint8_t)(uintptr_t)arg;
    void *volatile p = malloc(64);
    free(p);
    free(p);
    say_line(WENT_ON);
    _exit(0);
}

static void test_panic_on_write_lets_a_read_go_on(void **state)
{
    (void)state;
    run(read_after_free, (void *)(uintptr_t)HWT_FAULT_PANIC_ON_WRITE);
    expect_exit(&result, 0);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in read_after_free+0x");
    expect_text(&result, "Read of size 1 at addr ");
    expect_text(&result, "SUMMARY: KASAN: slab-use-after-free");
    expect_text(&result, WENT_ON);
}

static void test_panic_on_write_aborts_on_a_write(void **state)
{
    (void)state;
    run(write_after_free, (void *)(uintptr_t)HWT_FAULT_PANIC_ON_WRITE);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in write_after_free+0x");
    expect_text(&result, "Write of size 1 at addr ");
    expect_no_text(&result, WENT_ON);
}

/* Like the kernel, a bad free counts as a write. */
static void test_panic_on_write_aborts_on_a_bad_free(void **state)
{
    (void)state;
    run(free_twice, (void *)(uintptr_t)HWT_FAULT_PANIC_ON_WRITE);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: double-free in free_twice+0x");
    expect_no_text(&result, WENT_ON);
}

/* The default: the whole report, then abort, even for a read. */
static void test_panic_aborts_after_the_report(void **state)
{
    (void)state;
    run(read_after_free, (void *)(uintptr_t)HWT_FAULT_PANIC);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in read_after_free+0x");
    expect_text(&result, "SUMMARY: KASAN: slab-use-after-free in read_after_free+0x");
    assert_int_equal(count_text(result.output, RULE "\n"), 2);
    expect_no_text(&result, WENT_ON);
}

/* In async mode the fault is only noted by the CPU and surfaces at the next kernel entry:
 * here the syscall after the bad store. */
static __attribute__((noinline)) void async_overflow(void *arg)
{
    (void)arg;
    if (!hwt_os_mte_set_mode(2))
        _exit(98);
    volatile unsigned char *volatile p = malloc(32);
    p[48] = 1;
    syscall(SYS_getpid);
    say_line(WENT_ON);
    _exit(0);
}

static void test_async_fault_report(void **state)
{
    (void)state;
    run(async_overflow, NULL);
    expect_abort(&result);
    expect_text(&result, RULE "\nBUG: KASAN: invalid-access\n"
                              "Asynchronous fault: no details available\n\nCall trace:\n");
    expect_text(&result, "\n async_overflow+0x"); /* the stack at the syscall */
    expect_text(&result, "Rerun with HWTAG_MODE=sync");
    expect_text(&result, "\nRegisters:\n");
    /* the surfacing frame is not where the access was: SUMMARY names no location */
    expect_text(&result, "\nSUMMARY: KASAN: invalid-access in unknown location (asynchronous "
                         "fault; surfaced in ");
    expect_no_text(&result, "SUMMARY: KASAN: invalid-access in async_overflow");
    expect_no_text(&result, "SUMMARY: KASAN: invalid-access in syscall");
    /* no address, so none of what depends on one */
    expect_no_text(&result, "Pointer tag:");
    expect_no_text(&result, " at addr ");
    expect_no_text(&result, "Memory state around");
    expect_no_text(&result, WENT_ON);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_mode_reports_each_bug_and_goes_on),
        cmocka_unit_test(test_panic_on_write_lets_a_read_go_on),
        cmocka_unit_test(test_panic_on_write_aborts_on_a_write),
        cmocka_unit_test(test_panic_on_write_aborts_on_a_bad_free),
        cmocka_unit_test(test_panic_aborts_after_the_report),
        cmocka_unit_test(test_async_fault_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
