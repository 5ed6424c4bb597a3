/* SPDX-License-Identifier: MIT */
/* KASAN-layout report text (docs/design.md, Report) from a filled struct hwt_report.
 * Must stay async-signal-safe: fixed buffers, hwt_fmt_printf, no lookups but symbols. */
#include "report.h"

#include <string.h>

#include "arch/mte.h"
#include "fmt.h"
#include "frame.h"
#include "symbolizer.h"
#include "task.h"

#define RULE_LEN 66
#define THREAD_NAME_CAP 32

static const char *const bug_names[] = {
    [HWTAG_BUG_INVALID_ACCESS] = "invalid-access",
    [HWTAG_BUG_SLAB_OUT_OF_BOUNDS] = "slab-out-of-bounds",
    [HWTAG_BUG_SLAB_USE_AFTER_FREE] = "slab-use-after-free",
    [HWTAG_BUG_OUT_OF_BOUNDS] = "out-of-bounds",
    [HWTAG_BUG_USE_AFTER_FREE] = "use-after-free",
    [HWTAG_BUG_DOUBLE_FREE] = "double-free",
    [HWTAG_BUG_INVALID_FREE] = "invalid-free",
};

const char *hwt_report_bug_name(enum hwtag_bug_type bug)
{
    if ((unsigned)bug >= sizeof(bug_names) / sizeof(bug_names[0]) || bug_names[bug] == NULL)
        return "unknown-crash";
    return bug_names[bug];
}

long hwt_report_distance(uintptr_t addr, const struct hwt_object *obj)
{
    uintptr_t end = obj->start + obj->requested;
    addr = mte_untag((const void *)addr);
    if (addr < obj->start)
        return -(long)(obj->start - addr);
    if (addr >= end)
        return (long)(addr - end);
    return (long)(addr - obj->start);
}

static void rule(struct hwt_buf *b)
{
    char line[RULE_LEN + 1];
    for (unsigned i = 0; i < RULE_LEN; i++)
        line[i] = '=';
    line[RULE_LEN] = '\0';
    hwt_fmt_printf(b, "%s\n", line);
}

/* " (thread NAME)" when the thread has a name of its own (kept for one that is gone). */
static void thread_name(struct hwt_buf *b, const struct hwt_report *r, int tid)
{
    char name[THREAD_NAME_CAP];
    if (hwt_task_thread_name(tid, r->comm, name, sizeof(name)))
        hwt_fmt_printf(b, " (thread %s)", name);
}

static int thread_index(const struct hwt_report *r, uint32_t number, int tid)
{
    for (unsigned i = 0; i < r->nthreads; i++) {
        const struct hwt_report_thread *t = &r->threads[i];
        if (number != HWT_TASK_NONE ? t->number == number
                                    : tid != 0 && (t->tid == tid || t->tid_before_fork == tid))
            return (int)i;
    }
    return -1;
}

/* After a stack that ran in thread tid, as ASan does: "Thread T3 "name" created by T1
 * here:" and the creation stack, then T1's, up to the main thread (T0, which has none);
 * each thread once a report (*printed: a bit per r->threads entry). */
static void thread_origin(struct hwt_buf *b, const struct hwt_report *r, int tid, unsigned *printed)
{
    int i = thread_index(r, HWT_TASK_NONE, tid);
    while (i >= 0 && !(*printed & (1u << i))) {
        const struct hwt_report_thread *t = &r->threads[i];
        *printed |= 1u << i;
        hwt_fmt_printf(b, "\nThread T%u", t->number);
        if (t->name[0] != '\0')
            hwt_fmt_printf(b, " \"%s\"", t->name);
        if (t->parent == HWT_TASK_NONE) {
            hwt_fmt_printf(b, " was not created through pthread_create\n");
            return;
        }
        hwt_fmt_printf(b, " created by T%u here:\n", t->parent);
        hwt_frame_list(b, r, t->created.pcs, t->created.len, t->created.more, false);
        i = thread_index(r, t->parent, 0);
    }
}

/* "Allocated by task T:" / "Freed by task T:" and the stack, then where its thread came
 * from. */
