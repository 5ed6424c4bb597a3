/* SPDX-License-Identifier: MIT */
/* Unit tests of stack capture: the frame-record walk from malloc-like callers, in the main
 * thread and another one, and the unwind from a signal context on an alternate stack. */
#ifndef _GNU_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#endif
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/caller.h"
#include "maps.h"
#include "os.h"
#include "symtab.h"
#include "unwind.h"

#define MAX_FRAMES 32u
#define ALT_STACK_SIZE (256u * 1024u)

static volatile unsigned sink;
static uintptr_t fast_pcs[MAX_FRAMES];
static unsigned fast_n, fast_skip, fast_max = MAX_FRAMES;

static volatile char *guard;
static size_t guard_size;
static uintptr_t sig_pcs[MAX_FRAMES], sig_fast_pcs[MAX_FRAMES];
static unsigned sig_n, sig_fast_n;

__attribute__((noipa)) static void keep_frame(void)
{
    sink++;
}

__attribute__((noipa)) static void chain_c(void)
{
    fast_n = hwt_unwind_fast(fast_pcs, fast_max, fast_skip);
    keep_frame();
    sink++; /* no tail call: this frame must stay on the stack */
}

__attribute__((noipa)) static void chain_b(void)
{
    chain_c();
    keep_frame();
    sink++; /* no tail call: this frame must stay on the stack */
}

__attribute__((noipa)) static void chain_a(void)
{
    chain_b();
    keep_frame();
    sink++; /* no tail call: this frame must stay on the stack */
}

__attribute__((noipa)) static void fault_c(void)
{
    /* Fault after a call, so that the frame record is set up even where the fallback walk
     * (no CFI: x86_64 native) is all there is. */
    keep_frame();
    sink += (unsigned)guard[0]; /* SIGSEGV; the handler opens the page and it runs again */
    keep_frame();
    sink++; /* no tail call: this frame must stay on the stack */
}

__attribute__((noipa)) static void fault_b(void)
{
    fault_c();
    keep_frame();
    sink++; /* no tail call: this frame must stay on the stack */
}

__attribute__((noipa)) static void fault_a(void)
{
    fault_b();
    keep_frame();
    sink++; /* no tail call: this frame must stay on the stack */
}

/* A leaf: GCC restores x29/x30 before the load (or keeps no record at all), so at the fault
 * the caller is only in x30 and the unwind tables (libunwind) are needed to find it. */
__attribute__((noipa)) static unsigned leaf_fault(void)
{
    return (unsigned)guard[0];
}

__attribute__((noipa)) static void leaf_caller(void)
{
    sink += leaf_fault();
    sink++;
}

/* Whether pc lies inside function fn, by its symbol (name and bounds). */
static bool pc_in(uintptr_t pc, void (*fn)(void), const char *name)
{
    struct hwt_symbol sym;
    uintptr_t start = (uintptr_t)fn;

    if (!hwt_symtab_lookup(pc, &sym) || !sym.function || strcmp(sym.function, name) != 0)
        return false;
    return pc > start && pc - start < sym.function_size && sym.function_offset == pc - start;
}

static int find_frame(const uintptr_t *pcs, unsigned n, void (*fn)(void), const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (pc_in(pcs[i], fn, name))
            return (int)i;
    return -1;
}

static void test_fast_unwind_finds_callers(void **state)
{
    (void)state;
    fast_skip = 0;
    chain_a();
    assert_true(fast_n >= 3);
    assert_true(pc_in(fast_pcs[0], chain_b, "chain_b"));
    assert_true(pc_in(fast_pcs[1], chain_a, "chain_a"));
    assert_true(pc_in(fast_pcs[2], (void (*)(void))test_fast_unwind_finds_callers,
                      "test_fast_unwind_finds_callers"));
}

