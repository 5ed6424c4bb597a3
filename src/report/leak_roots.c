/* SPDX-License-Identifier: MIT */
/* The leak check's roots. Module data from dl_iterate_phdr (before the world stops: it
 * takes the loader's lock); stacks and TLS from the stopped threads' stack pointers and
 * thread pointers, each bounded by its mapping in /proc/self/maps. Adds ranges only; reads
 * no heap memory and never allocates from the heap. */
#include "leak_roots.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#include "align.h"
#include "large_map.h"
#include "maps.h"
#include "meta.h"
#include "os.h"
#include "slab.h"
#include "sort.h"

/* Around a thread pointer outside the thread's stack (the main thread's TLS block, which
 * the dynamic loader maps itself): the TCB, the static TLS and their neighbours. */
#define TLS_REACH (64u * 1024u)

struct module_ctx {
    struct hwt_leak_graph *g;
    bool ok;
};

static bool holds(uintptr_t lo, uintptr_t hi, const void *p)
{
    return (uintptr_t)p >= lo && (uintptr_t)p < hi;
}

/* A writable segment, less libhwtag's own table of slab regions (their bases are the
 * first objects' addresses) where the library is linked into the program. */
static void add_segment(struct module_ctx *c, uintptr_t lo, uintptr_t hi)
{
    uintptr_t ex_lo = (uintptr_t)hwt_slab_regions;
    uintptr_t ex_hi = ex_lo + sizeof(hwt_slab_regions);
    if (ex_lo < hi && ex_hi > lo) {
        c->ok &= hwt_leak_graph_add_root(c->g, lo, ex_lo > lo ? ex_lo : lo);
        lo = ex_hi < hi ? ex_hi : hi;
    }
    c->ok &= hwt_leak_graph_add_root(c->g, lo, hi);
}

static int module_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct module_ctx *c = arg;
    bool ours = false; /* libhwtag.so itself: its data is the allocator's, not the program's */
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && holds(lo, lo + ph->p_memsz, hwt_slab_regions))
            ours = info->dlpi_name != NULL && strstr(info->dlpi_name, "libhwtag") != NULL;
    }
    if (ours)
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        add_segment(c, lo, lo + ph->p_memsz);
    }
    return 0;
}

bool hwt_leak_roots_modules(struct hwt_leak_graph *g)
{
    struct module_ctx c = {g, true};
    dl_iterate_phdr(module_cb, &c);
    return c.ok;
}

/* The dynamic loader's code: the one module named after it (ld-linux*.so, ld.so). */
static int loader_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct hwt_leak_range *out = arg;
    const char *name = info->dlpi_name != NULL ? strrchr(info->dlpi_name, '/') : NULL;
    name = name != NULL ? name + 1 : info->dlpi_name;
    if (name == NULL || (strncmp(name, "ld-linux", 8) != 0 && strncmp(name, "ld.so", 5) != 0 &&
                         strncmp(name, "ld64.so", 7) != 0))
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        out->lo = info->dlpi_addr + ph->p_vaddr;
        out->hi = out->lo + ph->p_memsz;
        return 1;
    }
    return 0;
}

bool hwt_leak_roots_loader(struct hwt_leak_range *code)
{
    code->lo = code->hi = 0;
    dl_iterate_phdr(loader_cb, code);
    return code->hi > code->lo;
}

struct thread_ctx {
    struct hwt_leak_graph *g;
    const struct hwt_leak_world *w;
    uintptr_t caller_sp, caller_tp;
    const struct hwt_leak_range *skip; /* sorted by lo: the heap's and libhwtag's own */
    size_t nskip;
    uintptr_t guard_end; /* end of the last inaccessible anonymous mapping seen */
    bool ok;
};

