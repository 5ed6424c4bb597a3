/* SPDX-License-Identifier: MIT */
/* Stack capture: a frame-record walk confined to the current stack mapping for malloc/free, and
 * libunwind (or the same walk) from a signal context; it must never fault, lock or malloc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* REG_RIP and friends */
#endif
#include "unwind.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "align.h"
#include "maps.h"
#include "os.h"
#include "stackdepot_limits.h"

/* libunwind steps through code without frame records (CFI); CMake says whether it is there
 * (Debian ships it for arm64 only). */
#ifndef HWTAG_HAVE_LIBUNWIND
#if defined(__aarch64__)
#define HWTAG_HAVE_LIBUNWIND 1
#else
#define HWTAG_HAVE_LIBUNWIND 0
#endif
#endif

#if HWTAG_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define HWT_PC_MASK HWT_UNWIND_PC_MASK

/* A frame record is two words: the caller's frame pointer, then the return address. */
#define HWT_FRAME_RECORD (2 * sizeof(uintptr_t))
/* Without /proc, only the page holding the current frame is known to be readable. */
#define HWT_MIN_PAGE 4096u

/* A readable range of one stack mapping, valid when lo <= addr < hi. seq is odd while the
 * entry is being written: a signal handler may interrupt a writer or a reader on this thread
 * and update the same entry, so readers check seq around their copy (a TLS seqlock). */
struct stack_range {
    uintptr_t lo, hi;
};

struct stack_cache_entry {
    unsigned seq;
    struct stack_range range;
};

#define HWT_STACK_CACHE 2 /* the thread's stack and, say, its alternate signal stack */
#define HWT_WARMUP_FRAMES 16

static __thread struct stack_cache_entry stack_cache[HWT_STACK_CACHE]
    __attribute__((tls_model("initial-exec")));
static int maps_unreadable; /* /proc/self/maps could not be opened: do not retry (atomic) */

static inline uintptr_t strip_pc(uintptr_t pc)
{
    return pc & HWT_PC_MASK;
}

struct range_query {
    uintptr_t addr;
    struct stack_range found;
};

static bool match_mapping(const struct hwt_mapping *m, void *arg)
{
    struct range_query *q = arg;

    if (q->addr < m->start || q->addr >= m->end)
        return true;
    if (m->readable) {
        q->found.lo = m->start;
        q->found.hi = m->end;
    }
    return false;
}

/* The readable stack mapping holding addr, from /proc/self/maps. */
static bool lookup_range(uintptr_t addr, struct stack_range *out)
{
    struct range_query q = {.addr = addr};

    if (__atomic_load_n(&maps_unreadable, __ATOMIC_RELAXED))
        return false;
    if (!hwt_maps_foreach(match_mapping, &q)) {
        __atomic_store_n(&maps_unreadable, 1, __ATOMIC_RELAXED);
        return false;
    }
    if (q.found.hi <= q.found.lo)
        return false;
    *out = q.found;
    return true;
}

static void cache_store(struct stack_cache_entry *e, struct stack_range v)
{
    e->seq++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    e->range = v;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    e->seq++;
}

/* A consistent copy of e, or an empty range when it is being written. */
static struct stack_range cache_load(const struct stack_cache_entry *e)
{
    struct stack_range empty = {0, 0}, v;
    unsigned seq = e->seq;

    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    v = e->range;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return seq % 2 == 0 && seq == e->seq ? v : empty;
}

/* Puts r first in the thread's cache, the entry it held second. */
static void cache_put(struct stack_range r)
{
    struct stack_range older = cache_load(&stack_cache[0]);
    if (older.hi)
        cache_store(&stack_cache[1], older);
    cache_store(&stack_cache[0], r);
}

/* Bounds of the readable memory around addr, an address in a live frame of this thread: a
 * cached mapping, else one read from /proc/self/maps (once per thread and stack), else the
 * page holding addr, which is mapped because the thread is using it. */
static struct stack_range stack_range_of(uintptr_t addr, bool use_cache)
{
    struct stack_range r;

    for (unsigned i = 0; use_cache && i < HWT_STACK_CACHE; i++) {
        r = cache_load(&stack_cache[i]);
        if (addr >= r.lo && addr < r.hi)
            return r;
    }
    if (lookup_range(addr, &r)) {
        if (use_cache)
            cache_put(r);
        return r;
    }
    r.lo = hwt_align_down(addr, HWT_MIN_PAGE);
    r.hi = r.lo + HWT_MIN_PAGE;
    return r;
}

