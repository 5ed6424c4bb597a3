/* SPDX-License-Identifier: MIT */
/* The option parser and the HWTAG_* environment reader, with stderr captured; AT_SECURE
 * is simulated through the OS seam (hwt_os_simulate_secure in os.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "os.h"

extern char **environ;

static struct hwt_options saved_opts;

/* The defaults of the documented contract (docs/design.md), written out here rather than taken from
 * options.def. */
static void set_documented_defaults(void)
{
    memset(&hwt_opts, 0, sizeof(hwt_opts));
    hwt_opts.mode = HWT_MODE_SYNC;
    hwt_opts.fault = HWT_FAULT_PANIC;
    hwt_opts.sample = 1;
    hwt_opts.sample_order = 3;
    hwt_opts.stacktrace = HWT_ON;
    hwt_opts.log_path = NULL;
    hwt_opts.verbose = HWT_OFF;
    hwt_opts.symbolize = HWT_ON;
    hwt_opts.symbolizer = NULL;
    hwt_opts.max_reports = 100;
    hwt_opts.print_stats = HWT_OFF;
}

/* Removes every HWTAG_* variable, so each test starts from a clean environment. */
static void clear_hwtag_env(void)
{
    for (;;) {
        char name[128] = "";
        for (char **e = environ; e != NULL && *e != NULL; e++) {
            if (strncmp(*e, "HWTAG_", 6) == 0) {
                const char *eq = strchr(*e, '=');
                size_t n = eq != NULL ? (size_t)(eq - *e) : strlen(*e);
                if (n >= sizeof(name))
                    n = sizeof(name) - 1;
                memcpy(name, *e, n);
                name[n] = '\0';
                break;
            }
        }
        if (name[0] == '\0')
            return;
        assert_int_equal(unsetenv(name), 0);
    }
}

static int setup(void **state)
{
    (void)state;
    saved_opts = hwt_opts;
    clear_hwtag_env();
    set_documented_defaults();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_hwtag_env();
    hwt_opts = saved_opts;
    hwt_os_simulate_secure = false;
    return 0;
}

/* Runs hwt_options_init() with fd 2 sent into a pipe; returns what it wrote. */
static void init_capturing_stderr(char *out, size_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int saved = dup(2);
    assert_true(saved >= 0);
    assert_true(dup2(fds[1], 2) >= 0);
    hwt_options_init();
    assert_true(dup2(saved, 2) >= 0);
    close(saved);
    close(fds[1]);
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fds[0], out + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        assert_true(n < cap - 1);
    }
    close(fds[0]);
    out[n] = '\0';
}

static void assert_opts_equal(const struct hwt_options *a, const struct hwt_options *b)
{
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->fault, b->fault);
    assert_int_equal(a->sample, b->sample);
    assert_int_equal(a->sample_order, b->sample_order);
    assert_int_equal(a->stacktrace, b->stacktrace);
    assert_ptr_equal(a->log_path, b->log_path);
    assert_int_equal(a->verbose, b->verbose);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++)
        n += *s == '\n';
    return n;
}

static const struct hwt_option_desc *find(const char *name)
{
    for (size_t i = 0; i < hwt_option_count; i++) {
        if (strcmp(hwt_option_table[i].name, name) == 0)
            return &hwt_option_table[i];
    }
    fail_msg("no option %s", name);
    return NULL;
}

/* hwt_option_parse over a NUL-terminated string; *out is left at 0xdead on failure. */
static bool parse(const char *name, const char *str, uint64_t *out)
{
    *out = 0xdead;
    return hwt_option_parse(find(name), str, strlen(str), out);
}

