/* SPDX-License-Identifier: MIT */
/* Which frames of a stack are the libraries' and which the program's: the routines a
 * report's title passes over for their caller, and the allocator's own frames and C++'s
 * operators new and delete that the allocation and free stacks start past. By symbol and
 * module name only. */
#include "frame_kind.h"

#include <string.h>

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A string or memory routine's name: mem*, str*, stp*, wcs*, wmem*, b* and their glibc
 * implementations (__memcpy_generic, __strcpy_chk, __GI_memset). */
static bool string_routine(const char *name)
{
    static const char *const prefixes[] = {"mem",       "str",   "stp",   "wcs",  "wcp",
                                           "wmem",      "bcopy", "bzero", "bcmp", "explicit_bzero",
                                           "rawmemchr", "index", "rindex"};
    if (starts_with(name, "__GI_"))
        name += 5;
    while (*name == '_')
        name++;
    for (unsigned i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (starts_with(name, prefixes[i]))
            return true;
    return false;
}

/* A function of the C++ library compiled into the program (a template of std:: or
 * __gnu_cxx::, as mangled: _ZSt..., _ZNSt..., _ZNKSt..., the std abbreviations _ZNSa...,
 * _ZNSs..., and _ZN9__gnu_cxx...): vector's destructor, operator[]. */
static bool cxx_library_name(const char *name)
{
    static const char *const prefixes[] = {"_ZSt", "_ZNS", "_ZNKS", "_ZN9__gnu_cxx",
                                           "_ZNK9__gnu_cxx"};
    for (unsigned i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (starts_with(name, prefixes[i]))
            return true;
    return false;
}

/* A frame the header passes over for its caller, as the kernel's checked memcpy reports in
 * the caller: the C library's string and memory routines (and its code without a symbol,
 * its local implementations of them when no debug file names them), and the C++ library,
 * in its module or compiled into the program. */
bool hwt_frame_kind_library(const struct hwt_symbol *sym)
{
    if (sym->module == NULL)
        return false;
    if (sym->function != NULL && cxx_library_name(sym->function))
        return true;
    const char *slash = strrchr(sym->module, '/');
    const char *module = slash != NULL ? slash + 1 : sym->module;
    if (starts_with(module, "libstdc++.so"))
        return true;
    if (!starts_with(module, "libc.so"))
        return false;
    return sym->function == NULL || string_routine(sym->function);
}

/* libstdc++'s (and libc++'s) replaceable allocation and deallocation functions, mangled:
 * operator new, new[], delete and delete[] of every signature. */
static bool cxx_operator(const char *name)
{
    return strncmp(name, "_Znw", 4) == 0 || strncmp(name, "_Zna", 4) == 0 ||
           strncmp(name, "_Zdl", 4) == 0 || strncmp(name, "_Zda", 4) == 0;
}

/* The allocator's own functions that can stand above the program's call: the exported
 * entry points (one calling another, as realloc(NULL, n) malloc) and the internal ones. */
static bool own_entry(const char *name)
{
    static const char *const entries[] = {
        "malloc",        "free",     "calloc", "realloc", "reallocarray", "posix_memalign",
        "aligned_alloc", "memalign", "valloc", "pvalloc", "free_sized",   "free_aligned_sized",
        "cfree",         NULL};
    if (strncmp(name, "hwt_", 4) == 0 || strncmp(name, "hwtag_", 6) == 0)
        return true;
    for (unsigned i = 0; entries[i] != NULL; i++)
        if (strcmp(name, entries[i]) == 0)
            return true;
    return false;
}

unsigned hwt_frame_kind_first_user(const uintptr_t *pcs, unsigned n)
{
    struct hwt_symbol self;
    self.module = NULL;
    /* the module this code is in: libhwtag.so, or the program it is linked into */
    bool have_self = hwt_symtab_lookup((uintptr_t)hwt_frame_kind_first_user, &self);
    for (unsigned i = 0; i < n; i++) {
        struct hwt_symbol sym;
        sym.function = NULL;
        sym.module = NULL;
        if (!hwt_symtab_lookup(pcs[i], &sym) || sym.function == NULL)
            return i;
        bool own = have_self && sym.module == self.module && own_entry(sym.function);
        if (!own && !cxx_operator(sym.function))
            return i;
    }
    return 0;
}