/* Follows frame records from fp while each lies in [lo, hi) and sits above the last (the
 * walk hwt_unwind_walk_key does); stores return addresses after dropping skip of them.
 * key: NULL, or a running hwt_unwind_key_step hash of the stored frames as they are on the
 * stack (with any pointer authentication code), as that walk mixes them. more: NULL, or
 * where to count the frames past max (at most HWT_STACK_MORE_MAX). */
static unsigned walk_records(uintptr_t fp, uintptr_t lo, struct stack_range r, uintptr_t *pcs,
                             unsigned n, unsigned max, unsigned skip, uint64_t *key, unsigned *more)
{
    if (more != NULL)
        *more = 0;
    for (;;) {
        const uintptr_t *record;
        uintptr_t pc;

        if (n == max && (more == NULL || *more == HWT_STACK_MORE_MAX))
            break;
        if (fp < lo || fp < r.lo || fp > r.hi - HWT_FRAME_RECORD)
            break;
        record = (const uintptr_t *)fp;
        pc = strip_pc(record[1]);
        if (pc == 0)
            break;
        if (skip > 0) {
            skip--;
        } else if (n == max) {
            ++*more;
        } else {
            pcs[n++] = pc;
            if (key != NULL)
                *key = hwt_unwind_key_step(*key, record[1]);
        }
        lo = fp + 1; /* strictly upwards: no loops */
        fp = record[0];
    }
    return n;
}

unsigned hwt_unwind_count_more(uintptr_t fp, uintptr_t last)
{
    unsigned more = 0;
    uintptr_t lo = fp;
    while (more < HWT_STACK_MORE_MAX && fp != 0 && fp >= lo && fp <= last) {
        const uintptr_t *record = (const uintptr_t *)fp;
        if (strip_pc(record[1]) == 0)
            break;
        more++;
        lo = fp + 1; /* strictly upwards: no loops */
        fp = record[0];
    }
    return more;
}

/* Whether a frame pointer no record links to (the caller's) may be a record, as
 * hwt_unwind_walk_key checks its first: it holds 0 (the chain's end) or a record above it for
 * the next. Anything else means it was data in a register of code built without frame
 * pointers, and so is its "return address". True where walk_records stops anyway. */
static bool is_record(uintptr_t fp, uintptr_t lo, struct stack_range r)
{
    if (fp < lo || fp < r.lo || fp > r.hi - HWT_FRAME_RECORD)
        return true;
    uintptr_t next = ((const uintptr_t *)fp)[0];
    return next == 0 || (next > fp && next <= r.hi - HWT_FRAME_RECORD);
}

/* The walk from the record at fp, fp checked first. */
static unsigned walk_from(uintptr_t fp, uintptr_t *pcs, unsigned max, unsigned skip)
{
    if (max == 0)
        return 0;
    struct stack_range r = stack_range_of(fp, true);
    if (fp % sizeof(uintptr_t) != 0 || fp < r.lo || fp > r.hi - HWT_FRAME_RECORD)
        return 0;
    return walk_records(fp, fp, r, pcs, 0, max, skip, NULL, NULL);
}

__attribute__((noinline)) unsigned hwt_unwind_fast(uintptr_t *pcs, unsigned max, unsigned skip)
{
    /* Our own record: [0] is the caller's frame, [1] returns into the caller; the caller's
     * record then holds the first return address wanted (into the caller's caller). */
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    return walk_from(((const uintptr_t *)fp)[0], pcs, max, skip);
}

unsigned hwt_unwind_caller(struct hwt_caller c, uintptr_t *pcs, unsigned max, uint64_t seed,
                           uint64_t *key, unsigned *more)
{
    uint64_t k = seed;
    unsigned n = 0;
    uintptr_t pc = strip_pc(c.pc);

    if (more != NULL)
        *more = 0;
    if (max > 0 && pc != 0) {
        /* c.fp is a record of a frame above this one, on the same stack */
        uintptr_t here = (uintptr_t)__builtin_frame_address(0);
        struct stack_range r = stack_range_of(here, true);
        pcs[n++] = pc;
        k = hwt_unwind_key_step(k, c.pc);
        if (is_record(c.fp, here + 1, r))
            n = walk_records(c.fp, here + 1, r, pcs, n, max, 0, &k, more);
    }
    if (key != NULL)
        *key = hwt_unwind_key_end(k);
    return n;
}

const uint64_t hwt_unwind_key_constants[2] = {UINT64_C(0x9e3779b97f4a7c15),
                                              UINT64_C(0xff51afd7ed558ccd)};

