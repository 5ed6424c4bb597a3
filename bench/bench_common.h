/* SPDX-License-Identifier: MIT */
/* Shared helpers of the bench_*.c workloads: clock, PRNG, the memory-measurement handshake
 * with bench/run.py and the libhwtag statistics line. Header-only; must not allocate in the
 * measurement path, so that measuring does not change what is measured. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwtag.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
#define BENCH_ASAN 1
void __asan_get_shadow_mapping(size_t *shadow_scale, size_t *shadow_offset);
#endif
#if __has_feature(hwaddress_sanitizer)
#define BENCH_HWASAN 1
extern uintptr_t __hwasan_shadow_memory_dynamic_address;
#endif

/* Virtual address bits of this process, from the stack's address (the stack sits at the top of
 * the user address space): 48 on most hardware kernels, 39 under qemu-user's default layout. */
static inline int bench_va_bits(void)
{
    volatile char here;
    /* HWASan tags stack objects: drop the top byte before looking at the address. */
    uintptr_t addr = (uintptr_t)&here & (((uintptr_t)1 << 56) - 1);
    return 64 - __builtin_clzll((unsigned long long)addr);
}

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift64*: fast, deterministic across configurations. */
static inline uint64_t bench_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static inline uint64_t bench_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
    return lo + bench_rand(s) % (hi - lo + 1);
}

/* Log-uniform size in [lo, hi]: a power-of-two bucket uniformly, then uniform inside it. */
static inline size_t bench_logsize(uint64_t *s, size_t lo, size_t hi)
{
    if (lo >= hi)
        return lo;
    int blo = 63 - __builtin_clzll(lo), bhi = 63 - __builtin_clzll(hi);
    int b = (int)bench_range(s, (uint64_t)blo, (uint64_t)bhi);
    size_t a = (size_t)1 << b, z = ((size_t)2 << b) - 1;
    if (a < lo)
        a = lo;
    if (z > hi)
        z = hi;
    return (size_t)bench_range(s, a, z);
}

static inline void bench_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static inline void bench_puts(const char *s)
{
    bench_write_all(1, s, strlen(s));
}

/* When BENCH_MEASURE=1: print the guest's own view of its mappings (under qemu-user the host
 * cannot tell guest mappings from qemu's own), the sanitizer shadow range if any, then block
 * on stdin until run.py has read /proc/<pid>/smaps from outside. No malloc, no stdio. */
static inline void bench_measure_point(const char *label)
{
    const char *e = getenv("BENCH_MEASURE");
    if (!e || strcmp(e, "1") != 0)
        return;
    char buf[4096];
    snprintf(buf, sizeof(buf), "BENCH_MEASURE %s\n", label);
    bench_puts(buf);
#if defined(BENCH_ASAN)
    {
        size_t scale = 0, off = 0;
        __asan_get_shadow_mapping(&scale, &off);
        snprintf(buf, sizeof(buf), "BENCH_SHADOW %#zx %#zx\n", off,
                 off + ((size_t)1 << (bench_va_bits() - (int)scale)));
        bench_puts(buf);
    }
#elif defined(BENCH_HWASAN)
    {
        uintptr_t base = __hwasan_shadow_memory_dynamic_address;
        snprintf(buf, sizeof(buf), "BENCH_SHADOW %#lx %#lx\n", (unsigned long)base,
                 (unsigned long)(base + ((uintptr_t)1 << (bench_va_bits() - 4))));
        bench_puts(buf);
    }
#endif
    bench_puts("BENCH_MAPS_BEGIN\n");
    int fd = open("/proc/self/maps", O_RDONLY);
    if (fd >= 0) {
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
            bench_write_all(1, buf, (size_t)n);
        close(fd);
    }
    bench_puts("BENCH_MAPS_END\n");
    char c;
    while (read(0, &c, 1) == 1 && c != '\n')
        ;
}

/* Prints libhwtag's counters when the process runs under it (found with dlsym, so the same
 * binary works with every allocator). */
static inline void bench_print_hwtag_stats(void)
{
    int (*get)(struct hwtag_stats *, size_t) =
        (int (*)(struct hwtag_stats *, size_t))dlsym(RTLD_DEFAULT, "hwtag_get_stats");
    if (!get)
        return;
    struct hwtag_stats st;
    memset(&st, 0, sizeof(st));
    if (get(&st, sizeof(st)) != 0)
        return;
    printf("HWTAG_STATS small_allocs=%llu large_allocs=%llu large_tagged=%llu "
           "large_skipped=%llu heap_mapped_bytes=%llu meta_bytes=%llu depot_bytes=%llu "
           "mte_active=%d\n",
           (unsigned long long)st.small_allocs, (unsigned long long)st.large_allocs,
           (unsigned long long)st.large_tagged, (unsigned long long)st.large_skipped,
           (unsigned long long)st.heap_mapped_bytes, (unsigned long long)st.meta_bytes,
           (unsigned long long)st.depot_bytes, st.mte_active);
}

static inline unsigned bench_ptr_tag(const void *p)
{
    return (unsigned)(((uintptr_t)p >> 56) & 0xff);
}

#endif