static void test_table_has_the_documented_options(void **state)
{
    (void)state;
    static const char *const names[] = {"HWTAG_MODE",         "HWTAG_FAULT",      "HWTAG_SAMPLE",
                                        "HWTAG_SAMPLE_ORDER", "HWTAG_STACKTRACE", "HWTAG_LOG_PATH"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_non_null(find(names[i]));
    for (size_t i = 0; i < hwt_option_count; i++) {
        const struct hwt_option_desc *d = &hwt_option_table[i];
        assert_int_equal(strncmp(d->name, "HWTAG_", 6), 0);
        assert_non_null(d->help);
        assert_true(d->offset < sizeof(struct hwt_options));
        if (d->type == HWT_OPT_ENUM)
            assert_non_null(d->words);
        if (d->type == HWT_OPT_UINT)
            assert_true(d->def >= d->min && d->def <= d->max);
    }
}

static void test_parse_enum_words(void **state)
{
    (void)state;
    uint64_t v;
    assert_true(parse("HWTAG_MODE", "sync", &v));
    assert_int_equal(v, HWT_MODE_SYNC);
    assert_true(parse("HWTAG_MODE", "async", &v));
    assert_int_equal(v, HWT_MODE_ASYNC);
    assert_true(parse("HWTAG_MODE", "asymm", &v));
    assert_int_equal(v, HWT_MODE_ASYMM);
    assert_true(parse("HWTAG_MODE", "off", &v));
    assert_int_equal(v, HWT_MODE_OFF);
    assert_true(parse("HWTAG_FAULT", "panic", &v));
    assert_int_equal(v, HWT_FAULT_PANIC);
    assert_true(parse("HWTAG_FAULT", "panic_on_write", &v));
    assert_int_equal(v, HWT_FAULT_PANIC_ON_WRITE);
    assert_true(parse("HWTAG_FAULT", "report", &v));
    assert_int_equal(v, HWT_FAULT_REPORT);
    assert_true(parse("HWTAG_STACKTRACE", "on", &v));
    assert_int_equal(v, HWT_ON);
    assert_true(parse("HWTAG_STACKTRACE", "off", &v));
    assert_int_equal(v, HWT_OFF);
}

static void test_parse_rejects_near_miss_words(void **state)
{
    (void)state;
    static const char *const bad[] = {"",      "SYNC",    "syn",   "syncc", " sync",
                                      "sync ", "async\n", "panic", "1",     "of"};
    uint64_t v;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(parse("HWTAG_MODE", bad[i], &v));
        assert_int_equal(v, 0xdead);
    }
    assert_false(parse("HWTAG_FAULT", "panic_on", &v));
    assert_false(parse("HWTAG_STACKTRACE", "yes", &v));
}

static void test_parse_honours_the_length(void **state)
{
    (void)state;
    const struct hwt_option_desc *mode = find("HWTAG_MODE");
    uint64_t v = 0xdead;
    assert_true(hwt_option_parse(mode, "asyncXYZ", 5, &v));
    assert_int_equal(v, HWT_MODE_ASYNC);
    assert_false(hwt_option_parse(mode, "async", 4, &v));
    const struct hwt_option_desc *sample = find("HWTAG_SAMPLE");
    assert_true(hwt_option_parse(sample, "12345", 2, &v));
    assert_int_equal(v, 12);
    assert_false(hwt_option_parse(sample, "12345", 0, &v));
}

static void test_parse_integers_in_range(void **state)
{
    (void)state;
    uint64_t v;
    assert_true(parse("HWTAG_SAMPLE", "1", &v));
    assert_int_equal(v, 1);
    assert_true(parse("HWTAG_SAMPLE", "10", &v));
    assert_int_equal(v, 10);
    assert_true(parse("HWTAG_SAMPLE", "007", &v));
    assert_int_equal(v, 7);
    assert_true(parse("HWTAG_SAMPLE", "4294967295", &v));
    assert_int_equal(v, UINT32_MAX);
    assert_true(parse("HWTAG_SAMPLE_ORDER", "0", &v));
    assert_int_equal(v, 0);
    assert_true(parse("HWTAG_SAMPLE_ORDER", "63", &v));
    assert_int_equal(v, 63);
}

static void test_parse_rejects_bad_integers(void **state)
{
    (void)state;
    static const char *const bad[] = {"",
                                      "0",
                                      "-1",
                                      "+1",
                                      " 1",
                                      "1 ",
                                      "1x",
                                      "x1",
                                      "0x10",
                                      "1e3",
                                      "4294967296",
                                      "18446744073709551615",
                                      "18446744073709551616",
                                      "99999999999999999999",
                                      "123456789012345678901234"};
    uint64_t v;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(parse("HWTAG_SAMPLE", bad[i], &v));
        assert_int_equal(v, 0xdead);
    }
    assert_false(parse("HWTAG_SAMPLE_ORDER", "64", &v));
    assert_false(parse("HWTAG_SAMPLE_ORDER", "-0", &v));
    assert_false(parse("HWTAG_SAMPLE_ORDER", "256", &v));
}

