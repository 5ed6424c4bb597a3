/* SPDX-License-Identifier: MIT */
/* Small objects: spans carved from PROT_MTE regions reserved on demand, slot metadata out of
 * band, per-class central lists. It never stores anything inside user memory. */
#include "slab.h"

#include "arch/mte.h"
#include "check.h"
#include "lock.h"
#include "meta.h"
#include "options.h"
#include "os.h"
#include "size_class.h"
#include "tag.h"

enum { LIST_NONE, LIST_PARTIAL, LIST_EMPTY, LIST_RELEASED };

#define MAX_REGIONS HWT_MAX_REGIONS
#define REGION_SIZE HWT_REGION_SIZE
#define COMMIT_STEP ((size_t)4 << 20)
#define BITS_PER_WORD 64u
/* Fully free spans kept committed for reuse, per class: one for classes of slots up to
 * KEEP_EMPTY_MAX_SLOT, none for bigger ones (a python3 start-up frees 8 KiB buffers now and
 * then, and each empty 64 KiB span it kept would be resident when it is done). A class that
 * has taken back KEEP_CHURN_RETAKES spans it gave away churns them (python3 start-up takes
 * back 41 at most in one class): it keeps its spans committed up to the most it had in use
 * lately (HWT_SLAB_PEAK_WINDOW), at least KEEP_CHURN of them and at most
 * HWT_SLAB_KEEP_CHURN_MAX_BYTES. Without it, programs that hand objects between threads
 * (rpmalloc's rptest) gave back spans and faulted them in again thousands of times, and
 * were slower than glibc with several times its page faults; a fixed handful kept still
 * left a producer and a consumer of small objects (xmalloc-test) cycling one span many
 * times a second. Keeping up to the recent peak is what stops the cycle. */
#define KEEP_EMPTY_MAX_SLOT 4096u
#define KEEP_CHURN 4u
#define KEEP_CHURN_RETAKES 64u
/* Once an arena's classes have taken back KEEP_CHURN_ARENA_RETAKES spans together, a class of
 * it churns from KEEP_CHURN_JOIN_RETAKES: rptest spreads its churn over some 40 classes an
 * arena, and 64 take-backs each gave back 2613 spans and faulted 2290 in again (27k faults,
 * glibc 14k); with this rule 978 and 956 (14.6k faults). python3 start-up takes back 68 in
 * all. */
#define KEEP_CHURN_ARENA_RETAKES 256u
#define KEEP_CHURN_JOIN_RETAKES 8u

struct central {
    struct hwt_lock lock;
    struct hwt_span *partial;  /* nfree > 0 */
    struct hwt_span *empty;    /* fully free, committed spans kept for reuse, newest first */
    struct hwt_span *released; /* fully free, pages given back to the OS */
    uint32_t nempty;           /* spans on empty */
    uint32_t retakes;          /* released spans taken back, up to KEEP_CHURN_RETAKES */
    uint32_t in_use;           /* spans with a slot taken (not on empty or released) */
    /* the most spans in use in this window of span events, and in the last one */
    uint32_t peak_now, peak_last;
    uint32_t events; /* spans taken into use or emptied in this window */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct central) == 64, "one line a class");

/* From a page boundary: arena 0's lists (4 KiB) take one page, not two. */
static struct central centrals[HWT_ARENAS][HWT_NUM_CLASSES] __attribute__((aligned(4096)));

static struct hwt_lock heap_lock = HWT_LOCK_INIT;
/* released spans taken back by each arena's classes, up to KEEP_CHURN_ARENA_RETAKES (atomic) */
static uint32_t arena_retakes[HWT_ARENAS];
struct hwt_region hwt_slab_regions[HWT_MAX_REGIONS];
uint32_t hwt_slab_region_count;
struct hwt_span **hwt_slab_regmap[(size_t)1 << HWT_REGMAP_BITS];
static uint64_t heap_mapped_bytes; /* committed span bytes, less released ones */
/* The region new spans are carved from, NULL before the first; heap_lock */
static struct hwt_region *current;
/* The base of a region slot whose region was given back (hwt_slab_unmap_free_regions): no
 * user address lies there, so no lookup finds it. */