static void add_tls(struct thread_ctx *c, const struct hwt_mapping *m, uintptr_t sp, uintptr_t tp)
{
    if (!holds(m->start, m->end, (const void *)tp) || holds(m->start, m->end, (const void *)sp))
        return; /* in the stack's mapping, scanned with it */
    uintptr_t lo = tp - m->start > TLS_REACH ? tp - TLS_REACH : m->start;
    uintptr_t hi = m->end - tp > TLS_REACH ? tp + TLS_REACH : m->end;
    c->ok &= hwt_leak_graph_add_root(c->g, lo, hi);
}

static void add_thread(struct thread_ctx *c, const struct hwt_mapping *m, uintptr_t sp,
                       uintptr_t tp)
{
    if (holds(m->start, m->end, (const void *)sp))
        c->ok &= hwt_leak_graph_add_root(c->g, sp, m->end);
    add_tls(c, m, sp, tp);
}

/* Whether m is a live thread's stack (scanned from its stack pointer up, not whole). */
static bool is_stack(const struct thread_ctx *c, const struct hwt_mapping *m)
{
    if (holds(m->start, m->end, (const void *)c->caller_sp))
        return true;
    for (unsigned i = 0; i < c->w->count; i++) {
        const struct hwt_leak_thread *t = &c->w->threads[i];
        if (t->tid > 0 && t->stopped && holds(m->start, m->end, (const void *)t->sp))
            return true;
    }
    return false;
}

/* Memory the program mapped itself (a pool allocator over mmap, CPython's arenas, the
 * loader's early blocks in [heap]) holds pointers as much as a global does; valgrind scans
 * it too. Everything of it but the heap's own mappings and libhwtag's metadata. */
static void add_anonymous(struct thread_ctx *c, const struct hwt_mapping *m)
{
    /* A mapping right above an inaccessible one is a thread stack above its guard page:
     * a live thread's is scanned from its stack pointer, and an exited thread's, which
     * glibc keeps for reuse, holds only what the thread left behind. */
    if (!m->writable || m->executable || (m->path[0] != '\0' && strcmp(m->path, "[heap]") != 0) ||
        is_stack(c, m) || c->guard_end == m->start)
        return;
    uintptr_t at = m->start;
    for (size_t i = 0; i < c->nskip && at < m->end; i++) {
        const struct hwt_leak_range *r = &c->skip[i];
        if (r->hi <= at)
            continue;
        if (r->lo >= m->end)
            break;
        if (r->lo > at)
            c->ok &= hwt_leak_graph_add_root(c->g, at, r->lo);
        at = r->hi;
    }
    if (at < m->end)
        c->ok &= hwt_leak_graph_add_root(c->g, at, m->end);
}

/* Whether [lo, hi) lies in one of c's skip ranges: the heap's own mappings, whose
 * inaccessible parts (a region's address space while it is being set up, a large object's
 * guards) are not a thread's guard page. */
static bool skipped(const struct thread_ctx *c, uintptr_t lo, uintptr_t hi)
{
    size_t a = 0, b = c->nskip; /* the last range starting at or below lo */
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (c->skip[mid].lo <= lo)
            a = mid;
        else
            b = mid;
    }
    return c->nskip > 0 && c->skip[a].lo <= lo && hi <= c->skip[a].hi;
}

static bool mapping_cb(const struct hwt_mapping *m, void *arg)
{
    struct thread_ctx *c = arg;
    if (!m->readable) {
        /* a program's mapping right above an inaccessible part of the heap is no thread
         * stack (the program maps into the gaps next to the heap's mappings as anywhere) */
        if (!m->writable && !m->executable && m->path[0] == '\0' && !skipped(c, m->start, m->end))
            c->guard_end = m->end;
        return true;
    }
    add_thread(c, m, c->caller_sp, c->caller_tp);
    for (unsigned i = 0; i < c->w->count; i++) {
        const struct hwt_leak_thread *t = &c->w->threads[i];
        if (t->tid > 0 && t->stopped)
            add_thread(c, m, t->sp, t->tp);
    }
    add_anonymous(c, m);
    return true;
}

