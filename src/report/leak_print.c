/* SPDX-License-Identifier: MIT */
/* The leak report: groups by (direct or indirect, allocation stack), biggest first, with
 * the stack's frames, one object's first bytes and its thread; `leak:PATTERN` suppressions
 * matched against the frames' functions and modules. Scratch memory is mapped per report;
 * it never allocates from the heap and reads objects with Tag Check Override set. */
#include "leak_print.h"

#include <string.h>

#include "fmt.h"
#include "frame.h"
#include "frame_kind.h"
#include "options.h"
#include "os.h"
#include "report.h"
#include "sink.h"
#include "sort.h"
#include "stackdepot.h"
#include "symtab.h"
#include "symbolizer.h"
#include "task.h"

#define TEXT_CAP (64u * 1024u)
#define FLUSH_AT (48u * 1024u)
#define DUMP_BYTES 32u
#define SUPP_FILE_CAP (64u * 1024u)
#define SUPP_MAX 256u
#define NAME_CAP 32u

struct group {
    uint32_t stack;
    bool indirect;
    size_t bytes, objects;
    size_t example; /* index into the graph */
};

static char text[TEXT_CAP];
static char supp_text[SUPP_FILE_CAP];
static const char *supp[SUPP_MAX];    /* patterns, NUL-terminated in supp_text */
static size_t supp_used[SUPP_MAX][2]; /* allocations, bytes */
static unsigned nsupp;
static bool supp_loaded;

static void flush(struct hwt_buf *b, bool all)
{
    if (b->len < FLUSH_AT && !all)
        return;
    hwt_os_write_all(hwt_sink_log_fd(), b->data, b->len);
    b->len = 0;
    b->data[0] = '\0';
}

/* HWTAG_SUPPRESSIONS: LeakSanitizer's format, one `leak:PATTERN` a line, '#' comments. */
static void load_suppressions(void)
{
    if (supp_loaded)
        return;
    supp_loaded = true;
    if (hwt_opts.suppressions == NULL || hwt_opts.suppressions[0] == '\0')
        return;
    int fd = hwt_os_open_read(hwt_opts.suppressions);
    if (fd < 0) {
        hwt_sink_notice("hwtag: HWTAG_SUPPRESSIONS: cannot read the file; no suppressions\n");
        return;
    }
    long n = hwt_os_read(fd, supp_text, sizeof(supp_text) - 1);
    hwt_os_close(fd);
    if (n <= 0)
        return;
    supp_text[n] = '\0';
    for (char *line = supp_text; line != NULL && *line != '\0' && nsupp < SUPP_MAX;) {
        char *end = strchr(line, '\n');
        if (end != NULL)
            *end = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\r' || line[len - 1] == '\t'))
            line[--len] = '\0';
        if (strncmp(line, "leak:", 5) == 0 && line[5] != '\0')
            supp[nsupp++] = line + 5;
        line = end != NULL ? end + 1 : NULL;
    }
}

/* LeakSanitizer's templates: '*' matches any run, a leading '^' or trailing '$' anchors,
 * otherwise the template may match anywhere in s. */
static bool glob_at(const char *p, const char *s, bool anchored_end)
{
    for (; *p != '\0'; p++, s++) {
        if (*p == '*') {
            for (const char *t = s;; t++) {
                if (glob_at(p + 1, t, anchored_end))
                    return true;
                if (*t == '\0')
                    return false;
            }
        }
        if (*p == '$' && p[1] == '\0')
            return *s == '\0';
        if (*s == '\0' || *p != *s)
            return false;
    }
    return !anchored_end || *s == '\0';
}

static bool template_matches(const char *tmpl, const char *s)
{
    if (s == NULL)
        return false;
    if (tmpl[0] == '^')
        return glob_at(tmpl + 1, s, false);
    for (const char *t = s;; t++) {
        if (glob_at(tmpl, t, false))
            return true;
        if (*t == '\0')
            return false;
    }
}

