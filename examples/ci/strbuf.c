/* SPDX-License-Identifier: MIT */
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

int strbuf_append(struct strbuf *sb, const char *s)
{
    size_t n = strlen(s);
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 16;
        while (cap < sb->len + n + 1)
            cap *= 2;
        char *data = realloc(sb->data, cap);
        if (data == NULL)
            return -1;
        sb->data = data;
        sb->cap = cap;
    }
    memcpy(sb->data + sb->len, s, n + 1);
    sb->len += n;
    return 0;
}

char **strbuf_split(const char *s, char sep, size_t *n)
{
    size_t count = 1;
    for (const char *p = s; *p; p++)
        count += *p == sep;
    char **parts = calloc(count + 1, sizeof(*parts));
    if (parts == NULL)
        return NULL;
    for (size_t i = 0; i < count; i++) {
        const char *end = strchr(s, sep);
        size_t len = end ? (size_t)(end - s) : strlen(s);
        parts[i] = malloc(len + 1);
        if (parts[i] == NULL) {
            strbuf_free_split(parts);
            return NULL;
        }
        memcpy(parts[i], s, len);
        parts[i][len] = '\0';
        s += len + 1;
    }
    *n = count;
    return parts;
}

void strbuf_free_split(char **parts)
{
    for (size_t i = 0; parts != NULL && parts[i] != NULL; i++)
        free(parts[i]);
    free(parts);
}

void strbuf_release(struct strbuf *sb)
{
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
}
