/* SPDX-License-Identifier: MIT */
/* libhwtag's SIGSEGV handler and the program's: faults that are not tag-check faults
 * reach the program's handler (installed before ours, or after ours and forwarding what
 * it does not handle), tag-check faults forwarded to us are reported with the right
 * pointer tag, and without any program handler a plain segfault still kills with SIGSEGV
 * and prints no report. */
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

/* Forwarded without the tag in si_addr, the report still has the pointer's tag. */
static void test_forwarded_tag_fault_keeps_the_pointer_tag(void **state)
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

static void null_write(void *arg)
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

static void test_plain_segfault_still_kills(void **state)
{
    (void)state;
    run(null_write, NULL);
    assert_true(result.signaled);
    assert_int_equal(result.signal, SIGSEGV);
    expect_no_text(&result, "KASAN");
}

static void test_sent_sigsegv_still_kills(void **state)
{
    (void)state;
    run(sent_segv, NULL);
    assert_true(result.signaled);
    assert_int_equal(result.signal, SIGSEGV);
    expect_no_text(&result, "KASAN");
    expect_no_text(&result, "survived");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_app_handler_installed_before_gets_other_faults),
        cmocka_unit_test(test_app_handler_installed_before_does_not_get_tag_faults),
        cmocka_unit_test(test_app_handler_installed_after_gets_other_faults),
        cmocka_unit_test(test_forwarded_tag_fault_keeps_the_pointer_tag),
        cmocka_unit_test(test_plain_segfault_still_kills),
        cmocka_unit_test(test_sent_sigsegv_still_kills),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
