/* SPDX-License-Identifier: MIT */
/* The malloc family's contract on every path (tests/common/contract.h): random sequences
 * of every entry point, every byte of every object checked, in one thread, in two at once
 * with objects freed by a thread that did not allocate them, and across fork. ctest runs it
 * under each option set (sync, async, asymm, HWTAG_SAMPLE=10, stacks off, off). Built twice,
 * like every api test: linked with libhwtag.a, and plain with libhwtag.so preloaded.
 * CONTRACT_SEED and CONTRACT_OPS (environment) replay or lengthen a run. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/contract.h"

/* C23's sized free: glibc 2.36 does not declare it, libhwtag defines it. */
void free_sized(void *ptr, size_t size) __attribute__((weak));

static uint64_t seed_base = 1;
static uint64_t ops_per_run = 3000;

static uint64_t next(uint64_t *s)
{
    /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static struct contract_heap heap;

static void heap_setup(void)
{
    heap = (struct contract_heap){
        .malloc = malloc,
        .calloc = calloc,
        .realloc = realloc,
        .reallocarray = reallocarray,
        .posix_memalign = posix_memalign,
        .aligned_alloc = aligned_alloc,
        .memalign = memalign,
        .valloc = valloc,
        .pvalloc = pvalloc,
        .free = free,
        .free_sized = free_sized,
        .usable = malloc_usable_size,
        .page_size = (size_t)sysconf(_SC_PAGESIZE),
        .check_errno = true,
        .large_max = (size_t)3 << 20,
        .live_max = 200,
    };
}

static int group_setup(void **state)
{
    (void)state;
    const char *s = getenv("CONTRACT_SEED");
    const char *n = getenv("CONTRACT_OPS");
    if (s != NULL)
        seed_base = strtoull(s, NULL, 0);
    if (n != NULL)
        ops_per_run = strtoull(n, NULL, 0);
    heap_setup();
    return 0;
}

/* Runs ops random steps on c from seed; false with c->failure on the first broken promise. */
static bool run(struct contract *c, uint64_t seed, uint64_t ops)
{
    uint64_t rng = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t r = next(&rng), s = next(&rng), v = next(&rng);
        if (!contract_step(c, r, s, v))
            return false;
    }
    return true;
}

static void report(const struct contract *c, uint64_t seed)
{
    static const char *const names[CONTRACT_OPS] = {
        "malloc",   "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",
        "memalign", "valloc", "pvalloc", "free",         "free_sized",     "usable"};
    printf("contract seed %llu: %llu ops, %llu MiB checked;", (unsigned long long)seed,
           (unsigned long long)c->ops, (unsigned long long)(c->bytes_checked >> 20));
    for (unsigned k = 0; k < CONTRACT_OPS; k++)
        printf(" %s %llu", names[k], (unsigned long long)c->by_op[k]);
    printf("\n");
    if (c->failure[0] != '\0')
        printf("contract seed %llu FAILED: %s (replay: CONTRACT_SEED=%llu)\n",
               (unsigned long long)seed, c->failure, (unsigned long long)seed);
}

static struct contract main_contract;

static void test_one_thread(void **state)
{
    (void)state;
    struct contract *c = &main_contract;
    memset(c, 0, sizeof(*c));
    c->heap = &heap;
    bool ok = run(c, seed_base, ops_per_run) && contract_finish(c);
    report(c, seed_base);
    assert_true(ok);
}

/* The same sizes again after they were dirtied and freed: calloc's zeros on reused memory,
 * slab slots and cached page-backed mappings alike. */
static void test_calloc_after_dirty(void **state)
{
    (void)state;
    static const size_t sizes[] = {1,      15,     17,      100,     4095,   4097,
                                   16383,  16385,  40000,   65535,   65537,  131071,
                                   262145, 290039, 1048575, 1048577, 4194305};
    struct contract *c = &main_contract;
    memset(c, 0, sizeof(*c));
    c->heap = &heap;
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            errno = CONTRACT_ERRNO_MARK;
            void *p = calloc(1, sizes[i]);
            assert_true(contract_adopt(c, p, sizes[i], 16, true, errno, round * 100 + i));
        }
        assert_true(contract_finish(c));
    }
    report(c, 0);
    assert_string_equal(c->failure, "");
}

static void test_failures(void **state)
{
    (void)state;
    struct contract *c = &main_contract;
    memset(c, 0, sizeof(*c));
    c->heap = &heap;
    bool ok = contract_failures(c, SIZE_MAX / 2 + 1) && contract_failures(c, SIZE_MAX - 4096);
    report(c, 0);
    assert_true(ok);
}

/* realloc(p, 0) frees p and returns NULL, as glibc; realloc(NULL, n) is malloc(n). */
static void test_realloc_edges(void **state)
{
    (void)state;
    errno = CONTRACT_ERRNO_MARK;
    void *p = realloc(NULL, 40);
    assert_non_null(p);
    assert_true(malloc_usable_size(p) >= 40);
    assert_null(realloc(p, 0));
    assert_int_equal(errno, CONTRACT_ERRNO_MARK);
    p = malloc(0);
    assert_non_null(p);
    free(p);
    free(NULL);
    assert_int_equal(errno, CONTRACT_ERRNO_MARK);
}

struct worker {
    struct contract c;
    uint64_t seed;
    bool ok;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    w->ok = run(&w->c, w->seed, ops_per_run / 2);
    return NULL;
}

/* Two threads at once, each on its own objects; what each leaves live is checked and freed
 * by the main thread (remote frees). */
static void test_two_threads(void **state)
{
    (void)state;
    static struct worker w[2];
    pthread_t t[2];
    for (unsigned i = 0; i < 2; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].c.heap = &heap;
        w[i].seed = seed_base + 1000 + i;
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    for (unsigned i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (unsigned i = 0; i < 2; i++) {
        bool ok = w[i].ok && contract_finish(&w[i].c);
        report(&w[i].c, w[i].seed);
        assert_true(ok);
    }
}

/* A fork child finds every live object intact, goes on allocating and frees it all; the
 * parent's objects are untouched by the child's work. */
static void test_fork(void **state)
{
    (void)state;
    struct contract *c = &main_contract;
    memset(c, 0, sizeof(*c));
    c->heap = &heap;
    assert_true(run(c, seed_base + 2000, ops_per_run / 4));
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        bool ok = true;
        for (unsigned k = 0; ok && k < c->nlive; k++)
            ok = contract_intact(c, &c->live[k], c->live[k].size, "lost across fork");
        ok = ok && run(c, seed_base + 3000, ops_per_run / 4) && contract_finish(c);
        if (!ok)
            report(c, seed_base + 3000);
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    bool ok = run(c, seed_base + 4000, ops_per_run / 4) && contract_finish(c);
    report(c, seed_base + 2000);
    assert_true(ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread),  cmocka_unit_test(test_calloc_after_dirty),
        cmocka_unit_test(test_failures),    cmocka_unit_test(test_realloc_edges),
        cmocka_unit_test(test_two_threads), cmocka_unit_test(test_fork),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
