/* SPDX-License-Identifier: MIT */
/* A tiny printf into a caller's fixed buffer: %s %c %d %i %u %x %p with flags 0 and -,
 * a width, and the l, ll, z length modifiers. No malloc, no locale, no stdio. */
#ifndef HWT_FMT_H
#define HWT_FMT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct hwt_buf {
    char *data;
    size_t len; /* bytes used, data[len] is always '\0' */
    size_t cap; /* bytes available including the terminating '\0' */
    bool truncated;
};

/* signal-safe */
void hwt_fmt_init(struct hwt_buf *b, char *mem, size_t cap);
void hwt_fmt_printf(struct hwt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hwt_fmt_vprintf(struct hwt_buf *b, const char *fmt, va_list ap);

#endif
