/* SPDX-License-Identifier: MIT */
/* Unit tests of the stack depot: deduplication, round trips of the frame coding, threads and a
 * full pool. The last tests fill the frame table and then the pool for good, so they run last. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "stackdepot.h"

#define THREAD_STACKS 2000u
/* More distinct frames than the depot's frame table holds, so later frames are coded as deltas */
#define TABLE_OVERFLOW_PCS (1u << 15)
/* The first thread to store a stack (test_same_stack_same_id runs first): its stacks need no
 * alias record. */
#define FIRST_TID 7u
/* A 12-frame stack of the first thread whose frames are all known to the frame table costs at
 * most this much: a head of 4 frame codes, a tail of 8, the pair of their ids */
#define SHORT_STACK_BYTES 40u
/* ... and this much when its outer frames are those of a stored stack: a head and the pair */
#define SHARED_TAIL_BYTES 20u
/* An alias: the same frames from another thread */
#define ALIAS_BYTES 12u

static void make_stack(uintptr_t *pcs, unsigned n, uintptr_t seed)
{
    for (unsigned i = 0; i < n; i++)
        pcs[i] = 0x400000u + seed * 0x1000u + i * 4u;
}

static void test_same_stack_same_id(void **state)
{
    uintptr_t pcs[8];
    uint32_t a, b;

    (void)state;
    make_stack(pcs, 8, 1);
    a = hwt_stackdepot_put(FIRST_TID, pcs, 8);
    b = hwt_stackdepot_put(FIRST_TID, pcs, 8);
    assert_int_not_equal(a, 0);
    assert_int_equal(a, b);
}

static void test_distinct_stacks_distinct_ids(void **state)
{
    uintptr_t pcs[8];
    uint32_t a, b, c;

    (void)state;
    make_stack(pcs, 8, 2);
    a = hwt_stackdepot_put(7, pcs, 8);
    b = hwt_stackdepot_put(8, pcs, 8); /* other thread, same frames */
    c = hwt_stackdepot_put(7, pcs, 7); /* shorter */
    pcs[3]++;
    assert_int_not_equal(a, b);
    assert_int_not_equal(a, c);
    assert_int_not_equal(b, c);
    assert_int_not_equal(hwt_stackdepot_put(7, pcs, 8), a);
}

static void test_get_round_trip(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES], out[HWT_STACK_MAX_FRAMES];
    uint32_t id, tid = 0;

    (void)state;
    make_stack(pcs, HWT_STACK_MAX_FRAMES, 3);
    id = hwt_stackdepot_put(1234, pcs, 5);
    assert_int_equal(hwt_stackdepot_get(id, &tid, out, HWT_STACK_MAX_FRAMES), 5);
    assert_int_equal(tid, 1234);
    assert_memory_equal(out, pcs, 5 * sizeof(uintptr_t));
    /* a shorter buffer gets the innermost frames */
    assert_int_equal(hwt_stackdepot_get(id, &tid, out, 2), 2);
    assert_memory_equal(out, pcs, 2 * sizeof(uintptr_t));
    /* the deepest stack the depot takes */
    id = hwt_stackdepot_put(1, pcs, HWT_STACK_MAX_FRAMES);
    assert_int_equal(hwt_stackdepot_get(id, NULL, out, HWT_STACK_MAX_FRAMES), HWT_STACK_MAX_FRAMES);
    assert_memory_equal(out, pcs, sizeof(pcs));
}

/* A stack cut at its depth limit keeps the count of the frames left out: a part of what
 * makes it distinct, on both threads' records, and capped. */
