/* SPDX-License-Identifier: MIT */
/* The thread cache's stack cache: two ways a set, so two stacks whose keys fall in one set
 * (a loop's malloc and free sites) are both kept. A new cache's stack bounds. A bin that
 * keeps being refilled grows, up to its cap. A fork child adopts a cache caught half made,
 * and turns away a stale entry naming a slot its own bin held. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc_stack.h"
#include "init.h"
#include "options.h"
#include "size_class.h"
#include "slab.h"
#include "tcache.h"

static struct hwt_tcache tc; /* zeroed: an empty stack cache */

/* A stack key (nonzero, as hwt_unwind_key_end makes them but for odds of 2^-64) in set
 * `set`, told apart by n. */
static uint64_t key_in(unsigned set, uint64_t n)
{
    return (uint64_t)set << (64 - HWT_TCACHE_STACK_SET_BITS) | n << 1 | 1;
}

static void test_two_stacks_of_one_set_both_stay(void **state)
{
    (void)state;
    memset(&tc, 0, sizeof(tc));
    uint64_t a = key_in(5, 1), b = key_in(5, 2);
    uint64_t id = 0;
    assert_false(hwt_tcache_stack_find(&tc, a, &id));
    hwt_tcache_stack_put(&tc, a, 11);
    hwt_tcache_stack_put(&tc, b, 22);
    /* in turns, as a malloc/free loop asks: each is found, neither evicts the other */
    for (int i = 0; i < 4; i++) {
        assert_true(hwt_tcache_stack_find(&tc, a, &id));
        assert_int_equal(id, 11);
        assert_true(hwt_tcache_stack_find(&tc, b, &id));
        assert_int_equal(id, 22);
    }
}

static void test_third_stack_evicts_the_oldest(void **state)
{
    (void)state;
    memset(&tc, 0, sizeof(tc));
    uint64_t a = key_in(9, 1), b = key_in(9, 2), c = key_in(9, 3), other = key_in(10, 1);
    uint64_t id = 0;
    hwt_tcache_stack_put(&tc, other, 99);
    hwt_tcache_stack_put(&tc, a, 11);
    hwt_tcache_stack_put(&tc, b, 22);
    hwt_tcache_stack_put(&tc, c, 33);
    assert_false(hwt_tcache_stack_find(&tc, a, &id));
    assert_true(hwt_tcache_stack_find(&tc, b, &id));
    assert_int_equal(id, 22);
    assert_true(hwt_tcache_stack_find(&tc, c, &id));
    assert_int_equal(id, 33);
    /* another set is untouched */
    assert_true(hwt_tcache_stack_find(&tc, other, &id));
    assert_int_equal(id, 99);
}

/* A new thread's cache: its stack bounds, which only a cache that captures stacks looks up
 * (/proc/self/maps for some threads). */
static void *new_cache_bounds(void *arg)
{
    uintptr_t *room = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    assert_non_null(c);
    room[0] = c->stack_lo;
    room[1] = c->stack_last - c->stack_lo;
    hwt_tcache_exit(c);
    return NULL;
}