bool hwt_leak_roots_threads(struct hwt_leak_graph *g, const struct hwt_leak_world *w,
                            uintptr_t caller_sp, const struct hwt_leak_range *skip, size_t nskip)
{
    struct thread_ctx c = {g, w, caller_sp, hwt_arch_thread_pointer(), skip, nskip, 0, true};
    for (unsigned i = 0; i < w->count; i++) {
        const struct hwt_leak_thread *t = &w->threads[i];
        if (t->tid > 0 && t->stopped)
            c.ok &= hwt_leak_graph_add_root(g, (uintptr_t)t->regs,
                                            (uintptr_t)(t->regs + HWT_ARCH_CONTEXT_REGS));
    }
    if (!hwt_maps_foreach(mapping_cb, &c))
        return false;
    return c.ok;
}

static bool range_before(const void *a, const void *b)
{
    return ((const struct hwt_leak_range *)a)->lo < ((const struct hwt_leak_range *)b)->lo;
}

bool hwt_leak_roots_skip(const struct hwt_leak_graph *g, const struct hwt_leak_world *w,
                         struct hwt_leak_range **out, size_t *n, size_t *bytes)
{
    unsigned nmeta;
    const struct hwt_meta_range *meta = hwt_meta_ranges(&nmeta);
    uint32_t nregions = __atomic_load_n(&hwt_slab_region_count, __ATOMIC_ACQUIRE);
    size_t nlarge = 0;
    for (size_t i = 0; i < g->count; i++)
        nlarge += (g->objects[i].marks & HWT_LEAK_LARGE) != 0;
    uintptr_t unused_lo[2], unused_hi[2];
    unsigned nunused = hwt_large_map_unused(unused_lo, unused_hi);
    size_t cap = nmeta + nregions + nlarge + nunused + 4;
    *bytes = hwt_align_up(cap * sizeof(**out), hwt_os_page_size);
    struct hwt_leak_range *r = hwt_os_map(*bytes, false);
    if (r == NULL)
        return false;
    size_t k = 0;
    for (unsigned i = 0; i < nmeta; i++)
        r[k++] = (struct hwt_leak_range){meta[i].lo, meta[i].hi};
    for (uint32_t i = 0; i < nregions; i++)
        r[k++] = (struct hwt_leak_range){hwt_slab_regions[i].base,
                                         hwt_slab_regions[i].base + HWT_REGION_SIZE};
    for (size_t i = 0; i < g->count; i++) {
        const struct hwt_leak_object *o = &g->objects[i];
        /* its mapping, as hwt_large_map_size makes it: the guard page below, the object and
         * its guard tail to the page's end, and no further. A page more above was another
         * mapping's when one lay right there (CPython's arenas, next to a list's storage):
         * its pointers went unscanned, and objects only they held were reported leaked. A
         * mapping reused for a smaller object is longer: its unused end is scanned, which
         * can only hide a leak, never report one. */
        if (o->marks & HWT_LEAK_LARGE)
            r[k++] =
                (struct hwt_leak_range){o->start - hwt_os_page_size,
                                        o->start - hwt_os_page_size + hwt_large_map_size(o->size)};
    }
    /* untouched address space of the heap's own: scanning it would only fault it in */
    for (unsigned i = 0; i < nunused; i++)
        r[k++] = (struct hwt_leak_range){unused_lo[i], unused_hi[i]};
    r[k++] = (struct hwt_leak_range){(uintptr_t)g->objects, (uintptr_t)g->objects + g->map_bytes};
    r[k++] = (struct hwt_leak_range){(uintptr_t)g->roots, (uintptr_t)g->roots + g->roots_bytes};
    r[k++] = (struct hwt_leak_range){(uintptr_t)w->threads,
                                     (uintptr_t)w->threads + hwt_leak_world_bytes()};
    r[k++] = (struct hwt_leak_range){(uintptr_t)r, (uintptr_t)r + *bytes};
    hwt_sort(r, k, sizeof(*r), range_before);
    *out = r;
    *n = k;
    return true;
}