/* The most memory from a frame's page to the thread pointer that thread_block_range checks:
 * a thread's first allocation is near the top of its stack, and the static TLS lies between
 * them. Farther, /proc/self/maps is cheaper than the copy. */
#define THREAD_BLOCK_MAX ((uintptr_t)256 << 10)

/* A thread that glibc's pthread_create started has its stack and its thread pointer (the TCB,
 * next to the static TLS) at the top of one block, a mapping of its own or the stack the
 * program gave it: the records of addr's callers lie between addr's page and the thread
 * pointer. When the kernel can read all of that range now, it is bounds enough, for one
 * system call instead of a read of /proc/self/maps (a program that starts many short threads
 * of a few allocations each otherwise spends much of its time reading the maps). A frame below
 * that page later takes the maps (stack_range_of). The main thread's thread pointer is in
 * another mapping. */
static bool thread_block_range(uintptr_t addr, struct stack_range *out)
{
    uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
    uintptr_t lo = hwt_align_down(addr, HWT_MIN_PAGE);
    if (tp <= addr || tp - lo > THREAD_BLOCK_MAX || hwt_os_gettid() == hwt_os_getpid() ||
        !hwt_os_readable(lo, tp - lo))
        return false;
    out->lo = lo;
    out->hi = tp;
    return true;
}

bool hwt_unwind_stack_bounds(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    struct stack_range r;
    if (thread_block_range(addr, &r))
        cache_put(r); /* the general walk's bounds too */
    else
        r = stack_range_of(addr, true);
    if (r.hi - r.lo <= HWT_MIN_PAGE)
        return false; /* the guess of the current page only */
    *lo = r.lo;
    *hi = r.hi;
    return true;
}

/* The walk from a signal context: pc first, then the frame records from its frame pointer. */
static unsigned walk_context(void *ucontext, uintptr_t *pcs, unsigned max, unsigned *more)
{
    const ucontext_t *uc = ucontext;
    uintptr_t pc, fp, sp;
    struct stack_range r;

#if defined(__aarch64__)
    pc = uc->uc_mcontext.pc;
    fp = uc->uc_mcontext.regs[29];
    sp = uc->uc_mcontext.sp;
#elif defined(__x86_64__)
    pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#else
#error "hwt_unwind_signal: unsupported architecture"
#endif
    if (max == 0)
        return 0;
    pcs[0] = strip_pc(pc);
    /* The handler may run on an alternate stack: do not trust (or fill) the cache there. */
    r = stack_range_of(sp, false);
    return walk_records(fp, sp, r, pcs, 1, max, 0, NULL, more);
}

#if HWTAG_HAVE_LIBUNWIND
/* libunwind sets itself up on first use: its locks, memory pools and a global cache it
 * clears and fills in its .bss, 128 KiB made resident in every process (python3 start-up:
 * 15240 -> 15112 KiB in all). Only the stack of a fault needs it, so the first fault's report
 * sets it up. libunwind holds its set-up lock with every signal blocked, and takes no lock
 * while stepping without a cache; reports come one at a time (fault.c), so a plain flag
 * says it is done. */
static bool libunwind_ready;

static void libunwind_prepare(void)
{
    if (!libunwind_ready) {
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE);
        libunwind_ready = true;
    }
}
#endif

unsigned hwt_unwind_signal(void *ucontext, uintptr_t *pcs, unsigned max, unsigned *more)
{
    if (more != NULL)
        *more = 0;
#if HWTAG_HAVE_LIBUNWIND
    unw_cursor_t cursor;
    unsigned n = 0, past = 0;

    if (max == 0)
        return 0;
    libunwind_prepare();
    if (unw_init_local2(&cursor, (unw_context_t *)ucontext, UNW_INIT_SIGNAL_FRAME) == 0) {
        do {
            unw_word_t ip;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || strip_pc(ip) == 0)
                break;
            if (n < max)
                pcs[n++] = strip_pc(ip);
            else
                past++; /* counted, not kept */
        } while ((n < max || (more != NULL && past < HWT_STACK_MORE_MAX)) && unw_step(&cursor) > 0);
    }
    /* A lone pc means libunwind found no CFI; frame records may still lead further. */
    if (n > 1) {
        if (more != NULL)
            *more = past;
        return n;
    }
#endif
    return walk_context(ucontext, pcs, max, more);
}

void hwt_unwind_init(void)
{
    uintptr_t pcs[HWT_WARMUP_FRAMES];

    /* Reads this thread's stack bounds now rather than on the first malloc. */
    hwt_unwind_fast(pcs, HWT_WARMUP_FRAMES, 0);
}