static void cache_bounds_with(enum hwt_onoff stacks, uintptr_t *room)
{
    enum hwt_onoff was = hwt_opts.stacktrace;
    pthread_t t;
    hwt_opts.stacktrace = stacks;
    assert_int_equal(pthread_create(&t, NULL, new_cache_bounds, room), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    hwt_opts.stacktrace = was;
}

static void test_stack_bounds_only_when_stacks_are_captured(void **state)
{
    (void)state;
    uintptr_t on[2], off[2];
    hwt_init_ensure();
    cache_bounds_with(HWT_ON, on);
    cache_bounds_with(HWT_OFF, off);
    assert_true(on[0] != 0 && on[1] != 0);
    if (off[0] != 0 || off[1] != 0)
        fail_msg("a cache without stacks looked its stack's bounds up: [%#lx, +%#lx)",
                 (unsigned long)off[0], (unsigned long)off[1]);
}

/* A new cache's bins of 32, 256 and 1024-byte objects refilled and drained again and
 * again, as a thread that allocates in bursts longer than its bins: each max before and
 * after. */
static const size_t grown_sizes[3] = {32, 256, 1024};

static void *bin_max_over_refills(void *arg)
{
    uint32_t(*max)[2] = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    assert_non_null(c);
    for (unsigned k = 0; k < 3; k++) {
        unsigned cls = hwt_size_class_of(grown_sizes[k]);
        struct hwt_tcache_bin *bin = &c->bins[cls];
        max[k][0] = hwt_tcache_bin_max(c, cls);
        for (int i = 0; i < 100; i++) {
            assert_true(hwt_tcache_refill(c, bin, cls));
            while (hwt_tcache_bin_count(c, cls) > 0)
                hwt_tcache_drain(c, bin, cls);
        }
        max[k][1] = hwt_tcache_bin_max(c, cls);
    }
    hwt_tcache_exit(c);
    return NULL;
}

static void test_refilled_bin_grows_to_its_cap(void **state)
{
    (void)state;
    uint32_t max[3][2];
    pthread_t t;
    hwt_init_ensure();
    assert_int_equal(pthread_create(&t, NULL, bin_max_over_refills, max), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    /* classes up to 256 B start at 32 slots and grow by a batch a refill, to 32 KiB of
     * slots (at least 128); up to 4 KiB, from 16 to 32 */
    assert_int_equal(max[0][0], 32);
    assert_int_equal(max[0][1], 1024);
    assert_int_equal(max[1][0], 32);
    assert_int_equal(max[1][1], 128);
    assert_int_equal(max[2][0], 16);
    assert_int_equal(max[2][1], 32);
}

/* Every bin of a new cache, after refills, drains and a flush: empty means top at the
 * base, and the entry below the base is still all zero, which malloc's pop takes for the
 * end of the bin (tcache.h). A write below a base would hand address 0 or a stale slot to
 * malloc's fast path; returns how many bins broke either. */
static void *bins_keep_their_floor(void *arg)
{
    unsigned *broken = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    assert_non_null(c);
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        struct hwt_tcache_bin *bin = &c->bins[cls];
        for (int i = 0; i < 3; i++) {
            assert_true(hwt_tcache_refill(c, bin, cls));
            assert_true(hwt_tcache_bin_count(c, cls) > 0);
            if (i < 2) /* a refill takes an empty bin; the last is left for the flush */
                while (hwt_tcache_bin_count(c, cls) > 0)
                    hwt_tcache_drain(c, bin, cls);
        }
    }
    hwt_tcache_flush(c);
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        const struct hwt_slab_ref *base = hwt_tcache_bin_base(c, cls);
        if (c->bins[cls].top != base || base[-1].addr != 0 || base[-1].slot != NULL)
            (*broken)++;
        struct hwt_slab_ref popped;
        struct hwt_slab_ref *top = c->bins[cls].top;
        hwt_tcache_pop(&top, &popped); /* an empty bin's pop: address 0 */
        if (popped.addr != 0 || top != base - 1)
            (*broken)++;
    }
    hwt_tcache_exit(c);
    return NULL;
}

static void test_empty_bins_pop_address_zero(void **state)
{
    (void)state;
    unsigned broken = 0;
    pthread_t t;
    hwt_init_ensure();
    assert_int_equal(pthread_create(&t, NULL, bins_keep_their_floor, &broken), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(broken, 0);
}

/* A caller the fast walk cannot follow (no frame record: code built without frame
 * pointers) is captured by the general path's own walk; its key must be the one the fast
 * path computes from the cache's seed, or every later call misses the cache. */
static __attribute__((noinline)) void call_site(void)
{
    __asm__ volatile("");
}

static void *fast_path_finds_general_capture(void *arg)
{
    bool *found = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    assert_non_null(c);
    assert_true(c->stack_key_constants[0] != HWT_UNWIND_KEY_SEED); /* a fresh seed */
    struct hwt_caller caller = {.pc = (uintptr_t)call_site + 4, .fp = 0};
    uint32_t captured = hwt_alloc_stack_capture(c, caller);
    assert_true(captured != 0);
    uint64_t id = 0;
    found[0] = hwt_alloc_fast_stack(c, caller, HWT_STACK_DEFAULT_DEPTH, &id);
    found[1] = id == captured;
    hwt_tcache_exit(c);
    return NULL;
}

static void test_fast_path_finds_a_frameless_callers_stack(void **state)
{
    (void)state;
    bool found[2] = {false, false};
    pthread_t t;
    hwt_init_ensure();
    enum hwt_onoff was = hwt_opts.stacktrace;
    hwt_opts.stacktrace = HWT_ON;
    assert_int_equal(pthread_create(&t, NULL, fast_path_finds_general_capture, found), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    hwt_opts.stacktrace = was;
    assert_true(found[0]);
    assert_true(found[1]);
}

/* A thread whose cache is on the list of caches but none of its bins sized (limit 0), as a
 * fork caught a new cache between joining the list and its bins' sizes until the sizes
 * were set first. It holds that state until told to go. */
struct torn {
    int ready, go;
};

static void *torn_cache_thread(void *arg)
{
    struct torn *t = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    struct hwt_slab_ref *limits[HWT_NUM_CLASSES];
    assert_non_null(c);
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++) {
        limits[cls] = c->bins[cls].limit;
        c->bins[cls].limit = NULL;
    }
    __atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&t->go, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    for (unsigned cls = 0; cls < HWT_NUM_CLASSES; cls++)
        c->bins[cls].limit = limits[cls];
    hwt_tcache_exit(c);
    return NULL;
}

/* The child adopts every cache of the parent's other threads, whatever state the fork
 * caught them in: it must read no entry outside a bin's storage (a bin's limit of 0 made
 * it read on to the end of the metadata mapping and die there), then allocate in every
 * class. */
static void test_fork_adopts_a_cache_caught_half_made(void **state)
{
    (void)state;
    struct torn t = {0, 0};
    pthread_t th;
    hwt_init_ensure();
    assert_int_equal(pthread_create(&th, NULL, torn_cache_thread, &t), 0);
    while (!__atomic_load_n(&t.ready, __ATOMIC_ACQUIRE))
        sched_yield();
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t size = 16; size <= HWT_SMALL_MAX; size *= 2) {
            void *volatile p = malloc(size);
            if (p == NULL)
                _exit(2);
            free(p);
        }
        _exit(0);
    }
    int status = -1;
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    __atomic_store_n(&t.go, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A thread whose cache's bin of cls holds, past its count (a stale entry, as a pop leaves
 * one), the slot *t->slot, until told to go. */