#define REGION_DEAD ((uintptr_t)0 - REGION_SIZE)

void hwt_slab_init(void)
{
    hwt_size_class_init();
}

/* A slot of the region table for a new region: one whose region was given back (its page
 * map all NULL), else the next unused one; NULL when the table is full. */
static struct hwt_region *region_slot_locked(void)
{
    for (uint32_t i = 0; i < hwt_slab_region_count; i++)
        if (hwt_slab_regions[i].base == REGION_DEAD)
            return &hwt_slab_regions[i];
    return hwt_slab_region_count < MAX_REGIONS ? &hwt_slab_regions[hwt_slab_region_count] : NULL;
}

static struct hwt_region *region_new_locked(void)
{
    struct hwt_region *r = region_slot_locked();
    if (r == NULL)
        return NULL;
    bool fresh = r == &hwt_slab_regions[hwt_slab_region_count];
    void *base = hwt_os_reserve(REGION_SIZE, REGION_SIZE);
    struct hwt_span **map =
        fresh ? hwt_meta_alloc((REGION_SIZE / HWT_MAP_PAGE) * sizeof(*map), 64) : r->pagemap;
    if (base == NULL || map == NULL) {
        if (base != NULL)
            hwt_os_unmap(base, REGION_SIZE);
        return NULL;
    }
    r->cursor = r->committed = (uintptr_t)base;
    r->pagemap = map;
    __atomic_store_n(&r->base, (uintptr_t)base, __ATOMIC_RELEASE);
    __atomic_store_n(&hwt_slab_regmap[r->base >> HWT_REGION_SHIFT], map, __ATOMIC_RELEASE);
    if (fresh)
        __atomic_store_n(&hwt_slab_region_count, hwt_slab_region_count + 1, __ATOMIC_RELEASE);
    current = r;
    return r;
}

/* Address space for a span of span_size bytes, committed; 0 when out of memory. */
static uintptr_t carve_locked(size_t span_size, struct hwt_region **out)
{
    struct hwt_region *r = current;
    uintptr_t base = r != NULL ? hwt_align_up(r->cursor, span_size) : 0;
    if (r == NULL || base + span_size > r->base + REGION_SIZE) {
        r = region_new_locked();
        if (r == NULL)
            return 0;
        base = hwt_align_up(r->cursor, span_size);
    }
    if (base + span_size > r->committed) {
        uintptr_t end = hwt_align_up(base + span_size, COMMIT_STEP);
        if (end > r->base + REGION_SIZE)
            end = r->base + REGION_SIZE;
        if (!hwt_os_commit((void *)r->committed, end - r->committed, true))
            return 0;
        __atomic_store_n(&r->committed, end, __ATOMIC_RELEASE);
    }
    r->cursor = base + span_size;
    *out = r;
    return base;
}

static void list_push(struct hwt_span **head, struct hwt_span *s, uint8_t which)
{
    s->prev = NULL;
    s->next = *head;
    if (*head != NULL)
        (*head)->prev = s;
    *head = s;
    s->list = which;
}

static void list_remove(struct hwt_span **head, struct hwt_span *s)
{
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        *head = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->list = LIST_NONE;
}

/* A span to take slots from: partial first, then a kept empty one, then a released one
 * (re-tagged, as its pages came back zeroed with tag 0), then a new one. */
/* Span structs whose address range another class took (steal_locked): their metadata
 * waits here for the next span of their own class. husk_lock is a leaf lock. */
static struct hwt_lock husk_lock = HWT_LOCK_INIT;
static struct hwt_span *husks[HWT_NUM_CLASSES];

static void husk_push(struct hwt_span *s)
{
    hwt_lock(&husk_lock);
    s->next = husks[s->cls];
    husks[s->cls] = s;
    hwt_unlock(&husk_lock);
}