static void test_parse_strings(void **state)
{
    (void)state;
    uint64_t v;
    assert_true(parse("HWTAG_LOG_PATH", "/tmp/hwtag.%p.log", &v));
    assert_false(parse("HWTAG_LOG_PATH", "", &v));
}

static void test_init_without_variables_keeps_defaults(void **state)
{
    (void)state;
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_int_equal(hwt_opts.mode, HWT_MODE_SYNC);
    assert_int_equal(hwt_opts.fault, HWT_FAULT_PANIC);
    assert_int_equal(hwt_opts.sample, 1);
    assert_int_equal(hwt_opts.sample_order, 3);
    assert_int_equal(hwt_opts.stacktrace, HWT_ON);
    assert_null(hwt_opts.log_path);
}

static void test_init_reads_every_variable(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_MODE", "async", 1), 0);
    assert_int_equal(setenv("HWTAG_FAULT", "report", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPLE", "4000000000", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPLE_ORDER", "5", 1), 0);
    assert_int_equal(setenv("HWTAG_STACKTRACE", "off", 1), 0);
    assert_int_equal(setenv("HWTAG_LOG_PATH", "/tmp/hwtag-%p.log", 1), 0);
    assert_int_equal(setenv("HWTAG_VERBOSE", "on", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_int_equal(hwt_opts.mode, HWT_MODE_ASYNC);
    assert_int_equal(hwt_opts.fault, HWT_FAULT_REPORT);
    assert_int_equal(hwt_opts.sample, 4000000000u);
    assert_int_equal(hwt_opts.sample_order, 5);
    assert_int_equal(hwt_opts.stacktrace, HWT_OFF);
    assert_non_null(hwt_opts.log_path);
    assert_string_equal(hwt_opts.log_path, "/tmp/hwtag-%p.log");
    assert_int_equal(hwt_opts.verbose, HWT_ON);
}

static void test_largest_sample_order_is_stored(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_SAMPLE_ORDER", "63", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPLE", "4294967295", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_int_equal(hwt_opts.sample_order, 63);
    assert_int_equal(hwt_opts.sample, UINT32_MAX);
}

/* One bad value: exactly one line naming the variable, and the default stays. */
static void check_invalid(const char *name, const char *value)
{
    set_documented_defaults();
    struct hwt_options before = hwt_opts;
    assert_int_equal(setenv(name, value, 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    if (count_lines(err) != 1 || err[strlen(err) - 1] != '\n')
        fail_msg("%s=%.20s... gave %zu lines, not one: %s", name, value, count_lines(err), err);
    if (strstr(err, name) == NULL)
        fail_msg("diagnostic for %s=%s does not name it: %s", name, value, err);
    assert_opts_equal(&hwt_opts, &before);
    assert_int_equal(unsetenv(name), 0);
}

/* An empty log path is told what it needs, not the integers' hint. */
static void test_empty_log_path_hint(void **state)
{
    (void)state;
    set_documented_defaults();
    assert_int_equal(setenv("HWTAG_LOG_PATH", "", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(unsetenv("HWTAG_LOG_PATH"), 0);
    if (strstr(err, "a non-empty path") == NULL || strstr(err, "integer") != NULL)
        fail_msg("empty HWTAG_LOG_PATH: %s", err);
}

static void test_invalid_value_gives_one_line_and_keeps_the_default(void **state)
{
    (void)state;
    check_invalid("HWTAG_MODE", "bogus");
    check_invalid("HWTAG_MODE", "");
    check_invalid("HWTAG_FAULT", "Panic");
    check_invalid("HWTAG_SAMPLE", "0");
    check_invalid("HWTAG_SAMPLE", "-3");
    check_invalid("HWTAG_SAMPLE", "4294967296");
    check_invalid("HWTAG_SAMPLE", "99999999999999999999999");
    check_invalid("HWTAG_SAMPLE_ORDER", "64");
    check_invalid("HWTAG_SAMPLE_ORDER", "three");
    check_invalid("HWTAG_STACKTRACE", "1");
    check_invalid("HWTAG_LOG_PATH", "");
}

static void test_very_long_invalid_value_still_gives_one_line(void **state)
{
    (void)state;
    char value[2000];
    memset(value, 'x', sizeof(value) - 1);
    value[sizeof(value) - 1] = '\0';
    check_invalid("HWTAG_MODE", value);
}

static void test_newline_in_a_value_does_not_split_the_diagnostic(void **state)
{
    (void)state;
    check_invalid("HWTAG_FAULT", "pan\nic");
    check_invalid("HWTAG_SAMPLE", "1\n");
}

static void test_each_invalid_value_gets_its_own_line(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_MODE", "nope", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPLE", "zero", 1), 0);
    assert_int_equal(setenv("HWTAG_STACKTRACE", "on", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(count_lines(err), 2);
    assert_non_null(strstr(err, "HWTAG_MODE"));
    assert_non_null(strstr(err, "HWTAG_SAMPLE"));
    assert_int_equal(hwt_opts.mode, HWT_MODE_SYNC);
    assert_int_equal(hwt_opts.sample, 1);
    assert_int_equal(hwt_opts.stacktrace, HWT_ON);
}

static void test_unknown_variable_gives_one_warning(void **state)
{
    (void)state;
    struct hwt_options before = hwt_opts;
    assert_int_equal(setenv("HWTAG_FOO", "1", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "HWTAG_FOO"));
    assert_opts_equal(&hwt_opts, &before);
}

static void test_unknown_variable_with_a_known_prefix_is_unknown(void **state)
{
    (void)state;
    struct hwt_options before = hwt_opts;
    assert_int_equal(setenv("HWTAG_MODEX", "async", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPL", "5", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(count_lines(err), 2);
    assert_non_null(strstr(err, "HWTAG_MODEX"));
    assert_non_null(strstr(err, "HWTAG_SAMPL"));
    assert_opts_equal(&hwt_opts, &before);
}

static void test_launcher_variable_is_not_a_warning(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_LIB", "/usr/lib/libhwtag.so", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
}

static void test_other_variables_are_ignored(void **state)
{
    (void)state;
    struct hwt_options before = hwt_opts;
    assert_int_equal(setenv("HWTAGMODE", "async", 1), 0);
    assert_int_equal(setenv("hwtag_mode", "async", 1), 0);
    assert_int_equal(setenv("XHWTAG_MODE", "async", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(unsetenv("HWTAGMODE"), 0);
    assert_int_equal(unsetenv("hwtag_mode"), 0);
    assert_int_equal(unsetenv("XHWTAG_MODE"), 0);
    assert_string_equal(err, "");
    assert_opts_equal(&hwt_opts, &before);
}

/* --- HWTAG_OPTIONS: the pure list parser ------------------------------------------------ */

struct diags {
    unsigned lines;
    unsigned unprefixed; /* lines that do not start with "HWTAG_OPTIONS: " */
    char text[4096];
};

static void collect(void *ctx, const char *const parts[HWT_OPTION_DIAG_PARTS])
{
    struct diags *d = ctx;
    size_t n = strlen(d->text);
    d->unprefixed += strncmp(parts[0], "HWTAG_OPTIONS: ", 15) != 0;
    for (int i = 0; i < HWT_OPTION_DIAG_PARTS && parts[i] != NULL; i++) {
        size_t w = strlen(parts[i]);
        assert_true(n + w + 2 < sizeof(d->text));
        memcpy(d->text + n, parts[i], w);
        n += w;
    }
    d->text[n++] = '\n';
    d->text[n] = '\0';
    d->lines++;
}

static char strs[256];

/* Parses list into *o (from the documented defaults) with a fresh string area. */
static unsigned parse_list(const char *list, struct hwt_options *o, uint64_t *given,
                           struct diags *d)
{
    size_t used = 0;
    memset(d, 0, sizeof(*d));
    set_documented_defaults();
    *o = hwt_opts;
    *given = 0;
    unsigned n =
        hwt_options_parse_list(list, strlen(list), o, given, strs, sizeof(strs), &used, collect, d);
    assert_int_equal(n, d->lines);
    return n;
}

static uint64_t bit(const char *name)
{
    return UINT64_C(1) << (size_t)(find(name) - hwt_option_table);
}

static void test_list_sets_every_key(void **state)
{
    (void)state;
    struct hwt_options o;
    uint64_t given;
    struct diags d;
    assert_int_equal(parse_list("mode=async:fault=report:sample=10:sample_order=5:stacktrace=off:"
                                "stack_depth=20:log_path=/tmp/r.%p:verbose=on:symbolize=off:"
                                "symbolizer=/usr/bin/addr2line:max_reports=7:print_stats=on:"
                                "detect_leaks=on:leak_exitcode=9:leak_tags=ignore:"
                                "leak_max_objects=3:suppressions=/tmp/supp",
                                &o, &given, &d),
                     0);
    assert_int_equal(o.mode, HWT_MODE_ASYNC);
    assert_int_equal(o.fault, HWT_FAULT_REPORT);
    assert_int_equal(o.sample, 10);
    assert_int_equal(o.sample_order, 5);
    assert_int_equal(o.stacktrace, HWT_OFF);
    assert_int_equal(o.stack_depth, 20);
    assert_string_equal(o.log_path, "/tmp/r.%p");
    assert_int_equal(o.verbose, HWT_ON);
    assert_int_equal(o.symbolize, HWT_OFF);
    assert_string_equal(o.symbolizer, "/usr/bin/addr2line");
    assert_int_equal(o.max_reports, 7);
    assert_int_equal(o.print_stats, HWT_ON);
    assert_int_equal(o.detect_leaks, HWT_ON);
    assert_int_equal(o.leak_exitcode, 9);
    assert_int_equal(o.leak_tags, HWT_LEAK_TAGS_IGNORE);
    assert_int_equal(o.leak_max_objects, 3);
    assert_string_equal(o.suppressions, "/tmp/supp");
    assert_int_equal(given, (UINT64_C(1) << hwt_option_count) - 1);
    /* the copies live in the string area, NUL-terminated, not in the list */
    assert_true(o.log_path >= strs && o.log_path < strs + sizeof(strs));
}

static void test_list_keys_match_the_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < hwt_option_count; i++) {
        char key[64];
        const char *name = hwt_option_table[i].name + 6;
        size_t n = strlen(name);
        for (size_t k = 0; k <= n; k++)
            key[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] - 'A' + 'a' : name[k]);
        assert_ptr_equal(hwt_option_find_key(key, n), &hwt_option_table[i]);
        assert_null(hwt_option_find_key(name, n)); /* keys are lower case */
        assert_ptr_not_equal(hwt_option_find_key(key, n - 1), &hwt_option_table[i]);
    }
    assert_null(hwt_option_find_key("", 0));
}

static void test_list_later_item_wins(void **state)
{
    (void)state;
    struct hwt_options o;
    uint64_t given;
    struct diags d;
    assert_int_equal(
        parse_list("mode=async:sample=3:mode=off:log_path=/a:log_path=/b", &o, &given, &d), 0);
    assert_int_equal(o.mode, HWT_MODE_OFF);
    assert_int_equal(o.sample, 3);
    assert_string_equal(o.log_path, "/b");
    assert_int_equal(given, bit("HWTAG_MODE") | bit("HWTAG_SAMPLE") | bit("HWTAG_LOG_PATH"));
}

/* Garbage: never a crash, one line per bad item, the options untouched. */
static void test_list_garbage(void **state)
{
    (void)state;
    static const struct {
        const char *list;
        unsigned problems;
    } cases[] = {
        {"", 0},
        {":", 0},
        {"::", 0},
        {":::", 0},
        {"key", 1},
        {"=v", 1},
        {"=", 1},
        {"==", 1},
        {"mode", 1},
        {"mode=", 1},
        {"MODE=async", 1},
        {"mode =async", 1},
        {"mode= async", 1},
        {"mode=async=x", 1},
        {"foo=1", 1},
        {"log_path=", 1},
        {"sample=0", 1},
        {"sample=-1:sample_order=64", 2},
        {"key:=v:foo=1:mode=bogus", 4},
        {"mode=async\n", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct hwt_options o;
        uint64_t given;
        struct diags d;
        unsigned n = parse_list(cases[i].list, &o, &given, &d);
        if (n != cases[i].problems)
            fail_msg("'%s': %u problems, not %u: %s", cases[i].list, n, cases[i].problems, d.text);
        assert_int_equal(given, 0);
        assert_opts_equal(&o, &hwt_opts);
        assert_int_equal(d.unprefixed, 0);
    }
}

static void test_list_garbage_around_good_items(void **state)
{
    (void)state;
    struct hwt_options o;
    uint64_t given;
    struct diags d;
    assert_int_equal(parse_list("::mode=async:nonsense:sample=10::=1:", &o, &given, &d), 2);
    assert_int_equal(o.mode, HWT_MODE_ASYNC);
    assert_int_equal(o.sample, 10);
    assert_non_null(strstr(d.text, "'nonsense' is not key=value"));
    assert_non_null(strstr(d.text, "'=1' is not key=value"));
}

static void test_list_names_the_problem(void **state)
{
    (void)state;
    struct hwt_options o;
    uint64_t given;
    struct diags d;
    parse_list("mode=bogus", &o, &given, &d);
    assert_string_equal(d.text, "HWTAG_OPTIONS: mode: invalid value 'bogus' (expected "
                                "sync|async|asymm|off); ignored\n");
    parse_list("colour=red", &o, &given, &d);
    assert_non_null(strstr(d.text, "HWTAG_OPTIONS: unknown key 'colour' ignored (keys: mode "));
}

static void test_list_very_long_items(void **state)
{
    (void)state;
    static char list[20000];
    struct hwt_options o;
    uint64_t given;
    struct diags d;
    memset(list, 'x', sizeof(list) - 1);
    assert_int_equal(parse_list(list, &o, &given, &d), 1);
    memcpy(list, "mode=", 5);
    assert_int_equal(parse_list(list, &o, &given, &d), 1);
    memcpy(list, "xxxxxx=", 7);
    assert_int_equal(parse_list(list, &o, &given, &d), 1);
    assert_true(strlen(d.text) < 400);
    /* a string longer than the string area is refused, the rest still applies */
    memcpy(list, "log_path=", 9);
    memcpy(list + sizeof(list) - 12, ":mode=async", 11);
    assert_int_equal(parse_list(list, &o, &given, &d), 1);
    assert_null(o.log_path);
    assert_int_equal(o.mode, HWT_MODE_ASYNC);
    assert_non_null(strstr(d.text, "log_path: value too long"));
}

static void test_list_is_bounded_by_its_length(void **state)
{
    (void)state;
    struct hwt_options o = hwt_opts;
    uint64_t given = 0;
    size_t used = 0;
    const char *list = "mode=asyncXX:sample=9";
    assert_int_equal(
        hwt_options_parse_list(list, 10, &o, &given, strs, sizeof(strs), &used, NULL, NULL), 0);
    assert_int_equal(o.mode, HWT_MODE_ASYNC);
    assert_int_equal(o.sample, 1);
    /* no string area: a string value is a problem, reported to no one */
    assert_int_equal(
        hwt_options_parse_list("log_path=/x", 11, &o, &given, NULL, 0, NULL, NULL, NULL), 1);
    assert_null(o.log_path);
}

/* --- HWTAG_OPTIONS in the environment ------------------------------------------------------ */

static void test_options_variable_sets_options(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_OPTIONS", "mode=async:sample=10:log_path=/tmp/r.%p", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_int_equal(hwt_opts.mode, HWT_MODE_ASYNC);
    assert_int_equal(hwt_opts.sample, 10);
    assert_string_equal(hwt_opts.log_path, "/tmp/r.%p");
}

static void test_individual_variable_wins(void **state)
{
    (void)state;
    /* whatever the order in environ */
    assert_int_equal(setenv("HWTAG_MODE", "asymm", 1), 0);
    assert_int_equal(setenv("HWTAG_OPTIONS", "mode=async:sample=10:log_path=/a", 1), 0);
    assert_int_equal(setenv("HWTAG_LOG_PATH", "/b", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_int_equal(hwt_opts.mode, HWT_MODE_ASYMM);
    assert_int_equal(hwt_opts.sample, 10);
    assert_string_equal(hwt_opts.log_path, "/b");
}

static void test_bad_individual_value_keeps_the_list_value(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_OPTIONS", "sample=10", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPLE", "zero", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "HWTAG_SAMPLE: invalid value 'zero'"));
    assert_non_null(strstr(err, "keeping the HWTAG_OPTIONS value"));
    assert_int_equal(hwt_opts.sample, 10);
}

static void test_options_variable_problems_one_line_each(void **state)
{
    (void)state;
    struct hwt_options before = hwt_opts;
    assert_int_equal(setenv("HWTAG_OPTIONS", "foo=1:mode=bogus:key:=v::", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(count_lines(err), 4);
    for (const char *l = err; *l != '\0'; l = strchr(l, '\n') + 1)
        assert_int_equal(strncmp(l, "hwtag: HWTAG_OPTIONS: ", 22), 0);
    assert_opts_equal(&hwt_opts, &before);
}

static void test_empty_options_variable_is_quiet(void **state)
{
    (void)state;
    struct hwt_options before = hwt_opts;
    assert_int_equal(setenv("HWTAG_OPTIONS", "", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_opts_equal(&hwt_opts, &before);
}

/* --- secure execution (AT_SECURE) ------------------------------------------------------------ */

/* The rule lives in the table: a row that holds a string holds a file or a program's name
 * today, so a new string row without the flag is more likely an oversight than not. */
static void test_file_options_are_flagged(void **state)
{
    (void)state;
    uint64_t flagged = 0;
    for (size_t i = 0; i < hwt_option_count; i++) {
        const struct hwt_option_desc *d = &hwt_option_table[i];
        if (d->flags & HWT_OPT_NAMES_FILE)
            flagged |= UINT64_C(1) << i;
        if (d->type == HWT_OPT_STRING)
            assert_true(d->flags & HWT_OPT_NAMES_FILE);
    }
    assert_int_equal(flagged,
                     bit("HWTAG_LOG_PATH") | bit("HWTAG_SYMBOLIZER") | bit("HWTAG_SUPPRESSIONS"));
}

static void test_not_secure_takes_file_options(void **state)
{
    (void)state;
    assert_int_equal(setenv("HWTAG_LOG_PATH", "/tmp/r.%p", 1), 0);
    assert_int_equal(setenv("HWTAG_OPTIONS", "symbolizer=/usr/bin/addr2line", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_string_equal(hwt_opts.log_path, "/tmp/r.%p");
    assert_string_equal(hwt_opts.symbolizer, "/usr/bin/addr2line");
    assert_int_equal(hwt_options_ignored, 0);
}

/* Safe options of every type are kept; the two that name a file or a program are not, and
 * no line is printed (a preloaded library in sudo or passwd stays quiet). */
static void test_secure_ignores_file_variables(void **state)
{
    (void)state;
    hwt_os_simulate_secure = true;
    assert_int_equal(setenv("HWTAG_LOG_PATH", "/etc/hwtag-owned.%p", 1), 0);
    assert_int_equal(setenv("HWTAG_SYMBOLIZER", "/tmp/evil", 1), 0);
    assert_int_equal(setenv("HWTAG_MODE", "async", 1), 0);
    assert_int_equal(setenv("HWTAG_FAULT", "report", 1), 0);
    assert_int_equal(setenv("HWTAG_SAMPLE", "7", 1), 0);
    assert_int_equal(setenv("HWTAG_STACKTRACE", "off", 1), 0);
    assert_int_equal(setenv("HWTAG_VERBOSE", "on", 1), 0);
    assert_int_equal(setenv("HWTAG_SYMBOLIZE", "on", 1), 0);
    assert_int_equal(setenv("HWTAG_MAX_REPORTS", "3", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_null(hwt_opts.log_path);
    assert_null(hwt_opts.symbolizer);
    assert_int_equal(hwt_opts.mode, HWT_MODE_ASYNC);
    assert_int_equal(hwt_opts.fault, HWT_FAULT_REPORT);
    assert_int_equal(hwt_opts.sample, 7);
    assert_int_equal(hwt_opts.stacktrace, HWT_OFF);
    assert_int_equal(hwt_opts.verbose, HWT_ON);
    assert_int_equal(hwt_opts.symbolize, HWT_ON);
    assert_int_equal(hwt_opts.max_reports, 3);
    assert_int_equal(hwt_options_ignored, bit("HWTAG_LOG_PATH") | bit("HWTAG_SYMBOLIZER"));
}

static void test_secure_ignores_file_keys_of_the_list(void **state)
{
    (void)state;
    hwt_os_simulate_secure = true;
    assert_int_equal(setenv("HWTAG_OPTIONS",
                            "log_path=/root/.bashrc:mode=asymm:symbolizer=/tmp/evil:sample=9:"
                            "fault=panic_on_write:print_stats=on",
                            1),
                     0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_null(hwt_opts.log_path);
    assert_null(hwt_opts.symbolizer);
    assert_int_equal(hwt_opts.mode, HWT_MODE_ASYMM);
    assert_int_equal(hwt_opts.sample, 9);
    assert_int_equal(hwt_opts.fault, HWT_FAULT_PANIC_ON_WRITE);
    assert_int_equal(hwt_opts.print_stats, HWT_ON);
    assert_int_equal(hwt_options_ignored, bit("HWTAG_LOG_PATH") | bit("HWTAG_SYMBOLIZER"));
}

/* Both sources at once, in either order in environ, and a value the parser would refuse:
 * nothing of them is taken, and nothing is said about them. */
static void test_secure_ignores_both_sources_and_bad_values(void **state)
{
    (void)state;
    hwt_os_simulate_secure = true;
    assert_int_equal(setenv("HWTAG_LOG_PATH", "", 1), 0);
    assert_int_equal(setenv("HWTAG_OPTIONS", "log_path=/a:sample_order=4", 1), 0);
    assert_int_equal(setenv("HWTAG_SYMBOLIZER", "/b", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_null(hwt_opts.log_path);
    assert_null(hwt_opts.symbolizer);
    assert_int_equal(hwt_opts.sample_order, 4);
    assert_int_equal(hwt_options_ignored, bit("HWTAG_LOG_PATH") | bit("HWTAG_SYMBOLIZER"));
}

/* The other diagnostics still come, on stderr: only the file and program rows are dropped. */
static void test_secure_still_reports_bad_safe_values(void **state)
{
    (void)state;
    hwt_os_simulate_secure = true;
    assert_int_equal(setenv("HWTAG_MODE", "nope", 1), 0);
    assert_int_equal(setenv("HWTAG_OPTIONS", "sample=0:log_path=/tmp/x", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_int_equal(count_lines(err), 2);
    assert_non_null(strstr(err, "HWTAG_MODE: invalid value 'nope'"));
    assert_non_null(strstr(err, "HWTAG_OPTIONS: sample: invalid value '0'"));
    assert_null(strstr(err, "/tmp/x"));
    assert_int_equal(hwt_opts.mode, HWT_MODE_SYNC);
    assert_int_equal(hwt_opts.sample, 1);
    assert_null(hwt_opts.log_path);
    assert_int_equal(hwt_options_ignored, bit("HWTAG_LOG_PATH"));
}

/* A secure process whose environment names no file: nothing counted as ignored. */
static void test_secure_without_file_options(void **state)
{
    (void)state;
    hwt_os_simulate_secure = true;
    assert_int_equal(setenv("HWTAG_MODE", "off", 1), 0);
    char err[4096];
    init_capturing_stderr(err, sizeof(err));
    assert_string_equal(err, "");
    assert_int_equal(hwt_opts.mode, HWT_MODE_OFF);
    assert_int_equal(hwt_options_ignored, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_has_the_documented_options),
        cmocka_unit_test(test_parse_enum_words),
        cmocka_unit_test(test_parse_rejects_near_miss_words),
        cmocka_unit_test(test_parse_honours_the_length),
        cmocka_unit_test(test_parse_integers_in_range),
        cmocka_unit_test(test_parse_rejects_bad_integers),
        cmocka_unit_test(test_parse_strings),
        cmocka_unit_test(test_list_sets_every_key),
        cmocka_unit_test(test_list_keys_match_the_table),
        cmocka_unit_test(test_list_later_item_wins),
        cmocka_unit_test(test_list_garbage),
        cmocka_unit_test(test_list_garbage_around_good_items),
        cmocka_unit_test(test_list_names_the_problem),
        cmocka_unit_test(test_list_very_long_items),
        cmocka_unit_test(test_list_is_bounded_by_its_length),
        cmocka_unit_test_setup_teardown(test_init_without_variables_keeps_defaults, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_init_reads_every_variable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_largest_sample_order_is_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_value_gives_one_line_and_keeps_the_default,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_log_path_hint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_very_long_invalid_value_still_gives_one_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_newline_in_a_value_does_not_split_the_diagnostic,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_invalid_value_gets_its_own_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_variable_gives_one_warning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_variable_with_a_known_prefix_is_unknown, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_launcher_variable_is_not_a_warning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_variables_are_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_variable_sets_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_individual_variable_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_individual_value_keeps_the_list_value, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_options_variable_problems_one_line_each, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_empty_options_variable_is_quiet, setup, teardown),
        cmocka_unit_test(test_file_options_are_flagged),
        cmocka_unit_test_setup_teardown(test_not_secure_takes_file_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secure_ignores_file_variables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secure_ignores_file_keys_of_the_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secure_ignores_both_sources_and_bad_values, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_secure_still_reports_bad_safe_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secure_without_file_options, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
