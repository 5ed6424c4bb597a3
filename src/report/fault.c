/* SPDX-License-Identifier: MIT */
/* The SIGSEGV handler: turns MTE tag-check faults and bad frees into KASAN reports, infers
 * the bug from the heap metadata, applies HWTAG_FAULT and chains every other fault to the
 * previous handler. Everything reachable from the handler must stay async-signal-safe. */
#include "fault.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/mte.h"
#include "decode.h"
#include "fmt.h"
#include "lookup.h"
#include "history.h"
#include "check.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "report.h"
#include "stats.h"
#include "symbolize.h"
#include "unwind.h"

/* libunwind and the symbolizer run on this stack; 64 KiB leaves them ample room. */
#define ALT_STACK_SIZE (64u * 1024u)
/* Slots on each side searched for the object a stray pointer's tag belongs to. */
#define NEIGHBOR_SLOTS 8
#define REPORT_TEXT_CAP (32u * 1024u)
#define COMM_CAP 32
#define LOG_PATH_CAP 4096
/* Exit status when abort() itself cannot end the process: 128 + SIGABRT, as a shell shows. */
#define PANIC_EXIT_STATUS 134
/* Signal frame record with the fault's ESR (arch/arm64 uapi sigcontext.h). */
#define ESR_RECORD_MAGIC 0x45535201u
#define ESR_WNR (UINT64_C(1) << 6)
#define ESR_ISV (UINT64_C(1) << 24)
#define ESR_SAS_SHIFT 22
/* A64 load/store fields: base register Rn, and the "load register (literal)" class. */
#define INSN_RN_SHIFT 5
#define INSN_REG_MASK 31u
#define INSN_REG_SP 31u
#define INSN_LITERAL_MASK 0x3b000000u
#define INSN_LITERAL_BITS 0x18000000u

static struct sigaction previous;  /* disposition before ours; chained for foreign faults */
static int log_fd = STDERR_FILENO; /* HWTAG_LOG_PATH, opened by hwt_fault_install */
/* Process the log was opened for; with "%p" in the path a forked child reopens its own. */
static int log_pid;
static bool log_per_pid;
static char comm[COMM_CAP] = "?"; /* process name, read at install time */

/* tid of the thread printing a report, 0 when none: one report at a time. */
static int report_owner;
/* Set after the first report: with HWTAG_FAULT=report later ones are suppressed. */
static int reported_once;

/* The public callback; arg is published before cb so a reader that sees cb sees its arg. */
static hwtag_report_callback callback_fn;
static void *callback_arg;

/* Report state, used only by the report owner. */
static struct hwt_report report;
static char report_text[REPORT_TEXT_CAP];

/* Alternate signal stacks of exited threads, linked through their first word. */
static struct hwt_lock stacks_lock = HWT_LOCK_INIT;
static void *free_stacks;
static __thread void *thread_stack;

__attribute__((visibility("default"))) void hwtag_set_report_callback(hwtag_report_callback cb,
                                                                      void *arg)
{
    __atomic_store_n(&callback_fn, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&callback_arg, arg, __ATOMIC_RELEASE);
    __atomic_store_n(&callback_fn, cb, __ATOMIC_RELEASE);
}

/* The process name from /proc/self/stat, "pid (comm) state ...": the same as
 * /proc/self/comm, but also right under qemu-user, which emulates stat and not comm. */
static void read_comm(void)
{
    char stat[512];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, stat, sizeof(stat) - 1);
    close(fd);
    if (n <= 0)
        return;
    stat[n] = '\0';
    const char *open_paren = strchr(stat, '(');
    const char *close_paren = strrchr(stat, ')');
    if (open_paren == NULL || close_paren == NULL || close_paren <= open_paren)
        return;
    size_t len = (size_t)(close_paren - open_paren - 1);
    if (len > sizeof(comm) - 1)
        len = sizeof(comm) - 1;
    memcpy(comm, open_paren + 1, len);
    comm[len] = '\0';
}

