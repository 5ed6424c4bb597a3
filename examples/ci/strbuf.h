/* SPDX-License-Identifier: MIT */
/* A growable string, the library of the CI example (docs/ci.md). */
#ifndef STRBUF_H
#define STRBUF_H

#include <stddef.h>

struct strbuf {
    char *data; /* NUL-terminated, NULL while empty */
    size_t len, cap;
};

/* Appends s; returns 0, or -1 when out of memory. */
int strbuf_append(struct strbuf *sb, const char *s);
/* Splits s at each sep into a NULL-terminated array of strings; *n gets their count.
 * Free it with strbuf_free_split. */
char **strbuf_split(const char *s, char sep, size_t *n);
void strbuf_free_split(char **parts);
void strbuf_release(struct strbuf *sb);

#endif
