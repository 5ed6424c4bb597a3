/* SPDX-License-Identifier: MIT */
/* Address -> function+offset/size and module+offset, from the modules' .symtab and
 * .dynsym, without malloc, stdio or the dynamic loader's lock. */
#ifndef HWT_SYMTAB_H
#define HWT_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hwt_symbol {
    const char *function; /* NULL when unknown; points into a mapped ELF file */
    uintptr_t function_offset;
    uintptr_t function_size;
    const char *module;      /* path of the mapped file, NULL when unknown */
    uintptr_t module_offset; /* pc - module load bias: the link-time address addr2line takes */
    const uint8_t *build_id; /* the module's NT_GNU_BUILD_ID bytes, NULL when it has none */
    unsigned build_id_len;
    bool local;       /* function was named by the module's debug file (a local symbol) */
    bool debug_found; /* the module has a .symtab of its own or a debug file was read */
};

/* Fills *out for pc. A module without a .symtab of its own (libc.so.6) has its local
 * functions named from its debug file, /usr/lib/debug/.build-id/xx/yyyy.debug (Debian's
 * -dbg packages), when installed; exported names from .dynsym come first. Modules are found by
 * scanning /proc/self/maps when pc is in none seen so far; there is no scan at start-up, whose
 * tables (12 KiB of .bss touched) only reports need. Returns false when pc is in no file-backed
 * executable mapping. signal-safe */
bool hwt_symtab_lookup(uintptr_t pc, struct hwt_symbol *out);

/* For a pc in a function without a symbol (a libc implementation behind an IFUNC, say
 * __memcpy_generic behind memcpy) whose caller returns to ret: names the function after the
 * dynamic symbol whose slot in the caller module's GOT points at the function's start (the
 * function the caller called through its PLT, also by a tail call), with the offset and
 * size from the callee's .eh_frame_hdr entry. Fills only function, function_offset and
 * function_size. signal-safe */
bool hwt_symtab_callee(uintptr_t pc, uintptr_t ret, struct hwt_symbol *out);

#endif