/* HWTAG_LOG_PATH with every "%p" replaced by the pid; stderr when unset or unopenable.
 * signal-safe (open(2) and our formatter only), so the report path can reopen it. */
static void open_log(void)
{
    char path[LOG_PATH_CAP];
    struct hwt_buf b;
    const char *p = hwt_opts.log_path;
    int pid = hwt_os_getpid();

    if (p == NULL || *p == '\0' || (log_fd != STDERR_FILENO && (!log_per_pid || log_pid == pid)))
        return;
    hwt_buf_init(&b, path, sizeof(path));
    log_per_pid = false;
    for (; *p != '\0'; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            hwt_buf_printf(&b, "%d", pid);
            log_per_pid = true;
            p++;
        } else {
            hwt_buf_printf(&b, "%c", *p);
        }
    }
    int fd = b.truncated ? -1 : open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        char msg[LOG_PATH_CAP + 64];
        struct hwt_buf m;
        hwt_buf_init(&m, msg, sizeof(msg));
        hwt_buf_printf(&m, "hwtag: cannot open HWTAG_LOG_PATH %s, reporting to stderr\n", path);
        hwt_os_write_all(STDERR_FILENO, m.data, m.len);
        return;
    }
    /* A forked child inherited its parent's file: leave that one to the parent. */
    if (log_fd != STDERR_FILENO)
        close(log_fd);
    log_fd = fd;
    log_pid = pid;
}

/* Ends the process like abort(): SIGABRT with its default action, whatever the program
 * installed, so the status shows a signal and a core can be written. */
__attribute__((noreturn)) static void panic(void)
{
    struct sigaction dfl;
    sigset_t set;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGABRT, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGABRT);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGABRT);
    _exit(PANIC_EXIT_STATUS);
}

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

/* Prints the filled report, counts it and calls the public callback. */
static void emit(struct hwt_report *r)
{
    size_t len = hwt_report_format(r, report_text, sizeof(report_text));
    open_log(); /* a forked child writes to its own %p file, as ASan's log_path does */
    hwt_os_write_all(log_fd, report_text, len);
    __atomic_add_fetch(&hwt_reports_printed, 1, __ATOMIC_RELAXED);

    hwtag_report_callback cb = __atomic_load_n(&callback_fn, __ATOMIC_ACQUIRE);
    if (cb == NULL)
        return;
    struct hwtag_report_info info;
    memset(&info, 0, sizeof(info));
    info.bug_type = r->bug;
    info.bug_name = hwt_bug_name(r->bug);
    info.access = r->access;
    info.addr = r->addr;
    info.access_size = r->access_size;
    info.pointer_tag = r->pointer_tag;
    info.memory_tag = r->memory_tag;
    info.asynchronous = r->asynchronous;
    if (r->have_object) {
        info.sampled_out = !r->object.sampled;
        info.object_start = r->object.start;
        info.object_size = r->object.size;
        info.object_requested = r->object.requested;
        info.object_class = r->object.class_size;
        info.distance = hwt_report_distance(r->addr, &r->object);
    }
    info.text = report_text;
    info.text_len = len;
    cb(&info, __atomic_load_n(&callback_arg, __ATOMIC_ACQUIRE));
}

/* Describes the access from the slot holding it and the neighbours that may own the
 * pointer's tag (policy: neighbours never share a tag, freed slots keep their old one). */