struct stale {
    unsigned cls;
    struct hwt_slab_ref slot;
    int ready, go;
};

static void *stale_entry_thread(void *arg)
{
    struct stale *t = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    assert_non_null(c);
    hwt_tcache_bin_base(c, t->cls)[0] = t->slot; /* the bin stays empty: top at its base */
    __atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&t->go, __ATOMIC_ACQUIRE)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    hwt_tcache_bin_base(c, t->cls)[0] = (struct hwt_slab_ref){0, NULL};
    hwt_tcache_exit(c);
    return NULL;
}

/* In a forking thread whose bin holds a slot that another thread's bin names in a stale
 * entry: in the child, the slot must have one owner, free in its span or in the bin, not
 * both (the adoption giving it back while the bin still held it would hand it out twice).
 * Writes the child's wait status to arg. */
static void *fork_with_a_slot_named_twice(void *arg)
{
    int *status = arg;
    struct hwt_tcache *c = hwt_tcache_create();
    assert_non_null(c);
    struct stale t = {.cls = hwt_size_class_of(32)};
    assert_true(hwt_tcache_refill(c, &c->bins[t.cls], t.cls));
    t.slot = c->bins[t.cls].top[-1]; /* in this thread's bin, within its count */
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stale_entry_thread, &t), 0);
    while (!__atomic_load_n(&t.ready, __ATOMIC_ACQUIRE))
        sched_yield();
    pid_t pid = fork();
    if (pid == 0) {
        struct hwt_span *s = hwt_slab_span_of(t.slot.addr);
        uint32_t idx = s != NULL ? hwt_slab_index(s, t.slot.addr) : 0;
        int owners = s != NULL && (s->free_bits[idx / 64] >> (idx % 64) & 1);
        for (const struct hwt_slab_ref *e = hwt_tcache_bin_base(c, t.cls); e < c->bins[t.cls].top;
             e++)
            owners += e->addr == t.slot.addr;
        _exit(owners);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, status, 0), pid);
    __atomic_store_n(&t.go, 1, __ATOMIC_RELEASE);
    assert_int_equal(pthread_join(th, NULL), 0);
    hwt_tcache_exit(c);
    return NULL;
}

static void test_fork_child_turns_away_a_stale_entry_of_its_own_slot(void **state)
{
    (void)state;
    int status = -1;
    pthread_t th;
    hwt_init_ensure();
    assert_int_equal(pthread_create(&th, NULL, fork_with_a_slot_named_twice, &status), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1); /* one owner */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_stacks_of_one_set_both_stay),
        cmocka_unit_test(test_third_stack_evicts_the_oldest),
        cmocka_unit_test(test_stack_bounds_only_when_stacks_are_captured),
        cmocka_unit_test(test_refilled_bin_grows_to_its_cap),
        cmocka_unit_test(test_empty_bins_pop_address_zero),
        cmocka_unit_test(test_fast_path_finds_a_frameless_callers_stack),
        cmocka_unit_test(test_fork_adopts_a_cache_caught_half_made),
        cmocka_unit_test(test_fork_child_turns_away_a_stale_entry_of_its_own_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
