/* SPDX-License-Identifier: MIT */
/* Cost of one stack capture 10 frames deep: hwt_unwind_fast (malloc's unwinder) against
 * libunwind's unw_backtrace where it is available (aarch64). Not a test: prints ns/call. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "unwind.h"

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
#define HAVE_UNW_BACKTRACE 1
#else
#define HAVE_UNW_BACKTRACE 0
#endif

#define DEPTH 10
#define MAX_FRAMES 32

typedef unsigned (*capture_fn)(uintptr_t *pcs, unsigned max);

static volatile unsigned sink;

static unsigned capture_fast(uintptr_t *pcs, unsigned max)
{
    return hwt_unwind_fast(pcs, max, 0);
}

#if HAVE_UNW_BACKTRACE
static unsigned capture_libunwind(uintptr_t *pcs, unsigned max)
{
    int n = unw_backtrace((void **)pcs, (int)max);
    return n > 0 ? (unsigned)n : 0;
}
#endif

static unsigned capture_nothing(uintptr_t *pcs, unsigned max)
{
    (void)max;
    pcs[0] = 0;
    return 0;
}

/* Recurses to DEPTH frames, then captures; no tail calls so every level keeps its frame. */
__attribute__((noipa)) static unsigned descend(unsigned depth, capture_fn fn)
{
    uintptr_t pcs[MAX_FRAMES];
    unsigned n;

    if (depth > 1)
        n = descend(depth - 1, fn);
    else
        n = fn(pcs, MAX_FRAMES);
    sink += n;
    return n;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best of five rounds: emulators and shared hosts are noisy. */
static void run(const char *name, capture_fn fn, unsigned iters)
{
    unsigned frames = descend(DEPTH, fn);
    double best = 0;

    for (unsigned round = 0; round < 5; round++) {
        double start = now_ns(), ns;
        for (unsigned i = 0; i < iters; i++)
            descend(DEPTH, fn);
        ns = (now_ns() - start) / iters;
        if (round == 0 || ns < best)
            best = ns;
    }
    printf("%-28s %2u frames %9.1f ns/capture (best of 5 x %u, recursion included)\n", name, frames,
           best, iters);
}

int main(int argc, char **argv)
{
    unsigned iters = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200000u;

    run("recursion only", capture_nothing, iters);
#if HAVE_UNW_BACKTRACE
    run("unw_backtrace (global cache)", capture_libunwind, iters);
#endif
    hwt_unwind_init(); /* switches libunwind to UNW_CACHE_NONE for the signal path */
    run("hwt_unwind_fast", capture_fast, iters);
#if HAVE_UNW_BACKTRACE
    run("unw_backtrace (no cache)", capture_libunwind, iters);
#endif
    return 0;
}