static void infer_small(struct hwt_report *r, uintptr_t addr, const struct hwt_object *slot)
{
    struct hwt_object n, freed_match;
    bool have_freed = false;

    r->have_object = true;
    r->object = *slot;
    if (slot->ever_used && slot->tag == r->pointer_tag) {
        /* Its own tag: a stale pointer after free, or past the requested size into the
         * slot's free-tagged tail. */
        r->bug = slot->live ? HWTAG_BUG_SLAB_OUT_OF_BOUNDS : HWTAG_BUG_SLAB_USE_AFTER_FREE;
        return;
    }
    /* Nearest first, so an overflow by a few bytes names the adjacent object. */
    for (long d = 1; d <= NEIGHBOR_SLOTS; d++) {
        for (long sign = -1; sign <= 1; sign += 2) {
            if (!hwt_heap_lookup_neighbor(addr, sign * d, &n) || !n.ever_used ||
                n.tag != r->pointer_tag)
                continue;
            if (n.live) {
                r->object = n;
                r->bug = HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
                return;
            }
            if (!have_freed) {
                freed_match = n;
                have_freed = true;
            }
        }
    }
    if (have_freed) {
        r->object = freed_match;
        r->bug = HWTAG_BUG_SLAB_USE_AFTER_FREE;
        return;
    }
    r->bug = HWTAG_BUG_INVALID_ACCESS;
}

/* Nothing in the slot or its neighbours owns the pointer's tag. Typically a stale pointer
 * to an object whose slot (or cached mapping) has been freed and reallocated since: the
 * new object got a new tag (the policy excludes the previous one), so the old pointer
 * faults. Like the kernel's hardware mode, look for the pointer in the ring of recent
 * allocations and frees (history.c) and name that object with its own stacks; only when
 * the ring has forgotten it, keep invalid-access and say in the report what is known. */
static void from_history(struct hwt_report *r)
{
    struct hwt_history_event alloc, freed;
    if (!hwt_history_find(r->addr, &alloc, &freed))
        return;
    struct hwt_object *o = &r->object;
    o->start = mte_untag((const void *)alloc.ptr);
    o->requested = alloc.size;
    o->size = hwt_align_up(alloc.size, HWT_GRANULE);
    o->tag = mte_ptr_tag((const void *)alloc.ptr);
    o->ever_used = true;
    o->live = freed.seq == 0;
    o->sampled = true;
    o->alloc_stack = alloc.stack;
    o->free_stack = freed.seq != 0 ? freed.stack : 0;
    if (o->live)
        r->bug = o->large ? HWTAG_BUG_OUT_OF_BOUNDS : HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
    else
        r->bug = o->large ? HWTAG_BUG_USE_AFTER_FREE : HWTAG_BUG_SLAB_USE_AFTER_FREE;
}

static void mark_foreign_tag(struct hwt_report *r)
{
    r->foreign_tag = r->bug == HWTAG_BUG_INVALID_ACCESS && r->have_object && r->object.ever_used &&
                     r->object.tag != r->pointer_tag;
}

static void infer(struct hwt_report *r)
{
    uintptr_t addr = mte_untag((const void *)r->addr);
    struct hwt_object obj;

    r->have_object = false;
    r->bug = HWTAG_BUG_INVALID_ACCESS;
    if (!hwt_heap_lookup(addr, &obj))
        return;
    if (!obj.large) {
        infer_small(r, addr, &obj);
        if (r->bug == HWTAG_BUG_INVALID_ACCESS && r->object.tag != r->pointer_tag)
            from_history(r);
        mark_foreign_tag(r);
        return;
    }
    r->have_object = true;
    r->object = obj;
    if (!obj.live && obj.ever_used)
        r->bug = HWTAG_BUG_USE_AFTER_FREE;
    else if (obj.live && addr >= obj.start + obj.size)
        r->bug = HWTAG_BUG_OUT_OF_BOUNDS; /* the guard tail after the object */
    else if (obj.live && obj.tag == r->pointer_tag &&
             (addr < obj.start || addr >= obj.start + obj.requested))
        r->bug = HWTAG_BUG_OUT_OF_BOUNDS; /* the guard page below, or past the request */
    if (r->bug == HWTAG_BUG_INVALID_ACCESS && obj.tag != r->pointer_tag)
        from_history(r);
    mark_foreign_tag(r);
}

