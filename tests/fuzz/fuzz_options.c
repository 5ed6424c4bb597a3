/* SPDX-License-Identifier: MIT */
/* Fuzzes the option parser and the HWTAG_OPTIONS list parser against reference parsers, and
 * the environment reader (HWTAG_OPTIONS first, the HWTAG_<NAME> variables winning). */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

extern char **environ;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ENTRIES 16
#define SENTINEL UINT64_C(0x5e471e1)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_options: check failed: %s (%s:%d)\n", #cond, __FILE__,           \
                    __LINE__);                                                                     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Reference parser, written from the documented rules. Returns -1 when it cannot tell
 * (more than 20 characters: the parser may reject those whatever their value). */
static int reference_parse(const struct hwt_option_desc *d, const char *s, size_t len,
                           uint64_t *out)
{
    if (d->type == HWT_OPT_STRING)
        return len > 0;
    if (d->type == HWT_OPT_ENUM) {
        for (size_t i = 0; d->words[i] != NULL; i++) {
            if (strlen(d->words[i]) == len && memcmp(d->words[i], s, len) == 0) {
                *out = i;
                return 1;
            }
        }
        return 0;
    }
    if (len == 0)
        return 0;
    uint64_t v = 0;
    bool overflow = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
            overflow = true;
    }
    if (overflow || v < d->min || v > d->max)
        return len > 20 ? -1 : 0;
    *out = v;
    return len > 20 ? -1 : 1;
}

static void check_parse(const char *s, size_t len)
{
    for (size_t i = 0; i < hwt_option_count; i++) {
        const struct hwt_option_desc *d = &hwt_option_table[i];
        uint64_t got = SENTINEL, want = SENTINEL;
        bool ok = hwt_option_parse(d, s, len, &got);
        int ref = reference_parse(d, s, len, &want);
        if (ref >= 0)
            CHECK(ok == (ref == 1));
        if (ok && d->type != HWT_OPT_STRING) {
            CHECK(got >= d->min && got <= d->max);
            if (ref == 1)
                CHECK(got == want);
        }
        if (!ok)
            CHECK(got == SENTINEL);
    }
}

static uint64_t field_value(const struct hwt_options *o, const struct hwt_option_desc *d)
{
    const char *f = (const char *)o + d->offset;
    if (d->type == HWT_OPT_UINT && d->max > UINT8_MAX) {
        uint32_t v;
        memcpy(&v, f, sizeof(v));
        return v;
    }
    uint8_t v;
    memcpy(&v, f, sizeof(v));
    return v;
}

/* What the reference list parser makes of one option. */
struct ref_value {
    bool set, unsure;
    uint64_t v;
    const char *str; /* strings: the value in the list, str_len bytes */
    size_t str_len;
};

/* The row named by key[0..len) in lower case, found through the upper-case table names. */
static int reference_key(const char *key, size_t len)
{
    char upper[64];
    if (len == 0 || len >= sizeof(upper) - 6)
        return -1;
    memcpy(upper, "HWTAG_", 6);
    for (size_t i = 0; i < len; i++) {
        if ((key[i] >= 'A' && key[i] <= 'Z') || key[i] == '\0')
            return -1;
        upper[6 + i] = key[i] >= 'a' && key[i] <= 'z' ? (char)(key[i] - 'a' + 'A') : key[i];
    }
    upper[6 + len] = '\0';
    for (size_t i = 0; i < hwt_option_count; i++) {
        if (strcmp(hwt_option_table[i].name, upper) == 0)
            return (int)i;
    }
    return -1;
}

/* Reference HWTAG_OPTIONS parser: items between ':', empty ones skipped, each other item
 * key=value with a known key and a valid value or one problem; the last valid one wins.
 * Returns the number of problems, -1 when it cannot tell. */
static int reference_list(const char *s, size_t len, struct ref_value *out)
{
    int problems = 0;
    bool unsure = false;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ':')
            continue;
        const char *item = s + start;
        size_t n = i - start;
        start = i + 1;
        if (n == 0)
            continue;
        size_t k = 0;
        while (k < n && item[k] != '=')
            k++;
        int row = k == n ? -1 : reference_key(item, k);
        if (row < 0) {
            problems++;
            continue;
        }
        uint64_t v = 0;
        int ok = reference_parse(&hwt_option_table[row], item + k + 1, n - k - 1, &v);
        if (ok < 0) {
            unsure = true;
            out[row].unsure = true;
            continue;
        }
        if (ok == 0) {
            problems++;
            continue;
        }
        out[row] = (struct ref_value){true, false, v, item + k + 1, n - k - 1};
    }
    return unsure ? -1 : problems;
}

static void count_diag(void *ctx, const char *const parts[HWT_OPTION_DIAG_PARTS])
{
    CHECK(parts[0] != NULL && strncmp(parts[0], "HWTAG_OPTIONS: ", 15) == 0);
    size_t total = 0;
    for (int i = 0; i < HWT_OPTION_DIAG_PARTS && parts[i] != NULL; i++)
        total += strlen(parts[i]);
    CHECK(total < 512); /* clipped: a long value never makes a long line */
    (*(unsigned *)ctx)++;
}

