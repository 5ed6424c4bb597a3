/* SPDX-License-Identifier: MIT */
/* Address -> function+offset/size and module+offset, from the modules' .symtab and
 * .dynsym, without malloc, stdio or the dynamic loader's lock. */
#ifndef HWT_SYMBOLIZE_H
#define HWT_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hwt_symbol {
    const char *function; /* NULL when unknown; points into a mapped ELF file */
    uintptr_t function_offset;
    uintptr_t function_size;
    const char *module;      /* path of the mapped file, NULL when unknown */
    uintptr_t module_offset; /* pc - module load bias: the link-time address addr2line takes */
};

/* Called once at start-up (not in the signal handler). */
void hwt_symbolize_init(void);

/* Fills *out for pc; modules mapped after init are found by rescanning /proc/self/maps.
 * Returns false when pc is in no file-backed executable mapping. signal-safe */
bool hwt_symbolize(uintptr_t pc, struct hwt_symbol *out);

#endif