static void test_cut_stack_keeps_its_count(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES], out[HWT_STACK_MAX_FRAMES];
    uint32_t whole, cut, other, tid = 0;

    (void)state;
    make_stack(pcs, 12, 4100);
    whole = hwt_stackdepot_put(1234, pcs, 12);
    cut = hwt_stackdepot_put_cached(NULL, 1234, pcs, 12, 7);
    assert_int_not_equal(whole, 0);
    assert_int_not_equal(cut, 0);
    assert_int_not_equal(whole, cut);
    assert_int_equal(hwt_stackdepot_more(whole), 0);
    assert_int_equal(hwt_stackdepot_more(cut), 7);
    assert_int_equal(hwt_stackdepot_put_cached(NULL, 1234, pcs, 12, 7), cut);
    assert_int_equal(hwt_stackdepot_get(cut, &tid, out, HWT_STACK_MAX_FRAMES), 12);
    assert_memory_equal(out, pcs, 12 * sizeof(uintptr_t));
    other = hwt_stackdepot_put_cached(NULL, 4321, pcs, 12, 7); /* an alias */
    assert_int_equal(hwt_stackdepot_more(other), 7);
    assert_int_equal(hwt_stackdepot_get(other, &tid, out, HWT_STACK_MAX_FRAMES), 12);
    assert_int_equal(tid, 4321);
    assert_int_equal(hwt_stackdepot_more(hwt_stackdepot_put_cached(NULL, 1234, pcs, 12, 1u << 30)),
                     HWT_STACK_MORE_MAX);
    assert_int_equal(hwt_stackdepot_more(0), 0);
}

static void assert_round_trip(uint32_t tid, const uintptr_t *pcs, unsigned n)
{
    uintptr_t out[HWT_STACK_MAX_FRAMES];
    uint32_t id, got_tid = 0;

    id = hwt_stackdepot_put(tid, pcs, n);
    assert_int_not_equal(id, 0);
    assert_int_equal(hwt_stackdepot_put(tid, pcs, n), id);
    assert_int_equal(hwt_stackdepot_get(id, &got_tid, out, HWT_STACK_MAX_FRAMES), n);
    assert_int_equal(got_tid, tid);
    assert_memory_equal(out, pcs, n * sizeof(uintptr_t));
}

/* Frames jump between modules mapped far apart, both ways, and back. */
static const uintptr_t far_frames[] = {
    0x400123u,
    (uintptr_t)0xffffb7e01234u,
    (uintptr_t)0xaaaaaaab0010u,
    0x400127u,
    (uintptr_t)0xffffb7e01238u,
    (uintptr_t)0xfffffffffffffff0u,
    0,
    1,
    (uintptr_t)0x8000000000000000u,
    (uintptr_t)0x7fffffffffffffffu,
    (uintptr_t)0xffffffffffffffffu,
    (uintptr_t)0x0000ffffffffffffu,
};

static void test_frames_across_modules(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
    unsigned n = sizeof(far_frames) / sizeof(far_frames[0]);

    (void)state;
    assert_round_trip(31, far_frames, n);
    /* the deepest stack, every frame far from the one before */
    for (unsigned i = 0; i < HWT_STACK_MAX_FRAMES; i++)
        pcs[i] = far_frames[i % n] ^ ((uintptr_t)i << 40);
    assert_round_trip(32, pcs, HWT_STACK_MAX_FRAMES);
    /* deeper than the depot keeps: the innermost frames */
    assert_int_equal(hwt_stackdepot_get(hwt_stackdepot_put(32, pcs, HWT_STACK_MAX_FRAMES + 5), NULL,
                                        pcs, HWT_STACK_MAX_FRAMES),
                     HWT_STACK_MAX_FRAMES);
}