/* Metadata for a span of cls: a husk of that class, else fresh (zeroed) memory. */
static struct hwt_span *span_meta(unsigned cls)
{
    hwt_lock(&husk_lock);
    struct hwt_span *s = husks[cls];
    if (s != NULL)
        husks[cls] = s->next;
    hwt_unlock(&husk_lock);
    if (s != NULL) {
        /* its slot words describe objects of the range it had: forget them */
        for (uint32_t i = 0; i < s->nslots; i++)
            __atomic_store_n(&s->slots[i].word, 0, __ATOMIC_RELAXED);
        return s;
    }
    size_t span_size = hwt_size_class_span(cls);
    uint32_t nslots = (uint32_t)(span_size / hwt_size_class_size(cls));
    size_t words = (nslots + BITS_PER_WORD - 1) / BITS_PER_WORD;
    s = hwt_meta_alloc(sizeof(*s), HWT_SPAN_LINE);
    uint64_t *bits = hwt_meta_alloc(words * sizeof(uint64_t), 16);
    struct hwt_slot *slots = hwt_meta_alloc((nslots + 2) * sizeof(struct hwt_slot), 16);
    if (s == NULL || bits == NULL || slots == NULL)
        return NULL;
    s->free_bits = bits;
    s->slots = slots + 1;
    s->slots[-1].word = HWT_SLOT_EDGE_WORD;
    s->slots[nslots].word = HWT_SLOT_EDGE_WORD;
    return s;
}

/* Gives s (metadata from span_meta) the range at base and publishes it in the page map.
 * tag: tag the range free and count it committed now (the span is about to be used);
 * otherwise it joins a released list and is tagged when taken. */
static void span_init(struct hwt_span *s, unsigned arena, unsigned cls, uintptr_t base, bool tag)
{
    size_t span_size = hwt_size_class_span(cls);
    size_t slot_size = hwt_size_class_size(cls);
    uint32_t nslots = (uint32_t)(span_size / slot_size);
    s->base = base;
    s->span_size = (uint32_t)span_size;
    s->slot_size = (uint32_t)slot_size;
    s->nslots = nslots;
    s->slot_recip = (uint32_t)(((UINT64_C(1) << 32) + slot_size - 1) / slot_size);
    s->cls = (uint16_t)cls;
    s->arena = (uint8_t)arena;
    for (uint32_t w = 0; w < (nslots + BITS_PER_WORD - 1) / BITS_PER_WORD; w++)
        s->free_bits[w] = 0;
    for (uint32_t i = 0; i < nslots; i++)
        s->free_bits[i / BITS_PER_WORD] |= UINT64_C(1) << (i % BITS_PER_WORD);
    s->nfree = nslots;
    s->next = s->prev = NULL;
    s->list = LIST_NONE;
    if (tag) {
        hwt_tag_range(base, span_size, HWT_TAG_FREE, false);
        __atomic_add_fetch(&heap_mapped_bytes, span_size, __ATOMIC_RELAXED);
    }
    struct hwt_region *r = hwt_slab_region_of(base);
    for (uintptr_t p = base; p < base + span_size; p += HWT_MAP_PAGE)
        __atomic_store_n(&r->pagemap[(p - r->base) >> HWT_MAP_SHIFT], s, __ATOMIC_RELEASE);
}

/* Out of address space: takes a released span of another class that is at least as big
 * (its pages are already given back) and cuts it into spans of cls: the first is returned,
 * tagged; the others join cls's released list. Only try-locks the other class (the caller
 * holds cls's lock), so two classes stealing from each other cannot deadlock. */