static void test_fast_unwind_skips_frames(void **state)
{
    (void)state;
    fast_skip = 1;
    chain_a();
    assert_true(fast_n >= 2);
    assert_true(pc_in(fast_pcs[0], chain_a, "chain_a"));
}

static void test_fast_unwind_respects_max(void **state)
{
    (void)state;
    fast_skip = 0;
    for (fast_max = 0; fast_max <= 2; fast_max++) {
        fast_pcs[fast_max] = 0;
        chain_a();
        assert_int_equal(fast_n, fast_max);
        assert_int_equal(fast_pcs[fast_max], 0);
    }
    fast_max = MAX_FRAMES;
}

static void *thread_chain(void *arg)
{
    (void)arg;
    fast_skip = 0;
    chain_a();
    return NULL;
}

static void test_fast_unwind_in_thread(void **state)
{
    pthread_t t;

    (void)state;
    fast_n = 0;
    assert_int_equal(pthread_create(&t, NULL, thread_chain, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(fast_n >= 3);
    assert_true(pc_in(fast_pcs[0], chain_b, "chain_b"));
    assert_true(pc_in(fast_pcs[1], chain_a, "chain_a"));
    assert_true(pc_in(fast_pcs[2], (void (*)(void))thread_chain, "thread_chain"));
}

/* The fast paths' key-only walk and the general path's capture must give one stack one key
 * (else every fast-path stack lookup misses); different stacks, different keys. */
#define KEY_FRAMES 12u
struct keys {
    uint64_t walk, fast;
    unsigned walk_n, fast_n;
};

#if HWT_ARCH_HAVE_FRAMELESS
/* As malloc reads its caller: a frameless leaf, from the registers. */
HWT_ARCH_FRAMELESS static struct hwt_caller caller_from_registers(void)
{
    struct hwt_caller c;
    hwt_arch_entry_caller(&c.pc, &c.fp);
    return c;
}
#endif

__attribute__((noipa)) static void key_leaf(struct keys *k)
{
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t lo, hi, pcs[KEY_FRAMES];
    assert_true(hwt_unwind_stack_bounds(fp, &lo, &hi));
    /* the caller of key_leaf, as an entry point with a frame reads its own */
    struct hwt_caller c = hwt_caller_of_record(fp);
#if HWT_ARCH_HAVE_FRAMELESS
    /* a frameless entry point reads the same for its caller from x30 and x29 */
    struct hwt_caller r = caller_from_registers();
    assert_true(r.fp == fp);
    assert_true(pc_in(r.pc, (void (*)(void))key_leaf, "key_leaf"));
#endif
    k->walk_n = hwt_unwind_caller_key(c, lo, hi - 2 * sizeof(uintptr_t), KEY_FRAMES,
                                      hwt_unwind_key_constants, &k->walk);
    k->fast_n = hwt_unwind_caller(c, pcs, KEY_FRAMES, HWT_UNWIND_KEY_SEED, &k->fast, NULL);
    keep_frame();
    sink++; /* no tail call */
}

__attribute__((noipa)) static void key_via_a(struct keys *k)
{
    key_leaf(k);
    keep_frame();
    sink++;
}

__attribute__((noipa)) static void key_via_b(struct keys *k)
{
    key_leaf(k);
    keep_frame();
    sink++;
}

#if HWT_ARCH_HAVE_FRAMELESS
/* The key of the stack above this function, walked from x30 and x29 copied out first
 * (keys[0]) and in place (keys[1], hwt_unwind_entry_key: the frameless entry points'
 * walk), with their frame counts. No call in between: both read the same two registers. */
__attribute__((noipa)) static void entry_keys(uintptr_t lo, uintptr_t last, uint64_t keys[2],
                                              unsigned n[2])
{
    struct hwt_caller c;
    hwt_arch_entry_caller(&c.pc, &c.fp);
    n[0] = hwt_unwind_caller_key(c, lo, last, KEY_FRAMES, hwt_unwind_key_constants, &keys[0]);
    n[1] = hwt_unwind_entry_key(lo, last, KEY_FRAMES, hwt_unwind_key_constants, &keys[1]);
}
#endif

static void test_entry_key_matches_the_copied_callers(void **state)
{
    (void)state;
#if HWT_ARCH_HAVE_FRAMELESS
    uintptr_t lo, hi;
    assert_true(hwt_unwind_stack_bounds((uintptr_t)__builtin_frame_address(0), &lo, &hi));
    uint64_t keys[2] = {1, 2};
    unsigned n[2] = {0, 0};
    entry_keys(lo, hi - 2 * sizeof(uintptr_t), keys, n);
    assert_true(n[0] > 2); /* the walk went through the records above, not only x30 */
    assert_int_equal(n[1], n[0]);
    assert_true(keys[1] == keys[0]);
#else
    skip();
#endif
}

static void *thread_keys(void *arg)
{
    key_via_a(arg);
    return NULL;
}

static void test_walk_key_matches_capture(void **state)
{
    struct keys a, b, t;
    pthread_t th;

    (void)state;
    key_via_a(&a);
    key_via_b(&b);
    assert_int_equal(pthread_create(&th, NULL, thread_keys, &t), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(a.fast_n >= 3);
    assert_int_equal(a.walk_n, a.fast_n);
    assert_true(a.walk == a.fast);
    assert_int_equal(b.walk_n, b.fast_n);
    assert_true(b.walk == b.fast);
    assert_int_equal(t.walk_n, t.fast_n);
    assert_true(t.walk == t.fast);
    assert_true(a.walk != b.walk); /* one frame differs */
    assert_true(a.walk != t.walk);
}

/* The readable mapping holding an address, from /proc/self/maps. */
struct mapping_of {
    uintptr_t addr, lo, hi;
};

static bool find_mapping(const struct hwt_mapping *m, void *arg)
{
    struct mapping_of *q = arg;
    if (q->addr < m->start || q->addr >= m->end)
        return true;
    if (m->readable) {
        q->lo = m->start;
        q->hi = m->end;
    }
    return false;
}

/* In a thread: the stack bounds from a frame must hold the frame and lie inside the
 * readable mapping that holds it; where the kernel can check a range here, they are the
 * thread block's (the frame's page up to the thread pointer), not the whole mapping read
 * from /proc/self/maps. */
static void *thread_bounds(void *arg)
{
    int *ok = arg;
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t lo = 0, hi = 0;
    struct mapping_of m = {.addr = fp};
    *ok = 0;
    if (!hwt_unwind_stack_bounds(fp, &lo, &hi) || !hwt_maps_foreach(find_mapping, &m))
        return NULL;
    uintptr_t page = fp & ~(uintptr_t)4095;
    bool block = hwt_os_readable(page, 1);
    if (lo <= fp && fp < hi && m.lo <= lo && hi <= m.hi &&
        (!block || (lo == page && hi == (uintptr_t)__builtin_thread_pointer())))
        *ok = 1;
    else
        print_error("fp %#lx bounds [%#lx, %#lx) mapping [%#lx, %#lx) block check %d\n",
                    (unsigned long)fp, (unsigned long)lo, (unsigned long)hi, (unsigned long)m.lo,
                    (unsigned long)m.hi, block);
    return NULL;
}

static void run_thread_bounds(pthread_attr_t *attr, const char *what)
{
    pthread_t t;
    int ok = 0;
    assert_int_equal(pthread_create(&t, attr, thread_bounds, &ok), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (!ok)
        fail_msg("thread with %s: wrong stack bounds", what);
}

static void test_thread_stack_bounds(void **state)
{
    (void)state;
    pthread_attr_t attr;
    run_thread_bounds(NULL, "the default stack");
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, 256 << 10), 0);
    assert_int_equal(pthread_attr_setguardsize(&attr, 0), 0);
    run_thread_bounds(&attr, "a small stack and no guard");
    size_t size = 1 << 20;
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(stack != MAP_FAILED);
    assert_int_equal(pthread_attr_setstack(&attr, stack, size), 0);
    run_thread_bounds(&attr, "a stack of the program's");
    assert_int_equal(pthread_attr_destroy(&attr), 0);
    munmap(stack, size);
}

/* The kernel's readability check: a stack page is, a PROT_NONE page and a range that runs
 * into one are not. */
static void test_readable_stops_at_unreadable_page(void **state)
{
    (void)state;
    char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m + 2 * 4096, 4096, PROT_NONE), 0);
    if (!hwt_os_readable((uintptr_t)m, 4096)) {
        /* QEMU's user mode has no process_vm_readv: nothing is ever readable to it */
        assert_false(hwt_os_readable((uintptr_t)m + 2 * 4096, 1));
    } else {
        assert_true(hwt_os_readable((uintptr_t)m, 2 * 4096));
        assert_true(hwt_os_readable((uintptr_t)m + 100, 2 * 4096 - 100));
        assert_false(hwt_os_readable((uintptr_t)m + 2 * 4096, 1));
        assert_false(hwt_os_readable((uintptr_t)m + 4096, 2 * 4096));
        /* a range longer than one copy */
        assert_false(hwt_os_readable((uintptr_t)m, 64 << 10));
    }
    munmap(m, 3 * 4096);
}

