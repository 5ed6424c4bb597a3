/* SPDX-License-Identifier: MIT */
/* The SIGSEGV handler and the bad-free entry: one report at a time, from the fault to the
 * sink and the HWTAG_FAULT action. It sequences the other report/ modules and decides
 * nothing itself; everything reachable from here must stay async-signal-safe. */
#include "fault.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "altstack.h"
#include "arch/mte.h"
#include "call_access.h"
#include "callback.h"
#include "chain.h"
#include "context.h"
#include "fmt.h"
#include "frame.h"
#include "frame_kind.h"
#include "history.h"
#include "infer.h"
#include "lookup.h"
#include "action.h"
#include "options.h"
#include "os.h"
#include "report.h"
#include "sink.h"
#include "symtab.h"
#include "tail.h"
#include "tcache.h"
#include "unwind.h"

#define REPORT_TEXT_CAP (32u * 1024u)
/* Innermost frames searched for the allocator's own entry points. */
#define ENTRY_FRAMES 8

/* tid of the thread printing a report, 0 when none: one report at a time. */
static int report_owner;

/* Report state, used only by the report owner. */
static struct hwt_report report;
static char report_text[REPORT_TEXT_CAP];

/* Becomes the report owner; a second thread waits its turn so texts never interleave.
 * Returns false when this thread already owns it (a fault inside a report). */
