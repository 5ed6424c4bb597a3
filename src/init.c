/* SPDX-License-Identifier: MIT */
/* Start-up order, MTE mode selection and fork handlers.
 * Nothing on the init path may call malloc: recursion would find a half-built heap. */
#include "init.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>

#include "arch/mte.h"
#include "altstack.h"
#include "busy.h"
#include "leak.h"
#include "libc.h"
#include "leak_world.h"
#include "fault.h"
#include "fmt.h"
#include "history.h"
#include "large.h"
#include "lock.h"
#include "meta.h"
#include "action.h"
#include "options.h"
#include "os.h"
#include "pool.h"
#include "slab.h"
#include "stats.h"
#include "tail.h"
#include "transfer.h"
#include "tcache.h"
#include "thread.h"
#include "unwind.h"

int hwt_init_done;
static struct hwt_lock init_lock = HWT_LOCK_INIT;
static int core_ready; /* heap usable; set before anything that may call back into malloc */
static int init_owner; /* tid running init, so its own recursive calls go through */
static int late_done;

static void say(const char *msg)
{
    hwt_os_write_all(2, msg, strlen(msg));
}

static const char *const mode_names[] = {"sync", "async", "asymm", "off"};

/* One formatted line on stderr, in one write. */
__attribute__((format(printf, 1, 2))) static void sayf(const char *fmt, ...)
{
    char mem[256];
    struct hwt_buf line;
    va_list ap;
    hwt_fmt_init(&line, mem, sizeof mem);
    va_start(ap, fmt);
    hwt_fmt_vprintf(&line, fmt, ap);
    va_end(ap);
    hwt_os_write_all(2, line.data, line.len);
}

/* One line saying why there are no tag checks, and what still works. */
static void say_no_tag_checks(const char *why)
{
    sayf("hwtag: %s: no tag checks (double-free, invalid-free and tail checks still run)\n", why);
}

static void setup_mte(void)
{
    if (hwt_opts.mode == HWT_MODE_OFF)
        return;
    if (!hwt_os_mte_supported()) {
        /* A build without the tag primitives (native) is one by choice: silent unless asked.
         * An MTE build on a CPU or kernel without MTE did not get what it was built for. */
        if (HWTAG_MTE || hwt_opts.verbose == HWT_ON)
            say_no_tag_checks(HWTAG_MTE ? "MTE is not available on this CPU or kernel"
                                        : "built without MTE");
        return;
    }
    int mode = hwt_opts.mode == HWT_MODE_SYNC ? 1 : hwt_opts.mode == HWT_MODE_ASYNC ? 2 : 3;
    if (!hwt_os_mte_set_mode(mode)) {
        if (mode == 3 && hwt_os_mte_set_mode(1)) {
            say("hwtag: asymmetric mode refused by the kernel; using sync\n");
            hwt_opts.mode = HWT_MODE_SYNC;
        } else {
            say_no_tag_checks("enabling MTE tag checks failed");
            return;
        }
    }
    hwt_mte_dcz_block = mte_read_dcz_block();
    if (hwt_mte_dcz_block < HWT_GRANULE)
        hwt_mte_dcz_block = HWT_GRANULE;
    /* the architecture's largest block (DCZID_EL0.BS 9); thread caches keep it in 16 bits */
    HWT_CHECK(hwt_mte_dcz_block <= 2048);
    hwt_mte_active = 1;
}

/* glibc's stdio list lock (exported since glibc 2.2.5/2.17). glibc's fork takes it after
 * the atfork prepare handlers, and its own malloc locks after it; a thread flushing all
 * streams holds it while waiting for a stream whose owner is in malloc. */
extern void _IO_list_lock(void) __attribute__((weak));
extern void _IO_list_unlock(void) __attribute__((weak));
extern void _IO_list_resetlock(void) __attribute__((weak));

/* Whether this thread's fork_prepare took the locks (TLS: two threads may fork at once). */
static __thread int fork_locked __attribute__((tls_model("initial-exec")));

/* In a process that never created a thread, no other thread can hold an allocator lock,
 * so fork takes none, as glibc's malloc: a fork from a signal handler that interrupted
 * malloc, free or fork must not wait for the lock the interrupted call holds.
 * Otherwise the stdio list lock is taken first (it is recursive: glibc's fork takes it
 * again), so the order is glibc's own, stdio before the allocator (glibc bug 19431). */
static void fork_prepare(void)
{
    if (__libc_single_threaded) {
        fork_locked = 0;
        return;
    }
    /* A handler that interrupted this thread's malloc or fork would wait forever for the
     * locks the interrupted call holds: say so instead of hanging. */
    if (hwt_busy_now() || fork_locked) {
        say("hwtag: fork from a signal handler that interrupted malloc, free or fork in a "
            "multi-threaded process (not async-signal-safe): aborting\n");
        abort();
    }
    if (_IO_list_lock != NULL)
        _IO_list_lock();
    hwt_tcache_lock();
    hwt_transfer_lock_all();
    hwt_slab_lock_all();
    hwt_large_lock();
    hwt_pool_lock();
    hwt_meta_lock();
    fork_locked = 1;
}