#if defined(__aarch64__)
/* The ESR the kernel saved in the signal frame, when it did. */
static bool frame_esr(const ucontext_t *uc, uint64_t *esr)
{
    const unsigned char *p = uc->uc_mcontext.__reserved;
    size_t room = sizeof(uc->uc_mcontext.__reserved);
    size_t off = 0;

    while (off + 8 <= room) {
        uint32_t magic, size;
        memcpy(&magic, p + off, sizeof(magic));
        memcpy(&size, p + off + 4, sizeof(size));
        if (magic == 0 || size < 8 || size > room - off)
            return false;
        if (magic == ESR_RECORD_MAGIC && size >= 16) {
            memcpy(esr, p + off + 8, sizeof(*esr));
            return true;
        }
        off += size;
    }
    return false;
}
#endif

/* Size and direction of the faulting access, from its instruction or else from the ESR. */
static void describe_access(struct hwt_report *r, void *ucontext)
{
    r->access = HWTAG_ACCESS_READ;
    r->access_size = 0;
#if defined(__aarch64__)
    const ucontext_t *uc = ucontext;
    struct hwt_access acc;
    uint64_t esr;
    uint32_t insn;

    r->have_regs = true;
    for (unsigned i = 0; i < 31; i++)
        r->regs[i] = uc->uc_mcontext.regs[i];
    r->sp = uc->uc_mcontext.sp;
    r->pc = uc->uc_mcontext.pc;
    r->pstate = uc->uc_mcontext.pstate;
    if (r->asynchronous)
        return;
    /* Code is never tagged; the faulting instruction was just fetched, so it is mapped. */
    memcpy(&insn, (const void *)(uintptr_t)r->pc, sizeof(insn));
    if (hwt_decode_access(insn, &acc)) {
        r->access = acc.is_write ? HWTAG_ACCESS_WRITE : HWTAG_ACCESS_READ;
        r->access_size = acc.size;
    } else if (frame_esr(uc, &esr)) {
        r->access = (esr & ESR_WNR) ? HWTAG_ACCESS_WRITE : HWTAG_ACCESS_READ;
        if (esr & ESR_ISV)
            r->access_size = (size_t)1 << ((esr >> ESR_SAS_SHIFT) & 3);
    }
#else
    (void)ucontext;
    r->have_regs = false;
#endif
}

/* The faulting address with its pointer tag. The kernel clears si_addr's top byte for a
 * handler without SA_EXPOSE_TAGBITS, so when an application's handler installed after
 * ours forwards the fault to us, the tag is gone; it is still in the base register: every
 * A64 load/store that can reach tagged memory addresses through Rn = insn[9:5] (literal
 * loads, the exception, only read untagged images), and the check used that register's
 * tag. A genuinely untagged pointer has tag 0 there too. */
static uintptr_t tagged_fault_addr(const siginfo_t *info, void *ucontext)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
#if defined(__aarch64__)
    const ucontext_t *uc = ucontext;
    struct hwt_access acc;
    uint32_t insn;

    if (mte_ptr_tag(info->si_addr) != 0)
        return addr;
    memcpy(&insn, (const void *)(uintptr_t)uc->uc_mcontext.pc, sizeof(insn));
    unsigned rn = (insn >> INSN_RN_SHIFT) & INSN_REG_MASK;
    bool literal = (insn & INSN_LITERAL_MASK) == INSN_LITERAL_BITS;
    if (rn == INSN_REG_SP || literal || !hwt_decode_access(insn, &acc))
        return addr;
    return (uintptr_t)mte_with_tag(addr, mte_ptr_tag((const void *)uc->uc_mcontext.regs[rn]));
#else
    (void)ucontext;
    return addr;
#endif
}

