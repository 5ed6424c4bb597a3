/* SPDX-License-Identifier: MIT */
/* Reads /proc/self/maps line by line into struct hwt_mapping with raw system calls and a
 * stack buffer. Must not allocate or use stdio: the unwinder and the symbolizer call it
 * from the signal handler. */
#include "maps.h"

#include <string.h>

#include "os.h"

#define MAPS_LINE_CAP 4096u /* longer /proc/self/maps lines are skipped */

static const char *parse_hex(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = s;
    for (;; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (*s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            break;
        v = v << 4 | d;
    }
    *out = v;
    return s == start ? NULL : s;
}

static const char *parse_dec(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = s;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    *out = v;
    return s == start ? NULL : s;
}

static const char *skip_field(const char *s)
{
    while (*s == ' ')
        s++;
    while (*s && *s != ' ')
        s++;
    return s;
}

/* "start-end perms offset dev inode   path" */
static bool parse_maps_line(const char *s, struct hwt_mapping *m)
{
    uint64_t start, end, offset, inode;

    if (!(s = parse_hex(s, &start)) || *s++ != '-' || !(s = parse_hex(s, &end)) || *s++ != ' ')
        return false;
    if (strlen(s) < 4)
        return false;
    m->readable = s[0] == 'r';
    m->writable = s[1] == 'w';
    m->executable = s[2] == 'x';
    s = skip_field(s);
    while (*s == ' ')
        s++;
    if (!(s = parse_hex(s, &offset)))
        return false;
    s = skip_field(s); /* dev */
    while (*s == ' ')
        s++;
    if (!(s = parse_dec(s, &inode)))
        return false;
    while (*s == ' ')
        s++;
    m->start = (uintptr_t)start;
    m->end = (uintptr_t)end;
    m->offset = offset;
    m->inode = inode;
    m->path = s;
    return true;
}

bool hwt_maps_foreach(bool (*fn)(const struct hwt_mapping *m, void *arg), void *arg)
{
    char buf[MAPS_LINE_CAP];
    size_t len = 0;
    bool skipping = false, stop = false;
    int fd = hwt_os_open_read("/proc/self/maps");

    if (fd < 0)
        return false;
    while (!stop) {
        long got = hwt_os_read(fd, buf + len, sizeof(buf) - 1 - len);
        size_t pos = 0;
        if (got <= 0)
            break;
        len += (size_t)got;
        while (!stop) {
            char *nl = memchr(buf + pos, '\n', len - pos);
            struct hwt_mapping m;
            if (!nl)
                break;
            *nl = '\0';
            if (!skipping && parse_maps_line(buf + pos, &m))
                stop = !fn(&m, arg);
            skipping = false;
            pos = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + pos, len - pos);
        len -= pos;
        if (len == sizeof(buf) - 1) {
            skipping = true; /* drop the rest of an overlong line */
            len = 0;
        }
    }
    hwt_os_close(fd);
    return true;
}
