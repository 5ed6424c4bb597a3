/* SPDX-License-Identifier: MIT */
/* Expands options.def into the option table, parses values (purely) and reads HWTAG_*
 * from environ once. It never calls getenv or stdio. */
#include "options.h"

#include <string.h>

#include "os.h"

extern char **environ;

struct hwt_options hwt_opts = {
#define HWT_OPTION(NAME, field, type, ctype, def, min, max, words, help) .field = (ctype)(def),
#include "options.def"
#undef HWT_OPTION
};

const struct hwt_option_desc hwt_option_table[] = {
#define HWT_OPTION(NAME, field, type, ctype, def, min, max, words, help)                           \
    {"HWTAG_" #NAME,                                                                               \
     type,                                                                                         \
     (uint64_t)(def),                                                                              \
     min,                                                                                          \
     max,                                                                                          \
     words,                                                                                        \
     help,                                                                                         \
     offsetof(struct hwt_options, field)},
#include "options.def"
#undef HWT_OPTION
};

const size_t hwt_option_count = sizeof(hwt_option_table) / sizeof(hwt_option_table[0]);

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
static void say(const char *const parts[6])
{
    char line[256];
    size_t n = 0;
    const char *prefix = "hwtag: ";
    for (int i = -1; i < 6; i++) {
        const char *p = i < 0 ? prefix : parts[i];
        /* control characters in a value would split the line: show them as '?' */
        for (; p != NULL && *p != '\0' && n < sizeof(line) - 2; p++)
            line[n++] = (unsigned char)*p < ' ' || *p == 0x7f ? '?' : *p;
    }
    line[n++] = '\n';
    hwt_os_write_all(2, line, n);
}

static void store(const struct hwt_option_desc *desc, uint64_t v, const char *str)
{
    char *field = (char *)&hwt_opts + desc->offset;
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
        const char *s = desc->min == 0 ? "an integer >= 0" : "an integer >= 1";
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

void hwt_options_init(void)
{
    if (environ == NULL)
        return;
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
            size_t n = name_len < sizeof(name) - 1 ? name_len : sizeof(name) - 1;
            memcpy(name, *e, n);
            name[n] = '\0';
            /* HWTAG_LIB is the launcher's own variable, not an allocator option. */
            if (strcmp(name, "HWTAG_LIB") != 0)
                say((const char *const[6]){"unknown option ", name, " ignored", 0, 0, 0});
            continue;
        }
        uint64_t v;
        if (!hwt_option_parse(desc, value, strlen(value), &v)) {
            char valid[96];
            describe_valid(desc, valid, sizeof(valid));
            say((const char *const[6]){desc->name, ": invalid value '", value, "' (expected ",
                                       valid, "); using the default"});
            continue;
        }
        store(desc, v, value);
    }
}
