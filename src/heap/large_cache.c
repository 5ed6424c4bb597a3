/* SPDX-License-Identifier: MIT */
/* The cache of freed page-backed mappings: which one a new object reuses, which leave it, and
 * which give their pages back when the resident budget (large_budget.c) is exceeded. It never
 * maps or unmaps; large.c does, outside its lock. */
#include "large_cache.h"

#include <limits.h>

#include "align.h"
#include "arch/mte.h"
#include "os.h"
#include "tag.h"

/* Freed mappings stay mapped and tagged free (a use after free faults as a tag mismatch)
 * and a new allocation reuses them without a system call. The cache keeps address space
 * generously (a program that churns big buffers reuses them without mmap/munmap); the
 * resident budget (large_budget.c) bounds the memory. */
#define CACHE_MAX_ENTRIES 1024u /* 256 unmapped and remapped 2 threads' 32 KiB..1 MiB objects */
#define CACHE_MAX_BYTES ((size_t)1 << 30)
#define COLD_WALK_MAX 64u /* cold mappings a free looks at for pages to give back */
/* An untagged object of LOOSE_MIN bytes or more may take a cached untagged mapping
 * up to LOOSE_FIT times its size (others: FIT_MAX, and tagged ones' retag pass covers
 * only the object): a program churning buffers of 5..25 MiB then reuses warm pages instead
 * of faulting them in. The taker of a mapping over FIT_MAX times its need gives back the
 * pages past its object (hwt_large_cache_taken), so a live object holds no more resident memory
 * than with a close fit. Not for smaller objects: with 32 KiB..1 MiB ones, that madvise and the
 * refaults of the big mappings' pages it gave back cost more than it saved. */
#define FIT_MAX 2u /* the largest mapping for an object, in times its need */
#define LOOSE_FIT 8u
#define LOOSE_MIN ((size_t)4 << 20)
/* A cached mapping fits closely when it is at most 1/CLOSE_FIT_SLACK bigger than needed; a
 * new object looks for one among this many fitting mappings before it takes a bigger one. */
#define CLOSE_FIT_SLACK 8u
#define CLOSE_FIT_SCAN 16u

/* A doubly linked list of records through their link[k]. */
struct list {
    struct hwt_large *head, *tail;
};

static void list_push(struct list *ls, struct hwt_large *l, unsigned k, bool at_head)
{
    struct hwt_large *prev = at_head ? NULL : ls->tail, *next = at_head ? ls->head : NULL;
    l->link[k].prev = prev;
    l->link[k].next = next;
    if (prev != NULL)
        prev->link[k].next = l;
    else
        ls->head = l;
    if (next != NULL)
        next->link[k].prev = l;
    else
        ls->tail = l;
}

static void list_remove(struct list *ls, struct hwt_large *l, unsigned k)
{
    struct hwt_large_link *n = &l->link[k];
    if (n->prev != NULL)
        n->prev->link[k].next = n->next;
    else
        ls->head = n->next;
    if (n->next != NULL)
        n->next->link[k].prev = n->prev;
    else
        ls->tail = n->prev;
    n->next = n->prev = NULL;
}

/* Cached mappings are also filed by mapping size, per kind (tagged or not), in bins of a
 * quarter power of two of pages, so a new object looks only at mappings of its size
 * instead of walking the whole cache under the lock: with 2 threads churning 32 KiB..1 MiB
 * objects natively, that walk (a cache miss per record) was most of the lock's hold time,
 * and the other thread slept on the futex. */
#define BIN_SUB 4u /* bins per power of two (2 bits under the top bit) */
#define BIN_COUNT 80u
static struct list bins[2][BIN_COUNT]; /* newest first */

/* Cached mappings by kind (untagged, tagged) and warmth (pages given back, warm), oldest
 * first: the budget walks only the warm ones of a kind, eviction takes the cold ones first. */
static struct list ages[2][2];
static uint64_t link_seq; /* stamps each mapping linked as the newest */
static uint32_t cache_entries;
static size_t cache_bytes;
static size_t cache_resident[2]; /* bytes of cached mappings not given back, by mte */

static bool warm(const struct hwt_large *c)
{
    return hwt_large_cache_warm(c);
}

/* The largest mapping that may serve an object whose mapping needs need bytes. */
static size_t most_for(size_t need, bool mte)
{
    return (!mte && need >= LOOSE_MIN ? LOOSE_FIT : FIT_MAX) * need;
}

static bool fits(const struct hwt_large *c, size_t need, size_t size, size_t align, bool mte)
{
    return c->mte == mte && c->map_size >= need && c->map_size <= most_for(need, mte) &&
           (c->start & (align - 1)) == 0 &&
           c->start + hwt_align_up(size, HWT_GRANULE) + HWT_GRANULE <= c->map_start + c->map_size;
}

