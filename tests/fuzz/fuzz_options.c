/* SPDX-License-Identifier: MIT */
/* Fuzzes the option parser against a reference parser, and the environment reader. */
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
        if (d->type == HWT_OPT_STRING) {
            const char *got, *before;
            memcpy(&got, (const char *)&hwt_opts + d->offset, sizeof(got));
            memcpy(&before, (const char *)&saved + d->offset, sizeof(before));
            CHECK(got == (set ? want_str : before));
            continue;
        }
        uint64_t got = field_value(&hwt_opts, d);
        CHECK(got >= d->min && got <= d->max);
        if (!unsure)
            CHECK(got == (set ? want : field_value(&saved, d)));
    }
    hwt_opts = saved;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse((const char *)data, size);
    check_init((const char *)data, size);
    return 0;
}

#ifndef HWTAG_LIBFUZZER
#include "replay.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s corpus-dir|file...\n", argv[0]);
        return 2;
    }
    int runs = replay_corpus(argc, argv);
    printf("fuzz_options: %d inputs replayed\n", runs);
    return runs > 0 ? 0 : 1;
}
#endif