static void test_known_frames_cost_little(void **state)
{
    uintptr_t pcs[12], rev[12];
    uint64_t stacks, bytes0, bytes1;

    (void)state;
    make_stack(pcs, 12, 6);
    for (unsigned i = 0; i < 12; i++)
        rev[i] = pcs[11 - i];
    assert_round_trip(FIRST_TID, pcs, 12);
    /* the same frames in another order: a new stack, none of them a new frame */
    hwt_stackdepot_usage(&stacks, &bytes0);
    assert_round_trip(FIRST_TID, rev, 12);
    hwt_stackdepot_usage(&stacks, &bytes1);
    assert_true(bytes1 - bytes0 <= SHORT_STACK_BYTES);
    /* another innermost frame, the same callers: the outer frames are shared */
    rev[0] = pcs[1];
    assert_round_trip(FIRST_TID, rev, 12);
    hwt_stackdepot_usage(&stacks, &bytes0);
    assert_true(bytes0 - bytes1 <= SHARED_TAIL_BYTES);
    /* and the stack is still told apart from the one sharing its callers */
    assert_int_not_equal(hwt_stackdepot_put(FIRST_TID, rev, 12),
                         hwt_stackdepot_put(FIRST_TID, pcs, 12));
    /* the same stack from another thread: an alias of it, no frames */
    assert_round_trip(700001, rev, 12);
    hwt_stackdepot_usage(&stacks, &bytes1);
    assert_true(bytes1 - bytes0 <= ALIAS_BYTES);
}

static void test_other_thread_shares_frames(void **state)
{
    uintptr_t pcs[12], out[12];
    uint32_t a, b, tid = 0;
    uint64_t stacks0, stacks1, bytes0, bytes1;

    (void)state;
    make_stack(pcs, 12, 7);
    a = hwt_stackdepot_put(100, pcs, 12);
    hwt_stackdepot_usage(&stacks0, &bytes0);
    b = hwt_stackdepot_put(4000000, pcs, 12);
    hwt_stackdepot_usage(&stacks1, &bytes1);
    assert_int_not_equal(a, 0);
    assert_int_not_equal(b, 0);
    assert_int_not_equal(a, b);
    assert_int_equal(stacks1, stacks0 + 1);
    assert_true(bytes1 - bytes0 <= ALIAS_BYTES);
    assert_int_equal(hwt_stackdepot_put(100, pcs, 12), a);
    assert_int_equal(hwt_stackdepot_put(4000000, pcs, 12), b);
    assert_int_equal(hwt_stackdepot_get(b, &tid, out, 12), 12);
    assert_int_equal(tid, 4000000);
    assert_memory_equal(out, pcs, sizeof(pcs));
    assert_int_equal(hwt_stackdepot_get(a, &tid, out, 12), 12);
    assert_int_equal(tid, 100);
    /* a shorter stack of the same frames is another stack */
    assert_int_not_equal(hwt_stackdepot_put(4000000, pcs, 11), b);
}

static void test_empty_and_unknown(void **state)
{
    uintptr_t pcs[4] = {1, 2, 3, 4};
    uint32_t tid = 99;

    (void)state;
    assert_int_equal(hwt_stackdepot_put(1, pcs, 0), 0);
    assert_int_equal(hwt_stackdepot_get(0, &tid, pcs, 4), 0);
    assert_int_equal(hwt_stackdepot_get(UINT32_MAX, &tid, pcs, 4), 0);
    assert_int_equal(hwt_stackdepot_get(0x7fffffu, &tid, pcs, 4), 0); /* never handed out */
    assert_int_equal(tid, 99);
}

static void test_usage_counts_stacks(void **state)
{
    uintptr_t pcs[4];
    uint64_t stacks0, bytes0, stacks1, bytes1;

    (void)state;
    hwt_stackdepot_usage(&stacks0, &bytes0);
    make_stack(pcs, 4, 4);
    hwt_stackdepot_put(5, pcs, 4);
    hwt_stackdepot_put(5, pcs, 4);
    hwt_stackdepot_usage(&stacks1, &bytes1);
    assert_int_equal(stacks1, stacks0 + 1);
    assert_true(bytes1 >= bytes0 + 4 * sizeof(uintptr_t));
}

struct put_job {
    uint32_t tid;
    uint32_t ids[THREAD_STACKS];
};

static void *put_many(void *arg)
{
    struct put_job *job = arg;
    uintptr_t pcs[6];

    for (unsigned i = 0; i < THREAD_STACKS; i++) {
        make_stack(pcs, 6, 1000 + i);
        job->ids[i] = hwt_stackdepot_put(job->tid, pcs, 6);
    }
    return NULL;
}

