/* SPDX-License-Identifier: MIT */
/* The resident budget of the cache of freed mappings: the recent peak of the live bytes it
 * follows, and which pages of a freed or cached mapping go back to the OS. It never links,
 * unlinks or picks a cached mapping; large_cache.c does, and large.c maps and unmaps. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "align.h"
#include "large_cache.h"
#include "large_record.h"
#include "options.h"
#include "os.h"
#include "tag.h"

/* Freed mappings bigger than this are unmapped rather than cached (hwt_large_cache_admit). */
#define CACHE_MAX_BLOCK ((size_t)64 << 20)
/* Pages of freed mappings kept resident, at most: a base plus the recent peak of the live
 * page-backed bytes, capped at 64 MiB or half that peak, whichever is more. A program
 * churning buffers then reuses them warm (glibc keeps such memory in its heap too: its top
 * up to a trim threshold of at most 64 MiB, and the holes between live chunks); one that is
 * done with them gets all but the base back as its peak decays, or everything from
 * malloc_trim. A flat cap made a program that replaces big buffers with new zeroed ones
 * (malloc-large) give pages back at every other free and fault far more pages than glibc;
 * following the peak keeps its time and faults at glibc's for a little more peak RSS,
 * about as much as tcmalloc holds. */
#define CACHE_RESIDENT_BASE ((size_t)2 << 20)
#define CACHE_RESIDENT_CAP ((size_t)64 << 20)
#define CACHE_RESIDENT_CAP_SHARE 2u /* the cap is at least 1/CAP_SHARE of the recent peak */
#define CACHE_RESIDENT_SHARE 1u     /* 1/SHARE of the peak; 2 left 5 faults/op, glibc 2.9 */
/* Tagged mappings (PROT_MTE) keep far less: retagging a warm mapping costs a DC GVA pass
 * anyway, so their pages save less time, and a tagged heap would otherwise hold several MiB
 * more than glibc's after start-up with the budget above. */
#define CACHE_TAGGED_BASE ((size_t)128 << 10)
#define CACHE_TAGGED_SHARE 64u
/* The recent peak falls toward the live bytes by 1/PEAK_DECAY of the gap per large free, so
 * after a few hundred frees without a return to the peak the budget follows the live bytes. */
#define PEAK_DECAY 256u
/* Freed objects this big give their pages back at once (kept mapped, as address space).
 * Untagged ones stay warm up to glibc's largest mmap threshold: a program that churns
 * buffers of several MiB (malloc-large) refaulted every page of each of them, several times
 * slower than glibc, which serves them from its heap once its dynamic threshold has grown. */
#define RELEASE_ON_FREE ((size_t)4 << 20)
#define RELEASE_UNTAGGED_ON_FREE ((size_t)32 << 20)
/* A tagged object of at least this many pages, most of them never touched, gives its pages
 * back instead of being retagged free: a use after free still faults (tag 0), the refaults
 * are few, and one madvise costs less than a DC GVA pass over pages nobody uses. */
#define RELEASE_TAGGED_PAGES 16u
/* An untagged mapping over the budget with less than 1/UNTOUCHED_SHARE of its pages resident
 * keeps them, counted (hwt_large_cache_release): programs that use only the ends of big
 * buffers (headers, ring buffers) made 2 threads give pages back 300 times in 8000
 * operations, a TLB shootdown each. */
#define UNTOUCHED_SHARE 4u

static size_t live_mapped; /* map bytes of live objects */
static size_t recent_peak; /* of live_mapped; see PEAK_DECAY */

size_t hwt_large_cache_budget_locked(bool mte)
{
    /* with 1 in N sampled, tagged mappings are about 1/N of the peak: their share grows
     * with N, so the few tagged ones are kept warm as the untagged are */
    uint32_t n = hwt_opts.sample < CACHE_TAGGED_SHARE ? hwt_opts.sample : CACHE_TAGGED_SHARE;
    size_t b = mte ? CACHE_TAGGED_BASE + recent_peak / (CACHE_TAGGED_SHARE / (n ? n : 1))
                   : CACHE_RESIDENT_BASE + recent_peak / CACHE_RESIDENT_SHARE;
    size_t cap = recent_peak / CACHE_RESIDENT_CAP_SHARE;
    if (cap < CACHE_RESIDENT_CAP)
        cap = CACHE_RESIDENT_CAP;
    return b < cap ? b : cap;
}

void hwt_large_cache_live_locked(size_t map_size)
{
    live_mapped += map_size;
    if (live_mapped > recent_peak)
        recent_peak = live_mapped;
}

void hwt_large_cache_unlive_locked(size_t map_size, unsigned frees)
{
    live_mapped -= map_size;
    for (unsigned i = 0; i < frees; i++)
        recent_peak -= (recent_peak - live_mapped) / PEAK_DECAY;
}

/* What giving the pages of an owned or cached object back changes in its record; returns
 * the bytes that go back (hwt_large_cache_give_back gives them): all from its start to the
 * mapping's end, past its area too (an earlier, bigger object of the mapping may have left pages
 * there). They read as zero with tag 0 afterwards, so a tagged stale pointer
 * still faults, and the area becomes empty: a next object tags what it uses, and the rest
 * stays tag 0 and untouched, which faults for every tagged pointer as the free tag does. */
size_t hwt_large_cache_forget_pages(struct hwt_large *l)
{
    size_t span = l->map_start + l->map_size - l->start;
    l->resident = l->map_size - span;
    l->area = 0;
    l->area_tag = HWT_TAG_UNTAGGED;
    return span;
}

void hwt_large_cache_give_back(struct hwt_large *l)
{
    hwt_os_decommit((void *)l->start, hwt_large_cache_forget_pages(l));
}

/* A tagged object whose pages were mostly never touched (resident counts the pages the OS
 * holds: on MTE hardware tagging makes a page resident, so only tagged, untouched ones miss).
 */
static bool mostly_untouched(struct hwt_large *l)
{
    size_t pages = l->area / hwt_os_page_size;
    if (!l->mte || l->area_tag == HWT_TAG_UNTAGGED || l->area_tag == HWT_TAG_FREE ||
        pages < RELEASE_TAGGED_PAGES)
        return false;
    return 2 * hwt_os_resident_pages((void *)l->start, pages * hwt_os_page_size) < pages;
}

bool hwt_large_cache_admit(struct hwt_large *l)
{
    /* Too big to keep: unmapped, so neither its pages nor its tags need any work (a later
     * access faults as unmapped). */
    if (l->map_size > CACHE_MAX_BLOCK)
        return false;
    l->resident = l->map_size;
    if (l->area >= (l->mte ? RELEASE_ON_FREE : RELEASE_UNTAGGED_ON_FREE) || mostly_untouched(l))
        hwt_large_cache_give_back(l);
    return true;
}

void hwt_large_cache_release(struct hwt_large_release *r)
{
    r->held = 0;
    /* Untagged only: a tagged mapping's bookkeeping has forgotten its free tags. */
    if (r->checked) {
        size_t held = hwt_os_resident_pages((void *)r->start, r->size) * hwt_os_page_size;
        if (held * UNTOUCHED_SHARE < r->size) {
            r->held = held;
            return;
        }
    }
    hwt_os_decommit((void *)r->start, r->size);
}