/* The first template that matches a frame's function or module, or -1. */
static int suppressed(const uintptr_t *pcs, unsigned n)
{
    for (unsigned i = 0; i < n && nsupp > 0; i++) {
        struct hwt_symbol sym;
        if (!hwt_symtab_lookup(pcs[i], &sym))
            continue;
        for (unsigned k = 0; k < nsupp; k++)
            if (template_matches(supp[k], sym.function) || template_matches(supp[k], sym.module))
                return (int)k;
    }
    return -1;
}

static bool by_key(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    return x->indirect != y->indirect ? x->indirect < y->indirect : x->stack < y->stack;
}

/* Direct before indirect, then the most bytes first. */
static bool by_size(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->indirect != y->indirect)
        return !x->indirect; /* direct leaks first */
    return x->bytes != y->bytes ? x->bytes > y->bytes : x->stack > y->stack;
}

static __attribute__((no_sanitize("address", "hwaddress"))) void
dump_bytes(struct hwt_buf *b, const struct hwt_leak_object *o)
{
    size_t n = o->size < DUMP_BYTES ? o->size : DUMP_BYTES;
    const volatile uint8_t *p = (const volatile uint8_t *)o->start;
    hwt_fmt_printf(b, "  ");
    for (size_t i = 0; i < n; i++)
        hwt_fmt_printf(b, "%02x%s", p[i], i % 16 == 15 && i + 1 < n ? "\n  " : " ");
    hwt_fmt_printf(b, " |");
    for (size_t i = 0; i < n; i++)
        hwt_fmt_printf(b, "%c", p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.');
    hwt_fmt_printf(b, "|\n");
}

static void print_group(struct hwt_buf *b, struct hwt_report *r, const struct hwt_leak_graph *g,
                        const struct group *gr, const uintptr_t *pcs, unsigned n, uint32_t tid,
                        unsigned more)
{
    const struct hwt_leak_object *o = &g->objects[gr->example];
    char name[NAME_CAP];
    hwt_fmt_printf(b, "\n%s leak of %zu byte(s) in %zu object(s) allocated from:\n",
                   gr->indirect ? "Indirect" : "Direct", gr->bytes, gr->objects);
    hwt_frame_list(b, r, pcs, n, more, false);
    hwt_fmt_printf(b,
                   " The first %zu of %zu bytes of the object at %lx (tag %02x), allocated by "
                   "task %u",
                   o->size < DUMP_BYTES ? o->size : (size_t)DUMP_BYTES, o->size,
                   (unsigned long)o->start, o->tag, tid);
    if (tid != 0 && hwt_task_thread_name((int)tid, r->comm, name, sizeof(name)))
        hwt_fmt_printf(b, " (thread %s)", name);
    hwt_fmt_printf(b, ":\n");
    if (o->size > 0)
        dump_bytes(b, o);
}

/* Groups of the leaked objects, sorted biggest first; NULL when there is no memory. */
static struct group *make_groups(const struct hwt_leak_graph *g, size_t *count, size_t *bytes)
{
    *count = 0;
    *bytes = hwt_align_up((g->count + 1) * sizeof(struct group), hwt_os_page_size);
    struct group *gs = hwt_os_map(*bytes, false);
    if (gs == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < g->count; i++) {
        const struct hwt_leak_object *o = &g->objects[i];
        if (o->marks & (HWT_LEAK_REACHED | HWT_LEAK_IGNORED))
            continue;
        gs[n++] = (struct group){o->stack, (o->marks & HWT_LEAK_INDIRECT) != 0, o->size, 1, i};
    }
    hwt_sort(gs, n, sizeof(*gs), by_key);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && gs[m - 1].stack == gs[i].stack && gs[m - 1].indirect == gs[i].indirect) {
            gs[m - 1].bytes += gs[i].bytes;
            gs[m - 1].objects++;
            continue;
        }
        gs[m++] = gs[i];
    }
    hwt_sort(gs, m, sizeof(*gs), by_size);
    *count = m;
    return gs;
}