static void test_concurrent_puts_agree(void **state)
{
    static struct put_job jobs[2];
    pthread_t threads[2];
    uintptr_t pcs[6], out[6];

    (void)state;
    for (unsigned t = 0; t < 2; t++) {
        jobs[t].tid = 42;
        assert_int_equal(pthread_create(&threads[t], NULL, put_many, &jobs[t]), 0);
    }
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    for (unsigned i = 0; i < THREAD_STACKS; i++) {
        make_stack(pcs, 6, 1000 + i);
        assert_int_not_equal(jobs[0].ids[i], 0);
        assert_int_equal(jobs[0].ids[i], jobs[1].ids[i]);
        assert_int_equal(hwt_stackdepot_put(42, pcs, 6), jobs[0].ids[i]);
        assert_int_equal(hwt_stackdepot_get(jobs[0].ids[i], NULL, out, 6), 6);
        assert_memory_equal(out, pcs, sizeof(pcs));
    }
}

/* Two threads storing the same frames, each under its own tid, at once. */
static void test_concurrent_threads_share_frames(void **state)
{
    static struct put_job jobs[2];
    pthread_t threads[2];
    uintptr_t pcs[6], out[6];
    uint32_t tid;

    (void)state;
    for (unsigned t = 0; t < 2; t++) {
        jobs[t].tid = 50 + t;
        assert_int_equal(pthread_create(&threads[t], NULL, put_many, &jobs[t]), 0);
    }
    for (unsigned t = 0; t < 2; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    for (unsigned i = 0; i < THREAD_STACKS; i++) {
        make_stack(pcs, 6, 1000 + i);
        assert_int_not_equal(jobs[0].ids[i], jobs[1].ids[i]);
        for (unsigned t = 0; t < 2; t++) {
            assert_int_equal(hwt_stackdepot_put(jobs[t].tid, pcs, 6), jobs[t].ids[i]);
            assert_int_equal(hwt_stackdepot_get(jobs[t].ids[i], &tid, out, 6), 6);
            assert_int_equal(tid, jobs[t].tid);
            assert_memory_equal(out, pcs, sizeof(pcs));
        }
    }
}

/* Through a thread's cache of frame records: the ids of uncached puts, and each stack's own
 * frames, for stacks that share their first 4 frames and differ in the rest (or the other
 * way round), more of them than the cache has slots. */
static void test_cached_puts_agree_with_uncached(void **state)
{
    static struct hwt_stackdepot_cache cache; /* zeroed: empty */
    uintptr_t pcs[12], out[12];
    uint32_t tid = 0;

    (void)state;
    for (unsigned round = 0; round < 2; round++) {
        for (unsigned i = 0; i < 3 * HWT_STACKDEPOT_CACHE_SLOTS; i++) {
            make_stack(pcs, 12, 5000 + i % 7); /* 7 heads... */
            make_stack(pcs + 4, 8, 6000 + i);  /* ...under many callers */
            if (i % 3 == 0)
                make_stack(pcs, 4, 7000 + i); /* and some heads over one caller */
            uint32_t cached = hwt_stackdepot_put_cached(&cache, FIRST_TID, pcs, 12, 0);
            assert_int_not_equal(cached, 0);
            assert_int_equal(cached, hwt_stackdepot_put(FIRST_TID, pcs, 12));
            assert_int_equal(hwt_stackdepot_get(cached, &tid, out, 12), 12);
            assert_int_equal(tid, FIRST_TID);
            assert_memory_equal(out, pcs, sizeof(pcs));
        }
    }
}

/* Once the frame table is full, new frames are coded against the previous frame; stacks
 * stored before still read back, and so do stacks mixing both codes. */
static void test_full_frame_table(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES], old[12];
    unsigned n = sizeof(far_frames) / sizeof(far_frames[0]);
    uint32_t first;

    (void)state;
    make_stack(old, 12, 8);
    first = hwt_stackdepot_put(60, old, 12);
    for (unsigned i = 0; i < TABLE_OVERFLOW_PCS / HWT_STACK_MAX_FRAMES; i++) {
        for (unsigned k = 0; k < HWT_STACK_MAX_FRAMES; k++)
            pcs[k] = 0x30000000u + (i * HWT_STACK_MAX_FRAMES + k) * 4u;
        assert_round_trip(61, pcs, HWT_STACK_MAX_FRAMES);
    }
    assert_round_trip(60, old, 12);
    assert_int_equal(hwt_stackdepot_put(60, old, 12), first);
    /* far-apart frames that are new to the depot, then mixed with known ones */
    for (unsigned i = 0; i < HWT_STACK_MAX_FRAMES; i++)
        pcs[i] = far_frames[i % n] ^ ((uintptr_t)(i + 1) << 44);
    assert_round_trip(62, pcs, HWT_STACK_MAX_FRAMES);
    for (unsigned i = 0; i < 12; i += 2)
        pcs[i] = old[i];
    assert_round_trip(62, pcs, HWT_STACK_MAX_FRAMES);
}