static bool report_begin(void)
{
    int self = hwt_os_gettid();
    for (;;) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&report_owner, &expected, self, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return true;
        if (expected == self)
            return false;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void report_end(void)
{
    __atomic_store_n(&report_owner, 0, __ATOMIC_RELEASE);
}

/* Gathers what is left, prints the filled report, then applies HWTAG_FAULT. */
static void finish(struct hwt_report *r)
{
    if (hwt_action_should_print(r)) {
        r->symbolize = hwt_opts.symbolize == HWT_ON;
        hwt_infer_gather(r);
        size_t len = hwt_report_format(r, report_text, sizeof(report_text));
        hwt_sink_report(report_text, len);
        hwt_callback_invoke(r, report_text, len);
    }
    hwt_action_after_report(r);
    report_end();
}

static void tag_fault(siginfo_t *info, void *ucontext, const struct hwt_libc_call *call)
{
    struct hwt_report *r = &report;

    if (!report_begin()) {
        hwt_sink_notice("hwtag: tag-check fault inside the fault handler\n");
        hwt_action_panic();
    }
    memset(r, 0, sizeof(*r));
    /* read here, not from r after finish(): another thread may own r by then */
    bool asynchronous = info->si_code == SEGV_MTEAERR;
    r->asynchronous = asynchronous;
    r->tid = hwt_os_gettid();
    r->comm = hwt_sink_comm();
    hwt_context_describe(r, ucontext);
    r->stack_len = hwt_unwind_signal(ucontext, r->stack, HWT_STACK_MAX_FRAMES, &r->stack_more);
    if (r->asynchronous) {
        r->bug = HWTAG_BUG_INVALID_ACCESS;
    } else {
        r->tag_fault = true;
        r->addr = hwt_context_fault_addr(info, ucontext);
        r->pointer_tag = mte_ptr_tag((const void *)r->addr);
        r->memory_tag = mte_load_tag(mte_untag(info->si_addr));
        hwt_call_access_describe(r, call);
        hwt_infer_bug(r);
    }
    finish(r);

    /* HWTAG_FAULT=report (or a read under panic_on_write): go on. The faulting instruction
     * re-executes with TCO set, and the thread's next allocator call clears TCO, so its
     * checks come back then (an asynchronous fault has nothing to re-execute). */
    if (!asynchronous) {
        hwt_context_resume_unchecked(ucontext);
        hwt_self.flags |= HWT_TCACHE_RESUME; /* the fast paths leave TCO alone otherwise */
    }
}

static const char *segv_code_name(int code)
{
    switch (code) {
    case SEGV_MAPERR:
        return "SEGV_MAPERR";
    case SEGV_ACCERR:
        return "SEGV_ACCERR";
    default:
        return "SEGV";
    }
}

/* What the heap knows of addr, for a fault that is no report of ours: the object that holds
 * it (or held it, by the history of recent frees, when its pages went back to the OS). */
static void describe_stray(struct hwt_buf *b, const void *tagged)
{
    uintptr_t addr = mte_untag(tagged);
    struct hwt_object o;
    struct hwt_history_event alloc, freed;
    const char *state = "";

    if (hwt_lookup_addr(addr, &o)) {
        state = o.live ? "" : "freed ";
    } else if (hwt_history_find((uintptr_t)tagged, &alloc, &freed)) {
        o.start = mte_untag((const void *)alloc.ptr);
        o.requested = alloc.size;
        state = freed.seq != 0 ? "freed and unmapped " : "";
    } else {
        hwt_fmt_printf(b, "not a heap address");
        return;
    }
    long dist = hwt_report_distance(addr, &o);
    const char *where = addr < o.start                  ? "left of"
                        : addr >= o.start + o.requested ? "right of"
                                                        : "inside";
    hwt_fmt_printf(b, "%ld bytes %s the %s%zu-byte object at %lx", dist < 0 ? -dist : dist, where,
                   state, o.requested, (unsigned long)o.start);
}

/* A segmentation fault that is not a tag-check fault, about to take the default action:
 * one line so that nobody takes the death for a report of ours, then where it happened (the
 * faulting thread's stack, as a report's call trace). */
static void stray_fault_notice(const siginfo_t *info, void *ucontext)
{
    struct hwt_report *r = &report;
    struct hwt_buf b;
    char line[256];
    bool owner = report_begin(); /* a fault inside a report prints its line only */
    if (owner)
        hwt_fmt_init(&b, report_text, sizeof(report_text));
    else
        hwt_fmt_init(&b, line, sizeof(line));
    hwt_fmt_printf(&b, "hwtag: SIGSEGV (%s) at %016lx: not a tag-check fault; ",
                   segv_code_name(info->si_code), (unsigned long)info->si_addr);
    describe_stray(&b, info->si_addr);
    hwt_fmt_printf(&b, "\n");
    if (owner) {
        memset(r, 0, sizeof(*r));
        r->symbolize = hwt_opts.symbolize == HWT_ON;
        r->stack_len = hwt_unwind_signal(ucontext, r->stack, HWT_STACK_MAX_FRAMES, &r->stack_more);
        hwt_frame_reset();
        hwt_fmt_printf(&b, "Call trace:\n");
        hwt_frame_list(&b, r, r->stack, r->stack_len, r->stack_more, true);
    }
    hwt_sink_notice(b.data);
    if (owner)
        report_end();
}

static void handler(int sig, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;
    /* before anything here calls a checked routine's record away */
    struct hwt_libc_call call = hwt_libc_call;

    mte_tco_set();
    if (sig == SIGSEGV && (info->si_code == SEGV_MTESERR || info->si_code == SEGV_MTEAERR)) {
        tag_fault(info, ucontext, &call);
    } else {
        if (sig == SIGSEGV && info->si_code > 0 && hwt_chain_default_action())
            stray_fault_notice(info, ucontext);
        /* The kernel enters handlers with TCO clear; give the old one the same. */
        mte_tco_clear();
        hwt_chain_forward(sig, info, ucontext);
    }
    errno = saved_errno;
}

void hwt_fault_install(void)
{
    struct sigaction sa, old;

    hwt_sink_init();
    hwt_altstack_init();

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_EXPOSE_TAGBITS;
    sigemptyset(&sa.sa_mask);
    if (hwt_os_sigaction(SIGSEGV, &sa, &old) != 0)
        return;
    /* Re-installing must not make us our own predecessor (chain would loop). */
    if (!((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == handler))
        hwt_chain_set_previous(&old);
}

/* Drops the frames of the freeing entry point itself (and the allocator below it), so
 * the report starts at the code that called free/realloc, as KASAN's does. */
static unsigned skip_allocator_frames(const uintptr_t *pcs, unsigned n)
{
    /* the interposed entries, and the front end they tail-call into */
    static const char *const entries[] = {"free",           "cfree",
                                          "realloc",        "reallocarray",
                                          "hwt_alloc_free", "hwt_alloc_realloc",
                                          "check_pointer",  "realloc_checked",
                                          "free_checked",   NULL};
    unsigned start = 0;

    for (unsigned i = 0; i < n && i < ENTRY_FRAMES; i++) {
        struct hwt_symbol sym;
        sym.function = NULL;
        if (!hwt_symtab_lookup(pcs[i], &sym) || sym.function == NULL)
            continue;
        for (unsigned e = 0; entries[e] != NULL; e++)
            if (strcmp(sym.function, entries[e]) == 0)
                start = i + 1;
        if (strcmp(sym.function, "hwtag_pool_free") == 0) /* the pool API's free */
            start = i + 1;
    }
    return start < n ? start : 0;
}

/* The report state of a bug that the allocator found in a call of the program's (no
 * fault): the stack without the allocator's own frames, and the object. */
static struct hwt_report *begin_call_report(enum hwtag_bug_type bug, const void *ptr,
                                            const char *what)
{
    struct hwt_report *r = &report;
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
    uintptr_t addr = mte_untag(ptr);

    if (!report_begin()) {
        hwt_sink_notice(what);
        hwt_action_panic();
    }
    memset(r, 0, sizeof(*r));
    r->bug = bug;
    r->access = HWTAG_ACCESS_FREE;
    r->addr = (uintptr_t)ptr;
    r->tid = hwt_os_gettid();
    r->comm = hwt_sink_comm();
    r->pointer_tag = mte_ptr_tag(ptr);
    unsigned n = hwt_unwind_fast(pcs, HWT_STACK_MAX_FRAMES, 0);
    unsigned skip = skip_allocator_frames(pcs, n);
    skip += hwt_frame_kind_first_user(pcs + skip, n - skip); /* operator delete, say */
    for (unsigned i = skip; i < n; i++)
        r->stack[r->stack_len++] = pcs[i];
    /* Only heap memory is known to be mapped: never load a tag of a foreign pointer. */
    r->have_object = hwt_lookup_addr(addr, &r->object);
    if (r->have_object) {
        r->memory_tag = mte_load_tag(addr);
        hwt_infer_pool(r); /* a pool object's pointer: describe the pool object */
    }
    return r;
}

void hwt_fault_bad_free(enum hwtag_bug_type bug, const void *ptr)
{
    struct hwt_report *r = begin_call_report(bug, ptr, "hwtag: bad free inside a report\n");
    hwt_infer_bad_free(r);
    finish(r);
}

void hwt_fault_tail(const void *ptr, size_t requested, bool at_realloc)
{
    struct hwt_report *r = begin_call_report(HWTAG_BUG_SLAB_OUT_OF_BOUNDS, ptr,
                                             "hwtag: tail overwrite inside a report\n");
    if (r->have_object && r->object.large)
        r->bug = HWTAG_BUG_OUT_OF_BOUNDS;
    r->tail_overwritten = true;
    r->tail_at_realloc = at_realloc;
    r->tail_ptr = (uintptr_t)ptr;
    r->tail_len = hwt_tail_describe(ptr, requested, r->tail_expected, r->tail_found);
    unsigned first = r->tail_len, last = 0;
    for (unsigned i = 0; i < r->tail_len; i++) {
        if (r->tail_expected[i] == r->tail_found[i])
            continue;
        if (first == r->tail_len)
            first = i;
        last = i;
    }
    r->tail_first = (unsigned)requested + first;
    r->tail_last = (unsigned)requested + last;
    /* the first byte written past the end is what the distance line measures */
    r->addr = (uintptr_t)ptr + r->tail_first;
    r->memory_tag = mte_load_tag(mte_untag((const void *)r->addr));
    finish(r);
}
