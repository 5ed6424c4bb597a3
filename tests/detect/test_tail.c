/* SPDX-License-Identifier: MIT */
/* Overflows inside an object's last granule, which MTE cannot see: the tail's check
 * pattern catches them at free and at realloc. Also: a correct program that writes up to
 * malloc_usable_size is never reported, and realloc keeps every byte it was told it has.
 * The tail check is software, so these cases run without MTE too. */
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "report_text.h"
#include "size_class.h"

#define GRANULE 16u
#define LARGE_SIZES 3

static const size_t large_sizes[LARGE_SIZES] = {16385, 40001, 300007};

struct overflow {
    size_t size;  /* requested */
    size_t by;    /* bytes written past the end, 1..15 */
    bool realloc; /* found by realloc rather than free */
    size_t from;  /* the first byte past the end written (below by); 0 unless said */
};

static __attribute__((noinline)) void overflow_then_free(void *arg)
{
    const struct overflow *o = arg;
    unsigned char *volatile p = malloc(o->size);
    say("ptr", (uintptr_t)p);
    for (size_t i = 0; i < o->size; i++)
        p[i] = (unsigned char)(0xa5 ^ i);
    /* the tail's pattern is secret: flip each byte so every written one changes, and write
     * a NUL first, the commonest overflow (never a pattern byte) */
    size_t first = o->size + o->from;
    p[first] = 0;
    for (size_t i = first + 1; i < o->size + o->by; i++)
        p[i] = (unsigned char)~p[i];
    if (o->realloc)
        p = realloc(p, o->size * 2 + 100);
    free(p);
    _exit(0); /* not reached: the report aborts */
}

/* Runs one overflow in a child and checks the report's lines. */
static void expect_tail_bytes_report(size_t size, size_t from, size_t by, bool at_realloc)
{
    struct overflow o = {size, by, at_realloc, from};
    struct child_result r;
    char line[160];

    assert_true(run_child(LIBRARY_REPORT, overflow_then_free, &o, &r));
    expect_abort(&r);
    expect_text(&r, size > HWT_SMALL_MAX ? "BUG: KASAN: out-of-bounds in overflow_then_free+"
                                         : "BUG: KASAN: slab-out-of-bounds in overflow_then_free+");
    /* the kernel's unknown-size access line, at the first byte written past the end */
    uintptr_t ptr = hex_after(r.output, "ptr=0x");
    snprintf(line, sizeof(line), "\nWrite at addr %016lx by task ",
             (unsigned long)(ptr + size + from));
    expect_text(&r, line);
    snprintf(line, sizeof(line),
             "\nThe write is of unknown size, detected at %s of addr %016lx by "
             "overflow_then_free+0x",
             at_realloc ? "realloc" : "free", (unsigned long)ptr);
    expect_text(&r, line);
    snprintf(line, sizeof(line), "Bytes %zu..%zu past the %zu-byte region were written", from,
             by - 1, size);
    expect_text(&r, line);
    snprintf(line, sizeof(line), " %zu-byte region [", size);
    expect_text(&r, line);
    snprintf(line, sizeof(line), "The buggy address is located %zu bytes to the right of", from);
    expect_text(&r, line);
    expect_text(&r, " pattern:");
    expect_text(&r, " found:  ");
    expect_text(&r, "Allocated by task");
    expect_text(&r, "SUMMARY: KASAN:");
}

static void expect_tail_report(size_t size, size_t by, bool at_realloc)
{
    expect_tail_bytes_report(size, 0, by, at_realloc);
}

/* Every size class boundary: the largest request of each class with a tail (one byte of
 * tail), overflowed by that byte. */
static void test_one_byte_past_every_class(void **state)
{
    (void)state;
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        size_t cs = hwt_size_class_size(cls);
        expect_tail_report(cs - 1, 1, false);
    }
}

/* 1..15 bytes past a 1-byte-into-the-granule object, in a small and a big class. */
static void test_every_overflow_length(void **state)
{
    (void)state;
    static const size_t sizes[] = {17, 1041, 16369};
    for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (size_t by = 1; by < GRANULE; by++)
            expect_tail_report(sizes[s], by, false);
}

/* Every place a tail can start in its granule (1..15 bytes of the object in it), in a
 * small and a big class: a single byte written, the tail's first or its last (the
 * granule's byte 15). The check of every word and byte of the granule must see each. */
static void test_every_tail_start(void **state)
{
    (void)state;
    static const size_t bases[] = {48, 1040};
    for (unsigned s = 0; s < sizeof(bases) / sizeof(bases[0]); s++) {
        for (size_t off = 1; off < GRANULE; off++) {
            size_t len = GRANULE - off; /* tail bytes */
            expect_tail_bytes_report(bases[s] + off, 0, 1, false);
            expect_tail_bytes_report(bases[s] + off, len - 1, len, false);
        }
    }
}

/* Frees a live object with a tail through its pointer with bit 63 set (outside the MTE
 * tag, bits 56-59). */
