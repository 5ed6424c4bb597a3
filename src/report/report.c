/* SPDX-License-Identifier: MIT */
/* KASAN-layout report text (docs/design.md, Report) from a filled struct hwt_report.
 * Must stay async-signal-safe: fixed buffers, hwt_fmt_printf, no lookups but symbols. */
#include "report.h"

#include <string.h>

#include "arch/mte.h"
#include "fmt.h"
#include "symbolize.h"
#include "symbolizer.h"
#include "task.h"

#define RULE_LEN 66
#define MAX_REPORT_MODULES 32
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

/* "func+0xoff/0xsize", else "module+0xoff", else "0xpc". */
static void location(struct hwt_buf *b, uintptr_t pc, const struct hwt_symbol *sym, bool known)
{
    if (known && sym->function != NULL)
        hwt_fmt_printf(b, "%s+0x%lx/0x%lx", sym->function, (unsigned long)sym->function_offset,
                       (unsigned long)sym->function_size);
    else if (known && sym->module != NULL)
        hwt_fmt_printf(b, "%s+0x%lx", sym->module, (unsigned long)sym->module_offset);
    else
        hwt_fmt_printf(b, "0x%lx", (unsigned long)pc);
}

static bool symbolize(uintptr_t pc, struct hwt_symbol *sym)
{
    sym->function = NULL;
    sym->module = NULL;
    return hwt_symbolize(pc, sym);
}

/* A frame: its ELF symbol and, from the external symbolizer, its source lines (the
 * innermost inlined function first, the function the code physically is in last). */
struct frame {
    uintptr_t pc;
    bool known;
    struct hwt_symbol sym;
    unsigned nlines;
    struct hwt_symbolizer_line lines[HWT_SYMBOLIZER_MAX_INLINE];
};

/* Modules named by this report's frames, for the build-id list. */
static struct {
    unsigned count;
    const char *path[MAX_REPORT_MODULES];
    const uint8_t *build_id[MAX_REPORT_MODULES];
    unsigned build_id_len[MAX_REPORT_MODULES];
} seen;

static void note_module(const struct hwt_symbol *sym)
{
    if (sym->module == NULL)
        return;
    for (unsigned i = 0; i < seen.count; i++)
        if (seen.path[i] == sym->module)
            return;
    if (seen.count == MAX_REPORT_MODULES)
        return;
    seen.path[seen.count] = sym->module;
    seen.build_id[seen.count] = sym->build_id;
    seen.build_id_len[seen.count] = sym->build_id_len;
    seen.count++;
}

/* ret: pc is a return address, whose call instruction is the one before it. */
static void describe(uintptr_t pc, bool ret, bool symbolizer, struct frame *f)
{
    f->pc = pc;
    f->known = symbolize(pc, &f->sym);
    f->nlines = 0;
    if (!f->known)
        return;
    note_module(&f->sym);
    if (symbolizer && f->sym.module != NULL)
        f->nlines = hwt_symbolizer_lookup(f->sym.module, f->sym.module_offset - (ret ? 1 : 0),
                                          f->lines, HWT_SYMBOLIZER_MAX_INLINE);
}

static void source(struct hwt_buf *b, const struct hwt_symbolizer_line *l)
{
    hwt_fmt_printf(b, "%s:%u", l->file, l->line);
    if (l->column != 0)
        hwt_fmt_printf(b, ":%u", l->column);
}

/* " <readable name> <file:line:column>" of the frame's physical function, or only the
 * readable name when it has no line but a name other than its symbol (demangled). */
static void readable(struct hwt_buf *b, const struct frame *f)
{
    const struct hwt_symbolizer_line *l;

    if (f->nlines == 0)
        return;
    l = &f->lines[f->nlines - 1];
    if (l->file != NULL) {
        hwt_fmt_printf(b, " %s ", l->function != NULL ? l->function : "??");
        source(b, l);
    } else if (l->function != NULL && f->sym.function != NULL &&
               strcmp(l->function, f->sym.function) != 0) {
        /* a demangled name; without an ELF symbol a name with no line may be a guess */
        hwt_fmt_printf(b, " %s", l->function);
    }
}