/* The whole input as one HWTAG_OPTIONS list, with room for every string and with little. */
static void check_list(const char *s, size_t len)
{
    static char strs[1 << 17];
    struct ref_value ref[64] = {{0}};
    int want = reference_list(s, len, ref);
    for (int pass = 0; pass < 2; pass++) {
        struct hwt_options o = hwt_opts;
        const struct hwt_options before = o;
        uint64_t given = 0;
        size_t used = 0, cap = pass == 0 ? (len + 1 < sizeof(strs) ? len + 1 : sizeof(strs)) : 8;
        unsigned lines = 0;
        unsigned got =
            hwt_options_parse_list(s, len, &o, &given, strs, cap, &used, count_diag, &lines);
        CHECK(got == lines);
        CHECK(used <= cap);
        if (pass == 0 && want >= 0 && len + 1 <= sizeof(strs))
            CHECK(got == (unsigned)want);
        for (size_t i = 0; i < hwt_option_count; i++) {
            const struct hwt_option_desc *d = &hwt_option_table[i];
            bool is_given = given & (UINT64_C(1) << i);
            if (d->type == HWT_OPT_STRING) {
                const char *str, *old;
                memcpy(&str, (const char *)&o + d->offset, sizeof(str));
                memcpy(&old, (const char *)&before + d->offset, sizeof(old));
                if (!is_given) {
                    CHECK(str == old);
                    continue;
                }
                CHECK(str >= strs && str < strs + cap && str[strlen(str)] == '\0');
                if (pass == 0 && len + 1 <= sizeof(strs)) {
                    CHECK(ref[i].set);
                    CHECK(memcmp(str, ref[i].str, ref[i].str_len) == 0 &&
                          str[ref[i].str_len] == '\0');
                }
                continue;
            }
            uint64_t v = field_value(&o, d);
            CHECK(v >= d->min && v <= d->max);
            if (!is_given)
                CHECK(v == field_value(&before, d));
            if (!ref[i].unsure && pass == 0) {
                CHECK(is_given == ref[i].set);
                if (ref[i].set)
                    CHECK(v == ref[i].v);
            }
        }
    }
}

/* Splits the input into lines, hands them to hwt_options_init() as the environment and
 * checks that every option ends up as the last valid setting of it, or its default. */
static void check_init(const char *s, size_t len)
{
    static char buf[4096];
    char *env[MAX_ENTRIES + 1];
    size_t n = 0;
    if (len >= sizeof(buf))
        len = sizeof(buf) - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (char *p = buf; n < MAX_ENTRIES && p < buf + len;) {
        char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        if (nl != NULL)
            *nl = '\0';
        env[n++] = p;
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    env[n] = NULL;

    const struct hwt_options saved = hwt_opts;
    int devnull = open("/dev/null", O_WRONLY);
    int saved_err = dup(2);
    CHECK(devnull >= 0 && saved_err >= 0);
    dup2(devnull, 2);
    char **saved_env = environ;
    environ = env;
    hwt_options_init();
    environ = saved_env;
    dup2(saved_err, 2);
    close(saved_err);
    close(devnull);

    /* HWTAG_OPTIONS entries, in order, then the individual variables, which win */
    struct ref_value list[64] = {{0}};
    for (size_t e = 0; e < n; e++) {
        if (strncmp(env[e], "HWTAG_OPTIONS=", 14) == 0) {
            struct ref_value one[64] = {{0}};
            reference_list(env[e] + 14, strlen(env[e] + 14), one);
            for (size_t i = 0; i < hwt_option_count; i++) {
                if (one[i].set)
                    list[i] = one[i];
                else if (one[i].unsure)
                    list[i].unsure = true;
            }
        }
    }
    for (size_t i = 0; i < hwt_option_count; i++) {
        const struct hwt_option_desc *d = &hwt_option_table[i];
        size_t name_len = strlen(d->name);
        bool set = false, unsure = false;
        uint64_t want = 0;
        const char *want_str = NULL;
        for (size_t e = 0; e < n; e++) {
            if (strncmp(env[e], d->name, name_len) != 0 || env[e][name_len] != '=')
                continue;
            const char *value = env[e] + name_len + 1;
            uint64_t v = 0;
            int ref = reference_parse(d, value, strlen(value), &v);
            if (ref < 0)
                unsure = true;
            if (ref == 1) {
                set = true;
                unsure = false;
                want = v;
                want_str = value;
            }
        }
        if (!set && unsure)
            continue; /* neither the list's value nor the default can be told */
        if (d->type == HWT_OPT_STRING) {
            const char *got, *before;
            memcpy(&got, (const char *)&hwt_opts + d->offset, sizeof(got));
            memcpy(&before, (const char *)&saved + d->offset, sizeof(before));
            if (set)
                CHECK(got == want_str);
            else if (list[i].set)
                CHECK(got != NULL && strlen(got) == list[i].str_len &&
                      memcmp(got, list[i].str, list[i].str_len) == 0);
            else if (!list[i].unsure)
                CHECK(got == before);
            continue;
        }
        uint64_t got = field_value(&hwt_opts, d);
        CHECK(got >= d->min && got <= d->max);
        if (set)
            CHECK(got == want);
        else if (list[i].unsure)
            continue;
        else
            CHECK(got == (list[i].set ? list[i].v : field_value(&saved, d)));
    }
    hwt_opts = saved;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse((const char *)data, size);
    check_list((const char *)data, size);
    check_init((const char *)data, size);
    return 0;
}

#ifndef HWTAG_LIBFUZZER
#include "replay.h"

int main(int argc, char **argv)
{
    return replay_main(argc, argv, "fuzz_options");
}
#endif
