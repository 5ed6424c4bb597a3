/* SPDX-License-Identifier: MIT */
/* The symbolizer's answer, parsed (symparse.c). */
#ifndef HWT_SYMPARSE_H
#define HWT_SYMPARSE_H

#include "symbolizer.h"

/* Pure: parses one symbolizer answer (pairs of function and file:line[:column] lines;
 * addr2line's "-a" address lines are skipped) into out; the text is modified in place.
 * Exposed for the unit tests. */
unsigned hwt_symparse_answer(char *text, struct hwt_symbolizer_line *out, unsigned max);

#endif
