/* SPDX-License-Identifier: MIT */
/* Parsing of llvm-symbolizer and addr2line answers (hwt_symparse_answer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llvm_inlined_answer),
        cmocka_unit_test(test_unknown_answer),
        cmocka_unit_test(test_addr2line_answer),
        cmocka_unit_test(test_name_without_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