/* The bin of mappings of map_size bytes: a quarter power of two of pages, rounded down (a
 * bin each for 0..3 pages). Never decreasing with the size. */
static unsigned bin_of(size_t map_size)
{
    size_t pages = map_size / hwt_os_page_size;
    if (pages < BIN_SUB)
        return (unsigned)pages;
    unsigned log = 63u - (unsigned)__builtin_clzll((unsigned long long)pages);
    unsigned b = log * BIN_SUB + (unsigned)((pages >> (log - 2)) & (BIN_SUB - 1));
    return b < BIN_COUNT ? b : BIN_COUNT - 1;
}

static struct list *bin_list(const struct hwt_large *l)
{
    return &bins[l->mte != 0][bin_of(l->map_size)];
}

/* The list l is on while cached: of its kind, warm or with its pages given back. */
static struct list *age_list(const struct hwt_large *l)
{
    return &ages[l->mte != 0][warm(l)];
}

static void unlink_locked(struct hwt_large *l)
{
    list_remove(bin_list(l), l, HWT_LARGE_BY_SIZE);
    list_remove(age_list(l), l, HWT_LARGE_BY_AGE);
    cache_entries--;
    cache_bytes -= l->map_size;
    cache_resident[l->mte != 0] -= l->resident;
}

/* Links l into the cache as the newest, or (its pages just given back) as the oldest, and
 * counts it. */
static void link_locked(struct hwt_large *l, bool oldest)
{
    l->seq = oldest ? 0 : ++link_seq;
    list_push(age_list(l), l, HWT_LARGE_BY_AGE, oldest);
    list_push(bin_list(l), l, HWT_LARGE_BY_SIZE, !oldest);
    cache_entries++;
    cache_bytes += l->map_size;
    cache_resident[l->mte != 0] += l->resident;
}

static bool close_fit(const struct hwt_large *c, size_t need)
{
    return c->map_size - need <= need / CLOSE_FIT_SLACK;
}

/* Whether c, fitting, serves an object whose mapping needs need bytes better than best. A
 * close fit keeps the fewest pages resident past the object. Untagged: a warm mapping first,
 * as a cold one refaults every page the object touches and a warm one costs nothing to
 * reuse; then a close fit, then the smaller. Tagged (retagged with DC GVA either way, and
 * their budget keeps few warm): the newest close fit, else the smaller; the newest left the
 * boot trace's heap 212 KiB smaller than a warm close fit first. */
static bool better(const struct hwt_large *c, const struct hwt_large *best, size_t need)
{
    if (!c->mte && warm(c) != warm(best))
        return warm(c);
    if (close_fit(c, need) != close_fit(best, need))
        return close_fit(c, need);
    if (c->mte && close_fit(c, need))
        return c->seq > best->seq;
    return c->map_size < best->map_size;
}

/* All of a stash's mappings are warm: the smallest that fits. */
unsigned hwt_large_cache_stash_pick(struct hwt_large *const *entries, unsigned n, size_t need,
                                    size_t size, size_t align)
{
    unsigned best = n;
    for (unsigned i = 0; i < n; i++) {
        if (fits(entries[i], need, size, align, false) &&
            (best == n || entries[i]->map_size < entries[best]->map_size))
            best = i;
    }
    return best;
}

struct hwt_large *hwt_large_cache_take_locked(size_t need, size_t size, size_t align, bool mte)
{
    /* From the bin of need up to that of the largest mapping that may serve it, newest first
     * in each bin (the cold ones, whose pages went back, at its end): the best of the first
     * CLOSE_FIT_SCAN that fit (the pages a bigger mapping's last tenant touched past the new
     * object stay resident while the object lives). */
    struct hwt_large *best = NULL;
    unsigned seen = 0;
    bool done = false;
    unsigned last = bin_of(most_for(need, mte));
    for (unsigned b = bin_of(need); b <= last && !done; b++) {
        for (struct hwt_large *c = bins[mte][b].head; c != NULL && !done;
             c = c->link[HWT_LARGE_BY_SIZE].next) {
            if (!fits(c, need, size, align, mte))
                continue;
            if (best == NULL || better(c, best, need))
                best = c;
            /* nothing beats an untagged warm close fit */
            done = (!mte && warm(best) && close_fit(best, need)) || ++seen >= CLOSE_FIT_SCAN;
        }
    }
    if (best != NULL)
        unlink_locked(best);
    return best;
}

/* The mapping to unmap first: a cold one (its pages are gone already), else the oldest warm
 * untagged one, else the oldest warm tagged one. */
static struct hwt_large *oldest_locked(void)
{
    if (ages[0][0].head != NULL)
        return ages[0][0].head;
    if (ages[1][0].head != NULL)
        return ages[1][0].head;
    return ages[0][1].head != NULL ? ages[0][1].head : ages[1][1].head;
}

