/* SPDX-License-Identifier: MIT */
/* Bug inference: which object a faulting pointer meant, by the tag policy (neighbours
 * never share a tag, a freed slot keeps its old one) and the history ring; and the
 * gathering of everything else the report prints. Lock-free reads of the heap only. */
#include "infer.h"

#include <string.h>

#include "arch/mte.h"
#include "frame_kind.h"
#include "history.h"
#include "os.h"
#include "lookup.h"
#include "pool.h"
#include "stackdepot.h"
#include "task.h"

/* Slots on each side searched for the object a stray pointer's tag belongs to. */
#define NEIGHBOR_SLOTS 8

/* Describes the access from the slot holding it and the neighbours that may own the
 * pointer's tag (policy: neighbours never share a tag, freed slots keep their old one). */
static void infer_small(struct hwt_report *r, uintptr_t addr, const struct hwt_object *slot)
{
    struct hwt_object n, freed_match;
    bool have_freed = false;

    r->have_object = true;
    r->object = *slot;
    if (slot->ever_used && slot->tag == r->pointer_tag) {
        /* Its own tag: a stale pointer after free, or past the requested size into the
         * slot's free-tagged tail. */
        r->bug = slot->live ? HWTAG_BUG_SLAB_OUT_OF_BOUNDS : HWTAG_BUG_SLAB_USE_AFTER_FREE;
        return;
    }
    /* Nearest first, so an overflow by a few bytes names the adjacent object. */
    for (long d = 1; d <= NEIGHBOR_SLOTS; d++) {
        for (long sign = -1; sign <= 1; sign += 2) {
            if (!hwt_lookup_neighbor(addr, sign * d, &n) || !n.ever_used || n.tag != r->pointer_tag)
                continue;
            if (n.live) {
                r->object = n;
                r->bug = HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
                return;
            }
            if (!have_freed) {
                freed_match = n;
                have_freed = true;
            }
        }
    }
    if (have_freed) {
        r->object = freed_match;
        r->bug = HWTAG_BUG_SLAB_USE_AFTER_FREE;
        return;
    }
    r->bug = HWTAG_BUG_INVALID_ACCESS;
}

/* Nothing in the slot or its neighbours owns the pointer's tag. Typically a stale pointer
 * to an object whose slot (or cached mapping) has been freed and reallocated since: the
 * new object got a new tag (the policy excludes the previous one), so the old pointer
 * faults. Like the kernel's hardware mode, look for the pointer in the ring of recent
 * allocations and frees (history.c) and name that object with its own stacks; only when
 * the ring has forgotten it, keep invalid-access and say in the report what is known. */
static void from_history(struct hwt_report *r)
{
    struct hwt_history_event alloc, freed;
    if (!hwt_history_find(r->addr, &alloc, &freed))
        return;
    struct hwt_object *o = &r->object;
    o->start = mte_untag((const void *)alloc.ptr);
    o->requested = alloc.size;
    o->size = hwt_align_up(alloc.size, HWT_GRANULE);
    o->tag = mte_ptr_tag((const void *)alloc.ptr);
    o->ever_used = true;
    o->live = freed.seq == 0;
    o->sampled = true;
    o->alloc_stack = alloc.stack;
    o->free_stack = freed.seq != 0 ? freed.stack : 0;
    if (o->live)
        r->bug = o->large ? HWTAG_BUG_OUT_OF_BOUNDS : HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
    else
        r->bug = o->large ? HWTAG_BUG_USE_AFTER_FREE : HWTAG_BUG_SLAB_USE_AFTER_FREE;
}

/* The live object nearest to addr in direction dir (-1: below, +1: above), within a page,
 * that does not hold addr itself: the last slot of the span below, a mapping's guard, an
 * object of another class beyond an unused span. Stops at the first object found. */
static bool nearest_beyond(uintptr_t addr, int dir, const struct hwt_object *here,
                           struct hwt_object *out)
{
    for (uintptr_t d = HWT_GRANULE; d <= hwt_os_page_size; d += HWT_GRANULE) {
        uintptr_t probe = dir < 0 ? addr - d : addr + d;
        if (!hwt_lookup_addr(probe, out))
            continue;
        if (here != NULL && out->start == here->start && out->large == here->large)
            continue;
        return true;
    }
    return false;
}