/* Passes a fault that is not a tag-check fault on, as if our handler were not there. */
static void chain(int sig, siginfo_t *info, void *ucontext)
{
    struct sigaction act = previous;
    bool user_sent = info->si_code <= 0;

    if (!(act.sa_flags & SA_SIGINFO) && (act.sa_handler == SIG_DFL || act.sa_handler == SIG_IGN)) {
        if (act.sa_handler == SIG_IGN && user_sent)
            return;
        /* Default action: restore it; a real fault re-executes and kills, a sent signal is
         * re-sent (it stays blocked until this handler returns). */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        if (user_sent)
            raise(sig);
        return;
    }

    /* Run the old handler with the mask and flags it asked for. */
    sigset_t mask, saved;
    sigprocmask(SIG_SETMASK, NULL, &saved);
    mask = saved;
    for (int s = 1; s < NSIG; s++)
        if (sigismember(&act.sa_mask, s) == 1)
            sigaddset(&mask, s);
    if (act.sa_flags & SA_NODEFER)
        sigdelset(&mask, sig);
    if (act.sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
    }
    sigprocmask(SIG_SETMASK, &mask, NULL);
    if (act.sa_flags & SA_SIGINFO) {
        siginfo_t copy = *info;
        /* kernel-generated faults only: for sent signals the field holds pid and uid */
        if (!(act.sa_flags & SA_EXPOSE_TAGBITS) && !user_sent)
            copy.si_addr = (void *)mte_untag(info->si_addr);
        act.sa_sigaction(sig, &copy, ucontext);
    } else {
        act.sa_handler(sig);
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
}

/* After a report, or a suppressed one, in the faulting thread. */
static void after_fault(const struct hwt_report *r)
{
    switch (hwt_opts.fault) {
    case HWT_FAULT_PANIC_ON_WRITE:
        if (r->access != HWTAG_ACCESS_READ)
            panic();
        break;
    case HWT_FAULT_REPORT:
        break;
    default:
        panic();
    }
}

/* Returns true when this report is to be printed (HWTAG_FAULT=report prints only one). */
static bool first_or_multi(void)
{
    if (hwt_opts.fault != HWT_FAULT_REPORT)
        return true;
    return __atomic_exchange_n(&reported_once, 1, __ATOMIC_RELAXED) == 0;
}

static void tag_fault(siginfo_t *info, void *ucontext)
{
    struct hwt_report *r = &report;

    if (!report_begin()) {
        static const char msg[] = "hwtag: tag-check fault inside the fault handler\n";
        hwt_os_write_all(log_fd, msg, sizeof(msg) - 1);
        panic();
    }
    memset(r, 0, sizeof(*r));
    r->asynchronous = info->si_code == SEGV_MTEAERR;
    r->tid = hwt_os_gettid();
    r->comm = comm;
    describe_access(r, ucontext);
    r->stack_len = hwt_unwind_signal(ucontext, r->stack, HWT_STACK_MAX_FRAMES);
    if (r->asynchronous) {
        r->bug = HWTAG_BUG_INVALID_ACCESS;
    } else {
        r->addr = tagged_fault_addr(info, ucontext);
        r->pointer_tag = mte_ptr_tag((const void *)r->addr);
        r->memory_tag = mte_load_tag(mte_untag(info->si_addr));
        infer(r);
    }
    if (first_or_multi())
        emit(r);
    after_fault(r);
    report_end();

    /* HWTAG_FAULT=report (or a read under panic_on_write): go on with this thread's tag
     * checks off, so the faulting instruction re-executes unchecked. */
    if (!hwt_os_mte_set_mode(0))
        panic();
}

static void handler(int sig, siginfo_t *info, void *ucontext)
{
    int saved_errno = errno;

    mte_tco_set();
    if (sig == SIGSEGV && (info->si_code == SEGV_MTESERR || info->si_code == SEGV_MTEAERR)) {
        tag_fault(info, ucontext);
    } else {
        /* The kernel enters handlers with TCO clear; give the old one the same. */
        mte_tco_clear();
        chain(sig, info, ucontext);
    }
    errno = saved_errno;
}

void hwt_fault_thread_init(void)
{
    stack_t cur, ss;

    if (thread_stack != NULL || sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return;
    void *mem = NULL;
    /* try-lock: after a fork in the middle of a push or pop, take fresh memory instead */
    if (hwt_trylock(&stacks_lock)) {
        mem = free_stacks;
        if (mem != NULL)
            memcpy(&free_stacks, mem, sizeof(void *));
        hwt_unlock(&stacks_lock);
    }
    if (mem == NULL)
        mem = hwt_meta_alloc(ALT_STACK_SIZE, HWT_GRANULE);
    if (mem == NULL)
        return;
    ss.ss_sp = mem;
    ss.ss_size = ALT_STACK_SIZE;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0) {
        hwt_fault_thread_exit();
        return;
    }
    thread_stack = mem;
}

void hwt_fault_thread_exit(void)
{
    void *mem = thread_stack;
    stack_t ss, cur;

    if (mem == NULL)
        return;
    /* Only give it back when it is ours and not in use (never on the stack itself). */
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == mem) {
        if (cur.ss_flags & SS_ONSTACK)
            return;
        memset(&ss, 0, sizeof(ss));
        ss.ss_flags = SS_DISABLE;
        if (sigaltstack(&ss, NULL) != 0)
            return;
    }
    thread_stack = NULL;
    hwt_lock(&stacks_lock);
    memcpy(mem, &free_stacks, sizeof(void *));
    free_stacks = mem;
    hwt_unlock(&stacks_lock);
}

