/* SPDX-License-Identifier: MIT */
/* Fuzzes the allocator core with the contract of tests/common/contract.h: random sequences of
 * malloc, calloc, realloc, reallocarray, the aligned allocations, free and the usable size,
 * every byte of every live object checked, no overlap, alignment and usable sizes held, and
 * the core's own checks (HWT_CHECK, the tail check) never firing on a correct sequence. The
 * entry points are the core's (ASan owns malloc in this build); the libc names' own rules
 * (overflow, errno) are the api test's. Each step takes 24 bytes of the input. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "common/contract.h"
#include "init.h"
#include "os.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CALLER() hwt_caller_of_record((uintptr_t)__builtin_frame_address(0))

static void *core_malloc(size_t n)
{
    return hwt_alloc(n, 16, false, CALLER());
}

static void *core_calloc(size_t n, size_t each)
{
    size_t total;
    if (__builtin_mul_overflow(n, each, &total))
        return NULL;
    return hwt_alloc(total, 16, true, CALLER());
}

static void core_free(void *p)
{
    hwt_alloc_free(p, CALLER());
}

static void *core_realloc(void *p, size_t n)
{
    if (p == NULL)
        return core_malloc(n);
    if (n == 0) {
        core_free(p);
        return NULL;
    }
    return hwt_alloc_realloc(p, n, CALLER());
}

static void *core_reallocarray(void *p, size_t n, size_t each)
{
    size_t total;
    if (__builtin_mul_overflow(n, each, &total))
        return NULL;
    return core_realloc(p, total);
}

static size_t power_of_two(size_t align)
{
    size_t a = 16;
    while (a < align)
        a <<= 1;
    return a;
}

static void *core_memalign(size_t align, size_t n)
{
    return hwt_alloc(n, power_of_two(align), false, CALLER());
}

static int core_posix_memalign(void **out, size_t align, size_t n)
{
    void *p = core_memalign(align, n);
    if (p == NULL)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

static void *core_valloc(size_t n)
{
    return hwt_alloc(n, hwt_os_page_size, false, CALLER());
}

static void *core_pvalloc(size_t n)
{
    size_t rounded = (n + hwt_os_page_size - 1) / hwt_os_page_size * hwt_os_page_size;
    return core_valloc(rounded ? rounded : hwt_os_page_size);
}

static size_t core_usable(void *p)
{
    return hwt_alloc_usable(p);
}

static uint64_t word_at(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof(w));
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct contract_heap heap;
    static struct contract c;
    hwt_init_ensure();
    heap = (struct contract_heap){
        .malloc = core_malloc,
        .calloc = core_calloc,
        .realloc = core_realloc,
        .reallocarray = core_reallocarray,
        .posix_memalign = core_posix_memalign,
        .aligned_alloc = core_memalign,
        .memalign = core_memalign,
        .valloc = core_valloc,
        .pvalloc = core_pvalloc,
        .free = core_free,
        .usable = core_usable,
        .page_size = hwt_os_page_size,
        .large_max = (size_t)1 << 20,
        .big_max = (size_t)64 << 10,
        .live_max = 64,
    };
    memset(&c, 0, sizeof(c));
    c.heap = &heap;
    bool ok = true;
    for (size_t i = 0; ok && i + 24 <= size; i += 24)
        ok = contract_step(&c, word_at(data + i), word_at(data + i + 8), word_at(data + i + 16));
    ok = ok && contract_finish(&c);
    if (!ok) {
        fprintf(stderr, "fuzz_heap: %s\n", c.failure);
        abort();
    }
    return 0;
}

#ifndef HWTAG_LIBFUZZER
#include "replay.h"

int main(int argc, char **argv)
{
    return replay_main(argc, argv, "fuzz_heap");
}
#endif