static __attribute__((noinline)) void free_with_top_bit(void *arg)
{
    unsigned char *volatile p = malloc((size_t)(uintptr_t)arg);
    p[0] = 1;
    free((void *)((uintptr_t)p | (uintptr_t)1 << 63));
    _exit(0);
}

/* aarch64 ignores a pointer's top byte (TBI), so there that pointer is the object's and the
 * free goes through. x86_64 faults on it: natively it names no object, and free must say
 * so rather than fault reading the object's tail through it (it did, for a small and a
 * page-backed object alike). */
static void test_free_through_top_byte(void **state)
{
    (void)state;
    static const size_t sizes[] = {40, 40001};
    for (unsigned i = 0; i < 2; i++) {
        struct child_result r;
        assert_true(run_child(LIBRARY_REPORT, free_with_top_bit, (void *)sizes[i], &r));
#if defined(__aarch64__)
        expect_exit(&r, 0);
        expect_no_text(&r, "BUG: KASAN");
#else
        expect_abort(&r);
        expect_text(&r, "BUG: KASAN: invalid-free in free_with_top_bit+0x");
        expect_text(&r, "Free of addr 80");
#endif
    }
}

static void test_page_backed_sizes(void **state)
{
    (void)state;
    for (unsigned i = 0; i < LARGE_SIZES; i++) {
        size_t tail = GRANULE - large_sizes[i] % GRANULE;
        expect_tail_report(large_sizes[i], 1, false);
        expect_tail_report(large_sizes[i], tail, false);
    }
}

static void test_found_at_realloc(void **state)
{
    (void)state;
    expect_tail_report(13, 1, true);
    expect_tail_report(1000, 3, true);
    expect_tail_report(40001, 15, true);
}

/* Writes every usable byte of objects of many sizes, frees them: no report. */
static void write_usable_bytes(void *arg)
{
    (void)arg;
    for (size_t n = 1; n <= 20000; n += (n < 600 ? 1 : 37)) {
        unsigned char *p = malloc(n);
        size_t usable = malloc_usable_size(p);
        if (usable < n)
            _exit(3);
        memset(p, 0x5a, usable);
        free(p);
    }
    _exit(0);
}

static void test_usable_bytes_are_never_reported(void **state)
{
    (void)state;
    struct child_result r;
    assert_true(run_child(LIBRARY_REPORT, write_usable_bytes, NULL, &r));
    expect_no_text(&r, "BUG: KASAN");
    expect_exit(&r, 0);
}

/* realloc keeps every byte malloc_usable_size reported, whatever the sizes. */
static void realloc_keeps_usable(void *arg)
{
    (void)arg;
    static const size_t sizes[] = {1,   13,   16,   17,   31,    32,    100,   255,   256,
                                   257, 1000, 4095, 4097, 16383, 16384, 16385, 40000, 70000};
    const size_t count = sizeof(sizes) / sizeof(sizes[0]);
    for (size_t a = 0; a < count; a++) {
        for (size_t b = 0; b < count; b++) {
            unsigned char *p = malloc(sizes[a]);
            size_t usable = malloc_usable_size(p);
            for (size_t i = 0; i < usable; i++)
                p[i] = (unsigned char)(i * 7 + a);
            unsigned char *q = realloc(p, sizes[b]);
            size_t keep = usable < sizes[b] ? usable : sizes[b];
            for (size_t i = 0; i < keep; i++)
                if (q[i] != (unsigned char)(i * 7 + a)) {
                    fprintf(stderr, "lost byte %zu of %zu -> %zu\n", i, sizes[a], sizes[b]);
                    _exit(4);
                }
            free(q);
        }
    }
    _exit(0);
}

static void test_realloc_keeps_every_usable_byte(void **state)
{
    (void)state;
    struct child_result r;
    assert_true(run_child(LIBRARY_REPORT, realloc_keeps_usable, NULL, &r));
    expect_no_text(&r, "lost byte");
    expect_no_text(&r, "BUG: KASAN");
    expect_exit(&r, 0);
}

static void usable_is_requested(void *arg)
{
    (void)arg;
    for (size_t n = 1; n <= 70000; n += (n < 300 ? 1 : 313)) {
        void *p = malloc(n);
        if (malloc_usable_size(p) != n)
            _exit(5);
        free(p);
    }
    _exit(0);
}

static void test_usable_size_is_the_requested_size(void **state)
{
    (void)state;
    struct child_result r;
    assert_true(run_child(LIBRARY_REPORT, usable_is_requested, NULL, &r));
    expect_exit(&r, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_byte_past_every_class),
        cmocka_unit_test(test_every_overflow_length),
        cmocka_unit_test(test_every_tail_start),
        cmocka_unit_test(test_free_through_top_byte),
        cmocka_unit_test(test_page_backed_sizes),
        cmocka_unit_test(test_found_at_realloc),
        cmocka_unit_test(test_usable_bytes_are_never_reported),
        cmocka_unit_test(test_realloc_keeps_every_usable_byte),
        cmocka_unit_test(test_usable_size_is_the_requested_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
