/* SPDX-License-Identifier: MIT */
/* The fault modes of HWTAG_FAULT, after the kernel's kasan.fault, and the multi-shot
 * bookkeeping of HWTAG_FAULT=report (the kernel's kasan_multi_shot, the sanitizers'
 * halt_on_error=0): each distinct bug printed once, at most HWTAG_MAX_REPORTS of them, and
 * a count at exit. Decides and acts; it neither formats nor writes reports. */
#include "action.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "os.h"
#include "options.h"
#include "sink.h"

/* Exit status when abort() itself cannot end the process: 128 + SIGABRT, as a shell shows. */
#define PANIC_EXIT_STATUS 134

/* Bugs already seen: the dedup keys, in a fixed open-addressing table filled with
 * compare-and-swap (lock-free, no malloc, usable from the fault handler of any thread).
 * A key is the bug type and the pc: exact, so two bugs never share one. */
#define SEEN_SLOTS 4096u /* a power of two; 32 KiB */
#define SEEN_PROBES 64u
#define KEY_BUG_SHIFT 56u

static uint64_t seen[SEEN_SLOTS];
static uint64_t printed, duplicates, over_cap;

uint64_t hwt_action_key(enum hwtag_bug_type bug, uintptr_t pc)
{
    /* pcs are user addresses below 2^56; bug + 1 keeps a key from ever being 0 (empty) */
    return ((uint64_t)pc & ((UINT64_C(1) << KEY_BUG_SHIFT) - 1)) |
           ((uint64_t)(bug + 1) << KEY_BUG_SHIFT);
}

/* Records key; returns false when it was already there. A full probe window counts the
 * bug as new (it is printed, within the cap): a storm of distinct bugs is bounded by the
 * cap, never hidden by the table's size. */
static bool seen_insert(uint64_t key)
{
    uint64_t h = (key ^ (key >> 29)) * UINT64_C(0xbf58476d1ce4e5b9);
    unsigned slot = (unsigned)(h >> 40) & (SEEN_SLOTS - 1);

    for (unsigned i = 0; i < SEEN_PROBES; i++, slot = (slot + 1) & (SEEN_SLOTS - 1)) {
        uint64_t cur = __atomic_load_n(&seen[slot], __ATOMIC_ACQUIRE);
        if (cur == key)
            return false;
        if (cur != 0)
            continue;
        if (__atomic_compare_exchange_n(&seen[slot], &cur, key, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return true;
        if (cur == key) /* another thread recorded the same bug just now */
            return false;
    }
    return true;
}

void hwt_action_panic(void)
{
    struct sigaction dfl;
    sigset_t set;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    hwt_os_sigaction(SIGABRT, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGABRT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGABRT);
    _exit(PANIC_EXIT_STATUS);
}

/* True when HWTAG_FAULT ends the process after this report. */
static bool will_panic(const struct hwt_report *r)
{
    switch (hwt_opts.fault) {
    case HWT_FAULT_PANIC_ON_WRITE:
        /* like the kernel, a bad free counts as a write */
        return r->access != HWTAG_ACCESS_READ;
    case HWT_FAULT_REPORT:
        return false;
    default:
        return true;
    }
}

bool hwt_action_should_print(const struct hwt_report *r)
{
    /* the last report of a run is always printed: the process ends after it */
    if (will_panic(r)) {
        __atomic_add_fetch(&printed, 1, __ATOMIC_RELAXED);
        return true;
    }
    uintptr_t pc = r->stack_len > 0 ? r->stack[0] : r->pc;
    if (!seen_insert(hwt_action_key(r->bug, pc))) {
        __atomic_add_fetch(&duplicates, 1, __ATOMIC_RELAXED);
        return false;
    }
    /* one report at a time (fault.c), so this read and the increment do not race */
    if (__atomic_load_n(&printed, __ATOMIC_RELAXED) >= hwt_opts.max_reports) {
        __atomic_add_fetch(&over_cap, 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_add_fetch(&printed, 1, __ATOMIC_RELAXED);
    return true;
}

void hwt_action_after_report(const struct hwt_report *r)
{
    if (will_panic(r))
        hwt_action_panic();
}

void hwt_action_summary(void)
{
    uint64_t n = __atomic_load_n(&printed, __ATOMIC_RELAXED);
    uint64_t dup = __atomic_load_n(&duplicates, __ATOMIC_RELAXED);
    uint64_t cap = __atomic_load_n(&over_cap, __ATOMIC_RELAXED);
    char line[192];
    struct hwt_buf b;

    if (n + dup + cap == 0)
        return;
    if (cap > 0) {
        hwt_fmt_init(&b, line, sizeof(line));
        hwt_fmt_printf(&b,
                       "hwtag: HWTAG_MAX_REPORTS=%u reached: %lu more distinct bugs not printed\n",
                       (unsigned)hwt_opts.max_reports, (unsigned long)cap);
        hwt_sink_notice(line);
    }
    hwt_fmt_init(&b, line, sizeof(line));
    hwt_fmt_printf(&b, "hwtag: %lu reports printed, %lu suppressed as duplicates\n",
                   (unsigned long)n, (unsigned long)(dup + cap));
    hwt_sink_notice(line);
}

void hwt_action_after_fork_child(void)
{
    /* the child's exit line counts its own reports; the bugs its parent saw stay seen */
    __atomic_store_n(&printed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&duplicates, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&over_cap, 0, __ATOMIC_RELAXED);
}

/* At exit (after the program's own atexit handlers, which may still report). */
__attribute__((destructor)) static void summary_at_exit(void)
{
    hwt_action_summary();
}
