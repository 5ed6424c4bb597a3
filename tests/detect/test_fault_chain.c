/* SPDX-License-Identifier: MIT */
/* libhwtag's SIGSEGV handler and the program's: faults that are not tag-check faults
 * reach the program's handler (installed before ours, or after ours, which keeps ours in
 * front), tag-check faults are reported with the right pointer tag, the program sees its
 * own dispositions through sigaction, and without any program handler a plain segfault
 * still kills with SIGSEGV after one line saying it is not a report. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "fault.h"
#include "harness.h"
#include "report_text.h"

#define APP_EXIT 33

static struct child_result result;
static struct sigaction previous;
static volatile unsigned char sink_byte;

/* The program's handler: says what it got and leaves. */
static void app_handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    say("app_code", (uintptr_t)info->si_code);
    say("app_addr", (uintptr_t)info->si_addr);
    _exit(APP_EXIT);
}

/* A program's handler in the common style: handles what it knows (not tag-check faults)
 * and forwards the rest to the handler it replaced. It has no SA_EXPOSE_TAGBITS, so Linux
 * gives it si_addr without the tag; QEMU 7.2 leaves the tag in, so clear it here as the
 * kernel would. */
static void forwarding_handler(int sig, siginfo_t *info, void *uc)
{
    if (info->si_code == SEGV_MTESERR && (previous.sa_flags & SA_SIGINFO)) {
        siginfo_t copy = *info;
        copy.si_addr = (void *)untag(info->si_addr);
        previous.sa_sigaction(sig, &copy, uc);
        return;
    }
    app_handler(sig, info, uc);
}

static void install(void (*fn)(int, siginfo_t *, void *), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, old) != 0)
        _exit(97);
}

static void write_protected_page(void)
{
    volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        _exit(98);
    say("page", (uintptr_t)page);
    page[16] = 1;
}

static __attribute__((noinline)) void overflow_forwarded(void)
{
    volatile unsigned char *volatile p = malloc(123);
    say("ptr", (uintptr_t)p);
    p[128] = 1;
}

static void app_before_library(void *arg)
{
    install(app_handler, NULL);
    hwt_fault_install(); /* as at start-up: ours goes in front and keeps the app's */
    if (arg != NULL)
        overflow_forwarded();
    else
        write_protected_page();
    _exit(0);
}

static void app_after_library(void *arg)
{
    install(forwarding_handler, &previous);
    if (arg != NULL)
        overflow_forwarded();
    else
        write_protected_page();
    _exit(0);
}

/* What the program sees through sigaction is its own disposition, never ours. */
static void query_dispositions(void *arg)
{
    (void)arg;
    struct sigaction old, now;
    install(app_handler, &old);
    say("first_old_is_default", !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL);
    if (sigaction(SIGSEGV, NULL, &now) != 0)
        _exit(96);
    say("now_is_app", (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == app_handler);
    install(forwarding_handler, &old);
    say("second_old_is_app", (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == app_handler);
    _exit(0);
}

/* A handler that makes the page writable and returns: the store then goes through, as
 * without the library (write barriers of garbage collectors work so). */
static volatile char *fixable_page;

static void fixing_handler(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)info;
    (void)uc;
    if (mprotect((void *)fixable_page, 4096, PROT_READ | PROT_WRITE) != 0)
        _exit(95);
}

static void fixed_and_resumed(void *arg)
{
    (void)arg;
    fixable_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fixable_page == MAP_FAILED)
        _exit(98);
    install(fixing_handler, NULL);
    fixable_page[8] = 42;
    say("stored", (uintptr_t)fixable_page[8]);
    _exit(0);
}

static void run(void (*fn)(void *), void *arg)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, &result));
}

static void expect_app_got_the_page_fault(void)
{
    expect_exit(&result, APP_EXIT);
    assert_int_equal(hex_after(result.output, "app_code=0x"), SEGV_ACCERR);
    assert_int_equal(hex_after(result.output, "app_addr=0x"),
                     hex_after(result.output, "page=0x") + 16);
    expect_no_text(&result, "KASAN");
    expect_no_text(&result, "not a tag-check fault");
}

static void test_app_handler_installed_before_gets_other_faults(void **state)
{
    (void)state;
    run(app_before_library, NULL);
    expect_app_got_the_page_fault();
}

static void test_app_handler_installed_before_does_not_get_tag_faults(void **state)
{
    (void)state;
    run(app_before_library, (void *)1);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_forwarded+0x");
    expect_no_text(&result, "app_code");
}

static void test_app_handler_installed_after_gets_other_faults(void **state)
{
    (void)state;
    run(app_after_library, NULL);
    expect_app_got_the_page_fault();
}

