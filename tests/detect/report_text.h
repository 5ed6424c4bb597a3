/* SPDX-License-Identifier: MIT */
/* Helpers of the report tests: the child tells values ("key=0x<hex>" lines on stderr,
 * which the harness captures with the report) and the parent finds them and report lines
 * in the output. Static inline: each test program includes it once. */
#ifndef HWT_DETECT_REPORT_TEXT_H
#define HWT_DETECT_REPORT_TEXT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* The first and last line of every report: 66 '='. */
#define RULE "=================================================================="

/* Child side: writes "key=0x<hex>\n" to stderr. */
static inline void say(const char *key, uintptr_t value)
{
    char line[96];
    int n = snprintf(line, sizeof(line), "%s=0x%lx\n", key, (unsigned long)value);
    if (n > 0 && write(2, line, (size_t)n) < 0)
        _exit(90);
}

/* Child side: writes a line to stderr. */
static inline void say_line(const char *text)
{
    if (write(2, text, strlen(text)) < 0)
        _exit(90);
}

/* Parent side: the hex number after the first key in text; fails the test when absent. */
static inline uintptr_t hex_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    if (at == NULL)
        fail_msg("missing \"%s\" in:\n%s", key, text);
    return (uintptr_t)strtoull(at + strlen(key), NULL, 16);
}

static inline void expect_text(const struct child_result *r, const char *line)
{
    if (strstr(r->output, line) == NULL)
        fail_msg("missing \"%s\" in output:\n%s", line, r->output);
}

static inline void expect_no_text(const struct child_result *r, const char *line)
{
    if (strstr(r->output, line) != NULL)
        fail_msg("unexpected \"%s\" in output:\n%s", line, r->output);
}

static inline unsigned count_text(const char *text, const char *needle)
{
    unsigned n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

static inline void expect_abort(const struct child_result *r)
{
    if (!r->signaled || r->signal != SIGABRT)
        fail_msg("child did not abort (exited %d, code %d, signal %d):\n%s", r->exited,
                 r->exit_code, r->signal, r->output);
}

static inline void expect_exit(const struct child_result *r, int code)
{
    if (!r->exited || r->exit_code != code)
        fail_msg("child should exit %d (exited %d, code %d, signal %d):\n%s", code, r->exited,
                 r->exit_code, r->signal, r->output);
}

#endif
