/* SPDX-License-Identifier: MIT */
/* Tells run.py whether a configuration really tags heap memory: prints the pointer tags of a
 * few small and large allocations. It must not depend on any one allocator's API. */
#include "bench_common.h"

#define PROBE_N 8

int main(void)
{
    static const size_t sizes[2] = {48, 256 * 1024};
    static const char *names[2] = {"small", "large"};
    for (int k = 0; k < 2; k++) {
        void *p[PROBE_N];
        unsigned nonzero = 0, distinct = 0, seen[256] = {0};
        for (int i = 0; i < PROBE_N; i++) {
            p[i] = malloc(sizes[k]);
            if (!p[i])
                return 1;
            memset(p[i], 0x5a, sizes[k]);
            unsigned t = bench_ptr_tag(p[i]);
            nonzero += t != 0;
            if (!seen[t]++)
                distinct++;
        }
        printf("PROBE %s size=%zu tagged=%u/%d distinct_tags=%u example=%p\n", names[k], sizes[k],
               nonzero, PROBE_N, distinct, p[0]);
        for (int i = 0; i < PROBE_N; i++)
            free(p[i]);
    }
    bench_print_hwtag_stats();
    return 0;
}
