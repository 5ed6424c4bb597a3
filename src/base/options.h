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
enum hwt_leak_tags { HWT_LEAK_TAGS_MATCH, HWT_LEAK_TAGS_IGNORE };

enum hwt_opt_type { HWT_OPT_ENUM, HWT_OPT_UINT, HWT_OPT_STRING };
/* Row flags (options.def). NAMES_FILE: the value names a file to open or a program to run.
 * In a secure-execution process the user who set the environment has fewer privileges
 * than the process, so such a row is ignored there, from any source. */
enum hwt_opt_flag { HWT_OPT_NAMES_FILE = 1u << 0 };

struct hwt_options {
#define HWT_OPTION(NAME, field, type, ctype, def, min, max, words, flags, help) ctype field;
#include "options.def"
#undef HWT_OPTION
};

struct hwt_option_desc {
    const char *name; /* "HWTAG_MODE" */
    enum hwt_opt_type type;
    uint64_t def, min, max;
    const char *const *words; /* enum words, NULL-terminated; index = value */
    unsigned flags;           /* enum hwt_opt_flag bits */
    const char *help;
    size_t offset; /* into struct hwt_options */
};

extern struct hwt_options hwt_opts;
extern const struct hwt_option_desc hwt_option_table[];
extern const size_t hwt_option_count;
/* Bit i: row i was set (HWTAG_<NAME> or HWTAG_OPTIONS) and ignored because the process is
 * secure-execution. Filled in by hwt_options_init. */
extern uint64_t hwt_options_ignored;

/* Parses str[0..len) for desc into *out (a uint64 value; strings are not parsed here).
 * Pure: no environment access. Returns false when the value is invalid. */
bool hwt_option_parse(const struct hwt_option_desc *desc, const char *str, size_t len,
                      uint64_t *out);
/* The one options variable: "key=value:key=value", keys the option names after "HWTAG_" in
 * lower case. An individual HWTAG_<NAME> variable wins over its key here. */
#define HWT_OPTIONS_VAR "HWTAG_OPTIONS"
#define HWT_OPTION_DIAG_PARTS 8

/* Receives one diagnostic line as up to HWT_OPTION_DIAG_PARTS strings (NULL ends early). */
typedef void (*hwt_option_diag_fn)(void *ctx, const char *const parts[HWT_OPTION_DIAG_PARTS]);

/* The row whose key is key[0..len) ("mode", "log_path"); NULL when there is none. */
const struct hwt_option_desc *hwt_option_find_key(const char *key, size_t len);

/* Parses the HWTAG_OPTIONS list str[0..len) into *opts, items applied left to right (a later
 * item overrides an earlier one). Pure: no environment, no output of its own. Empty items
 * ("::", a leading or trailing ':') are skipped; each other problem (an item that is not
 * key=value, an unknown key, an invalid value, a string that does not fit) is one call of
 * diag (may be NULL) and leaves the option alone. A value cannot contain ':'. String values
 * are copied NUL-terminated into strs at *used (advanced; cap bytes in all) and the option
 * points at the copy. Sets bit i of *given (may be NULL) for each table row i that got a
 * valid value. Returns the number of problems. */
unsigned hwt_options_parse_list(const char *str, size_t len, struct hwt_options *opts,
                                uint64_t *given, char *strs, size_t cap, size_t *used,
                                hwt_option_diag_fn diag, void *ctx);
/* Reads HWTAG_OPTIONS, then the HWTAG_<NAME> variables (which win), from environ into
 * hwt_opts; one diagnostic line per problem on stderr. In a secure-execution process
 * (hwt_os_secure) the HWT_OPT_NAMES_FILE rows keep their defaults, silently: their values
 * are noted in hwt_options_ignored only. */
void hwt_options_init(void);

#endif