/* An access within a page past an object's end (or before its start) that no object at
 * addr explains is that object's overflow when the pointer carries its tag: malloc(4096)
 * and p[4096] reads the next span, which belongs to no object or to another class. */
static bool across_boundary(struct hwt_report *r, uintptr_t addr, const struct hwt_object *here)
{
    struct hwt_object o;
    for (int dir = -1; dir <= 1; dir += 2) {
        if (!nearest_beyond(addr, dir, here, &o) || !o.live || o.tag != r->pointer_tag)
            continue;
        if (dir < 0 ? addr < o.start + o.requested : addr >= o.start)
            continue; /* it holds addr after all (a mapping's guard page below) */
        r->have_object = true;
        r->object = o;
        r->bug = o.large ? HWTAG_BUG_OUT_OF_BOUNDS : HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
        r->foreign_tag = false;
        return true;
    }
    return false;
}

static void mark_foreign_tag(struct hwt_report *r)
{
    r->history_off = !hwt_history_recording();
    r->foreign_tag = r->bug == HWTAG_BUG_INVALID_ACCESS && r->have_object && r->object.ever_used &&
                     r->object.tag != r->pointer_tag;
}

bool hwt_infer_pool(struct hwt_report *r)
{
    struct hwt_object pool;
    if (!r->have_object ||
        !hwt_pool_describe(mte_untag((const void *)r->addr), r->pointer_tag, &r->object, &pool))
        return false;
    r->in_pool = true;
    r->pool_parent = r->object;
    r->object = pool;
    return true;
}

/* The access hit memory of a heap object through a pool object's pointer: a use after a
 * pool free inside a freed one, an overflow otherwise. */
static void infer_pool_access(struct hwt_report *r, uintptr_t addr)
{
    const struct hwt_object *o = &r->object;
    bool inside = addr >= o->start && addr < o->start + o->size;
    if (inside && !o->live)
        r->bug = o->large ? HWTAG_BUG_USE_AFTER_FREE : HWTAG_BUG_SLAB_USE_AFTER_FREE;
    else
        r->bug = o->large ? HWTAG_BUG_OUT_OF_BOUNDS : HWTAG_BUG_SLAB_OUT_OF_BOUNDS;
}

void hwt_infer_bug(struct hwt_report *r)
{
    uintptr_t addr = mte_untag((const void *)r->addr);
    struct hwt_object obj;

    r->have_object = false;
    r->bug = HWTAG_BUG_INVALID_ACCESS;
    if (!hwt_lookup_addr(addr, &obj)) {
        across_boundary(r, addr, NULL);
        return;
    }
    if (obj.live && obj.tag != r->pointer_tag) {
        r->have_object = true;
        r->object = obj;
        if (hwt_infer_pool(r)) {
            infer_pool_access(r, addr);
            return;
        }
        r->have_object = false;
    }
    if (!obj.large) {
        infer_small(r, addr, &obj);
        if (r->bug == HWTAG_BUG_INVALID_ACCESS && r->object.tag != r->pointer_tag &&
            !across_boundary(r, addr, &obj))
            from_history(r);
        mark_foreign_tag(r);
        return;
    }
    if (obj.tag != r->pointer_tag && across_boundary(r, addr, &obj))
        return;
    r->have_object = true;
    r->object = obj;
    if (!obj.live && obj.ever_used)
        r->bug = HWTAG_BUG_USE_AFTER_FREE;
    else if (obj.live && addr >= obj.start + obj.size)
        r->bug = HWTAG_BUG_OUT_OF_BOUNDS; /* the guard tail after the object */
    else if (obj.live && obj.tag == r->pointer_tag &&
             (addr < obj.start || addr >= obj.start + obj.requested))
        r->bug = HWTAG_BUG_OUT_OF_BOUNDS; /* the guard page below, or past the request */
    if (r->bug == HWTAG_BUG_INVALID_ACCESS && obj.tag != r->pointer_tag)
        from_history(r);
    mark_foreign_tag(r);
}

