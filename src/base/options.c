/* SPDX-License-Identifier: MIT */
/* Expands options.def into the option table, parses values and HWTAG_OPTIONS lists (purely)
 * and reads HWTAG_OPTIONS and HWTAG_* from environ once, but for the rows that name files or
 * programs in a secure-execution process. It never calls getenv or stdio. */
#include "options.h"

#include <string.h>

#include "os.h"

extern char **environ;

struct hwt_options hwt_opts = {
#define HWT_OPTION(NAME, field, type, ctype, def, min, max, words, flags, help)                    \
    .field = (ctype)(def),
#include "options.def"
#undef HWT_OPTION
};

const struct hwt_option_desc hwt_option_table[] = {
#define HWT_OPTION(NAME, field, type, ctype, def, min, max, words, flags, help)                    \
    {"HWTAG_" #NAME,                                                                               \
     type,                                                                                         \
     (uint64_t)(def),                                                                              \
     min,                                                                                          \
     max,                                                                                          \
     words,                                                                                        \
     flags,                                                                                        \
     help,                                                                                         \
     offsetof(struct hwt_options, field)},
#include "options.def"
#undef HWT_OPTION
};

const size_t hwt_option_count = sizeof(hwt_option_table) / sizeof(hwt_option_table[0]);

uint64_t hwt_options_ignored;