/* The inlined frames of f, innermost first: " <name> <file:line:column> [inline]". */
static void inlined(struct hwt_buf *b, const struct frame *f)
{
    for (unsigned i = 0; i + 1 < f->nlines; i++) {
        const struct hwt_symbolizer_line *l = &f->lines[i];
        hwt_fmt_printf(b, " %s", l->function != NULL ? l->function : "??");
        if (l->file != NULL) {
            hwt_fmt_printf(b, " ");
            source(b, l);
        }
        hwt_fmt_printf(b, " [inline]\n");
    }
}

/* The frame the header and the summary name: the first one with a name. A faulting pc in
 * an unnamed function (libc's memcpy implementations) is named after the symbol its caller
 * called (*via_got); *called_by is then the caller's index (1), or the index of the first
 * named frame when the header had to skip frames, else -1. */
static unsigned header_frame(const struct hwt_report *r, struct frame *f, int *called_by,
                             bool *via_got)
{
    uintptr_t pc0 = r->stack_len > 0 ? r->stack[0] : (r->have_regs ? r->pc : 0);

    *called_by = -1;
    *via_got = false;
    describe(pc0, r->access == HWTAG_ACCESS_FREE, r->symbolize, f);
    if (!f->known || f->sym.function != NULL)
        return 0;
    if (r->stack_len > 1 && hwt_symbolize_callee(pc0, r->stack[1], &f->sym)) {
        *called_by = 1;
        *via_got = true;
        return 0;
    }
    for (unsigned i = 1; i < r->stack_len; i++) {
        struct frame g;
        describe(r->stack[i], true, r->symbolize, &g);
        if (g.known && g.sym.function != NULL) {
            *f = g;
            *called_by = (int)i;
            return i;
        }
    }
    describe(pc0, r->access == HWTAG_ACCESS_FREE, r->symbolize, f);
    return 0;
}

/* The first frame's location, for the header and the summary line. */
static void top_location(struct hwt_buf *b, const struct hwt_report *r, bool with_module)
{
    struct frame f;
    int called_by;
    bool via_got;

    header_frame(r, &f, &called_by, &via_got);
    location(b, f.pc, &f.sym, f.known);
    if (!with_module)
        return;
    /* where a person reads it, before the module (the line ends as it did without lines):
     * the innermost function and its line, or the line of the caller */
    if (f.nlines > 0 && f.lines[0].file != NULL) {
        hwt_fmt_printf(b, " %s ", f.lines[0].function != NULL ? f.lines[0].function : "??");
        source(b, &f.lines[0]);
    } else if (called_by >= 0) {
        struct frame c;
        describe(r->stack[called_by], true, r->symbolize, &c);
        if (c.nlines > 0 && c.lines[0].file != NULL) {
            hwt_fmt_printf(b, " called from %s ",
                           c.lines[0].function != NULL ? c.lines[0].function : "??");
            source(b, &c.lines[0]);
        }
    }
    if (f.known && f.sym.function != NULL && f.sym.module != NULL)
        hwt_fmt_printf(b, " (%s+0x%lx)", f.sym.module, (unsigned long)f.sym.module_offset);
}

/* The frame line: " sym+0xoff/0xsize (module+0xoffset)" or " 0xpc (module+0xoffset)", then
 * the readable name and source line; its inlined frames come first, on lines of their own.
 * first: pcs[0] is a faulting pc (not a return address), named like the header's. */
