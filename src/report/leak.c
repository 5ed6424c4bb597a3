/* SPDX-License-Identifier: MIT */
/* The leak check's sequence (roots, stop, mark twice, report, resume) and the program's
 * controls: ignored objects, allocations made while checks are disabled, root regions.
 * One check at a time; it never allocates from the heap and never runs in a signal
 * handler. */
#include "leak.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "arch/mte.h"
#include "fmt.h"
#include "leak_graph.h"
#include "leak_print.h"
#include "leak_roots.h"
#include "leak_world.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "sink.h"
#include "stackdepot.h"
#include "tcache.h"

#define STOP_DEADLINE_MS 5000u
#define IGNORED_CAP 65536u /* a power of two */
#define ROOT_REGIONS_MAX 64u

/* Ignored objects as (untagged start | tag << 56), open addressing; 0 = empty. An entry
 * outlives its object: a later object in the same place is ignored too only if it gets
 * the same tag (never the next one: the tag policy excludes the previous tag). */
static struct hwt_lock controls_lock = HWT_LOCK_INIT;
static uint64_t *ignored;
static unsigned ignored_count;
static bool ignored_full_said;
static struct hwt_leak_range regions[ROOT_REGIONS_MAX]; /* controls_lock */
static unsigned nregions;
static int check_running;
static __thread unsigned disabled_depth;

static uint64_t ignore_key(const void *ptr)
{
    return (uint64_t)mte_untag(ptr) | (uint64_t)mte_ptr_tag(ptr) << 56;
}

