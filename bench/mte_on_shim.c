/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD shim that turns on the tagged-address ABI and synchronous MTE tag checks (tags
 * 1-15 allowed for irg) before the allocator runs, as Android's loader does for Scudo. It does
 * nothing else; BENCH_MTE_TCF=async selects asynchronous checks instead. */
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#ifndef PR_SET_TAGGED_ADDR_CTRL
#define PR_SET_TAGGED_ADDR_CTRL 55
#endif
#ifndef PR_TAGGED_ADDR_ENABLE
#define PR_TAGGED_ADDR_ENABLE (1UL << 0)
#endif
#ifndef PR_MTE_TCF_SYNC
#define PR_MTE_TCF_SYNC (1UL << 1)
#define PR_MTE_TCF_ASYNC (1UL << 2)
#endif
#ifndef PR_MTE_TAG_SHIFT
#define PR_MTE_TAG_SHIFT 3
#endif

/* Tags 1..15 may be generated; 0 stays the "untagged" tag. */
#define SHIM_TAG_INCLUDE_MASK 0xfffeUL

__attribute__((constructor(101))) static void mte_on(void)
{
    const char *m = getenv("BENCH_MTE_TCF");
    unsigned long tcf = (m && strcmp(m, "async") == 0) ? PR_MTE_TCF_ASYNC : PR_MTE_TCF_SYNC;
    prctl(PR_SET_TAGGED_ADDR_CTRL,
          PR_TAGGED_ADDR_ENABLE | tcf | (SHIM_TAG_INCLUDE_MASK << PR_MTE_TAG_SHIFT), 0, 0, 0);
}
