/* SPDX-License-Identifier: MIT */
/* Unit tests of the signal-safe formatter: conversions, flags, widths, truncation.
 * Expected strings are written out by hand, never produced by the libc printf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fmt.h"

#define BUF_CAP 128

struct fixture {
    char mem[BUF_CAP];
    struct hwt_buf buf;
};

static int setup(void **state)
{
    static struct fixture fx;
    memset(&fx, 0x55, sizeof(fx));
    hwt_fmt_init(&fx.buf, fx.mem, sizeof(fx.mem));
    *state = &fx;
    return 0;
}

static struct hwt_buf *buf_of(void **state)
{
    return &((struct fixture *)*state)->buf;
}

static void test_init_gives_empty_string(void **state)
{
    struct hwt_buf *b = buf_of(state);
    assert_int_equal(b->len, 0);
    assert_string_equal(b->data, "");
    assert_false(b->truncated);
}

static void test_plain_text_and_percent(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "100%% sure");
    assert_string_equal(b->data, "100% sure");
    assert_int_equal(b->len, 9);
}

static void test_signed_decimal(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "%d %i %d %ld %lld", 0, -42, 2147483647, -9000000000L, (long long)INT64_MIN);
    assert_string_equal(b->data, "0 -42 2147483647 -9000000000 -9223372036854775808");
}

static void test_unsigned_and_size(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "%u %lu %llu %zu", 4294967295u, 0ul, (unsigned long long)UINT64_MAX,
                   (size_t)4096);
    assert_string_equal(b->data, "4294967295 0 18446744073709551615 4096");
}

static void test_hex_lowercase(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "%x %lx %llx %zx", 0xabcu, 0xdeadbeefcafeul, 0ull, (size_t)0x10);
    assert_string_equal(b->data, "abc deadbeefcafe 0 10");
}

static void test_zero_padded_width(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "[%02x] %016lx %05d", 0xbu, 0xffffa3c012b0ul, -42);
    assert_string_equal(b->data, "[0b] 0000ffffa3c012b0 -0042");
}

static void test_space_padding_and_left_justify(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "[%5d][%-5d][%4s][%-4s][%3c][%*u]", 42, 42, "ab", "ab", 'x', 4, 7u);
    assert_string_equal(b->data, "[   42][42   ][  ab][ab  ][  x][   7]");
}

static void test_pointer(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "%p %p", (void *)0x0b00ffffa3c012b0ul, (void *)0);
    assert_string_equal(b->data, "0xb00ffffa3c012b0 0x0");
}

static void test_string_null_and_precision(void **state)
{
    struct hwt_buf *b = buf_of(state);
    const char *volatile none = NULL; /* hidden from the compiler's format checks */
    hwt_fmt_printf(b, "%s|%.3s|%c", none, "abcdef", 'z');
    assert_string_equal(b->data, "(null)|abc|z");
}

static void test_appends_across_calls(void **state)
{
    struct hwt_buf *b = buf_of(state);
    hwt_fmt_printf(b, "a=%d", 1);
    hwt_fmt_printf(b, ", b=%s", "two");
    assert_string_equal(b->data, "a=1, b=two");
    assert_int_equal(b->len, strlen("a=1, b=two"));
}

static void vprintf_helper(struct hwt_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hwt_fmt_vprintf(b, fmt, ap);
    va_end(ap);
}

static void test_vprintf(void **state)
{
    struct hwt_buf *b = buf_of(state);
    vprintf_helper(b, "%s/%d", "app", 1234);
    assert_string_equal(b->data, "app/1234");
}

static void test_truncation_keeps_terminator(void **state)
{
    char mem[8];
    struct hwt_buf b;
    (void)state;
    memset(mem, 'X', sizeof(mem));
    hwt_fmt_init(&b, mem, sizeof(mem));
    hwt_fmt_printf(&b, "%s", "0123456789");
    assert_true(b.truncated);
    assert_int_equal(b.len, 7);
    assert_string_equal(mem, "0123456");
    hwt_fmt_printf(&b, "%d", 5);
    assert_int_equal(b.len, 7);
    assert_string_equal(mem, "0123456");
}

static void test_exact_fit_is_not_truncated(void **state)
{
    char mem[4];
    struct hwt_buf b;
    (void)state;
    hwt_fmt_init(&b, mem, sizeof(mem));
    hwt_fmt_printf(&b, "%x", 0xabcu);
    assert_false(b.truncated);
    assert_string_equal(mem, "abc");
}

static void test_zero_capacity(void **state)
{
    char mem[1] = {'X'};
    struct hwt_buf b;
    (void)state;
    hwt_fmt_init(&b, mem, 0);
    hwt_fmt_printf(&b, "hello");
    assert_true(b.truncated);
    assert_int_equal(b.len, 0);
    assert_int_equal(mem[0], 'X');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_init_gives_empty_string, setup),
        cmocka_unit_test_setup(test_plain_text_and_percent, setup),
        cmocka_unit_test_setup(test_signed_decimal, setup),
        cmocka_unit_test_setup(test_unsigned_and_size, setup),
        cmocka_unit_test_setup(test_hex_lowercase, setup),
        cmocka_unit_test_setup(test_zero_padded_width, setup),
        cmocka_unit_test_setup(test_space_padding_and_left_justify, setup),
        cmocka_unit_test_setup(test_pointer, setup),
        cmocka_unit_test_setup(test_string_null_and_precision, setup),
        cmocka_unit_test_setup(test_appends_across_calls, setup),
        cmocka_unit_test_setup(test_vprintf, setup),
        cmocka_unit_test(test_truncation_keeps_terminator),
        cmocka_unit_test(test_exact_fit_is_not_truncated),
        cmocka_unit_test(test_zero_capacity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