/* The stack from c = {0x400090, rec}, rec a chain of three records of which the one at index
 * at holds next and pc (the others link up, the last ends with 0): both walks give n frames
 * and one key. */
static unsigned fake_chain(unsigned at, uintptr_t next, uintptr_t pc, uint64_t *key)
{
    uintptr_t rec[6], lo, hi, pcs[KEY_FRAMES];
    uint64_t walk;
    rec[0] = (uintptr_t)&rec[2];
    rec[1] = 0x4000a0;
    rec[2] = (uintptr_t)&rec[4];
    rec[3] = 0x4000b0;
    rec[4] = 0;
    rec[5] = 0x4000c0;
    rec[2 * at] = next;
    rec[2 * at + 1] = pc;
    assert_true(hwt_unwind_stack_bounds((uintptr_t)rec, &lo, &hi));
    struct hwt_caller c = {0x400090, (uintptr_t)rec};
    unsigned walk_n = hwt_unwind_caller_key(c, lo, hi - 2 * sizeof(uintptr_t), KEY_FRAMES,
                                            hwt_unwind_key_constants, &walk);
    unsigned n = hwt_unwind_caller(c, pcs, KEY_FRAMES, HWT_UNWIND_KEY_SEED, key, NULL);
    assert_int_equal(walk_n, n);
    assert_true(walk == *key);
    assert_true(pcs[0] == 0x400090);
    sink++;
    return n;
}

