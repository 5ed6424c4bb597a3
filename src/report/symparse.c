/* SPDX-License-Identifier: MIT */
/* Parsing of the symbolizer's answers (llvm-symbolizer, or addr2line -a -f -i) into frame
 * lines, in place, with no allocation. Pure: the unit tests feed it saved answers. */
#include "symparse.h"

#include <stdbool.h>
#include <string.h>

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static unsigned to_uint(const char *s)
{
    unsigned v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (unsigned)(*s - '0');
    return v;
}

/* "file:line:column", "file:line", "file:line (discriminator N)", "??:0:0", "??:?" */
static void parse_location(char *loc, struct hwt_symbolizer_line *out)
{
    char *paren = strstr(loc, " (discriminator");
    char *colon;

    out->file = NULL;
    out->line = out->column = 0;
    if (paren != NULL)
        *paren = '\0';
    colon = strrchr(loc, ':');
    if (colon == NULL || !all_digits(colon + 1))
        return;
    *colon = '\0';
    out->line = to_uint(colon + 1);
    char *prev = strrchr(loc, ':');
    if (prev != NULL && all_digits(prev + 1)) {
        out->column = out->line;
        out->line = to_uint(prev + 1);
        *prev = '\0';
    }
    if (out->line == 0 || strcmp(loc, "??") == 0 || loc[0] == '\0') {
        out->line = out->column = 0;
        return;
    }
    out->file = loc;
}

static bool address_line(const char *s)
{
    if (s[0] != '0' || s[1] != 'x' || s[2] == '\0')
        return false;
    for (s += 2; *s != '\0'; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

unsigned hwt_symparse_answer(char *text, struct hwt_symbolizer_line *out, unsigned max)
{
    unsigned n = 0, known = 0;
    char *p = text;
    bool seen_address = false;

    while (*p != '\0' && n < max) {
        char *fn = p, *nl = strchr(p, '\n');
        if (nl == NULL)
            break;
        *nl = '\0';
        p = nl + 1;
        if (fn[0] == '\0')
            break; /* llvm-symbolizer: end of the answer */
        if (address_line(fn)) {
            if (seen_address)
                break; /* addr2line: the sentinel's answer */
            seen_address = true;
            continue;
        }
        char *loc = p;
        nl = strchr(p, '\n');
        if (nl == NULL)
            break;
        *nl = '\0';
        p = nl + 1;
        out[n].function = strcmp(fn, "??") == 0 ? NULL : fn;
        parse_location(loc, &out[n]);
        if (out[n].function != NULL || out[n].file != NULL)
            known++;
        n++;
    }
    return known > 0 ? n : 0;
}