void hwt_infer_bad_free(struct hwt_report *r)
{
    r->history_off = !hwt_history_recording();
    if (!r->have_object || !r->object.live || r->object.tag == r->pointer_tag)
        return;
    /* A live object freed through a pointer that carries another tag. A stale pointer to
     * an earlier object of the slot, freed since, is a double free; anything else (a tag
     * stripped or rebuilt by the program) frees no object that pointer was given. */
    if (r->pointer_tag != HWT_TAG_UNTAGGED) {
        struct hwt_history_event alloc, freed;
        if (hwt_history_find(r->addr, &alloc, &freed) && freed.seq != 0)
            return;
    }
    r->bug = HWTAG_BUG_INVALID_FREE;
    r->foreign_tag = true;
}

/* The stack of depot id from the program's call on (hwt_frame_kind_first_user). */
static void gather_stack(struct hwt_report_stack *out, uint32_t id)
{
    out->tid = 0;
    out->len = id != 0 ? hwt_stackdepot_get(id, &out->tid, out->pcs, HWT_STACK_MAX_FRAMES) : 0;
    out->more = out->len != 0 ? hwt_stackdepot_more(id) : 0;
    unsigned skip = hwt_frame_kind_first_user(out->pcs, out->len);
    for (unsigned i = skip; i < out->len; i++)
        out->pcs[i - skip] = out->pcs[i];
    out->len -= skip;
}

/* Granule tags of the rows around addr; HWT_REPORT_TAG_UNKNOWN where no heap memory is
 * known to be mapped (never ldg a foreign address). The page of a tag-check fault is tagged
 * memory whatever it holds (an unused span beyond an object, say): its tags are read too. */
static void gather_tags(struct hwt_report *r, uintptr_t addr)
{
    uintptr_t fault_row = hwt_align_down(addr, HWT_REPORT_ROW_BYTES);
    uintptr_t fault_page = hwt_align_down(addr, hwt_os_page_size);
    bool page_tagged = r->tag_fault;
    struct hwt_object obj;

    r->dump_start = fault_row - (HWT_REPORT_DUMP_ROWS / 2) * HWT_REPORT_ROW_BYTES;
    for (unsigned i = 0; i < HWT_REPORT_DUMP_GRANULES; i++) {
        uintptr_t granule = r->dump_start + (uintptr_t)i * HWT_GRANULE;
        bool known = (page_tagged && hwt_align_down(granule, hwt_os_page_size) == fault_page) ||
                     hwt_lookup_addr(granule, &obj);
        r->dump_tags[i] = known ? (uint8_t)mte_load_tag(granule) : HWT_REPORT_TAG_UNKNOWN;
    }
}

static bool thread_gathered(const struct hwt_report *r, uint32_t number)
{
    for (unsigned i = 0; i < r->nthreads; i++)
        if (r->threads[i].number == number)
            return true;
    return false;
}

/* Thread tid (task.c's newest record of it) and its creators, up to the main thread or the
 * report's room. */
static void gather_threads(struct hwt_report *r, int tid)
{
    struct hwt_task t;
    if (!hwt_task_find_tid(tid, &t))
        return;
    while (t.number != 0 && !thread_gathered(r, t.number) && r->nthreads < HWT_REPORT_THREADS) {
        struct hwt_report_thread *out = &r->threads[r->nthreads++];
        out->number = t.number;
        out->parent = t.parent;
        out->tid = t.tid;
        out->tid_before_fork = t.tid_before_fork;
        if (!hwt_task_name(&t, r->comm, out->name, sizeof(out->name)))
            out->name[0] = '\0';
        gather_stack(&out->created, t.stack);
        if (!hwt_task_find_number(t.parent, &t))
            return;
    }
}

void hwt_infer_gather(struct hwt_report *r)
{
    if (r->have_object) {
        gather_stack(&r->alloc_stack, r->object.alloc_stack);
        gather_stack(&r->free_stack, r->object.free_stack);
    }
    if (!r->asynchronous)
        gather_tags(r, mte_untag((const void *)r->addr));
    r->nthreads = 0;
    gather_threads(r, r->tid);
    if (r->alloc_stack.len != 0)
        gather_threads(r, (int)r->alloc_stack.tid);
    if (r->free_stack.len != 0)
        gather_threads(r, (int)r->free_stack.tid);
}
