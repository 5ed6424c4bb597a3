/* SPDX-License-Identifier: MIT */
/* Frame lines of a report (report.c formats the rest). All signal-safe. */
#ifndef HWT_FRAME_H
#define HWT_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "fmt.h"
#include "report.h"

/* Forgets the modules of the previous report; call at the start of each. */
void hwt_frame_reset(void);
/* The header's (and SUMMARY's) frame: the first one with a name. */
void hwt_frame_top(struct hwt_buf *b, const struct hwt_report *r, bool with_module);
/* One line per frame (and per inlined call), then " ... N more frames not recorded" when
 * the capture cut the stack at its depth limit (more: the frames left out); first: pcs[0] is
 * the faulting pc itself, the others are return addresses. */
void hwt_frame_list(struct hwt_buf *b, const struct hwt_report *r, const uintptr_t *pcs, unsigned n,
                    unsigned more, bool first);
/* "The access is inside memcpy, called from ..." when the header names a callee. */
void hwt_frame_called_from(struct hwt_buf *b, const struct hwt_report *r);
/* "Modules:" and each module of the report once with its build id. */
void hwt_frame_modules(struct hwt_buf *b);

#endif
