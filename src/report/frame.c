/* SPDX-License-Identifier: MIT */
/* The frames of a report: each pc as symbol+off/size (module+offset), then its readable
 * name, file:line:column and inlined callers from the external symbolizer; the header's
 * frame; and the list of the report's modules with their build ids. Text only. */
#include "frame.h"

#include <string.h>

#include "symtab.h"
#include "symbolizer.h"

#define MAX_REPORT_MODULES 32

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

void hwt_frame_reset(void)
{
    seen.count = 0;
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
    return hwt_symtab_lookup(pc, sym);
}

/* A frame: its ELF symbol and, from the external symbolizer, its source lines (the
 * innermost inlined function first, the function the code physically is in last). */

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
    if (r->stack_len > 1 && hwt_symtab_callee(pc0, r->stack[1], &f->sym)) {
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
void hwt_frame_top(struct hwt_buf *b, const struct hwt_report *r, bool with_module)
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
        hwt_symtab_callee(pcs[0], pcs[1], &f.sym);
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

void hwt_frame_list(struct hwt_buf *b, const struct hwt_report *r, const uintptr_t *pcs, unsigned n,
                    bool first)
{
    if (n == 0) {
        hwt_fmt_printf(b, " (stack not available)\n");
        return;
    }
    for (unsigned i = 0; i < n; i++)
        frame_line(b, r, pcs, i, n, first);
}

/* After the access line, when the header had to name a frame the pc is not in itself. */
void hwt_frame_called_from(struct hwt_buf *b, const struct hwt_report *r)
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
void hwt_frame_modules(struct hwt_buf *b)
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

void hwt_frame_more(struct hwt_buf *b, unsigned more)
{
    if (more != 0)
        hwt_fmt_printf(b, " ... %u more frame%s not recorded\n", more, more == 1 ? "" : "s");
}

/* libstdc++'s (and libc++'s) replaceable allocation and deallocation functions, mangled:
 * operator new, new[], delete and delete[] of every signature. */
static bool cxx_operator(const char *name)
{
    return strncmp(name, "_Znw", 4) == 0 || strncmp(name, "_Zna", 4) == 0 ||
           strncmp(name, "_Zdl", 4) == 0 || strncmp(name, "_Zda", 4) == 0;
}

/* The allocator's own functions that can stand above the program's call: the exported
 * entry points (one calling another, as realloc(NULL, n) malloc) and the internal ones. */
static bool own_entry(const char *name)
{
    static const char *const entries[] = {
        "malloc",        "free",     "calloc", "realloc", "reallocarray", "posix_memalign",
        "aligned_alloc", "memalign", "valloc", "pvalloc", "free_sized",   "free_aligned_sized",
        "cfree",         NULL};
    if (strncmp(name, "hwt_", 4) == 0 || strncmp(name, "hwtag_", 6) == 0)
        return true;
    for (unsigned i = 0; entries[i] != NULL; i++)
        if (strcmp(name, entries[i]) == 0)
            return true;
    return false;
}

unsigned hwt_frame_first_user(const uintptr_t *pcs, unsigned n)
{
    struct hwt_symbol self;
    self.module = NULL;
    /* the module this code is in: libhwtag.so, or the program it is linked into */
    bool have_self = hwt_symtab_lookup((uintptr_t)hwt_frame_first_user, &self);
    for (unsigned i = 0; i < n; i++) {
        struct hwt_symbol sym;
        sym.function = NULL;
        sym.module = NULL;
        if (!hwt_symtab_lookup(pcs[i], &sym) || sym.function == NULL)
            return i;
        bool own = have_self && sym.module == self.module && own_entry(sym.function);
        if (!own && !cxx_operator(sym.function))
            return i;
    }
    return 0;
}