static void object_stack(struct hwt_buf *b, const struct hwt_report *r, const char *what,
                         const struct hwt_report_stack *st, unsigned *printed)
{
    hwt_fmt_printf(b, "\n");
    if (st->len == 0) {
        hwt_fmt_printf(b, "%s by task ?:\n (stack not available)\n", what);
        return;
    }
    hwt_fmt_printf(b, "%s by task %u", what, st->tid);
    thread_name(b, r, (int)st->tid);
    hwt_fmt_printf(b, ":\n");
    hwt_frame_list(b, r, st->pcs, st->len, st->more, false);
    thread_origin(b, r, (int)st->tid, printed);
}

/* The access stack, then where its thread came from. */
static void call_trace(struct hwt_buf *b, const struct hwt_report *r, unsigned *printed)
{
    hwt_fmt_printf(b, "\nCall trace:\n");
    hwt_frame_list(b, r, r->stack, r->stack_len, r->stack_more, r->access != HWTAG_ACCESS_FREE);
    thread_origin(b, r, r->tid, printed);
}

static void tail_bytes(struct hwt_buf *b, const char *what, const uint8_t *bytes, unsigned n)
{
    hwt_fmt_printf(b, " %s", what);
    for (unsigned i = 0; i < n; i++)
        hwt_fmt_printf(b, " %02x", bytes[i]);
    hwt_fmt_printf(b, "\n");
}

/* The access lines of a tail overwrite. Nobody faulted: free or realloc found bytes past
 * the end changed, so the address is the first changed byte's and the size is unknown (the
 * kernel's "Write at addr" form, which syzkaller's parser reads); the frame that freed or
 * reallocated is where it was detected. */
static void tail_lines(struct hwt_buf *b, const struct hwt_report *r)
{
    const char *comm = r->comm != NULL ? r->comm : "?";
    const struct hwt_object *o = &r->object;
    hwt_fmt_printf(b, "Write at addr %016lx by task %s/%d", (unsigned long)r->addr, comm, r->tid);
    thread_name(b, r, r->tid);
    hwt_fmt_printf(b, "\n");
    hwt_fmt_printf(b, "Pointer tag: [%02x], memory tag: [%02x]\n", r->pointer_tag, r->memory_tag);
    hwt_fmt_printf(b, "The write is of unknown size, detected at %s of addr %016lx by ",
                   r->tail_at_realloc ? "realloc" : "free", (unsigned long)r->tail_ptr);
    hwt_frame_top(b, r, false);
    hwt_fmt_printf(b, "\n");
    hwt_fmt_printf(b,
                   "Bytes %u..%u past the %zu-byte region were written; its last granule's "
                   "%u tail bytes hold a check pattern:\n",
                   r->tail_first - (unsigned)o->requested, r->tail_last - (unsigned)o->requested,
                   o->requested, r->tail_len);
    tail_bytes(b, "pattern:", r->tail_expected, r->tail_len);
    tail_bytes(b, "found:  ", r->tail_found, r->tail_len);
}

static void access_line(struct hwt_buf *b, const struct hwt_report *r)
{
    const char *comm = r->comm != NULL ? r->comm : "?";

    if (r->tail_overwritten) {
        tail_lines(b, r);
        return;
    }

    uintptr_t addr = r->call_name != NULL ? r->call_addr : r->addr;
    if (r->access == HWTAG_ACCESS_FREE)
        hwt_fmt_printf(b, "Free of addr");
    else if (r->access_size != 0)
        hwt_fmt_printf(b, "%s of size %zu at addr",
                       r->access == HWTAG_ACCESS_WRITE ? "Write" : "Read", r->access_size);
    else
        hwt_fmt_printf(b, "%s at addr", r->access == HWTAG_ACCESS_WRITE ? "Write" : "Read");
    hwt_fmt_printf(b, " %016lx by task %s/%d", (unsigned long)addr, comm, r->tid);
    thread_name(b, r, r->tid);
    hwt_fmt_printf(b, "\n");
    hwt_fmt_printf(b, "Pointer tag: [%02x], memory tag: [%02x]\n", r->pointer_tag, r->memory_tag);
    hwt_frame_called_from(b, r);
    if (r->call_name != NULL) {
        uintptr_t start = mte_untag((const void *)r->call_addr);
        hwt_fmt_printf(b, "The %s call %s [%lx, %lx); its first bad byte is at %016lx\n",
                       r->call_name, r->access == HWTAG_ACCESS_WRITE ? "writes" : "reads",
                       (unsigned long)start, (unsigned long)(start + r->call_size),
                       (unsigned long)r->addr);
    }
}

