/* SPDX-License-Identifier: MIT */
/* Runs a bug in a forked child and tells the parent how it ended: the SIGSEGV it took
 * (si_code, tagged fault address) or the library's report on stderr and the exit status. */
#ifndef HWT_DETECT_HARNESS_H
#define HWT_DETECT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#include "fault.h" /* SEGV_MTESERR, SEGV_MTEAERR, SA_EXPOSE_TAGBITS */

struct child_result {
    bool faulted; /* the child's own SIGSEGV catcher ran */
    int si_code;
    uintptr_t fault_addr; /* with its tag bits (SA_EXPOSE_TAGBITS) */
    bool exited;          /* exit status, when it exited normally */
    int exit_code;
    bool signaled;
    int signal;
    char output[32768]; /* what the child wrote to stderr */
    size_t output_len;
};

enum child_mode {
    CATCH_SEGV,     /* the child records the first SIGSEGV itself, then exits */
    LIBRARY_REPORT, /* libhwtag's handler stays in place and reports */
};

/* Runs fn(arg) in a child. Returns false when fork or pipes fail. */
bool run_child(enum child_mode mode, void (*fn)(void *), void *arg, struct child_result *out);

/* True when libhwtag runs with tag checks on (else detection tests skip). */
bool tagging_active(void);

/* Pointer tag and untagged address. */
static inline unsigned ptr_tag(const void *p)
{
    return (unsigned)((uintptr_t)p >> 56) & 0xf;
}

static inline uintptr_t untag(const void *p)
{
    return (uintptr_t)p & ~((uintptr_t)0xff << 56);
}

#endif