static unsigned slot_of_key(uint64_t key)
{
    return (unsigned)((key >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (IGNORED_CAP - 1);
}

static bool ignored_has(uint64_t key)
{
    if (ignored == NULL)
        return false;
    for (unsigned i = slot_of_key(key), n = 0; n < IGNORED_CAP;
         i = (i + 1) & (IGNORED_CAP - 1), n++) {
        if (ignored[i] == key)
            return true;
        if (ignored[i] == 0)
            return false;
    }
    return false;
}

bool hwt_leak_ignore(const void *ptr)
{
    if (ptr == NULL)
        return false;
    uint64_t key = ignore_key(ptr);
    bool ok = false;
    hwt_lock(&controls_lock);
    if (ignored == NULL)
        ignored = hwt_meta_alloc(IGNORED_CAP * sizeof(*ignored), 64);
    if (ignored != NULL && ignored_count < IGNORED_CAP / 2) {
        unsigned i = slot_of_key(key);
        while (ignored[i] != 0 && ignored[i] != key)
            i = (i + 1) & (IGNORED_CAP - 1);
        ignored_count += ignored[i] == 0;
        ignored[i] = key;
        ok = true;
    } else if (!ignored_full_said) {
        ignored_full_said = true;
        hwt_sink_notice("hwtag: too many objects ignored for leak checks; the rest are checked\n");
    }
    hwt_unlock(&controls_lock);
    return ok;
}

void hwt_leak_disable(void)
{
    disabled_depth++;
    hwt_self.flags |= HWT_TCACHE_NOLEAK;
}

void hwt_leak_enable(void)
{
    if (disabled_depth > 0 && --disabled_depth == 0)
        hwt_self.flags &= ~(uint32_t)HWT_TCACHE_NOLEAK;
}

bool hwt_leak_disabled(void)
{
    return disabled_depth != 0;
}

void hwt_leak_register_root(const void *begin, size_t size)
{
    hwt_lock(&controls_lock);
    if (nregions < ROOT_REGIONS_MAX)
        regions[nregions++] = (struct hwt_leak_range){(uintptr_t)begin, (uintptr_t)begin + size};
    hwt_unlock(&controls_lock);
}

bool hwt_leak_unregister_root(const void *begin, size_t size)
{
    bool found = false;
    hwt_lock(&controls_lock);
    for (unsigned i = 0; i < nregions && !found; i++) {
        if (regions[i].lo == (uintptr_t)begin && regions[i].hi == (uintptr_t)begin + size) {
            regions[i] = regions[--nregions];
            found = true;
        }
    }
    hwt_unlock(&controls_lock);
    return found;
}

/* Whether the allocation of stack id was made by the dynamic loader: its first frame (the
 * caller of malloc) in the loader's code. A small cache by id: objects come by address. */
static bool by_loader(uint32_t id, const struct hwt_leak_range *loader)
{
    enum { SLOTS = 256 };
    static uint32_t ids[SLOTS];
    static bool answers[SLOTS];
    unsigned k = (id * 0x9E3779B1u) >> 24;
    if (id == 0 || loader->hi == 0)
        return false;
    if (ids[k] == id)
        return answers[k];
    uintptr_t pcs[HWT_STACK_MAX_FRAMES];
    uint32_t tid;
    unsigned n = hwt_stackdepot_get(id, &tid, pcs, HWT_STACK_MAX_FRAMES);
    ids[k] = id;
    answers[k] = n > 0 && pcs[0] >= loader->lo && pcs[0] < loader->hi;
    return answers[k];
}

/* The program's ignored objects, and the loader's, are roots of their own. */
static void mark_ignored(struct hwt_leak_graph *g, const struct hwt_leak_range *loader)
{
    for (size_t i = 0; i < g->count; i++) {
        struct hwt_leak_object *o = &g->objects[i];
        if (ignored_has((uint64_t)o->start | (uint64_t)o->tag << 56) || by_loader(o->stack, loader))
            o->marks |= HWT_LEAK_IGNORED;
    }
}

/* Leaked objects (not reached with tags matched) that a mark with tags ignored reaches. */
static size_t count_hidden(const struct hwt_leak_graph *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->count; i++) {
        unsigned m = g->objects[i].marks;
        n += !(m & (HWT_LEAK_REACHED | HWT_LEAK_IGNORED)) && (m & HWT_LEAK_LOOSE);
    }
    return n;
}

static void skipped(const char *why)
{
    char line[160];
    struct hwt_buf b;
    hwt_fmt_init(&b, line, sizeof(line));
    hwt_fmt_printf(&b, "hwtag: leak check skipped: %s\n", why);
    hwt_sink_notice(line);
}

/* With the world stopped: every root, the two marks, the report. */
static size_t check_stopped(struct hwt_leak_graph *g, const struct hwt_leak_world *w,
                            uintptr_t caller_sp, const struct hwt_leak_range *loader)
{
    struct hwt_leak_range *skip = NULL;
    size_t nskip = 0, skip_bytes = 0;
    bool ok = hwt_leak_graph_build(g) && hwt_leak_roots_skip(g, w, &skip, &nskip, &skip_bytes) &&
              hwt_leak_roots_threads(g, w, caller_sp, skip, nskip);
    if (skip != NULL)
        hwt_os_unmap(skip, skip_bytes);
    if (!ok) {
        skipped("out of memory for its tables");
        return 0;
    }
    hwt_lock(&controls_lock); /* the program's own thread: nobody stopped holds it */
    for (unsigned i = 0; i < nregions; i++)
        hwt_leak_graph_add_root(g, regions[i].lo, regions[i].hi);
    hwt_unlock(&controls_lock);
    mark_ignored(g, loader);
    bool match = hwt_opts.leak_tags == HWT_LEAK_TAGS_MATCH;
    hwt_leak_graph_mark(g, match ? HWT_LEAK_REACHED : HWT_LEAK_LOOSE);
    size_t hidden = 0;
    if (match) {
        hwt_leak_graph_mark(g, HWT_LEAK_LOOSE);
        hidden = count_hidden(g);
    } else {
        for (size_t i = 0; i < g->count; i++)
            g->objects[i].marks |= (g->objects[i].marks & HWT_LEAK_LOOSE) ? HWT_LEAK_REACHED : 0;
    }
    hwt_leak_graph_mark_indirect(g, HWT_LEAK_REACHED);
    return hwt_leak_print(g, hidden);
}

/* Below hwt_leak_check's frame, where the caller's callee-saved registers went. */
static __attribute__((noinline)) enum hwt_leak_outcome check_from(void)
{
    volatile uintptr_t here = 0;
    uintptr_t caller_sp = (uintptr_t)&here;
    struct hwt_leak_graph g;
    struct hwt_leak_world w;
    struct hwt_leak_range loader;
    enum hwt_leak_outcome out = HWT_LEAK_SKIPPED;

    hwt_leak_roots_loader(&loader);
    if (!hwt_leak_graph_init(&g) || !hwt_leak_roots_modules(&g)) {
        skipped("out of memory for its tables");
        hwt_leak_graph_free(&g);
        return out;
    }
    if (!hwt_leak_world_stop(&w, STOP_DEADLINE_MS)) {
        char why[120];
        struct hwt_buf b;
        hwt_fmt_init(&b, why, sizeof(why));
        if (w.missing_tid > 0)
            hwt_fmt_printf(&b,
                           "thread %d did not stop within %u ms (it blocks signals, or is "
                           "stuck)",
                           w.missing_tid, STOP_DEADLINE_MS);
        else
            hwt_fmt_printf(&b, "no free real-time signal to stop the threads with");
        skipped(why);
        hwt_leak_graph_free(&g);
        return out;
    }
    size_t leaked = check_stopped(&g, &w, caller_sp, &loader);
    hwt_leak_world_resume(&w);
    hwt_leak_graph_free(&g);
    return leaked > 0 ? HWT_LEAK_FOUND : HWT_LEAK_NONE;
}

enum hwt_leak_outcome hwt_leak_check(void)
{
    int expected = 0;
    if (!__atomic_compare_exchange_n(&check_running, &expected, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return HWT_LEAK_SKIPPED;
    /* The caller's callee-saved registers go to this frame: scanned with the stack. */
    __builtin_unwind_init();
    mte_tco_set();
    enum hwt_leak_outcome out = check_from();
    mte_tco_clear();
    __atomic_store_n(&check_running, 0, __ATOMIC_RELEASE);
    return out;
}

static int at_exit_done;

void hwt_leak_at_exit_done(void)
{
    __atomic_store_n(&at_exit_done, 1, __ATOMIC_RELEASE);
}

void hwt_leak_check_fatal(void)
{
    if (hwt_leak_check() != HWT_LEAK_FOUND || hwt_opts.leak_exitcode == 0)
        return;
    fflush(NULL); /* exit's own flush would come after this, and _exit skips it */
    _exit(hwt_opts.leak_exitcode);
}

void hwt_leak_at_exit(void)
{
    if (hwt_opts.detect_leaks == HWT_ON && !__atomic_exchange_n(&at_exit_done, 1, __ATOMIC_ACQ_REL))
        hwt_leak_check_fatal();
}
