/* SPDX-License-Identifier: MIT */
/* Unit tests of the KASAN-format report text: layout, access line, object and distance
 * lines, tag dump and summary, from hand-filled reports. Never depends on real faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "infer.h"
#include "report.h"
#include "symtab.h"

#define TEXT_CAP 16384
/* Far from anything the allocator maps in a unit test that never allocates. */
#define OBJ_START UINT64_C(0x7f00a3c012a0)
#define RULE "=================================================================="

static char text[TEXT_CAP];

static void fill_object(struct hwt_report *r, size_t requested, size_t class_size)
{
    r->have_object = true;
    r->object.start = OBJ_START;
    r->object.requested = requested;
    r->object.size = (requested + 15) & ~(size_t)15;
    r->object.class_size = class_size;
    r->object.region_size = class_size;
    r->object.tag = 0xb;
    r->object.live = true;
    r->object.ever_used = true;
    r->object.sampled = true;
}

/* A synchronous slab out-of-bounds write of size 1, object of 16 in class 32. */
static void base_report(struct hwt_report *r, long offset)
{
    memset(r, 0, sizeof(*r));
    r->bug = HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
    r->access = HWTAG_ACCESS_WRITE;
    r->addr = (UINT64_C(0x0b) << 56) | (uintptr_t)((long)OBJ_START + offset);
    r->access_size = 1;
    r->pointer_tag = 0xb;
    r->memory_tag = 0x5;
    r->tid = 1234;
    r->comm = "app";
    r->stack[0] = (uintptr_t)&base_report + 8;
    r->stack[1] = (uintptr_t)&fill_object + 4;
    r->stack_len = 2;
    fill_object(r, 16, 32);
}

/* The fault path's last two steps: gather the stacks and tags, then format. */
static const char *format(struct hwt_report *r)
{
    hwt_infer_gather(r);
    size_t len = hwt_report_format(r, text, sizeof(text));
    assert_int_equal(len, strlen(text));
    assert_true(len < sizeof(text) - 1);
    return text;
}

/* The line of s equal to line, or NULL. */
static const char *find_line(const char *s, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = s; p != NULL && *p != '\0';) {
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
            return p;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return NULL;
}

static const char *find_prefix(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = s; p != NULL && *p != '\0';) {
        if (strncmp(p, prefix, n) == 0)
            return p;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return NULL;
}

#define assert_line(s, line)                                                                       \
    do {                                                                                           \
        if (find_line((s), (line)) == NULL)                                                        \
            fail_msg("missing line \"%s\" in:\n%s", (line), (s));                                  \
    } while (0)

#define assert_no_prefix(s, prefix)                                                                \
    do {                                                                                           \
        if (find_prefix((s), (prefix)) != NULL)                                                    \
            fail_msg("unexpected line \"%s\" in:\n%s", (prefix), (s));                             \
    } while (0)

/* The file name of a module path. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* The expected location text of pc, as the report must print it: the module by its file
 * name only (its path is in Modules). */
static void expected_location(uintptr_t pc, char *out, size_t cap, bool with_module)
{
    struct hwt_symbol sym = {0};
    if (!hwt_symtab_lookup(pc, &sym)) {
        snprintf(out, cap, "0x%lx", (unsigned long)pc);
    } else if (sym.function != NULL) {
        int n = snprintf(out, cap, "%s+0x%lx/0x%lx", sym.function,
                         (unsigned long)sym.function_offset, (unsigned long)sym.function_size);
        if (with_module && sym.module != NULL)
            snprintf(out + n, cap - (size_t)n, " (%s+0x%lx)", base_name(sym.module),
                     (unsigned long)sym.module_offset);
    } else if (sym.module != NULL) {
        snprintf(out, cap, "%s+0x%lx", base_name(sym.module), (unsigned long)sym.module_offset);
    } else {
        snprintf(out, cap, "0x%lx", (unsigned long)pc);
    }
}