bool hwt_option_parse(const struct hwt_option_desc *desc, const char *str, size_t len,
                      uint64_t *out)
{
    if (desc->type == HWT_OPT_ENUM) {
        for (size_t i = 0; desc->words[i] != NULL; i++) {
            if (strlen(desc->words[i]) == len && memcmp(desc->words[i], str, len) == 0) {
                *out = i;
                return true;
            }
        }
        return false;
    }
    if (desc->type == HWT_OPT_STRING)
        return len > 0;
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (str[i] < '0' || str[i] > '9')
            return false;
        unsigned d = (unsigned)(str[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (v < desc->min || v > desc->max)
        return false;
    *out = v;
    return true;
}

/* One diagnostic line from up to six parts, written at once so lines never interleave. */
static void say(void *ctx, const char *const parts[HWT_OPTION_DIAG_PARTS])
{
    (void)ctx;
    char line[256];
    size_t n = 0;
    const char *prefix = "hwtag: ";
    for (int i = -1; i < HWT_OPTION_DIAG_PARTS; i++) {
        const char *p = i < 0 ? prefix : parts[i];
        /* control characters in a value would split the line: show them as '?' */
        for (; p != NULL && *p != '\0' && n < sizeof(line) - 2; p++)
            line[n++] = (unsigned char)*p < ' ' || *p == 0x7f ? '?' : *p;
    }
    line[n++] = '\n';
    hwt_os_write_all(2, line, n);
}

static void store(struct hwt_options *opts, const struct hwt_option_desc *desc, uint64_t v,
                  const char *str)
{
    char *field = (char *)opts + desc->offset;
    if (desc->type == HWT_OPT_STRING) {
        memcpy(field, &str, sizeof(str));
        return;
    }
    if (desc->type == HWT_OPT_ENUM || desc->max <= UINT8_MAX) {
        uint8_t u = (uint8_t)v;
        memcpy(field, &u, sizeof(u));
    } else {
        uint32_t u = (uint32_t)v;
        memcpy(field, &u, sizeof(u));
    }
}

static void describe_valid(const struct hwt_option_desc *desc, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    if (desc->type != HWT_OPT_ENUM) {
        const char *s = desc->type == HWT_OPT_STRING ? "a non-empty path"
                        : desc->min == 0             ? "an integer >= 0"
                                                     : "an integer >= 1";
        strncpy(buf, s, cap - 1);
        buf[cap - 1] = '\0';
        return;
    }
    for (size_t i = 0; desc->words[i] != NULL; i++) {
        size_t w = strlen(desc->words[i]);
        if (n + w + 3 >= cap)
            break;
        if (i > 0)
            buf[n++] = '|';
        memcpy(buf + n, desc->words[i], w);
        n += w;
        buf[n] = '\0';
    }
}

/* str[0..len) as a NUL-terminated string in buf, cut with "..." when it does not fit. */
static const char *clip(char *buf, size_t cap, const char *str, size_t len)
{
    if (len < cap) {
        memcpy(buf, str, len);
        buf[len] = '\0';
    } else {
        memcpy(buf, str, cap - 4);
        memcpy(buf + cap - 4, "...", 4);
    }
    return buf;
}

const struct hwt_option_desc *hwt_option_find_key(const char *key, size_t len)
{
    for (size_t i = 0; i < hwt_option_count; i++) {
        const char *name = hwt_option_table[i].name + 6; /* after "HWTAG_" */
        if (strlen(name) != len)
            continue;
        size_t k = 0;
        while (k < len &&
               key[k] == (name[k] >= 'A' && name[k] <= 'Z' ? name[k] - 'A' + 'a' : name[k]))
            k++;
        if (k == len)
            return &hwt_option_table[i];
    }
    return NULL;
}

static void diag_item(hwt_option_diag_fn diag, void *ctx, const char *item, size_t len,
                      const char *why)
{
    char shown[64];
    if (diag != NULL)
        diag(ctx, (const char *const[HWT_OPTION_DIAG_PARTS]){"HWTAG_OPTIONS: '",
                                                             clip(shown, sizeof(shown), item, len),
                                                             why, 0, 0, 0, 0, 0});
}

unsigned hwt_options_parse_list(const char *str, size_t len, struct hwt_options *opts,
                                uint64_t *given, char *strs, size_t cap, size_t *used,
                                hwt_option_diag_fn diag, void *ctx)
{
    unsigned problems = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *item = str + pos;
        const char *colon = memchr(item, ':', len - pos);
        size_t item_len = colon != NULL ? (size_t)(colon - item) : len - pos;
        pos += item_len + 1;
        if (item_len == 0)
            continue; /* "::", a leading or a trailing ':' */
        const char *eq = memchr(item, '=', item_len);
        if (eq == NULL || eq == item) {
            diag_item(diag, ctx, item, item_len, "' is not key=value; ignored");
            problems++;
            continue;
        }
        size_t key_len = (size_t)(eq - item);
        const char *value = eq + 1;
        size_t value_len = item_len - key_len - 1;
        const struct hwt_option_desc *desc = hwt_option_find_key(item, key_len);
        if (desc == NULL) {
            char key[40], keys[160];
            size_t n = 0;
            for (size_t i = 0; i < hwt_option_count && n + 24 < sizeof(keys); i++) {
                const char *name = hwt_option_table[i].name + 6;
                if (i > 0)
                    keys[n++] = ' ';
                for (; *name != '\0'; name++)
                    keys[n++] = *name >= 'A' && *name <= 'Z' ? (char)(*name - 'A' + 'a') : *name;
            }
            keys[n] = '\0';
            if (diag != NULL)
                diag(ctx, (const char *const[HWT_OPTION_DIAG_PARTS]){
                              "HWTAG_OPTIONS: unknown key '", clip(key, sizeof(key), item, key_len),
                              "' ignored (keys: ", keys, ")", 0, 0, 0});
            problems++;
            continue;
        }
        uint64_t v = 0;
        if (!hwt_option_parse(desc, value, value_len, &v)) {
            char key[40], shown[64], valid[96];
            describe_valid(desc, valid, sizeof(valid));
            if (desc->type == HWT_OPT_STRING)
                memcpy(valid, "a non-empty string", sizeof("a non-empty string"));
            if (diag != NULL)
                diag(ctx, (const char *const[HWT_OPTION_DIAG_PARTS]){
                              "HWTAG_OPTIONS: ", clip(key, sizeof(key), item, key_len),
                              ": invalid value '", clip(shown, sizeof(shown), value, value_len),
                              "' (expected ", valid, "); ignored", 0});
            problems++;
            continue;
        }
        const char *copy = NULL;
        if (desc->type == HWT_OPT_STRING) {
            if (strs == NULL || used == NULL || *used > cap || cap - *used < value_len + 1) {
                char key[40];
                if (diag != NULL)
                    diag(ctx, (const char *const[HWT_OPTION_DIAG_PARTS]){
                                  "HWTAG_OPTIONS: ", clip(key, sizeof(key), item, key_len),
                                  ": value too long; ignored", 0, 0, 0, 0, 0});
                problems++;
                continue;
            }
            memcpy(strs + *used, value, value_len);
            strs[*used + value_len] = '\0';
            copy = strs + *used;
            *used += value_len + 1;
        }
        store(opts, desc, v, copy);
        if (given != NULL)
            *given |= UINT64_C(1) << (size_t)(desc - hwt_option_table);
    }
    return problems;
}

/* The string values of HWTAG_OPTIONS: the list's items are not NUL-terminated. */
static char list_strings[8192];

static size_t field_size(const struct hwt_option_desc *desc)
{
    if (desc->type == HWT_OPT_STRING)
        return sizeof(const char *);
    return desc->type == HWT_OPT_ENUM || desc->max <= UINT8_MAX ? sizeof(uint8_t)
                                                                : sizeof(uint32_t);
}

/* Whether a secure-execution process must not take this row from its environment. */
static bool ignored_here(const struct hwt_option_desc *desc, bool secure)
{
    return secure && (desc->flags & HWT_OPT_NAMES_FILE) != 0;
}

void hwt_options_init(void)
{
    uint64_t given = 0;
    size_t used = 0;
    bool secure = hwt_os_secure();
    hwt_options_ignored = 0;
    if (environ == NULL)
        return;
    /* The list parser is pure and takes every row, so a row a secure process ignores gets
     * its value from before the list back, and the list's copy of the string is unused. */
    struct hwt_options before = hwt_opts;
    /* HWTAG_OPTIONS first: an individual HWTAG_<NAME> variable is more specific and wins. */
    for (char **e = environ; *e != NULL; e++) {
        if (strncmp(*e, HWT_OPTIONS_VAR "=", sizeof(HWT_OPTIONS_VAR)) == 0) {
            const char *list = *e + sizeof(HWT_OPTIONS_VAR);
            hwt_options_parse_list(list, strlen(list), &hwt_opts, &given, list_strings,
                                   sizeof(list_strings), &used, say, NULL);
        }
    }
    for (size_t i = 0; i < hwt_option_count; i++) {
        const struct hwt_option_desc *desc = &hwt_option_table[i];
        if ((given & (UINT64_C(1) << i)) != 0 && ignored_here(desc, secure)) {
            memcpy((char *)&hwt_opts + desc->offset, (const char *)&before + desc->offset,
                   field_size(desc));
            given &= ~(UINT64_C(1) << i);
            hwt_options_ignored |= UINT64_C(1) << i;
        }
    }
    for (char **e = environ; *e != NULL; e++) {
        if (strncmp(*e, "HWTAG_", 6) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL)
            continue;
        size_t name_len = (size_t)(eq - *e);
        const char *value = eq + 1;
        const struct hwt_option_desc *desc = NULL;
        for (size_t i = 0; i < hwt_option_count; i++) {
            if (strlen(hwt_option_table[i].name) == name_len &&
                memcmp(hwt_option_table[i].name, *e, name_len) == 0)
                desc = &hwt_option_table[i];
        }
        if (desc == NULL) {
            char name[64];
            clip(name, sizeof(name), *e, name_len);
            /* HWTAG_LIB is the launcher's own variable, not an allocator option. */
            if (strcmp(name, "HWTAG_LIB") != 0 && strcmp(name, HWT_OPTIONS_VAR) != 0)
                say(NULL, (const char *const[HWT_OPTION_DIAG_PARTS]){"unknown option ", name,
                                                                     " ignored", 0, 0, 0, 0, 0});
            continue;
        }
        size_t row = (size_t)(desc - hwt_option_table);
        /* whatever the value, valid or not: nothing of it is used */
        if (ignored_here(desc, secure)) {
            hwt_options_ignored |= UINT64_C(1) << row;
            continue;
        }
        uint64_t v;
        if (!hwt_option_parse(desc, value, strlen(value), &v)) {
            char valid[96];
            describe_valid(desc, valid, sizeof(valid));
            bool from_list = given & (UINT64_C(1) << row);
            say(NULL, (const char *const[HWT_OPTION_DIAG_PARTS]){
                          desc->name, ": invalid value '", value, "' (expected ", valid,
                          from_list ? "); keeping the HWTAG_OPTIONS value" : "); using the default",
                          0, 0});
            continue;
        }
        store(&hwt_opts, desc, v, value);
    }
}