/* On a miss of the thread's stack cache the general path stores the frames with the fast
 * paths' walk (hwt_unwind_caller_walk): the frames hwt_unwind_caller stores, also when a zero
 * return address ends them there, and the key of the fast paths' walk, which goes on. */
static void test_stored_walk_matches_capture(void **state)
{
    (void)state;
    for (unsigned zero = 0; zero < 2; zero++) {
        uintptr_t rec[6], lo, hi, pcs[KEY_FRAMES], got[KEY_FRAMES];
        uint64_t key, walk, fast;
        unsigned stored = 0, more = 1;
        rec[0] = (uintptr_t)&rec[2];
        rec[1] = 0x4000a0;
        rec[2] = (uintptr_t)&rec[4];
        rec[3] = zero ? 0 : 0x4000b0;
        rec[4] = 0;
        rec[5] = 0x4000c0;
        assert_true(hwt_unwind_stack_bounds((uintptr_t)rec, &lo, &hi));
        uintptr_t last = hi - 2 * sizeof(uintptr_t);
        struct hwt_caller c = {0x400090, (uintptr_t)rec};
        unsigned n = hwt_unwind_caller(c, pcs, KEY_FRAMES, HWT_UNWIND_KEY_SEED, &key, NULL);
        unsigned walk_n = hwt_unwind_caller_walk(c, lo, last, KEY_FRAMES, hwt_unwind_key_constants,
                                                 &walk, got, &stored, &more);
        hwt_unwind_caller_key(c, lo, last, KEY_FRAMES, hwt_unwind_key_constants, &fast);
        assert_int_equal(n, zero ? 2 : 4);
        assert_int_equal(stored, n);
        assert_memory_equal(got, pcs, n * sizeof(uintptr_t));
        assert_int_equal(walk_n, 4);
        assert_true(walk == fast);
        assert_int_equal(more, 0);
        sink++;
    }
}

