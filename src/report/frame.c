/* SPDX-License-Identifier: MIT */
/* The frames of a report, one compact line each: symbol+off/size, the readable name when it
 * is not the symbol, file:line:column and (module+offset), inlined calls on lines of their
 * own; the header's frame; the list of the report's modules with their build ids and one
 * note on what to install for names and lines. Text only. */
#include "frame.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "frame_kind.h"
#include "symtab.h"
#include "symbolizer.h"

#define MAX_REPORT_MODULES 32
#define CWD_CAP 512
/* Inlined calls are indented under the frame they are part of. */
#define INLINE_INDENT "   "

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
    bool debug_found[MAX_REPORT_MODULES];
} seen;

/* The working directory at report time: source paths under it are printed relative. */
static char cwd[CWD_CAP];
static size_t cwd_len;

void hwt_frame_reset(void)
{
    seen.count = 0;
    cwd_len = 0;
    if (syscall(SYS_getcwd, cwd, sizeof(cwd)) > 0)
        cwd_len = strlen(cwd);
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* The module's file name as a header token: characters outside [A-Za-z0-9_.] become '_'
 * (the kernel's symbol shape, which report parsers take). */
static void module_token(struct hwt_buf *b, const char *module)
{
    for (const char *c = basename_of(module); *c != '\0'; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_' || *c == '.';
        hwt_fmt_printf(b, "%c", ok ? *c : '_');
    }
}

/* "func+0xoff/0xsize", else "module+0xoff" (never a symbol of another module), else "0xpc". */
static void location(struct hwt_buf *b, uintptr_t pc, const struct hwt_symbol *sym, bool known)
{
    if (known && sym->function != NULL) {
        hwt_fmt_printf(b, "%s+0x%lx/0x%lx", sym->function, (unsigned long)sym->function_offset,
                       (unsigned long)sym->function_size);
    } else if (known && sym->module != NULL) {
        module_token(b, sym->module);
        hwt_fmt_printf(b, "+0x%lx", (unsigned long)sym->module_offset);
    } else {
        hwt_fmt_printf(b, "0x%lx", (unsigned long)pc);
    }
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
    seen.debug_found[seen.count] = sym->debug_found;
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

/* "file:line[:column]", the file relative to the working directory when it lies under it. */
static void source(struct hwt_buf *b, const struct hwt_symbolizer_line *l)
{
    const char *file = l->file;

    if (cwd_len > 1 && strncmp(file, cwd, cwd_len) == 0 && file[cwd_len] == '/')
        file += cwd_len + 1;
    hwt_fmt_printf(b, "%s:%u", file, l->line);
    if (l->column != 0)
        hwt_fmt_printf(b, ":%u", l->column);
}

/* " <name>" and " <file:line:column>" of location l of frame f: the name only when it is not
 * the symbol already printed (a demangled C++ name, an inlined callee, glibc's
 * implementation behind an exported name), and for a frame without a symbol only with a
 * line (a name with no line may be a guess). */
static void readable(struct hwt_buf *b, const struct frame *f, const struct hwt_symbolizer_line *l)
{
    const char *name = l->function;

    if (name != NULL &&
        (f->sym.function != NULL ? strcmp(name, f->sym.function) != 0 : l->file != NULL))
        hwt_fmt_printf(b, " %s", name);
    if (l->file != NULL) {
        hwt_fmt_printf(b, " ");
        source(b, l);
    }
}

/* " (module+0xoffset)" with the module's file name (its path is in Modules), after a frame
 * named by a symbol; a frame without one already says module+offset. */
static void module_suffix(struct hwt_buf *b, const struct frame *f)
{
    if (f->known && f->sym.function != NULL && f->sym.module != NULL)
        hwt_fmt_printf(b, " (%s+0x%lx)", basename_of(f->sym.module),
                       (unsigned long)f->sym.module_offset);
}

/* A frame's text: location, readable name and line of its physical function, module. */
static void frame_text(struct hwt_buf *b, const struct frame *f)
{
    location(b, f->pc, &f->sym, f->known);
    if (f->nlines > 0)
        readable(b, f, &f->lines[f->nlines - 1]);
    module_suffix(b, f);
}

/* The inlined calls of f, innermost first as the kernel's decode_stacktrace.sh prints them,
 * indented: "   <name> <file:line:column> [inline]". */
static void inlined(struct hwt_buf *b, const struct frame *f)
{
    for (unsigned i = 0; i + 1 < f->nlines; i++) {
        const struct hwt_symbolizer_line *l = &f->lines[i];
        hwt_fmt_printf(b, INLINE_INDENT "%s", l->function != NULL ? l->function : "??");
        if (l->file != NULL) {
            hwt_fmt_printf(b, " ");
            source(b, l);
        }
        hwt_fmt_printf(b, " [inline]\n");
    }
}

/* The frame the header and the summary name: the first one outside the library routines
 * above, and with a name. A faulting pc in an unnamed function is named after the symbol
 * its caller called (*via_got). *called_by: the index of the frame named when it is not
 * the faulting pc's own (1 for a callee named via the GOT), else -1. */
static unsigned header_frame(const struct hwt_report *r, struct frame *f, int *called_by,
                             bool *via_got)
{
    uintptr_t pc0 = r->stack_len > 0 ? r->stack[0] : (r->have_regs ? r->pc : 0);

    *called_by = -1;
    *via_got = false;
    describe(pc0, r->access == HWTAG_ACCESS_FREE, r->symbolize, f);
    if (hwt_frame_kind_library(&f->sym)) {
        for (unsigned i = 1; i < r->stack_len; i++) {
            struct frame g;
            describe(r->stack[i], true, r->symbolize, &g);
            if (hwt_frame_kind_library(&g.sym))
                continue;
            if (!g.known)
                break;
            *f = g;
            *called_by = (int)i;
            return i;
        }
        describe(pc0, r->access == HWTAG_ACCESS_FREE, r->symbolize, f);
    }
    /* a local name from a debug file (__memcpy_generic) gives way to the exported one */
    if (!f->known || (f->sym.function != NULL && !f->sym.local))
        return 0;
    if (r->stack_len > 1 && hwt_symtab_callee(pc0, r->stack[1], &f->sym)) {
        f->sym.local = false;
        *called_by = 1;
        *via_got = true;
        return 0;
    }
    if (f->sym.function != NULL)
        return 0;
    for (unsigned i = 1; i < r->stack_len; i++) {
        struct frame g;
        describe(r->stack[i], true, r->symbolize, &g);
        /* never a name from another module: a stripped binary's frame stays module+offset */
        if (!g.known || g.sym.module != f->sym.module)
            break;
        if (g.sym.function != NULL) {
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
    /* where a person reads it, before the module: the innermost function and its line, or
     * the line of the caller */
    if (f.nlines > 0 && f.lines[0].file != NULL) {
        readable(b, &f, &f.lines[0]);
    } else if (called_by >= 0) {
        struct frame c;
        describe(r->stack[called_by], true, r->symbolize, &c);
        if (c.nlines > 0 && c.lines[0].file != NULL) {
            hwt_fmt_printf(b, " called from %s ",
                           c.lines[0].function != NULL ? c.lines[0].function : "??");
            source(b, &c.lines[0]);
        }
    }
    module_suffix(b, &f);
}

/* The frame line " sym+0xoff/0xsize [name] [file:line:column] (module+0xoffset)", its
 * inlined calls first. first: pcs[0] is a faulting pc (not a return address), named like
 * the header's. */
static void frame_line(struct hwt_buf *b, const struct hwt_report *r, const uintptr_t *pcs,
                       unsigned i, unsigned n, bool first)
{
    struct frame f;
    bool ret = !(first && i == 0);

    describe(pcs[i], ret, r->symbolize, &f);
    if (first && i == 0 && f.known && (f.sym.function == NULL || f.sym.local) && n > 1 &&
        hwt_symtab_callee(pcs[0], pcs[1], &f.sym))
        f.sym.local = false;
    inlined(b, &f);
    hwt_fmt_printf(b, " ");
    frame_text(b, &f);
    hwt_fmt_printf(b, "\n");
}

void hwt_frame_list(struct hwt_buf *b, const struct hwt_report *r, const uintptr_t *pcs, unsigned n,
                    unsigned more, bool first)
{
    if (n == 0)
        hwt_fmt_printf(b, " (stack not available)\n");
    for (unsigned i = 0; i < n; i++)
        frame_line(b, r, pcs, i, n, first);
    if (more != 0)
        hwt_fmt_printf(b, " ... %u more frame%s not recorded\n", more, more == 1 ? "" : "s");
}

/* The name of the routine the faulting pc is in, for "The access is inside NAME": the
 * checked routine called, its symbol, or the symbol its caller called; NULL if none. */
static const char *inside_name(const struct hwt_report *r, struct hwt_symbol *sym)
{
    uintptr_t pc0 = r->stack_len > 0 ? r->stack[0] : (r->have_regs ? r->pc : 0);

    if (r->call_name != NULL)
        return r->call_name;
    if (!symbolize(pc0, sym))
        return NULL;
    if (sym->function != NULL)
        return sym->function;
    if (r->stack_len > 1 && hwt_symtab_callee(pc0, r->stack[1], sym))
        return sym->function;
    return NULL;
}

/* After the access line, when the header had to name a frame the pc is not in itself. */
void hwt_frame_called_from(struct hwt_buf *b, const struct hwt_report *r)
{
    struct frame f, c;
    struct hwt_symbol inside;
    int called_by;
    bool via_got;

    header_frame(r, &f, &called_by, &via_got);
    if (called_by < 0)
        return;
    describe(r->stack[called_by], true, r->symbolize, &c);
    const char *name = inside_name(r, &inside);
    if (name != NULL)
        hwt_fmt_printf(b, "The access is inside %s, called from ", name);
    else
        hwt_fmt_printf(b, "The access is inside code without a symbol, called from ");
    frame_text(b, &c);
    hwt_fmt_printf(b, "\n");
}

/* The one note of a report on what would name or place more of its frames. */
static void install_note(struct hwt_buf *b)
{
    unsigned missing = 0, first = 0;
    bool no_symbolizer = hwt_symbolizer_missing();

    for (unsigned i = seen.count; i-- > 0;)
        if (!seen.debug_found[i]) {
            missing++;
            first = i;
        }
    if (!no_symbolizer && missing == 0)
        return;
    hwt_fmt_printf(b, "Note: ");
    if (no_symbolizer)
        hwt_fmt_printf(b,
                       "no symbolizer found (llvm-symbolizer, addr2line or HWTAG_SYMBOLIZER); "
                       "install llvm for source lines and inlined frames%s",
                       missing > 0 ? "; " : "");
    if (missing > 0) {
        const char *base = basename_of(seen.path[first]);
        hwt_fmt_printf(b, "no debug file for %s; install ", seen.path[first]);
        if (strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libm.so", 7) == 0 ||
            strncmp(base, "ld-linux", 8) == 0)
            hwt_fmt_printf(b, "libc6-dbg");
        else if (seen.build_id[first] == NULL)
            hwt_fmt_printf(b, "an unstripped build");
        else /* the file is /usr/lib/debug/.build-id/xx/yyyy.debug, its id is in Modules */
            hwt_fmt_printf(b, "its -dbg or -dbgsym package");
        hwt_fmt_printf(b, " for its local names and lines");
        if (missing > 1)
            hwt_fmt_printf(b, " (and %u more modules)", missing - 1);
    }
    hwt_fmt_printf(b, "\n");
}

/* Each module of the report once, with its build id (to symbolize the report elsewhere):
 * the only place a module's full path is printed. */
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
    install_note(b);
}