static void fork_parent(void)
{
    if (!fork_locked)
        return;
    fork_locked = 0;
    hwt_meta_unlock();
    hwt_pool_unlock();
    hwt_large_unlock();
    hwt_slab_unlock_all();
    hwt_transfer_unlock_all();
    hwt_tcache_unlock();
    if (_IO_list_unlock != NULL)
        _IO_list_unlock();
}

/* The child is single-threaded: every lock is reset, held or not (a fork from a signal
 * handler may have interrupted the holder), and the stdio list lock too when taken. */
static void fork_child(void)
{
    hwt_meta_reset_lock();
    hwt_pool_reset_lock();
    hwt_large_reset_lock();
    hwt_slab_reset_locks();
    hwt_transfer_reset_locks();
    hwt_tcache_after_fork_child();
    hwt_action_after_fork_child();
    hwt_leak_world_note_start(); /* the child's only other threads are an emulator's */
    hwt_thread_after_fork_child();
    if (fork_locked && _IO_list_resetlock != NULL)
        _IO_list_resetlock();
    fork_locked = 0;
}

/* A secure-execution process: the options its environment set that name a file or a program
 * and were ignored, and what it does instead. */
static void say_secure(void)
{
    char mem[160];
    struct hwt_buf names;
    hwt_fmt_init(&names, mem, sizeof mem);
    for (size_t i = 0; i < hwt_option_count; i++)
        if (hwt_options_ignored & (UINT64_C(1) << i))
            hwt_fmt_printf(&names, "%s%s", names.len > 0 ? " " : "", hwt_option_table[i].name);
    sayf("hwtag: secure execution (AT_SECURE): %s%s; reports go to stderr, no external "
         "symbolizer\n",
         names.len > 0 ? "ignored " : "no file or program options set", names.data);
}

/* The parts that need a running process: handler, unwinder. Idempotent. */
static void init_late(void)
{
    if (__atomic_exchange_n(&late_done, 1, __ATOMIC_ACQ_REL))
        return;
    hwt_unwind_init();
    hwt_libc_resolve_all(); /* before a fault handler may need the string routines */
    hwt_fault_install();
    hwt_leak_world_note_start();
    if (hwt_opts.verbose == HWT_ON) {
        sayf("hwtag: initialized (mode=%s, tag checks=%s, stacktrace=%s)\n",
             mode_names[hwt_opts.mode], hwt_mte_active ? "on" : "off",
             hwt_opts.stacktrace == HWT_ON ? "on" : "off");
        if (hwt_os_secure())
            say_secure();
    }
}

void hwt_init_slow(void)
{
    int tid = hwt_os_gettid();
    if (__atomic_load_n(&core_ready, __ATOMIC_ACQUIRE) &&
        __atomic_load_n(&init_owner, __ATOMIC_RELAXED) == tid)
        return; /* a call back into malloc from our own init: the heap is ready */
    hwt_lock(&init_lock);
    if (hwt_init_done) {
        hwt_unlock(&init_lock);
        return;
    }
    init_owner = tid;
    hwt_os_init();
    hwt_options_init();
    /* HWTAG_MODE=off is the allocator alone (the kernel's kasan=off): no stacks either */
    if (hwt_opts.mode == HWT_MODE_OFF)
        hwt_opts.stacktrace = HWT_OFF;
    setup_mte();
    /* the tail check is software: it also works where the CPU has no MTE */
    hwt_tail_init(hwt_opts.mode != HWT_MODE_OFF);
    hwt_slab_init();
    hwt_tcache_init();
    if (hwt_mte_active)
        hwt_history_init();
    __atomic_store_n(&core_ready, 1, __ATOMIC_RELEASE);
    hwt_thread_init();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    __atomic_store_n(&hwt_init_done, 1, __ATOMIC_RELEASE);
    init_owner = 0;
    hwt_unlock(&init_lock);
}

__attribute__((constructor)) static void hwt_constructor(void)
{
    hwt_init_ensure();
    init_late();
}

/* HWTAG_PRINT_STATS=on prints the statistics at exit, as jemalloc's opt.stats_print and
 * MIMALLOC_SHOW_STATS do: a destructor runs both for exit() and for a return from main
 * (preloaded, after the program's own destructors), not for _exit or a fatal signal. */
__attribute__((destructor)) static void hwt_destructor(void)
{
    if (!__atomic_load_n(&hwt_init_done, __ATOMIC_ACQUIRE))
        return;
    if (hwt_opts.print_stats == HWT_ON)
        hwt_stats_print_at_exit();
    hwt_leak_at_exit(); /* the last: with leaks it ends the process */
}
