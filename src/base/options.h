/* SPDX-License-Identifier: MIT */
/* Runtime options, one table (options.def), read once from the environment. */
#ifndef HWT_OPTIONS_H
#define HWT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hwt_mode { HWT_MODE_SYNC, HWT_MODE_ASYNC, HWT_MODE_ASYMM, HWT_MODE_OFF };
enum hwt_fault_action { HWT_FAULT_PANIC, HWT_FAULT_PANIC_ON_WRITE, HWT_FAULT_REPORT };
enum hwt_onoff { HWT_ON, HWT_OFF };

enum hwt_opt_type { HWT_OPT_ENUM, HWT_OPT_UINT, HWT_OPT_STRING };

struct hwt_options {
#define HWT_OPTION(NAME, field, type, ctype, def, min, max, words, help) ctype field;
#include "options.def"
#undef HWT_OPTION
};

struct hwt_option_desc {
    const char *name; /* "HWTAG_MODE" */
    enum hwt_opt_type type;
    uint64_t def, min, max;
    const char *const *words; /* enum words, NULL-terminated; index = value */
    const char *help;
    size_t offset; /* into struct hwt_options */
};

extern struct hwt_options hwt_opts;
extern const struct hwt_option_desc hwt_option_table[];
extern const size_t hwt_option_count;

/* Parses str[0..len) for desc into *out (a uint64 value; strings are not parsed here).
 * Pure: no environment access. Returns false when the value is invalid. */
bool hwt_option_parse(const struct hwt_option_desc *desc, const char *str, size_t len,
                      uint64_t *out);
/* Reads HWTAG_* from environ into hwt_opts; one diagnostic line per bad value. */
void hwt_options_init(void);

#endif