static void test_rules_header_and_summary(void **state)
{
    struct hwt_report r;
    char loc[512], line[640];
    (void)state;
    base_report(&r, 16);
    const char *s = format(&r);

    assert_int_equal(strlen(RULE), 66);
    assert_int_equal(strncmp(s, RULE "\n", 67), 0);
    size_t len = strlen(s);
    assert_true(len > 67);
    assert_string_equal(s + len - 67, RULE "\n");

    expected_location(r.stack[0], loc, sizeof(loc), false);
    snprintf(line, sizeof(line), "BUG: KASAN: slab-out-of-bounds in %s", loc);
    if (find_line(s, line) != strchr(s, '\n') + 1)
        fail_msg("second line is not \"%s\" in:\n%s", line, s);

    expected_location(r.stack[0], loc, sizeof(loc), true);
    snprintf(line, sizeof(line), "SUMMARY: KASAN: slab-out-of-bounds in %s", loc);
    assert_line(s, line);
    /* the summary is the last line before the closing rule */
    assert_true(find_line(s, line) + strlen(line) + 1 == s + len - 67);
}

static void test_access_line_and_tags(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    const char *s = format(&r);
    assert_line(s, "Write of size 1 at addr 0b007f00a3c012b0 by task app/1234");
    assert_line(s, "Pointer tag: [0b], memory tag: [05]");
    assert_line(s, "Call trace:");
}

static void test_access_line_variants(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    r.access = HWTAG_ACCESS_READ;
    r.access_size = 0;
    assert_line(format(&r), "Read at addr 0b007f00a3c012b0 by task app/1234");

    r.access_size = 32;
    assert_line(format(&r), "Read of size 32 at addr 0b007f00a3c012b0 by task app/1234");

    r.access = HWTAG_ACCESS_WRITE;
    r.access_size = 0;
    assert_line(format(&r), "Write at addr 0b007f00a3c012b0 by task app/1234");

    r.bug = HWTAG_BUG_DOUBLE_FREE;
    r.access = HWTAG_ACCESS_FREE;
    r.comm = NULL;
    const char *s = format(&r);
    assert_line(s, "Free of addr 0b007f00a3c012b0 by task ?/1234");
    assert_non_null(find_prefix(s, "BUG: KASAN: double-free in "));
}

static void test_right_of_region_measured_from_requested(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 13);
    fill_object(&r, 13, 16);
    const char *s = format(&r);
    assert_line(s, "The buggy address belongs to the object at 7f00a3c012a0");
    assert_line(s, " which belongs to the size class 16 of size 16");
    assert_line(s, "The buggy address is located 0 bytes to the right of");
    assert_line(s, " 13-byte region [7f00a3c012a0, 7f00a3c012ad)");

    base_report(&r, 15);
    fill_object(&r, 13, 16);
    assert_line(format(&r), "The buggy address is located 2 bytes to the right of");

    base_report(&r, 40);
    assert_line(format(&r), "The buggy address is located 24 bytes to the right of");
    assert_int_equal(hwt_report_distance(r.addr, &r.object), 24);
}

static void test_left_of_region(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, -3);
    const char *s = format(&r);
    assert_line(s, "The buggy address is located 3 bytes to the left of");
    assert_line(s, " 16-byte region [7f00a3c012a0, 7f00a3c012b0)");
    assert_int_equal(hwt_report_distance(r.addr, &r.object), -3);
}