static struct hwt_span *steal_locked(struct central *c, unsigned arena, unsigned cls)
{
    size_t span_size = hwt_size_class_span(cls);
    struct hwt_span *victim = NULL;
    for (unsigned k = 0; k < HWT_ARENAS * HWT_NUM_CLASSES && victim == NULL; k++) {
        unsigned other = k % HWT_NUM_CLASSES;
        struct central *oc = &centrals[k / HWT_NUM_CLASSES][other];
        if (other == cls || !hwt_trylock(&oc->lock))
            continue;
        for (struct hwt_span *v = oc->released; v != NULL; v = v->next) {
            if (v->span_size >= span_size) {
                list_remove(&oc->released, v);
                victim = v;
                break;
            }
        }
        hwt_unlock(&oc->lock);
    }
    if (victim == NULL)
        return NULL;
    uintptr_t base = victim->base, end = victim->base + victim->span_size;
    /* the range forgets the victim first: a part no new span takes reads as unused, and
     * its region can still be given back whole (hwt_slab_unmap_free_regions) */
    struct hwt_region *r = hwt_slab_region_of(base);
    for (uintptr_t p = base; p < end; p += HWT_MAP_PAGE)
        __atomic_store_n(&r->pagemap[(p - r->base) >> HWT_MAP_SHIFT], NULL, __ATOMIC_RELEASE);
    husk_push(victim);
    struct hwt_span *first = NULL;
    for (uintptr_t p = base; p < end; p += span_size) {
        struct hwt_span *s = span_meta(cls);
        if (s == NULL)
            break; /* the rest of the range stays unused: no metadata for it */
        span_init(s, arena, cls, p, first == NULL);
        if (first == NULL)
            first = s;
        else
            list_push(&c->released, s, LIST_RELEASED);
    }
    return first;
}

/* Carves a new span for cls and tags it free, before anyone else can see it: QEMU loses
 * tags when two threads first tag a fresh page at once (docs/design.md). When the address
 * space is gone, a released span of another class is cut up instead. */
static struct hwt_span *span_new(struct central *c, unsigned arena, unsigned cls)
{
    struct hwt_span *s = span_meta(cls);
    if (s == NULL)
        return NULL;
    struct hwt_region *r;
    hwt_lock(&heap_lock);
    uintptr_t base = carve_locked(hwt_size_class_span(cls), &r);
    hwt_unlock(&heap_lock);
    if (base == 0) {
        s->cls = (uint16_t)cls; /* fresh metadata has no class yet */
        husk_push(s);           /* keep it for the next span of cls */
        return steal_locked(c, arena, cls);
    }
    span_init(s, arena, cls, base, true);
    return s;
}

static struct hwt_span *span_for_take_locked(struct central *c, unsigned arena, unsigned cls)
{
    if (c->partial != NULL)
        return c->partial;
    struct hwt_span *s = c->empty;
    if (s != NULL) {
        list_remove(&c->empty, s);
        c->nempty--;
    } else if ((s = c->released) != NULL) {
        list_remove(&c->released, s);
        if (c->retakes < KEEP_CHURN_RETAKES)
            c->retakes++;
        if (__atomic_load_n(&arena_retakes[arena], __ATOMIC_RELAXED) < KEEP_CHURN_ARENA_RETAKES)
            __atomic_add_fetch(&arena_retakes[arena], 1, __ATOMIC_RELAXED);
        hwt_tag_range(s->base, s->span_size, HWT_TAG_FREE, false);
        __atomic_add_fetch(&heap_mapped_bytes, s->span_size, __ATOMIC_RELAXED);
    } else {
        s = span_new(c, arena, cls);
        if (s == NULL)
            return NULL;
    }
    list_push(&c->partial, s, LIST_PARTIAL);
    if (++c->in_use > c->peak_now)
        c->peak_now = c->in_use;
    c->events++;
    return s;
}