/* A stack cut at the depth limit counts the frames it leaves out, both general walks alike,
 * and the key is the one of the frames kept. */
static void test_cut_stack_counts_the_rest(void **state)
{
    (void)state;
    uintptr_t rec[12], lo, hi, pcs[3], got[3];
    uint64_t key, walk, fast;
    unsigned stored = 0, more = 0, more_caller = 0;
    for (unsigned i = 0; i < 6; i++) {
        rec[2 * i] = i == 5 ? 0 : (uintptr_t)&rec[2 * i + 2];
        rec[2 * i + 1] = 0x400100 + 0x10 * i;
    }
    assert_true(hwt_unwind_stack_bounds((uintptr_t)rec, &lo, &hi));
    uintptr_t last = hi - 2 * sizeof(uintptr_t);
    struct hwt_caller c = {0x400090, (uintptr_t)rec};
    /* 7 frames: c.pc and the 6 records; 3 kept */
    unsigned n = hwt_unwind_caller(c, pcs, 3, HWT_UNWIND_KEY_SEED, &key, &more_caller);
    hwt_unwind_caller_walk(c, lo, last, 3, hwt_unwind_key_constants, &walk, got, &stored, &more);
    hwt_unwind_caller_key(c, lo, last, 3, hwt_unwind_key_constants, &fast);
    assert_int_equal(n, 3);
    assert_int_equal(stored, 3);
    assert_int_equal(more_caller, 4);
    assert_int_equal(more, 4);
    assert_true(walk == key && walk == fast);
    sink++;
}

/* Where the caller's frame pointer points, a "record" whose next word is neither 0 nor a
 * record above it is data in the register of code built without frame pointers: its
 * "return address" is data too and leaves the stack and its key alone, whatever it holds.
 * One that ends the chain with 0 counts, and so does a record reached by a link whatever it
 * holds for the next (its return address is real: into a caller without frame pointers). */
static void test_walk_drops_a_data_record(void **state)
{
    uint64_t k1, k2, k3, k4, k5, k6;
    uintptr_t below = (uintptr_t)&k1 - 4096;

    (void)state;
    assert_int_equal(fake_chain(0, 0x1234, 0x5555, &k1), 1);
    assert_int_equal(fake_chain(0, below, 0x6666, &k2), 1);
    assert_true(k1 == k2);
    assert_int_equal(fake_chain(0, 0, 0x5555, &k3), 2);
    assert_int_equal(fake_chain(0, 0, 0x6666, &k4), 2);
    assert_true(k3 != k4);
    assert_true(k3 != k1);
    assert_int_equal(fake_chain(2, 0x1234, 0x5555, &k5), 4);
    assert_int_equal(fake_chain(2, 0x1234, 0x6666, &k6), 4);
    assert_true(k5 != k6);
}

static void on_segv(int sig, siginfo_t *info, void *ucontext)
{
    (void)sig;
    (void)info;
    sig_n = hwt_unwind_signal(ucontext, sig_pcs, MAX_FRAMES, NULL);
    /* as a malloc inside a handler would: on the alternate stack, a second cached range */
    sig_fast_n = hwt_unwind_fast(sig_fast_pcs, MAX_FRAMES, 0);
    mprotect((void *)guard, guard_size, PROT_READ);
}

