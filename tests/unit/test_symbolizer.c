/* SPDX-License-Identifier: MIT */
/* Parsing of llvm-symbolizer and addr2line answers (hwt_symparse_answer), and when the
 * symbolizer process is started at all: AT_SECURE is simulated through the OS seam
 * (hwt_os_simulate_secure in os.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "os.h"
#include "symbolizer.h"
#include "symparse.h"

static void test_llvm_inlined_answer(void **state)
{
    char text[] = "put\n/src/t1.c:5:97\nwork\n/src/t1.c:6:48\n\n";
    struct hwt_symbolizer_line l[4];
    (void)state;
    assert_int_equal(hwt_symparse_answer(text, l, 4), 2);
    assert_string_equal(l[0].function, "put");
    assert_string_equal(l[0].file, "/src/t1.c");
    assert_int_equal(l[0].line, 5);
    assert_int_equal(l[0].column, 97);
    assert_string_equal(l[1].function, "work");
    assert_int_equal(l[1].line, 6);
    assert_int_equal(l[1].column, 48);
}

static void test_unknown_answer(void **state)
{
    char text[] = "??\n??:0:0\n\n";
    struct hwt_symbolizer_line l[4];
    (void)state;
    assert_int_equal(hwt_symparse_answer(text, l, 4), 0);
}

static void test_addr2line_answer(void **state)
{
    char text[] = "0x00000000000009e4\napp::Parser::store(unsigned long)\n/src/p.cpp:5 "
                  "(discriminator 2)\n0xffffffffffffffff\n??\n??:0\n";
    struct hwt_symbolizer_line l[4];
    (void)state;
    assert_int_equal(hwt_symparse_answer(text, l, 4), 1);
    assert_string_equal(l[0].function, "app::Parser::store(unsigned long)");
    assert_string_equal(l[0].file, "/src/p.cpp");
    assert_int_equal(l[0].line, 5);
    assert_int_equal(l[0].column, 0);
}

static void test_name_without_line(void **state)
{
    char text[] = "memcpy\n??:0:0\n\n";
    struct hwt_symbolizer_line l[4];
    (void)state;
    assert_int_equal(hwt_symparse_answer(text, l, 4), 1);
    assert_string_equal(l[0].function, "memcpy");
    assert_null(l[0].file);
}

/* --- starting the process ------------------------------------------------------------------ */

static char dir[64];
static char marker[128];
static char program[128];
static char saved_path[4096];
static bool had_path;

/* A fake symbolizer that notes it ran and answers nothing; the same under the names the
 * PATH search tries first, in a directory that alone is PATH. */
static int fake_setup(void **state)
{
    (void)state;
    char link[160];
    snprintf(dir, sizeof(dir), "/tmp/hwtag-sym-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(marker, sizeof(marker), "%s/ran", dir);
    snprintf(program, sizeof(program), "%s/fake-symbolizer", dir);
    FILE *f = fopen(program, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "#!/bin/sh\necho \"$0\" >>%s\n", marker);
    fclose(f);
    chmod(program, 0755);
    snprintf(link, sizeof(link), "%s/llvm-symbolizer", dir);
    if (symlink(program, link) != 0)
        return -1;
    const char *path = getenv("PATH");
    had_path = path != NULL;
    if (had_path)
        snprintf(saved_path, sizeof(saved_path), "%s", path);
    setenv("PATH", dir, 1);
    return 0;
}

static int fake_teardown(void **state)
{
    (void)state;
    char link[160];
    if (had_path)
        setenv("PATH", saved_path, 1);
    else
        unsetenv("PATH");
    snprintf(link, sizeof(link), "%s/llvm-symbolizer", dir);
    unlink(link);
    unlink(program);
    unlink(marker);
    rmdir(dir);
    hwt_opts.symbolizer = NULL;
    hwt_os_simulate_secure = false;
    return 0;
}

/* One report's session with one lookup; whether the fake ran. */
static bool lookup_runs_a_program(void)
{
    struct hwt_symbolizer_line l[HWT_SYMBOLIZER_MAX_INLINE];
    unlink(marker);
    hwt_symbolizer_begin();
    assert_int_equal(hwt_symbolizer_lookup("/bin/sh", 0x1000, l, HWT_SYMBOLIZER_MAX_INLINE), 0);
    hwt_symbolizer_end();
    return access(marker, F_OK) == 0;
}

static void test_symbolizer_named_and_found_on_path(void **state)
{
    (void)state;
    hwt_opts.symbolize = HWT_ON;
    hwt_opts.symbolizer = program;
    assert_true(lookup_runs_a_program());
    hwt_opts.symbolizer = NULL;
    assert_true(lookup_runs_a_program());
}

/* In a secure-execution process no program is started, neither the one named (were the
 * option set some other way) nor one on PATH. */
static void test_secure_process_starts_no_symbolizer(void **state)
{
    (void)state;
    hwt_os_simulate_secure = true;
    hwt_opts.symbolize = HWT_ON;
    hwt_opts.symbolizer = program;
    assert_false(lookup_runs_a_program());
    hwt_opts.symbolizer = NULL;
    assert_false(lookup_runs_a_program());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llvm_inlined_answer),
        cmocka_unit_test(test_unknown_answer),
        cmocka_unit_test(test_addr2line_answer),
        cmocka_unit_test(test_name_without_line),
        cmocka_unit_test_setup_teardown(test_symbolizer_named_and_found_on_path, fake_setup,
                                        fake_teardown),
        cmocka_unit_test_setup_teardown(test_secure_process_starts_no_symbolizer, fake_setup,
                                        fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
