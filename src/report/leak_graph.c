/* SPDX-License-Identifier: MIT */
/* The leak check's object table and mark: live objects from the heap walks, sorted by
 * address; a conservative scan of every aligned word of the roots and of reached objects.
 * A word refers to an object when its address falls inside it (interior pointers count)
 * and, unless tags are ignored, its tag is the object's or 0 (a pointer whose tag the
 * program stripped). It reads object memory with Tag Check Override set by the caller, and
 * never writes to the heap. */
#include "leak_graph.h"

#include <string.h>

#include "arch/mte.h"
#include "large.h"
#include "os.h"
#include "slab.h"
#include "sort.h"

#define WORD sizeof(uintptr_t)
/* A conservative scan reads whole segments and objects, past what a sanitizer that
 * instruments the core in its tests considers any one variable. */
#define SCAN_ANYWHERE __attribute__((no_sanitize("address", "hwaddress")))
#define ROOTS_CAP 65536u
#define SLACK 1024u /* objects a racing thread may add between the count and the fill */

static void count_one(const struct hwt_object *obj, void *arg)
{
    (void)obj;
    (*(size_t *)arg)++;
}

static void add_one(const struct hwt_object *obj, void *arg)
{
    struct hwt_leak_graph *g = arg;
    if (g->count == g->cap)
        return;
    struct hwt_leak_object *o = &g->objects[g->count++];
    o->start = obj->start;
    o->size = obj->requested;
    o->stack = obj->alloc_stack;
    o->tag = (uint8_t)obj->tag;
    o->marks = obj->large ? HWT_LEAK_LARGE : 0;
}

static bool object_before(const void *a, const void *b)
{
    return ((const struct hwt_leak_object *)a)->start < ((const struct hwt_leak_object *)b)->start;
}

bool hwt_leak_graph_init(struct hwt_leak_graph *g)
{
    memset(g, 0, sizeof(*g));
    g->roots_cap = ROOTS_CAP;
    g->roots_bytes = hwt_align_up(g->roots_cap * sizeof(*g->roots), hwt_os_page_size);
    g->roots = hwt_os_map(g->roots_bytes, false);
    return g->roots != NULL;
}

bool hwt_leak_graph_build(struct hwt_leak_graph *g)
{
    size_t n = 0;
    hwt_slab_walk_live(count_one, &n);
    hwt_large_walk_live(count_one, &n);
    g->cap = n + SLACK;
    size_t bytes = g->cap * (sizeof(*g->objects) + sizeof(*g->work));
    g->map_bytes = hwt_align_up(bytes, hwt_os_page_size);
    char *m = hwt_os_map(g->map_bytes, false);
    if (m == NULL)
        return false;
    g->objects = (void *)m;
    g->work = (void *)(m + g->cap * sizeof(*g->objects));
    hwt_slab_walk_live(add_one, g);
    hwt_large_walk_live(add_one, g);
    hwt_sort(g->objects, g->count, sizeof(*g->objects), object_before);
    return true;
}

void hwt_leak_graph_free(struct hwt_leak_graph *g)
{
    if (g->objects != NULL)
        hwt_os_unmap(g->objects, g->map_bytes);
    if (g->roots != NULL)
        hwt_os_unmap(g->roots, g->roots_bytes);
    memset(g, 0, sizeof(*g));
}

bool hwt_leak_graph_add_root(struct hwt_leak_graph *g, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return true;
    if (g->nroots == g->roots_cap)
        return false;
    g->roots[g->nroots++] = (struct hwt_leak_range){lo, hi};
    return true;
}

long hwt_leak_graph_find(const struct hwt_leak_graph *g, uintptr_t addr)
{
    size_t lo = 0, hi = g->count;
    while (lo < hi) { /* the first object starting above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (g->objects[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const struct hwt_leak_object *o = &g->objects[lo - 1];
    /* a 0-byte object still owns its first byte */
    return addr - o->start < (o->size != 0 ? o->size : 1) ? (long)(lo - 1) : -1;
}

/* The object word refers to under the rule of bit, or -1. */
static long referent(const struct hwt_leak_graph *g, uintptr_t word, unsigned bit)
{
    uintptr_t addr = mte_untag((const void *)word);
    if (g->count == 0 || addr < g->objects[0].start)
        return -1;
    long i = hwt_leak_graph_find(g, addr);
    if (i < 0 || bit == HWT_LEAK_LOOSE)
        return i;
    unsigned tag = mte_ptr_tag((const void *)word);
    return tag == g->objects[i].tag || tag == 0 ? i : -1;
}

struct mark_state {
    struct hwt_leak_graph *g;
    size_t top;
    unsigned bit;
};

static void reach(struct mark_state *m, long i)
{
    struct hwt_leak_object *o = &m->g->objects[i];
    if (o->marks & m->bit)
        return;
    o->marks |= (uint8_t)m->bit;
    m->g->work[m->top++] = (uint32_t)i;
}

static SCAN_ANYWHERE void scan(struct mark_state *m, uintptr_t lo, uintptr_t hi)
{
    for (uintptr_t p = hwt_align_up(lo, WORD); p + WORD <= hi; p += WORD) {
        long i = referent(m->g, *(const volatile uintptr_t *)p, m->bit);
        if (i >= 0)
            reach(m, i);
    }
}

static void drain(struct mark_state *m)
{
    while (m->top > 0) {
        const struct hwt_leak_object *o = &m->g->objects[m->g->work[--m->top]];
        scan(m, o->start, o->start + o->size);
    }
}

void hwt_leak_graph_mark(struct hwt_leak_graph *g, unsigned bit)
{
    struct mark_state m = {g, 0, bit};
    for (size_t i = 0; i < g->count; i++)
        if (g->objects[i].marks & HWT_LEAK_IGNORED)
            reach(&m, (long)i);
    drain(&m);
    for (size_t r = 0; r < g->nroots; r++) {
        scan(&m, g->roots[r].lo, g->roots[r].hi);
        drain(&m);
    }
}

SCAN_ANYWHERE void hwt_leak_graph_mark_indirect(struct hwt_leak_graph *g, unsigned reached_bit)
{
    for (size_t i = 0; i < g->count; i++) {
        const struct hwt_leak_object *o = &g->objects[i];
        if (o->marks & (reached_bit | HWT_LEAK_IGNORED))
            continue;
        for (uintptr_t p = hwt_align_up(o->start, WORD); p + WORD <= o->start + o->size;
             p += WORD) {
            long j = referent(g, *(const volatile uintptr_t *)p, reached_bit);
            if (j >= 0 && (size_t)j != i && !(g->objects[j].marks & reached_bit))
                g->objects[j].marks |= HWT_LEAK_INDIRECT;
        }
    }
}
