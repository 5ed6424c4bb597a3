/* SPDX-License-Identifier: MIT */
/* The slab's metadata checks (HWT_CHECK, always on): a slot handed back that is not one of
 * its span's slot starts, or twice, stops the process with one "internal error" line
 * instead of corrupting the free bitmap. Each case runs in a forked child. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "init.h"
#include "size_class.h"
#include "slab.h"

#define CLS 3u /* a small class: several slots a span */

/* Runs fn in a child with stderr on a pipe; returns the child's wait status and its
 * output in out. */
static int run_child(void (*fn)(void), char *out, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        /* cmocka catches these to mark a test failed: the trap must end the child */
        static const int sigs[] = {SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE};
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            signal(sigs[i], SIG_DFL);
        fn();
        _exit(0);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap && (n = read(fds[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void give_interior(void)
{
    struct hwt_slab_ref ref;
    hwt_init_ensure();
    if (hwt_slab_take(0, CLS, &ref, 1) != 1)
        _exit(3);
    ref.addr += 8; /* inside the slot, not its start */
    hwt_slab_give(CLS, &ref, 1);
}

static void give_twice(void)
{
    struct hwt_slab_ref ref[2];
    hwt_init_ensure();
    if (hwt_slab_take(0, CLS, ref, 2) != 2)
        _exit(3);
    hwt_slab_give(CLS, &ref[0], 1);
    hwt_slab_give(CLS, &ref[0], 1);
}

static void give_right(void)
{
    struct hwt_slab_ref ref;
    hwt_init_ensure();
    if (hwt_slab_take(0, CLS, &ref, 1) != 1)
        _exit(3);
    hwt_slab_give(CLS, &ref, 1);
}

static void expect_internal_error(void (*fn)(void), const char *cond)
{
    char out[1024];
    int status = run_child(fn, out, sizeof(out));
    assert_true(WIFSIGNALED(status));
    assert_non_null(strstr(out, "hwtag: internal error: "));
    if (strstr(out, cond) == NULL)
        fail_msg("missing \"%s\" in:\n%s", cond, out);
}

static void test_interior_slot_given_back_traps(void **state)
{
    (void)state;
    expect_internal_error(give_interior, "idx < s->nslots && s->base");
}

static void test_slot_given_back_twice_traps(void **state)
{
    (void)state;
    expect_internal_error(give_twice, "(s->free_bits[idx / BITS_PER_WORD] & bit) == 0");
}

static void test_slot_given_back_once_is_fine(void **state)
{
    (void)state;
    char out[1024];
    int status = run_child(give_right, out, sizeof(out));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_null(strstr(out, "internal error"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interior_slot_given_back_traps),
        cmocka_unit_test(test_slot_given_back_twice_traps),
        cmocka_unit_test(test_slot_given_back_once_is_fine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