void hwt_large_cache_taken(const struct hwt_large *l, size_t need, size_t usable)
{
    if (l->map_size <= FIT_MAX * need)
        return; /* not a loose fit: its pages stay as they are */
    uintptr_t from = hwt_align_up(l->start + usable + HWT_GRANULE, hwt_os_page_size);
    uintptr_t end = l->map_start + l->map_size;
    if (from < end)
        hwt_os_decommit((void *)from, end - from);
}

/* Whether a cached mapping still holds pages past its guard page below the object. */
static bool holds_pages(const struct hwt_large *c)
{
    return c->resident > c->start - c->map_start;
}

/* Takes mappings of ls holding pages (oldest first, at most max_steps looked at, never the
 * freed one) out of the cache into released[] until the kind of freed is within limit: out of
 * the cache until the caller has given their pages back. Those of the warm list are checked
 * first (hwt_large_cache_release) when untagged; cold ones that kept pages give them back. */
static inline __attribute__((always_inline)) void
release_over_locked(struct list *ls, const struct hwt_large *freed, size_t limit,
                    unsigned max_steps, struct hwt_large_release *released, unsigned *nreleased)
{
    const size_t *resident = &cache_resident[freed->mte != 0];
    bool warm_list = ls == &ages[freed->mte != 0][1];
    unsigned steps = 0;
    struct hwt_large *next;
    for (struct hwt_large *c = ls->head; c != NULL && *resident > limit && steps++ < max_steps;
         c = next) {
        next = c->link[HWT_LARGE_BY_AGE].next;
        if (c == freed || !holds_pages(c))
            continue;
        if (*nreleased == HWT_LARGE_RELEASE_MAX)
            break;        /* the next frees go on */
        unlink_locked(c); /* takes its bytes off; the return puts back what stays */
        size_t size = hwt_large_cache_forget_pages(c);
        released[(*nreleased)++] =
            (struct hwt_large_release){c, c->start, size, !c->mte && warm_list, 0};
    }
}

unsigned hwt_large_cache_put_locked(struct hwt_large *l, bool keep, unsigned frees,
                                    struct hwt_large **evicted, struct hwt_large_release *released,
                                    unsigned *nreleased)
{
    *nreleased = 0;
    hwt_large_cache_unlive_locked(l->map_size, frees);
    if (!keep)
        return 0;
    link_locked(l, false);
    /* Over the budget: the oldest cached mappings of the kind give their pages back first,
     * the warm ones, then the first cold ones that kept some (hwt_large_cache_release) */
    size_t limit = hwt_large_cache_budget_locked(l->mte);
    struct list *kind = ages[l->mte != 0];
    release_over_locked(&kind[1], l, limit, UINT_MAX, released, nreleased);
    release_over_locked(&kind[0], l, limit, COLD_WALK_MAX, released, nreleased);
    unsigned n = 0;
    while (n < HWT_LARGE_EVICT_MAX &&
           (cache_entries > CACHE_MAX_ENTRIES || cache_bytes > CACHE_MAX_BYTES)) {
        struct hwt_large *oldest = oldest_locked();
        if (oldest == NULL)
            break;
        unlink_locked(oldest);
        evicted[n++] = oldest;
    }
    return n;
}

void hwt_large_cache_return_locked(const struct hwt_large_release *released, unsigned n)
{
    for (unsigned i = n; i-- > 0;) {
        released[i].l->resident += released[i].held;
        link_locked(released[i].l, true);
    }
}

unsigned hwt_large_cache_evict_locked(struct hwt_large **out, unsigned max)
{
    unsigned n = 0;
    struct hwt_large *l;
    while (n < max && (l = oldest_locked()) != NULL) {
        unlink_locked(l);
        out[n++] = l;
    }
    return n;
}

size_t hwt_large_cache_trim_locked(void)
{
    size_t given = 0;
    for (unsigned k = 0; k < 2; k++) {
        /* cold ones that kept the few pages they had (hwt_large_cache_release) stay cold */
        for (struct hwt_large *c = ages[k][0].head; c != NULL; c = c->link[HWT_LARGE_BY_AGE].next) {
            if (!holds_pages(c))
                continue;
            size_t before = c->resident;
            hwt_large_cache_give_back(c);
            cache_resident[k] -= before - c->resident;
            given += before - c->resident;
        }
        while (ages[k][1].head != NULL) {
            struct hwt_large *c = ages[k][1].head;
            unlink_locked(c); /* it changes lists */
            size_t before = c->resident;
            hwt_large_cache_give_back(c);
            given += before - c->resident;
            link_locked(c, true);
        }
    }
    return given;
}

size_t hwt_large_cache_resident_locked(void)
{
    return cache_resident[0] + cache_resident[1];
}