static void test_inside_freed_region_with_stacks(void **state)
{
    struct hwt_report r;
    uintptr_t alloc_pcs[2] = {(uintptr_t)&fill_object + 16, (uintptr_t)&base_report + 32};
    uintptr_t free_pcs[1] = {(uintptr_t)&format + 8};
    (void)state;
    base_report(&r, 5);
    r.bug = HWTAG_BUG_SLAB_USE_AFTER_FREE;
    r.access = HWTAG_ACCESS_READ;
    r.access_size = 4;
    r.object.live = false;
    r.object.alloc_stack = hwt_stackdepot_put(77, alloc_pcs, 2);
    r.object.free_stack = hwt_stackdepot_put(78, free_pcs, 1);
    assert_int_not_equal(r.object.alloc_stack, 0);
    assert_int_not_equal(r.object.free_stack, 0);
    const char *s = format(&r);
    assert_non_null(find_prefix(s, "BUG: KASAN: slab-use-after-free in "));
    assert_line(s, "Allocated by task 77:");
    assert_line(s, "Freed by task 78:");
    assert_line(s, "The buggy address is located 5 bytes inside of");
    assert_true(find_line(s, "Allocated by task 77:") < find_line(s, "Freed by task 78:"));
    assert_int_equal(hwt_report_distance(r.addr, &r.object), 5);

    /* a live object never shows a free stack, even if an old one is recorded */
    r.object.live = true;
    assert_no_prefix(format(&r), "Freed by task");
}

static void test_stack_not_available(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    r.object.alloc_stack = 0;
    const char *s = format(&r);
    const char *alloc = find_prefix(s, "Allocated by task");
    assert_non_null(alloc);
    assert_line(strchr(alloc, '\n') + 1, " (stack not available)");
    assert_no_prefix(s, "Freed by task");
}

static void test_large_object(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 40000);
    r.bug = HWTAG_BUG_OUT_OF_BOUNDS;
    r.object.large = true;
    r.object.requested = 40000;
    r.object.size = 40000;
    r.object.class_size = 0;
    r.object.region_size = 45056;
    const char *s = format(&r);
    assert_non_null(find_prefix(s, "BUG: KASAN: out-of-bounds in "));
    assert_line(s, " which belongs to a page-backed mapping of 45056 bytes");
    assert_line(s, "The buggy address is located 0 bytes to the right of");
    assert_line(s, " 40000-byte region [7f00a3c012a0, 7f00a3c0aee0)");
}

static void test_sampled_out_object_is_named(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    assert_no_prefix(format(&r), "The object was left untagged by sampling");
    r.object.sampled = false;
    assert_non_null(find_prefix(format(&r), "The object was left untagged by sampling"));
}

static void test_no_object(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    r.have_object = false;
    r.bug = HWTAG_BUG_INVALID_ACCESS;
    const char *s = format(&r);
    assert_non_null(find_prefix(s, "BUG: KASAN: invalid-access in "));
    assert_no_prefix(s, "Allocated by task");
    assert_no_prefix(s, "The buggy address belongs");
}

static void test_memory_dump_rows_and_caret(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16); /* address 7f00a3c012b0: row 7f00a3c01200, granule 11 */
    const char *s = format(&r);
    const char *hdr = find_line(s, "Memory state around the buggy address:");
    assert_non_null(hdr);
    const char *rows = strchr(hdr, '\n') + 1;
    static const char *const want[] = {
        " 7f00a3c01000: ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ??",
        " 7f00a3c01100: ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ??",
        ">7f00a3c01200: ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ??",
        "                                                ^",
        " 7f00a3c01300: ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ??",
        " 7f00a3c01400: ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ?? ??",
    };
    const char *p = rows;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        size_t n = strlen(want[i]);
        if (strncmp(p, want[i], n) != 0 || p[n] != '\n')
            fail_msg("dump line %zu: want \"%s\" in:\n%s", i, want[i], rows);
        p += n + 1;
    }
    /* the caret sits under the first digit of granule 11 (the "??" at 0x...12b0) */
    const char *fault_row = find_prefix(s, ">");
    const char *caret = strchr(fault_row, '\n') + 1;
    size_t col = (size_t)(strchr(caret, '^') - caret);
    assert_int_equal(fault_row[col - 1], ' ');
    assert_int_equal(col, strlen(">7f00a3c01200:") + 1 + 3 * 11);
}