/* Ids that were never handed out, or point inside a record: no crash, no read outside the pool,
 * and never more frames than asked for. */
static void test_every_id_is_safe(void **state)
{
    uintptr_t out[4];
    uint32_t tid;

    (void)state;
    for (uint32_t id = 0; id < (1u << HWT_STACKDEPOT_ID_BITS) + 16; id++)
        assert_true(hwt_stackdepot_get(id, &tid, out, 4) <= 4);
}

/* Must run last: the depot stays full. */
static void test_full_depot_returns_zero(void **state)
{
    uintptr_t pcs[HWT_STACK_MAX_FRAMES], out[HWT_STACK_MAX_FRAMES];
    uint32_t first, id = 1;
    uint64_t stacks, bytes;
    unsigned i;

    (void)state;
    make_stack(pcs, HWT_STACK_MAX_FRAMES, 5);
    first = hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES);
    assert_int_not_equal(first, 0);
    /* 64 MiB of 32-frame stacks: far more than any pool this test could be built with */
    for (i = 0; i < (64u << 20) / sizeof(pcs) && id != 0; i++) {
        pcs[0] = 0x10000000u + i;
        id = hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES);
    }
    assert_int_equal(id, 0);
    /* still full, still serving old stacks */
    pcs[0] = 0x20000000u;
    assert_int_equal(hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES), 0);
    make_stack(pcs, HWT_STACK_MAX_FRAMES, 5);
    assert_int_equal(hwt_stackdepot_put(9, pcs, HWT_STACK_MAX_FRAMES), first);
    assert_int_equal(hwt_stackdepot_get(first, NULL, out, HWT_STACK_MAX_FRAMES),
                     HWT_STACK_MAX_FRAMES);
    assert_memory_equal(out, pcs, sizeof(pcs));
    hwt_stackdepot_usage(&stacks, &bytes);
    assert_true(stacks >= i);
    assert_true(bytes > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_stack_same_id),
        cmocka_unit_test(test_distinct_stacks_distinct_ids),
        cmocka_unit_test(test_get_round_trip),
        cmocka_unit_test(test_cut_stack_keeps_its_count),
        cmocka_unit_test(test_frames_across_modules),
        cmocka_unit_test(test_known_frames_cost_little),
        cmocka_unit_test(test_other_thread_shares_frames),
        cmocka_unit_test(test_empty_and_unknown),
        cmocka_unit_test(test_usage_counts_stacks),
        cmocka_unit_test(test_concurrent_puts_agree),
        cmocka_unit_test(test_concurrent_threads_share_frames),
        cmocka_unit_test(test_cached_puts_agree_with_uncached),
        cmocka_unit_test(test_full_frame_table),
        cmocka_unit_test(test_every_id_is_safe),
        cmocka_unit_test(test_full_depot_returns_zero),
        cmocka_unit_test(test_every_id_is_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