static void test_program_sees_its_own_dispositions(void **state)
{
    (void)state;
    run(query_dispositions, NULL);
    expect_exit(&result, 0);
    assert_int_equal(hex_after(result.output, "first_old_is_default=0x"), 1);
    assert_int_equal(hex_after(result.output, "now_is_app=0x"), 1);
    assert_int_equal(hex_after(result.output, "second_old_is_app=0x"), 1);
}

static void test_handler_that_fixes_the_fault_resumes(void **state)
{
    (void)state;
    run(fixed_and_resumed, NULL);
    expect_exit(&result, 0);
    assert_int_equal(hex_after(result.output, "stored=0x"), 42);
    expect_no_text(&result, "not a tag-check fault");
}

/* The program's handler, installed after ours, stays behind it: the tag-check fault is
 * reported with the pointer's tag, and the program's handler never sees it. */
static void test_app_handler_installed_after_does_not_get_tag_faults(void **state)
{
    (void)state;
    char want[64];
    run(app_after_library, (void *)1);
    expect_abort(&result);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in overflow_forwarded+0x");
    expect_text(&result, "located 5 bytes to the right of\n 123-byte region");
    uintptr_t ptr = hex_after(result.output, "ptr=0x");
    snprintf(want, sizeof(want), "Pointer tag: [%02x], ", ptr_tag((const void *)ptr));
    expect_text(&result, want);
    snprintf(want, sizeof(want), " at addr %016lx by task ", (unsigned long)(ptr + 128));
    expect_text(&result, want);
    expect_no_text(&result, "app_code");
}

static __attribute__((noinline)) void null_write(void *arg)
{
    (void)arg;
    *(volatile int *)(uintptr_t)arg = 1;
}

static void sent_segv(void *arg)
{
    (void)arg;
    kill(getpid(), SIGSEGV);
    say_line("survived\n");
}

/* Unmapped at free (beyond what the cache keeps), so a later read is no tag-check fault. */
#define UNMAPPED_SIZE (64u << 20)

static __attribute__((noinline)) void read_after_unmapping_free(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(UNMAPPED_SIZE);
    say("ptr", (uintptr_t)p);
    free((void *)p);
    sink_byte = p[4096 + 100];
}

/* No report, but one line saying it is not one, where it happened, then the default
 * action. */
static void test_plain_segfault_still_kills(void **state)
{
    (void)state;
    run(null_write, NULL);
    assert_true(result.signaled);
    assert_int_equal(result.signal, SIGSEGV);
    expect_no_text(&result, "KASAN");
    expect_text(&result, "hwtag: SIGSEGV (SEGV_MAPERR) at 0000000000000000: not a tag-check "
                         "fault; not a heap address\nCall trace:\n null_write+");
    expect_no_text(&result, "stack not available");
}

static void test_segfault_in_unmapped_freed_object_names_it(void **state)
{
    (void)state;
    char want[160];
    run(read_after_unmapping_free, NULL);
    assert_true(result.signaled);
    assert_int_equal(result.signal, SIGSEGV);
    expect_no_text(&result, "KASAN");
    uintptr_t ptr = hex_after(result.output, "ptr=0x");
    snprintf(want, sizeof(want),
             "hwtag: SIGSEGV (SEGV_MAPERR) at %016lx: not a tag-check fault; 4196 bytes inside "
             "the freed and unmapped %u-byte object at %lx\n",
             (unsigned long)(ptr + 4096 + 100), UNMAPPED_SIZE, (unsigned long)untag((void *)ptr));
    expect_text(&result, want);
}

static void test_sent_sigsegv_still_kills(void **state)
{
    (void)state;
    run(sent_segv, NULL);
    assert_true(result.signaled);
    assert_int_equal(result.signal, SIGSEGV);
    expect_no_text(&result, "KASAN");
    expect_no_text(&result, "survived");
    expect_no_text(&result, "not a tag-check fault");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_app_handler_installed_before_gets_other_faults),
        cmocka_unit_test(test_app_handler_installed_before_does_not_get_tag_faults),
        cmocka_unit_test(test_app_handler_installed_after_gets_other_faults),
        cmocka_unit_test(test_app_handler_installed_after_does_not_get_tag_faults),
        cmocka_unit_test(test_program_sees_its_own_dispositions),
        cmocka_unit_test(test_handler_that_fixes_the_fault_resumes),
        cmocka_unit_test(test_plain_segfault_still_kills),
        cmocka_unit_test(test_segfault_in_unmapped_freed_object_names_it),
        cmocka_unit_test(test_sent_sigsegv_still_kills),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