static void object_section(struct hwt_buf *b, const struct hwt_report *r)
{
    const struct hwt_object *o = &r->object;
    long dist = hwt_report_distance(r->addr, o);
    uintptr_t addr = mte_untag((const void *)r->addr);

    hwt_fmt_printf(b, "\nThe buggy address belongs to the %sobject at %lx\n",
                   r->in_pool ? "pool " : "", (unsigned long)o->start);
    if (r->in_pool)
        hwt_fmt_printf(b, " of size %zu, a pool object inside the heap object at %lx of size %zu\n",
                       o->size, (unsigned long)r->pool_parent.start, r->pool_parent.requested);
    const struct hwt_object *home = r->in_pool ? &r->pool_parent : o;
    if (home->large)
        hwt_fmt_printf(b, " which belongs to a page-backed mapping of %zu bytes\n",
                       home->region_size);
    else
        hwt_fmt_printf(b, " which belongs to the size class %zu of size %zu\n", home->class_size,
                       home->size);
    if (addr < o->start)
        hwt_fmt_printf(b, "The buggy address is located %ld bytes to the left of\n", -dist);
    else if (addr >= o->start + o->requested)
        hwt_fmt_printf(b, "The buggy address is located %ld bytes to the right of\n", dist);
    else
        hwt_fmt_printf(b, "The buggy address is located %ld bytes inside of\n", dist);
    hwt_fmt_printf(b, " %zu-byte %sregion [%lx, %lx)\n", o->requested, r->in_pool ? "pool " : "",
                   (unsigned long)o->start, (unsigned long)(o->start + o->requested));
    if (!o->sampled)
        hwt_fmt_printf(b, "The object was left untagged by sampling (HWTAG_SAMPLE), so "
                          "accesses to it are not checked\n");
    if (r->foreign_tag) {
        hwt_fmt_printf(b,
                       "The pointer tag [%02x] is neither this object's [%02x] nor a "
                       "neighbour's:\n",
                       r->pointer_tag, o->tag);
        if (r->pointer_tag == HWT_TAG_UNTAGGED)
            hwt_fmt_printf(b, " the pointer carries no tag (built from an untagged address?)\n");
        else if (r->pointer_tag == HWT_TAG_FREE)
            hwt_fmt_printf(b, " no allocation returns that tag: the pointer is corrupt\n");
        else if (r->history_off)
            hwt_fmt_printf(b,
                           " a stale pointer to an earlier object in this %s, freed and "
                           "reallocated since\n (HWTAG_STACKTRACE=off keeps no history of "
                           "allocations), or a corrupt one\n",
                           o->large ? "mapping" : "slot");
        else
            hwt_fmt_printf(b,
                           " a stale pointer to an earlier object in this %s, freed and "
                           "reallocated since,\n too long ago for the history of recent "
                           "allocations, or a corrupt one\n",
                           o->large ? "mapping" : "slot");
    }
}