static void frame_line(struct hwt_buf *b, const struct hwt_report *r, const uintptr_t *pcs,
                       unsigned i, unsigned n, bool first)
{
    struct frame f;
    bool ret = !(first && i == 0);

    describe(pcs[i], ret, r->symbolize, &f);
    if (first && i == 0 && f.known && f.sym.function == NULL && n > 1)
        hwt_symbolize_callee(pcs[0], pcs[1], &f.sym);
    inlined(b, &f);
    hwt_fmt_printf(b, " ");
    if (f.known && f.sym.function == NULL && f.sym.module != NULL)
        hwt_fmt_printf(b, "0x%lx", (unsigned long)pcs[i]);
    else
        location(b, pcs[i], &f.sym, f.known);
    if (f.known && f.sym.module != NULL)
        hwt_fmt_printf(b, " (%s+0x%lx)", f.sym.module, (unsigned long)f.sym.module_offset);
    readable(b, &f);
    hwt_fmt_printf(b, "\n");
}

static void frames(struct hwt_buf *b, const struct hwt_report *r, const uintptr_t *pcs, unsigned n,
                   bool first)
{
    if (n == 0) {
        hwt_fmt_printf(b, " (stack not available)\n");
        return;
    }
    for (unsigned i = 0; i < n; i++)
        frame_line(b, r, pcs, i, n, first);
}

/* " (thread NAME)" when the thread is alive and has a name of its own. */
static void thread_name(struct hwt_buf *b, const struct hwt_report *r, int tid)
{
    char name[THREAD_NAME_CAP];
    if (hwt_task_thread_name(tid, r->comm, name, sizeof(name)))
        hwt_fmt_printf(b, " (thread %s)", name);
}

/* After the access line, when the header had to name a frame the pc is not in itself. */
static void called_from(struct hwt_buf *b, const struct hwt_report *r)
{
    struct frame f, c;
    int called_by;
    bool via_got;

    header_frame(r, &f, &called_by, &via_got);
    if (called_by < 0)
        return;
    describe(r->stack[called_by], true, r->symbolize, &c);
    if (via_got)
        hwt_fmt_printf(b, "The access is inside %s, called from ", f.sym.function);
    else
        hwt_fmt_printf(b, "The access is inside code without a symbol, called from ");
    location(b, c.pc, &c.sym, c.known);
    if (c.known && c.sym.module != NULL)
        hwt_fmt_printf(b, " (%s+0x%lx)", c.sym.module, (unsigned long)c.sym.module_offset);
    readable(b, &c);
    hwt_fmt_printf(b, "\n");
}

/* Each module of the report once, with its build id (to symbolize the report elsewhere). */
static void modules(struct hwt_buf *b)
{
    if (seen.count == 0)
        return;
    hwt_fmt_printf(b, "\nModules:\n");
    for (unsigned i = 0; i < seen.count; i++) {
        hwt_fmt_printf(b, " %s (BuildId: ", seen.path[i]);
        if (seen.build_id[i] == NULL)
            hwt_fmt_printf(b, "none");
        for (unsigned k = 0; seen.build_id[i] != NULL && k < seen.build_id_len[i]; k++)
            hwt_fmt_printf(b, "%02x", seen.build_id[i][k]);
        hwt_fmt_printf(b, ")\n");
    }
}

/* "Allocated by task T:" / "Freed by task T:" and the stack. */
static void object_stack(struct hwt_buf *b, const struct hwt_report *r, const char *what,
                         const struct hwt_report_stack *st)
{
    hwt_fmt_printf(b, "\n");
    if (st->len == 0) {
        hwt_fmt_printf(b, "%s by task ?:\n (stack not available)\n", what);
        return;
    }
    hwt_fmt_printf(b, "%s by task %u", what, st->tid);
    thread_name(b, r, (int)st->tid);
    hwt_fmt_printf(b, ":\n");
    frames(b, r, st->pcs, st->len, false);
}

static void tail_bytes(struct hwt_buf *b, const char *what, const uint8_t *bytes, unsigned n)
{
    hwt_fmt_printf(b, " %s", what);
    for (unsigned i = 0; i < n; i++)
        hwt_fmt_printf(b, " %02x", bytes[i]);
    hwt_fmt_printf(b, "\n");
}