static void print_suppressions(struct hwt_buf *b)
{
    bool any = false;
    for (unsigned k = 0; k < nsupp; k++)
        any |= supp_used[k][0] != 0;
    if (!any)
        return;
    hwt_fmt_printf(b, "\nSuppressions used:\n  count      bytes template\n");
    for (unsigned k = 0; k < nsupp; k++)
        if (supp_used[k][0] != 0)
            hwt_fmt_printf(b, "%7zu %10zu %s\n", supp_used[k][0], supp_used[k][1], supp[k]);
}

size_t hwt_leak_print(struct hwt_leak_graph *g, size_t hidden)
{
    size_t ngroups, map_bytes, reported = 0, bytes = 0, listed = 0, unlisted = 0;
    struct group *gs = make_groups(g, &ngroups, &map_bytes);
    if (gs == NULL)
        return 0;
    load_suppressions();
    memset(supp_used, 0, sizeof(supp_used));
    struct hwt_report r;
    memset(&r, 0, sizeof(r));
    r.comm = hwt_sink_comm();
    r.symbolize = hwt_opts.symbolize == HWT_ON;
    struct hwt_buf b;
    hwt_fmt_init(&b, text, sizeof(text));
    hwt_frame_reset();
    if (r.symbolize)
        hwt_symbolizer_begin();
    for (size_t i = 0; i < ngroups; i++) {
        uintptr_t pcs[HWT_STACK_MAX_FRAMES];
        uint32_t tid = 0;
        unsigned n =
            gs[i].stack != 0 ? hwt_stackdepot_get(gs[i].stack, &tid, pcs, HWT_STACK_MAX_FRAMES) : 0;
        unsigned first = hwt_frame_kind_first_user(pcs, n);
        const uintptr_t *user = pcs + first;
        n -= first;
        int k = suppressed(user, n);
        if (k >= 0) {
            supp_used[k][0] += gs[i].objects;
            supp_used[k][1] += gs[i].bytes;
            continue;
        }
        if (reported == 0) {
            hwt_fmt_printf(&b,
                           "=================================================================="
                           "\n==%d==ERROR: LeakSanitizer: detected memory leaks (libhwtag, "
                           "HWTAG_LEAK_TAGS=%s)\n",
                           hwt_os_getpid(),
                           hwt_opts.leak_tags == HWT_LEAK_TAGS_MATCH ? "match" : "ignore");
        }
        reported += gs[i].objects;
        bytes += gs[i].bytes;
        if (hwt_opts.leak_max_objects != 0 && listed == hwt_opts.leak_max_objects) {
            unlisted++;
            continue;
        }
        listed++;
        print_group(&b, &r, g, &gs[i], user, n, tid, hwt_stackdepot_more(gs[i].stack));
        flush(&b, false);
    }
    if (reported > 0) {
        if (unlisted > 0)
            hwt_fmt_printf(&b, "\n(%zu more group(s) not listed: HWTAG_LEAK_MAX_OBJECTS=%u)\n",
                           unlisted, hwt_opts.leak_max_objects);
        hwt_frame_modules(&b);
        print_suppressions(&b);
        if (hidden > 0)
            hwt_fmt_printf(&b,
                           "\n%zu leaked object(s) would have been hidden with "
                           "HWTAG_LEAK_TAGS=ignore: a stale pointer with another tag points "
                           "into each\n",
                           hidden);
        hwt_fmt_printf(&b, "\nSUMMARY: LeakSanitizer: %zu byte(s) leaked in %zu allocation(s).\n",
                       bytes, reported);
        hwt_fmt_printf(&b, "==================================================================\n");
    }
    if (r.symbolize)
        hwt_symbolizer_end();
    flush(&b, true);
    hwt_os_unmap(gs, map_bytes);
    return reported;
}
