/* SPDX-License-Identifier: MIT */
/* The external symbolizer: file:line:column, inlined frames and demangled names from
 * llvm-symbolizer (or binutils addr2line), a process started with a raw clone + execve and
 * fed over a socket. No malloc, no stdio, no lock; a missing, crashed or hung symbolizer
 * (bounded by a deadline) only means frames without lines. */
#ifndef HWT_SYMBOLIZER_H
#define HWT_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#define HWT_SYMBOLIZER_MAX_INLINE 8
/* Total time one report may spend waiting for the symbolizer. */
#define HWT_SYMBOLIZER_DEADLINE_MS 4000

/* One source location of a pc: the innermost (inlined) first, the physical function last. */
struct hwt_symbolizer_line {
    const char *function;  /* demangled; NULL when unknown */
    const char *file;      /* NULL when there is no line information */
    unsigned line, column; /* column 0: unknown */
};

/* Opens a session for one report; the process starts at the first lookup, never in a
 * secure-execution process (hwt_os_secure). signal-safe */
void hwt_symbolizer_begin(void);

/* The locations of module's link-time address offset, innermost first; returns how many
 * (0 when nothing is known or the symbolizer failed). Strings stay valid until
 * hwt_symbolizer_end. Repeated lookups are answered from a cache. signal-safe */
unsigned hwt_symbolizer_lookup(const char *module, uintptr_t offset,
                               struct hwt_symbolizer_line *out, unsigned max);

/* Whether this session wanted a symbolizer and found none on PATH. signal-safe */
bool hwt_symbolizer_missing(void);

/* Ends the session: closes the socket and reaps the process (killed if it lingers). */
void hwt_symbolizer_end(void);

#endif
