/* SPDX-License-Identifier: MIT */
/* The tail check's secret and its byte-level description for reports. */
#include "tail.h"

#include <string.h>

#include "os.h"

int hwt_tail_active;
struct hwt_tail_key hwt_tail_key;

void hwt_tail_init(bool active)
{
    hwt_tail_key.secret = hwt_os_random64();
    hwt_tail_key.mult = hwt_os_random64() | 1; /* odd: a bijection of the granule */
    hwt_tail_active = active;
}

unsigned hwt_tail_describe(const void *ptr, size_t requested, uint8_t *expected, uint8_t *found)
{
    unsigned off = (unsigned)(requested & (HWT_GRANULE - 1));
    if (off == 0)
        return 0;
    const uint8_t *g = (const uint8_t *)ptr + requested - off;
    uint64_t p[2];
    uint8_t pattern[HWT_GRANULE];
    p[0] = p[1] = hwt_tail_pattern(&hwt_tail_key, mte_heap_addr(g));
    memcpy(pattern, p, sizeof(pattern));
    for (unsigned i = off; i < HWT_GRANULE; i++) {
        expected[i - off] = pattern[i];
        found[i - off] = g[i];
    }
    return HWT_GRANULE - off;
}
