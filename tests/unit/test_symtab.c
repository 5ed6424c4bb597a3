/* SPDX-License-Identifier: MIT */
/* Unit tests of symtab.c (pc -> symbol): static functions from .symtab, exported ones from .dynsym,
 * libraries loaded after start-up, and the /proc/self/maps reader. */
#ifndef _GNU_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#endif
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "maps.h"
#include "symtab.h"

static volatile unsigned sink;

__attribute__((noipa)) static void symbolize_me(void)
{
    sink++;
    sink *= 3;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void test_static_function_from_symtab(void **state)
{
    struct hwt_symbol sym;
    uintptr_t pc = (uintptr_t)symbolize_me + 4;

    (void)state;
    assert_true(hwt_symtab_lookup(pc, &sym));
    assert_non_null(sym.function);
    assert_string_equal(sym.function, "symbolize_me");
    assert_int_equal(sym.function_offset, 4);
    assert_true(sym.function_offset < sym.function_size);
    assert_non_null(sym.module);
    assert_true(ends_with(sym.module, "test_symtab")); /* unit_test_symtab in CMake */
}

static void test_module_offset_is_link_address(void **state)
{
    struct hwt_symbol a, b;
    uintptr_t pc_a = (uintptr_t)symbolize_me, pc_b = (uintptr_t)ends_with;

    (void)state;
    assert_true(hwt_symtab_lookup(pc_a, &a));
    assert_true(hwt_symtab_lookup(pc_b, &b));
    /* one bias for the whole module */
    assert_int_equal(pc_a - a.module_offset, pc_b - b.module_offset);
}

static void test_exported_function_from_dynsym(void **state)
{
    struct hwt_symbol sym;
    /* libc's own write, not a sanitizer's interceptor of the same name */
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    uintptr_t pc;
    Dl_info info;

    (void)state;
    assert_non_null(libc);
    pc = (uintptr_t)dlsym(libc, "write");
    assert_true(pc != 0);
    assert_true(hwt_symtab_lookup(pc + 8, &sym));
    assert_non_null(sym.function);
    assert_string_equal(sym.function, "write");
    assert_int_equal(sym.function_offset, 8);
    assert_non_null(sym.module);
    assert_non_null(strstr(sym.module, "libc.so"));
    /* a shared object's bias is its load base */
    assert_true(dladdr((void *)pc, &info) != 0);
    assert_int_equal(sym.module_offset, pc + 8 - (uintptr_t)info.dli_fbase);
    dlclose(libc);
}

static void test_library_loaded_after_init(void **state)
{
    struct hwt_symbol sym;
    void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    uintptr_t pc;

    (void)state;
    if (!lib)
        skip();
    pc = (uintptr_t)dlsym(lib, "zlibVersion");
    assert_true(pc != 0);
    assert_true(hwt_symtab_lookup(pc, &sym));
    assert_non_null(sym.module);
    assert_non_null(strstr(sym.module, "libz.so"));
    assert_non_null(sym.function);
    assert_string_equal(sym.function, "zlibVersion");
    assert_int_equal(sym.function_offset, 0);
}

static void test_unknown_address(void **state)
{
    struct hwt_symbol sym;
    int on_stack;

    (void)state;
    assert_false(hwt_symtab_lookup(16, &sym));
    assert_null(sym.function);
    assert_null(sym.module);
    assert_false(hwt_symtab_lookup((uintptr_t)&on_stack, &sym));
}

struct find_query {
    uintptr_t addr;
    unsigned lines;
    bool found, readable, writable;
};

static bool find_addr(const struct hwt_mapping *m, void *arg)
{
    struct find_query *q = arg;

    q->lines++;
    if (q->addr >= m->start && q->addr < m->end) {
        q->found = true;
        q->readable = m->readable;
        q->writable = m->writable;
    }
    return true;
}

static void test_maps_reader_finds_stack(void **state)
{
    int on_stack = 0;
    struct find_query q = {.addr = (uintptr_t)&on_stack};

    (void)state;
    assert_true(hwt_maps_foreach(find_addr, &q));
    assert_true(q.lines > 3);
    assert_true(q.found);
    assert_true(q.readable);
    assert_true(q.writable);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_function_from_symtab),
        cmocka_unit_test(test_module_offset_is_link_address),
        cmocka_unit_test(test_exported_function_from_dynsym),
        cmocka_unit_test(test_library_loaded_after_init),
        cmocka_unit_test(test_unknown_address),
        cmocka_unit_test(test_maps_reader_finds_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