static void test_registers_only_with_context(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    assert_no_prefix(format(&r), "Registers:");

    r.have_regs = true;
    for (unsigned i = 0; i < 31; i++)
        r.regs[i] = i;
    r.regs[30] = 0xdeadbeef;
    r.sp = 0xfffffffff000;
    r.pc = 0x400123;
    r.pstate = 0x60000000;
    const char *s = format(&r);
    assert_line(s, "Registers:");
    assert_line(s, " x0  0000000000000000  x1  0000000000000001  x2  0000000000000002  x3  "
                   "0000000000000003");
    assert_line(s, " x28 000000000000001c  x29 000000000000001d  x30 00000000deadbeef  sp  "
                   "0000fffffffff000");
    assert_line(s, " pc  0000000000400123  pstate 0000000060000000");
    /* registers come after the dump and before the summary */
    assert_true(find_line(s, "Registers:") >
                find_line(s, "Memory state around the buggy address:"));
    assert_true(find_line(s, "Registers:") < find_prefix(s, "SUMMARY: KASAN: "));
}

static void test_asynchronous_fault(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    r.asynchronous = true;
    r.bug = HWTAG_BUG_INVALID_ACCESS;
    r.have_object = false;
    r.addr = 0;
    const char *s = format(&r);
    assert_line(s, "BUG: KASAN: invalid-access");
    assert_line(s, "Asynchronous fault: no details available");
    assert_line(s, "Call trace:");
    assert_non_null(strstr(s, "HWTAG_MODE=sync"));
    assert_no_prefix(s, "Pointer tag:");
    assert_no_prefix(s, "Memory state around");
    assert_non_null(find_prefix(s, "SUMMARY: KASAN: invalid-access in "));
}

static void test_empty_stack(void **state)
{
    struct hwt_report r;
    (void)state;
    base_report(&r, 16);
    r.stack_len = 0;
    const char *s = format(&r);
    const char *trace = find_line(s, "Call trace:");
    assert_non_null(trace);
    assert_line(strchr(trace, '\n') + 1, " (stack not available)");
}

static void test_truncation_is_terminated(void **state)
{
    struct hwt_report r;
    char small[100];
    (void)state;
    base_report(&r, 16);
    memset(small, 'X', sizeof(small));
    hwt_infer_gather(&r);
    size_t len = hwt_report_format(&r, small, sizeof(small));
    assert_int_equal(len, sizeof(small) - 1);
    assert_int_equal(small[sizeof(small) - 1], '\0');
    assert_int_equal(strncmp(small, RULE "\n", 67), 0);
}

static void test_bug_names(void **state)
{
    (void)state;
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_INVALID_ACCESS), "invalid-access");
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_SLAB_OUT_OF_BOUNDS), "slab-out-of-bounds");
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_SLAB_USE_AFTER_FREE), "slab-use-after-free");
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_OUT_OF_BOUNDS), "out-of-bounds");
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_USE_AFTER_FREE), "use-after-free");
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_DOUBLE_FREE), "double-free");
    assert_string_equal(hwt_report_bug_name(HWTAG_BUG_INVALID_FREE), "invalid-free");
    assert_string_equal(hwt_report_bug_name((enum hwtag_bug_type)99), "unknown-crash");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_header_and_summary),
        cmocka_unit_test(test_access_line_and_tags),
        cmocka_unit_test(test_access_line_variants),
        cmocka_unit_test(test_right_of_region_measured_from_requested),
        cmocka_unit_test(test_left_of_region),
        cmocka_unit_test(test_inside_freed_region_with_stacks),
        cmocka_unit_test(test_stack_not_available),
        cmocka_unit_test(test_large_object),
        cmocka_unit_test(test_sampled_out_object_is_named),
        cmocka_unit_test(test_no_object),
        cmocka_unit_test(test_memory_dump_rows_and_caret),
        cmocka_unit_test(test_registers_only_with_context),
        cmocka_unit_test(test_asynchronous_fault),
        cmocka_unit_test(test_empty_stack),
        cmocka_unit_test(test_truncation_is_terminated),
        cmocka_unit_test(test_bug_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
