/* SPDX-License-Identifier: MIT */
/* The sampling countdown of large allocations. It decides only; large.c tags or not. */
#include "sample.h"

#include "options.h"
#include "os.h"

/* Allocations of sampled order still to skip before the next tagged one; like the
 * kernel's kasan_page_alloc_skip it starts at 0, so a thread's first one is tagged. */
static __thread long skip_left;

unsigned hwt_sample_order(size_t size)
{
    size_t pages = (size + hwt_os_page_size - 1) / hwt_os_page_size;
    if (pages <= 1)
        return 0;
    return 64u - (unsigned)__builtin_clzll((unsigned long long)(pages - 1));
}

bool hwt_sample_should_tag(unsigned order)
{
    uint32_t every = hwt_opts.sample;
    if (order < hwt_opts.sample_order || every <= 1)
        return true;
    if (--skip_left < 0) {
        skip_left = (long)every - 1;
        return true;
    }
    return false;
}

void hwt_sample_reset_thread(void)
{
    skip_left = 0;
}