void hwt_fault_install(void)
{
    struct sigaction sa, old;

    read_comm();
    open_log();
    hwt_fault_thread_init();

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_EXPOSE_TAGBITS;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old) != 0)
        return;
    /* Re-installing must not make us our own predecessor (chain would loop). */
    if (!((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == handler))
        previous = old;
}

/* Drops the frames of the freeing entry point itself (and the allocator below it), so
 * the report starts at the code that called free/realloc, as KASAN's does. */
static unsigned skip_allocator_frames(const uintptr_t *pcs, unsigned n)
{
    /* the interposed entries, and the front end they tail-call into */
    static const char *const entries[] = {"free",          "cfree",           "realloc",
                                          "reallocarray",  "hwt_free",        "hwt_realloc",
                                          "check_pointer", "realloc_checked", NULL};
    unsigned start = 0;

    for (unsigned i = 0; i < n && i < NEIGHBOR_SLOTS; i++) {
        struct hwt_symbol sym;
        sym.function = NULL;
        if (!hwt_symbolize(pcs[i], &sym) || sym.function == NULL)
            continue;
        for (unsigned e = 0; entries[e] != NULL; e++)
            if (strcmp(sym.function, entries[e]) == 0)
                start = i + 1;
    }
    return start < n ? start : 0;
}

void hwt_fault_bad_free(enum hwtag_bug_type bug, const void *ptr)
{
    struct hwt_report *r = &report;
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
    uintptr_t addr = mte_untag(ptr);

    if (!report_begin()) {
        static const char msg[] = "hwtag: bad free inside a report\n";
        hwt_os_write_all(log_fd, msg, sizeof(msg) - 1);
        panic();
    }
    memset(r, 0, sizeof(*r));
    r->bug = bug;
    r->access = HWTAG_ACCESS_FREE;
    r->addr = (uintptr_t)ptr;
    r->tid = hwt_os_gettid();
    r->comm = comm;
    r->pointer_tag = mte_ptr_tag(ptr);
    unsigned n = hwt_unwind_fast(pcs, HWT_STACK_MAX_FRAMES, 0);
    unsigned skip = skip_allocator_frames(pcs, n);
    for (unsigned i = skip; i < n; i++)
        r->stack[r->stack_len++] = pcs[i];
    /* Only heap memory is known to be mapped: never load a tag of a foreign pointer. */
    r->have_object = hwt_heap_lookup(addr, &r->object);
    if (r->have_object)
        r->memory_tag = mte_load_tag(addr);
    if (first_or_multi())
        emit(r);
    /* Like the kernel, a bad free counts as a write for panic_on_write. */
    after_fault(r);
    report_end();
}