unsigned hwt_slab_take(unsigned arena, unsigned cls, struct hwt_slab_ref *out, unsigned n)
{
    struct central *c = &centrals[arena % HWT_ARENAS][cls];
    unsigned got = 0;
    hwt_lock(&c->lock);
    while (got < n) {
        struct hwt_span *s = span_for_take_locked(c, arena % HWT_ARENAS, cls);
        if (s == NULL)
            break;
        size_t words = (s->nslots + BITS_PER_WORD - 1) / BITS_PER_WORD;
        for (size_t w = 0; w < words && got < n; w++) {
            uint64_t bits = s->free_bits[w];
            while (bits != 0 && got < n) {
                unsigned b = (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                size_t idx = w * BITS_PER_WORD + b;
                out[got].addr = s->base + idx * (size_t)s->slot_size;
                out[got++].slot = &s->slots[idx];
                s->nfree--;
            }
            s->free_bits[w] = bits;
        }
        if (s->nfree == 0)
            list_remove(&c->partial, s);
        if (HWT_HEAP_WALKS)
            HWT_CHECK(hwt_slab_span_consistent(s));
    }
    hwt_unlock(&c->lock);
    return got;
}

/* Gives a fully free span's pages back; it waits on the released list, untagged. */
static void release_locked(struct central *c, struct hwt_span *s)
{
    hwt_os_decommit((void *)s->base, s->span_size);
    __atomic_sub_fetch(&heap_mapped_bytes, s->span_size, __ATOMIC_RELAXED);
    list_push(&c->released, s, LIST_RELEASED);
}

/* Whether c, a class of arena, churns its spans (see KEEP_CHURN). */
static bool churning(const struct central *c, unsigned arena)
{
    return c->retakes >= KEEP_CHURN_RETAKES ||
           (c->retakes >= KEEP_CHURN_JOIN_RETAKES &&
            __atomic_load_n(&arena_retakes[arena], __ATOMIC_RELAXED) >= KEEP_CHURN_ARENA_RETAKES);
}

/* Empty spans c, a class of arena, keeps committed, one of them of span_size bytes (see
 * KEEP_CHURN). */
static unsigned keep_empty(const struct central *c, unsigned arena, size_t span_size,
                           uint32_t slot_size)
{
    if (!churning(c, arena))
        return slot_size <= KEEP_EMPTY_MAX_SLOT ? 1u : 0u;
    uint32_t peak = c->peak_now > c->peak_last ? c->peak_now : c->peak_last;
    size_t keep = peak - c->in_use;
    if (keep > HWT_SLAB_KEEP_CHURN_MAX_BYTES / span_size)
        keep = HWT_SLAB_KEEP_CHURN_MAX_BYTES / span_size;
    return keep > KEEP_CHURN ? (unsigned)keep : KEEP_CHURN;
}

static void span_became_empty_locked(struct central *c, struct hwt_span *s)
{
    list_remove(&c->partial, s);
    c->in_use--;
    if (++c->events >= HWT_SLAB_PEAK_WINDOW) {
        c->peak_last = c->peak_now;
        c->peak_now = c->in_use;
        c->events = 0;
    }
    unsigned keep = keep_empty(c, s->arena, s->span_size, s->slot_size);
    /* more kept than the peak now allows: one goes back at each event, as it falls */
    if (c->nempty > keep) {
        struct hwt_span *kept = c->empty;
        list_remove(&c->empty, kept);
        c->nempty--;
        release_locked(c, kept);
    }
    if (c->nempty < keep) {
        list_push(&c->empty, s, LIST_EMPTY);
        c->nempty++;
        return;
    }
    release_locked(c, s);
}

bool hwt_slab_span_consistent(const struct hwt_span *s)
{
    uint32_t avail = 0;
    for (uint32_t i = 0; i < s->nslots; i++) {
        if (!(s->free_bits[i / BITS_PER_WORD] & (UINT64_C(1) << (i % BITS_PER_WORD))))
            continue;
        avail++;
        if (hwt_slab_slot_state(hwt_slab_slot_load(&s->slots[i])) == HWT_SLOT_LIVE)
            return false;
    }
    return avail == s->nfree;
}

void hwt_slab_give(unsigned cls, const struct hwt_slab_ref *slots, unsigned n)
{
    /* each slot to its span's arena: one lock at a time, kept while the arena stays; and
     * the span kept while the slots are its own (a drain's are often one span's, in the
     * order a refill took them, so most slots skip the page map lookup) */
    struct central *c = NULL;
    struct hwt_span *s = NULL;
    for (unsigned i = 0; i < n; i++) {
        if (s == NULL || slots[i].addr - s->base >= s->span_size) {
            s = hwt_slab_span_of(slots[i].addr);
            HWT_CHECK(s != NULL && s->cls == cls);
            struct central *sc = &centrals[s->arena][cls];
            if (sc != c) {
                if (c != NULL)
                    hwt_unlock(&c->lock);
                c = sc;
                hwt_lock(&c->lock);
            }
        }
        uint32_t idx = hwt_slab_index(s, slots[i].addr);
        uint64_t bit = UINT64_C(1) << (idx % BITS_PER_WORD);
        HWT_CHECK((s->free_bits[idx / BITS_PER_WORD] & bit) == 0);
        s->free_bits[idx / BITS_PER_WORD] |= bit;
        if (s->nfree++ == 0)
            list_push(&c->partial, s, LIST_PARTIAL);
        if (HWT_HEAP_WALKS)
            HWT_CHECK(hwt_slab_span_consistent(s));
        if (s->nfree == s->nslots) {
            span_became_empty_locked(c, s);
            s = NULL; /* given back, maybe: none of the other slots is its */
        }
    }
    if (c != NULL)
        hwt_unlock(&c->lock);
}

/* In a fork child: gives back one slot found in a dead thread's cache bin, which the fork
 * snapshot may have caught mid-update: a drain that had given its slots back but not yet
 * shortened the bin, a push whose count was ahead of its slot, so the entry may be stale,
 * a duplicate, already available in its span, or even a live object. Such entries are
 * dropped (a slot leaked at worst); only a slot that is certainly out of its span and not
 * live goes back. Single-threaded (the child), but takes the lock all the same. */
bool hwt_slab_give_adopted(unsigned cls, uintptr_t addr)
{
    struct hwt_span *s = hwt_slab_span_of(addr);
    if (s == NULL || s->cls != cls || s->slot_size == 0)
        return false;
    uint32_t idx = hwt_slab_index(s, addr);
    if (idx >= s->nslots || s->base + (uintptr_t)idx * s->slot_size != addr)
        return false;
    if (hwt_slab_slot_state(hwt_slab_slot_load(&s->slots[idx])) == HWT_SLOT_LIVE)
        return false;
    struct central *c = &centrals[s->arena][cls];
    uint64_t bit = UINT64_C(1) << (idx % BITS_PER_WORD);
    hwt_lock(&c->lock);
    bool ok = s->list != LIST_RELEASED && s->list != LIST_EMPTY &&
              (s->free_bits[idx / BITS_PER_WORD] & bit) == 0;
    hwt_unlock(&c->lock);
    if (ok)
        hwt_slab_give(cls, &(struct hwt_slab_ref){addr, &s->slots[idx]}, 1);
    return ok;
}

size_t hwt_slab_requested(const struct hwt_span *s, uint32_t idx)
{
    return hwt_slab_slot_requested(hwt_slab_slot_load(&s->slots[idx]));
}

size_t hwt_slab_usable(const struct hwt_span *s, uint32_t idx)
{
    return hwt_align_up(hwt_slab_requested(s, idx), HWT_GRANULE);
}

void hwt_slab_lock_all(void)
{
    for (unsigned a = 0; a < HWT_ARENAS; a++)
        for (unsigned i = 0; i < HWT_NUM_CLASSES; i++)
            hwt_lock(&centrals[a][i].lock);
    hwt_lock(&heap_lock);
}

void hwt_slab_unlock_all(void)
{
    hwt_unlock(&heap_lock);
    for (unsigned a = 0; a < HWT_ARENAS; a++)
        for (unsigned i = 0; i < HWT_NUM_CLASSES; i++)
            hwt_unlock(&centrals[a][i].lock);
}

void hwt_slab_reset_locks(void)
{
    for (unsigned a = 0; a < HWT_ARENAS; a++)
        for (unsigned i = 0; i < HWT_NUM_CLASSES; i++)
            hwt_lock_reset(&centrals[a][i].lock);
    hwt_lock_reset(&heap_lock);
}

uint64_t hwt_slab_mapped(void)
{
    return __atomic_load_n(&heap_mapped_bytes, __ATOMIC_RELAXED);
}

void hwt_slab_class_usage(struct hwt_class_usage *out)
{
    for (unsigned c = 0; c < HWT_NUM_CLASSES; c++)
        out[c] = (struct hwt_class_usage){0, 0, 0, 0, 0};
    uint32_t nregions = __atomic_load_n(&hwt_slab_region_count, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < nregions; i++) {
        struct hwt_region *r = &hwt_slab_regions[i];
        struct hwt_span *last = NULL;
        uintptr_t end = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
        for (uintptr_t p = r->base; p < end; p += HWT_MAP_PAGE) {
            struct hwt_span *s =
                __atomic_load_n(&r->pagemap[(p - r->base) >> HWT_MAP_SHIFT], __ATOMIC_ACQUIRE);
            if (s == NULL || s == last)
                continue;
            last = s;
            struct hwt_class_usage *u = &out[s->cls];
            u->spans++;
            if (s->list == LIST_RELEASED)
                continue;
            u->span_bytes += s->span_size;
            for (uint32_t k = 0; k < s->nslots; k++) {
                uint64_t w = hwt_slab_slot_load(&s->slots[k]);
                if (hwt_slab_slot_state(w) == HWT_SLOT_LIVE) {
                    u->live_slots++;
                    u->live_bytes += hwt_align_up(hwt_slab_slot_requested(w), HWT_GRANULE);
                }
            }
            u->free_in_span += __atomic_load_n(&s->nfree, __ATOMIC_RELAXED);
        }
    }
}

/* Whether every span carved from r is fully free with its pages given back (so no slot of
 * it is live or in any cache). All locks held. */
static bool region_released(const struct hwt_region *r)
{
    for (uintptr_t p = r->base; p < r->cursor; p += HWT_MAP_PAGE) {
        const struct hwt_span *s = r->pagemap[(p - r->base) >> HWT_MAP_SHIFT];
        if (s != NULL && s->list != LIST_RELEASED)
            return false;
    }
    return true;
}

/* Gives r's address space back: its spans' metadata become husks, its page map forgets
 * them, and the slot waits for a new region. All locks held. */
static void region_retire(struct hwt_region *r)
{
    struct hwt_span *last = NULL;
    hwt_lock(&husk_lock);
    for (uintptr_t p = r->base; p < r->cursor; p += HWT_MAP_PAGE) {
        struct hwt_span *s = r->pagemap[(p - r->base) >> HWT_MAP_SHIFT];
        if (s == NULL || s == last)
            continue;
        last = s;
        list_remove(&centrals[s->arena][s->cls].released, s);
        s->next = husks[s->cls];
        husks[s->cls] = s;
    }
    hwt_unlock(&husk_lock);
    for (uintptr_t p = r->base; p < r->committed; p += HWT_MAP_PAGE)
        __atomic_store_n(&r->pagemap[(p - r->base) >> HWT_MAP_SHIFT], NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&hwt_slab_regmap[r->base >> HWT_REGION_SHIFT], NULL, __ATOMIC_RELEASE);
    hwt_os_unmap((void *)r->base, REGION_SIZE);
    if (current == r)
        current = NULL;
    r->cursor = r->committed = REGION_DEAD;
    __atomic_store_n(&r->base, REGION_DEAD, __ATOMIC_RELEASE);
}

size_t hwt_slab_unmap_free_regions(void)
{
    size_t given = 0;
    hwt_slab_lock_all();
    for (uint32_t i = 0; i < hwt_slab_region_count; i++) {
        struct hwt_region *r = &hwt_slab_regions[i];
        if (r->base != REGION_DEAD && region_released(r)) {
            region_retire(r);
            given += REGION_SIZE;
        }
    }
    hwt_slab_unlock_all();
    return given;
}

size_t hwt_slab_trim(void)
{
    size_t given = 0;
    for (unsigned k = 0; k < HWT_ARENAS * HWT_NUM_CLASSES; k++) {
        struct central *c = &centrals[k / HWT_NUM_CLASSES][k % HWT_NUM_CLASSES];
        hwt_lock(&c->lock);
        struct hwt_span *s;
        while ((s = c->empty) != NULL) {
            list_remove(&c->empty, s);
            c->nempty--;
            release_locked(c, s);
            given += s->span_size;
        }
        hwt_unlock(&c->lock);
    }
    return given;
}