static void memory_dump(struct hwt_buf *b, const struct hwt_report *r)
{
    uintptr_t addr = mte_untag((const void *)r->addr);
    uintptr_t fault_row = hwt_align_down(addr, HWT_REPORT_ROW_BYTES);

    hwt_fmt_printf(b, "\nMemory state around the buggy address:\n");
    for (unsigned row = 0; row < HWT_REPORT_DUMP_ROWS; row++) {
        uintptr_t row_addr = r->dump_start + row * HWT_REPORT_ROW_BYTES;
        const uint8_t *tags = &r->dump_tags[row * HWT_REPORT_ROW_GRANULES];
        bool faulting = row_addr == fault_row;
        size_t start = b->len;

        hwt_fmt_printf(b, "%c%lx:", faulting ? '>' : ' ', (unsigned long)row_addr);
        size_t prefix = b->len - start;
        for (unsigned g = 0; g < HWT_REPORT_ROW_GRANULES; g++) {
            if (tags[g] == HWT_REPORT_TAG_UNKNOWN)
                hwt_fmt_printf(b, " ??");
            else
                hwt_fmt_printf(b, " %02x", tags[g]);
        }
        hwt_fmt_printf(b, "\n");
        if (faulting) {
            /* under the first digit of the faulting granule: " xx" per granule */
            unsigned col = (unsigned)prefix + 1 + 3 * (unsigned)((addr - fault_row) / HWT_GRANULE);
            hwt_fmt_printf(b, "%*c\n", (int)col + 1, '^');
        }
    }
}

static void registers(struct hwt_buf *b, const struct hwt_report *r)
{
    hwt_fmt_printf(b, "\nRegisters:\n");
    for (unsigned i = 0; i < 31; i++) {
        hwt_fmt_printf(b, "%sx%-2u %016lx", i % 4 == 0 ? " " : "  ", i, (unsigned long)r->regs[i]);
        if (i % 4 == 3)
            hwt_fmt_printf(b, "\n");
    }
    hwt_fmt_printf(b, "  sp  %016lx\n pc  %016lx  pstate %016lx\n", (unsigned long)r->sp,
                   (unsigned long)r->pc, (unsigned long)r->pstate);
}

/* An asynchronous fault's frame is where it surfaced, not where the access was: the line
 * says the location is unknown, so a tool that groups reports by the SUMMARY's location
 * does not merge every asynchronous report of a program into one bug of the function that
 * happened to make the next system call. */
static void summary(struct hwt_buf *b, const struct hwt_report *r)
{
    hwt_fmt_printf(b, "\nSUMMARY: KASAN: %s in ", hwt_report_bug_name(r->bug));
    if (r->asynchronous) {
        hwt_fmt_printf(b, "unknown location (asynchronous fault; surfaced in ");
        hwt_frame_top(b, r, false);
        hwt_fmt_printf(b, ")\n");
        return;
    }
    hwt_frame_top(b, r, true);
    hwt_fmt_printf(b, "\n");
}

size_t hwt_report_format(const struct hwt_report *r, char *buf, size_t cap)
{
    struct hwt_buf b;
    unsigned printed = 0; /* threads described so far */
    hwt_fmt_init(&b, buf, cap);
    hwt_frame_reset();
    if (r->symbolize)
        hwt_symbolizer_begin();

    rule(&b);
    if (r->asynchronous) {
        hwt_fmt_printf(&b, "BUG: KASAN: %s\n", hwt_report_bug_name(r->bug));
        hwt_fmt_printf(&b, "Asynchronous fault: no details available\n");
        call_trace(&b, r, &printed);
        hwt_fmt_printf(&b, "\nThe fault surfaced at a later kernel entry, not at the access. "
                           "Rerun with HWTAG_MODE=sync to find the faulting access.\n");
    } else {
        hwt_fmt_printf(&b, "BUG: KASAN: %s in ", hwt_report_bug_name(r->bug));
        hwt_frame_top(&b, r, false);
        hwt_fmt_printf(&b, "\n");
        access_line(&b, r);
        call_trace(&b, r, &printed);
        if (r->have_object) {
            if (r->object.ever_used || r->object.alloc_stack != 0)
                object_stack(&b, r, "Allocated", &r->alloc_stack, &printed);
            /* also without a stack (HWTAG_STACKTRACE=off): the object was freed */
            if (!r->object.live && r->object.ever_used)
                object_stack(&b, r, "Freed", &r->free_stack, &printed);
            object_section(&b, r);
        } else {
            hwt_fmt_printf(&b, "\nThe buggy address does not belong to any heap object\n");
        }
        memory_dump(&b, r);
    }
    hwt_frame_modules(&b);
    if (r->have_regs)
        registers(&b, r);
    summary(&b, r);
    rule(&b);
    if (r->symbolize)
        hwt_symbolizer_end();
    return b.len;
}