static void test_signal_unwind_from_fault(void **state)
{
    struct sigaction sa, old;
    stack_t alt = {0}, old_alt;
    void *alt_mem;
    int c, b, a;

    (void)state;
    guard_size = (size_t)sysconf(_SC_PAGESIZE);
    guard = mmap(NULL, guard_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(guard != MAP_FAILED);
    /* fault.c runs its handler on an alternate stack: do the same */
    alt_mem =
        mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(alt_mem != MAP_FAILED);
    alt.ss_sp = alt_mem;
    alt.ss_size = ALT_STACK_SIZE;
    assert_int_equal(sigaltstack(&alt, &old_alt), 0);
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);

    sig_n = sig_fast_n = 0;
    fault_a();
    /* back on the thread's stack: its cached range still serves */
    fast_skip = 0;
    chain_a();
    assert_true(pc_in(fast_pcs[0], chain_b, "chain_b"));

    sigaction(SIGSEGV, &old, NULL);
    sigaltstack(&old_alt, NULL);
    munmap(alt_mem, ALT_STACK_SIZE);
    munmap((void *)guard, guard_size);

    assert_true(sig_fast_n >= 1);
    assert_true(sig_n >= 3);
    c = find_frame(sig_pcs, sig_n, fault_c, "fault_c");
    b = find_frame(sig_pcs, sig_n, fault_b, "fault_b");
    a = find_frame(sig_pcs, sig_n, fault_a, "fault_a");
    assert_int_equal(c, 0); /* the faulting pc itself */
    assert_int_equal(b, 1);
    assert_int_equal(a, 2);
    assert_true(find_frame(sig_pcs, sig_n, (void (*)(void))test_signal_unwind_from_fault,
                           "test_signal_unwind_from_fault") == 3);
}

static void test_signal_unwind_through_leaf(void **state)
{
    struct sigaction sa, old;

    (void)state;
#if !defined(__aarch64__)
    skip(); /* the native fallback walk has no unwind tables to find a leaf's caller */
#endif
    guard_size = (size_t)sysconf(_SC_PAGESIZE);
    guard = mmap(NULL, guard_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(guard != MAP_FAILED);
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);

    sig_n = 0;
    leaf_caller();

    sigaction(SIGSEGV, &old, NULL);
    munmap((void *)guard, guard_size);

    assert_true(sig_n >= 3);
    assert_int_equal(find_frame(sig_pcs, sig_n, (void (*)(void))leaf_fault, "leaf_fault"), 0);
    assert_int_equal(find_frame(sig_pcs, sig_n, leaf_caller, "leaf_caller"), 1);
    assert_int_equal(find_frame(sig_pcs, sig_n, (void (*)(void))test_signal_unwind_through_leaf,
                                "test_signal_unwind_through_leaf"),
                     2);
}

static int group_setup(void **state)
{
    (void)state;
    hwt_unwind_init();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_unwind_finds_callers),
        cmocka_unit_test(test_fast_unwind_skips_frames),
        cmocka_unit_test(test_fast_unwind_respects_max),
        cmocka_unit_test(test_fast_unwind_in_thread),
        cmocka_unit_test(test_walk_key_matches_capture),
        cmocka_unit_test(test_entry_key_matches_the_copied_callers),
        cmocka_unit_test(test_thread_stack_bounds),
        cmocka_unit_test(test_readable_stops_at_unreadable_page),
        cmocka_unit_test(test_stored_walk_matches_capture),
        cmocka_unit_test(test_cut_stack_counts_the_rest),
        cmocka_unit_test(test_walk_drops_a_data_record),
        cmocka_unit_test(test_signal_unwind_from_fault),
        cmocka_unit_test(test_signal_unwind_through_leaf),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
