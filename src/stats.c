/* SPDX-License-Identifier: MIT */
/* Sums the per-thread counters and the back ends' gauges into struct hwtag_stats. */
#include "stats.h"

#include <string.h>

#include "arch/mte.h"
#include "fmt.h"
#include "large.h"
#include "meta.h"
#include "os.h"
#include "size_class.h"
#include "slab.h"
#include "sink.h"
#include "stackdepot.h"
#include "counters.h"

void hwt_stats_collect(struct hwtag_stats *out)
{
    memset(out, 0, sizeof(*out));
    hwt_counters_sum(out);
    /* small objects' live bytes and frees come from their slot words: the fast paths keep
     * no count of them. Every slot made live was counted as an allocation before or just
     * after its word said so, so frees are the allocations not live now (a racing
     * allocation may show as live before it is counted: never below 0). */
    struct hwt_class_usage use[HWT_NUM_CLASSES];
    hwt_slab_class_usage(use);
    uint64_t live_slots = 0;
    for (unsigned c = 0; c < HWT_NUM_CLASSES; c++) {
        out->heap_live_bytes += use[c].live_bytes;
        live_slots += use[c].live_slots;
    }
    out->small_frees = out->small_allocs > live_slots ? out->small_allocs - live_slots : 0;
    out->heap_mapped_bytes = hwt_slab_mapped() + hwt_large_mapped();
    out->meta_bytes = hwt_meta_mapped();
    hwt_stackdepot_usage(&out->depot_stacks, &out->depot_bytes);
    out->reports = hwt_sink_reports_printed();
    out->mte_active = hwt_mte_active;
}

void hwt_stats_print(int fd)
{
    struct hwtag_stats st;
    char mem[8192];
    struct hwt_buf b;
    hwt_stats_collect(&st);
    hwt_fmt_init(&b, mem, sizeof(mem));
    uint64_t all = st.small_allocs + st.large_allocs;
    hwt_fmt_printf(&b, "hwtag stats: mte=%s\n", st.mte_active ? "on" : "off");
    hwt_fmt_printf(&b, "  small: %llu allocs, %llu frees\n", (unsigned long long)st.small_allocs,
                   (unsigned long long)st.small_frees);
    hwt_fmt_printf(&b,
                   "  large: %llu allocs (%llu tagged, %llu left untagged by sampling), %llu "
                   "frees\n",
                   (unsigned long long)st.large_allocs, (unsigned long long)st.large_tagged,
                   (unsigned long long)st.large_skipped, (unsigned long long)st.large_frees);
    if (all > 0)
        hwt_fmt_printf(&b, "  unchecked by sampling: %llu of %llu allocations (%llu.%02llu%%)\n",
                       (unsigned long long)st.large_skipped, (unsigned long long)all,
                       (unsigned long long)(st.large_skipped * 100 / all),
                       (unsigned long long)(st.large_skipped * 10000 / all % 100));
    for (unsigned i = 0; i < HWTAG_MAX_ORDER; i++) {
        if (st.large_by_order[i] != 0)
            hwt_fmt_printf(&b, "  order %u: %llu allocs, %llu untagged\n", i,
                           (unsigned long long)st.large_by_order[i],
                           (unsigned long long)st.large_skipped_by_order[i]);
    }
    hwt_fmt_printf(&b, "  heap mapped %llu bytes, live %llu bytes, metadata %llu bytes\n",
                   (unsigned long long)st.heap_mapped_bytes, (unsigned long long)st.heap_live_bytes,
                   (unsigned long long)st.meta_bytes);
    struct hwt_class_usage use[HWT_NUM_CLASSES];
    hwt_slab_class_usage(use);
    for (unsigned c = 0; c < HWT_NUM_CLASSES; c++) {
        if (use[c].spans == 0)
            continue;
        uint64_t slot = hwt_size_class_size(c);
        hwt_fmt_printf(&b,
                       "  class %5llu: %llu spans, %llu KiB committed, %llu KiB live, %llu "
                       "slots free in spans\n",
                       (unsigned long long)slot, (unsigned long long)use[c].spans,
                       (unsigned long long)(use[c].span_bytes >> 10),
                       (unsigned long long)(use[c].live_slots * slot >> 10),
                       (unsigned long long)use[c].free_in_span);
    }
    hwt_fmt_printf(&b, "  stack depot: %llu stacks, %llu bytes; reports: %llu\n",
                   (unsigned long long)st.depot_stacks, (unsigned long long)st.depot_bytes,
                   (unsigned long long)st.reports);
    hwt_os_write_all(fd, b.data, b.len);
}

void hwt_stats_print_at_exit(void)
{
    char line[128];
    struct hwt_buf b;
    int fd = hwt_sink_log_fd();
    hwt_fmt_init(&b, line, sizeof(line));
    hwt_fmt_printf(&b, "hwtag: stats at exit of task %s/%d\n", hwt_sink_comm(), hwt_os_getpid());
    hwt_os_write_all(fd, b.data, b.len);
    hwt_stats_print(fd);
}