/* The access line of a tail overwrite: nobody faulted, free or realloc found it. */
static void tail_lines(struct hwt_buf *b, const struct hwt_report *r)
{
    const char *comm = r->comm != NULL ? r->comm : "?";
    const struct hwt_object *o = &r->object;
    hwt_fmt_printf(b, "Write past the end of the object found at %s of addr %016lx by task %s/%d\n",
                   r->tail_at_realloc ? "realloc" : "free", (unsigned long)r->tail_ptr, comm,
                   r->tid);
    hwt_fmt_printf(b, "Pointer tag: [%02x], memory tag: [%02x]\n", r->pointer_tag, r->memory_tag);
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

    if (r->access == HWTAG_ACCESS_FREE)
        hwt_fmt_printf(b, "Free of addr");
    else if (r->access_size != 0)
        hwt_fmt_printf(b, "%s of size %zu at addr",
                       r->access == HWTAG_ACCESS_WRITE ? "Write" : "Read", r->access_size);
    else
        hwt_fmt_printf(b, "%s at addr", r->access == HWTAG_ACCESS_WRITE ? "Write" : "Read");
    hwt_fmt_printf(b, " %016lx by task %s/%d", (unsigned long)r->addr, comm, r->tid);
    thread_name(b, r, r->tid);
    hwt_fmt_printf(b, "\n");
    hwt_fmt_printf(b, "Pointer tag: [%02x], memory tag: [%02x]\n", r->pointer_tag, r->memory_tag);
    called_from(b, r);
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

static void summary(struct hwt_buf *b, const struct hwt_report *r)
{
    hwt_fmt_printf(b, "\nSUMMARY: KASAN: %s in ", hwt_report_bug_name(r->bug));
    top_location(b, r, true);
    hwt_fmt_printf(b, "\n");
}

size_t hwt_report_format(const struct hwt_report *r, char *buf, size_t cap)
{
    struct hwt_buf b;
    hwt_fmt_init(&b, buf, cap);
    seen.count = 0;
    if (r->symbolize)
        hwt_symbolizer_begin();

    rule(&b);
    if (r->asynchronous) {
        hwt_fmt_printf(&b, "BUG: KASAN: %s\n", hwt_report_bug_name(r->bug));
        hwt_fmt_printf(&b, "Asynchronous fault: no details available\n");
        hwt_fmt_printf(&b, "\nCall trace:\n");
        frames(&b, r, r->stack, r->stack_len, r->access != HWTAG_ACCESS_FREE);
        hwt_fmt_printf(&b, "\nThe fault surfaced at a later kernel entry, not at the access. "
                           "Rerun with HWTAG_MODE=sync to find the faulting access.\n");
    } else {
        hwt_fmt_printf(&b, "BUG: KASAN: %s in ", hwt_report_bug_name(r->bug));
        top_location(&b, r, false);
        hwt_fmt_printf(&b, "\n");
        access_line(&b, r);
        hwt_fmt_printf(&b, "\nCall trace:\n");
        frames(&b, r, r->stack, r->stack_len, r->access != HWTAG_ACCESS_FREE);
        if (r->have_object) {
            if (r->object.ever_used || r->object.alloc_stack != 0)
                object_stack(&b, r, "Allocated", &r->alloc_stack);
            /* also without a stack (HWTAG_STACKTRACE=off): the object was freed */
            if (!r->object.live && r->object.ever_used)
                object_stack(&b, r, "Freed", &r->free_stack);
            object_section(&b, r);
        } else {
            hwt_fmt_printf(&b, "\nThe buggy address does not belong to any heap object\n");
        }
        memory_dump(&b, r);
    }
    modules(&b);
    if (r->have_regs)
        registers(&b, r);
    summary(&b, r);
    rule(&b);
    if (r->symbolize)
        hwt_symbolizer_end();
    return b.len;
}
