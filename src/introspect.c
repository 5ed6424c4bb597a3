/* SPDX-License-Identifier: MIT */
/* The only definitions of glibc's statistics calls (mallinfo, mallinfo2, malloc_stats,
 * malloc_info), answered from libhwtag's own counters; the rest of the libc names are
 * interpose.c's. Like interpose.c, it is built into the libraries, never into hwtag_core. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "entry.h"
#include "fmt.h"
#include "hwtag.h"
#include "init.h"
#include "os.h"
#include "stats.h"

/* glibc's introspection calls, answered from libhwtag's own counters, so that calling
 * them never wakes glibc's unused arena. One "arena": the whole heap. */
static void collect(struct hwtag_stats *st)
{
    hwt_init_ensure();
    hwt_stats_collect(st);
}

static size_t clamp_int(uint64_t v)
{
    return v > (uint64_t)INT32_MAX ? (size_t)INT32_MAX : (size_t)v;
}

EXPORT struct mallinfo2 mallinfo2(void)
{
    struct hwtag_stats st;
    struct mallinfo2 mi;
    collect(&st);
    memset(&mi, 0, sizeof(mi));
    uint64_t live =
        st.heap_live_bytes < st.heap_mapped_bytes ? st.heap_live_bytes : st.heap_mapped_bytes;
    mi.arena = st.heap_mapped_bytes;
    mi.ordblks = 1;
    mi.uordblks = live;
    mi.fordblks = st.heap_mapped_bytes - live;
    mi.hblks = st.large_allocs - st.large_frees;
    return mi;
}

/* The int fields of the old mallinfo saturate instead of wrapping (glibc wraps). */
EXPORT struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo mi;
    memset(&mi, 0, sizeof(mi));
    mi.arena = (int)clamp_int(m2.arena);
    mi.ordblks = (int)clamp_int(m2.ordblks);
    mi.uordblks = (int)clamp_int(m2.uordblks);
    mi.fordblks = (int)clamp_int(m2.fordblks);
    mi.hblks = (int)clamp_int(m2.hblks);
    return mi;
}

/* glibc's layout on stderr, so scripts that read it keep working. */
EXPORT void malloc_stats(void)
{
    struct mallinfo2 mi = mallinfo2();
    char mem[512];
    struct hwt_buf b;
    hwt_fmt_init(&b, mem, sizeof(mem));
    hwt_fmt_printf(&b, "Arena 0:\nsystem bytes     = %10zu\nin use bytes     = %10zu\n", mi.arena,
                   mi.uordblks);
    hwt_fmt_printf(&b, "Total (incl. mmap):\nsystem bytes     = %10zu\nin use bytes     = %10zu\n",
                   mi.arena, mi.uordblks);
    hwt_fmt_printf(&b, "max mmap regions = %10zu\nmax mmap bytes   = %10zu\n", mi.hblks, (size_t)0);
    hwt_os_write_all(2, b.data, b.len);
}

/* glibc's XML shape with libhwtag's figures; options must be 0 (glibc: EINVAL). */
EXPORT int malloc_info(int options, FILE *fp)
{
    struct hwtag_stats st;
    char mem[1024];
    struct hwt_buf b;
    if (options != 0) {
        errno = EINVAL;
        return -1;
    }
    collect(&st);
    hwt_fmt_init(&b, mem, sizeof(mem));
    hwt_fmt_printf(&b, "<malloc version=\"hwtag-%s\">\n<heap nr=\"0\">\n", HWTAG_VERSION_STRING);
    hwt_fmt_printf(&b, "<total type=\"mmap\" count=\"%llu\" size=\"%llu\"/>\n",
                   (unsigned long long)(st.large_allocs - st.large_frees),
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<system type=\"current\" size=\"%llu\"/>\n",
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<aspace type=\"total\" size=\"%llu\"/>\n</heap>\n",
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<total type=\"mmap\" count=\"%llu\" size=\"%llu\"/>\n",
                   (unsigned long long)(st.large_allocs - st.large_frees),
                   (unsigned long long)st.heap_mapped_bytes);
    hwt_fmt_printf(&b, "<system type=\"current\" size=\"%llu\"/>\n</malloc>\n",
                   (unsigned long long)st.heap_mapped_bytes);
    return fputs(b.data, fp) < 0 ? -1 : 0;
}
