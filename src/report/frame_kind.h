/* SPDX-License-Identifier: MIT */
/* Library frames and the program's: what a report's title passes over and where its
 * allocation and free stacks start. All signal-safe (symbol lookups only). */
#ifndef HWT_FRAME_KIND_H
#define HWT_FRAME_KIND_H

#include <stdbool.h>
#include <stdint.h>

#include "symtab.h"

/* Whether the title passes over a frame of sym for its caller: the C library's string and
 * memory routines and its code without a symbol, and the C++ library's code, in its own
 * module or compiled into the program (std:: and __gnu_cxx:: templates). */
bool hwt_frame_kind_library(const struct hwt_symbol *sym);

/* The index of the first frame of pcs[0..n) that is the program's: leading frames of the
 * allocator's own entry points and of C++'s operator new and delete are skipped, so that
 * allocation and free stacks start alike at the program's call (operator delete tail-calls
 * free and is never in a free stack). 0 when all would go. */
unsigned hwt_frame_kind_first_user(const uintptr_t *pcs, unsigned n);

#endif
