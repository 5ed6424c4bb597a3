/* SPDX-License-Identifier: MIT */
/* The leak report: leaked objects grouped by allocation stack, biggest first, in
 * LeakSanitizer's words so that its parsers read it; suppressions applied. */
#ifndef HWT_LEAK_PRINT_H
#define HWT_LEAK_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "leak_graph.h"

/* Prints the objects of g without the HWT_LEAK_REACHED mark (nor IGNORED) and returns how
 * many allocations were reported (suppressed ones are not). hidden: how many of them
 * would have been hidden with tags ignored. Nothing is printed when it returns 0. */
size_t hwt_leak_print(struct hwt_leak_graph *g, size_t hidden);

#endif
