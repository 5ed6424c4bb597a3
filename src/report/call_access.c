/* SPDX-License-Identifier: MIT */
/* The ranges a recorded string or memory routine call reads and writes, the one a fault
 * fell in, and its first bad byte. Strings are measured here, as the routine would have
 * gone: tag checks are off in the handler, and a scan stops where the readable mappings
 * around it end. */
#include "call_access.h"

#include "arch/mte.h"
#include "lookup.h"
#include "maps.h"

/* Innermost frames searched for the call's return address: the routine's own, and those of
 * a C library routine that calls another (strncat calls strnlen and memcpy). */
#define CALLER_FRAMES 4
/* Longest string measured: past it the length is reported as this. */
#define STRING_CAP ((size_t)1 << 20)
#define MAX_RANGES 3

struct range {
    uintptr_t start; /* tagged, as the program passed it */
    size_t size;
    bool write;
};

struct readable_run {
    uintptr_t addr, end; /* end: of the readable mappings from the one holding addr */
};

static bool extend_run(const struct hwt_mapping *m, void *arg)
{
    struct readable_run *run = arg;
    if (run->end == 0) {
        if (m->end <= run->addr)
            return true;
        if (m->start > run->addr || !m->readable)
            return false;
        run->end = m->end;
        return true;
    }
    if (m->start != run->end || !m->readable)
        return false;
    run->end = m->end;
    return true;
}

/* Bytes readable from p on (0: none), at most STRING_CAP. */
static size_t readable_from(uintptr_t p)
{
    struct readable_run run = {mte_untag((const void *)p), 0};
    if (!hwt_maps_foreach(extend_run, &run) || run.end <= run.addr)
        return 0;
    size_t room = run.end - run.addr;
    return room < STRING_CAP ? room : STRING_CAP;
}

/* Length of the string at p with its NUL, at most max (and what is readable). */
static size_t string_size(uintptr_t p, size_t max)
{
    size_t room = readable_from(p);
    const volatile char *s = (const volatile char *)p;
    size_t i = 0;
    if (room < max)
        max = room;
    while (i < max && s[i] != '\0')
        i++;
    return i < max ? i + 1 : max;
}

/* Bytes strcmp(a, b) reads of each: up to the first difference or NUL, at most max. */
static size_t compare_size(uintptr_t a, uintptr_t b, size_t max)
{
    size_t room_a = readable_from(a), room_b = readable_from(b);
    const volatile unsigned char *x = (const volatile unsigned char *)a;
    const volatile unsigned char *y = (const volatile unsigned char *)b;
    size_t i = 0;
    if (room_a < max)
        max = room_a;
    if (room_b < max)
        max = room_b;
    while (i < max && x[i] == y[i] && x[i] != '\0')
        i++;
    return i < max ? i + 1 : max;
}

static unsigned add(struct range *out, unsigned n, uintptr_t start, size_t size, bool write)
{
    if (size == 0)
        return n;
    out[n].start = start;
    out[n].size = size;
    out[n].write = write;
    return n + 1;
}

/* The ranges the call reads and writes, in the order the routine touches them. */
static unsigned call_ranges(const struct hwt_libc_call *c, struct range *out)
{
    size_t len_a, len_b;
    unsigned n = 0;

    switch (c->fn->shape) {
    case HWT_LIBC_COPY:
        n = add(out, n, c->b, c->n, false);
        return add(out, n, c->a, c->n, true);
    case HWT_LIBC_SET:
        return add(out, n, c->a, c->n, true);
    case HWT_LIBC_CMP:
        n = add(out, n, c->a, c->n, false);
        return add(out, n, c->b, c->n, false);
    case HWT_LIBC_SCAN:
        return add(out, n, c->a, c->n, false);
    case HWT_LIBC_STRLEN:
        return add(out, n, c->a, string_size(c->a, STRING_CAP), false);
    case HWT_LIBC_STRNLEN:
        return add(out, n, c->a, string_size(c->a, c->n), false);
    case HWT_LIBC_STRCPY:
        len_b = string_size(c->b, STRING_CAP);
        n = add(out, n, c->b, len_b, false);
        return add(out, n, c->a, len_b, true);
    case HWT_LIBC_STRNCPY:
        n = add(out, n, c->b, string_size(c->b, c->n), false);
        return add(out, n, c->a, c->n, true);
    case HWT_LIBC_STRCAT:
    case HWT_LIBC_STRNCAT:
        len_a = string_size(c->a, STRING_CAP);
        len_b = string_size(c->b, c->fn->shape == HWT_LIBC_STRCAT ? STRING_CAP : c->n);
        n = add(out, n, c->a, len_a, false);
        n = add(out, n, c->b, len_b, false);
        /* the copy overwrites dst's NUL and ends with one of its own */
        if (c->fn->shape == HWT_LIBC_STRNCAT && len_b == c->n)
            len_b++;
        return add(out, n, c->a + (len_a > 0 ? len_a - 1 : 0), len_b, true);
    case HWT_LIBC_STRCMP:
    case HWT_LIBC_STRNCMP:
        len_a = compare_size(c->a, c->b, c->fn->shape == HWT_LIBC_STRCMP ? STRING_CAP : c->n);
        n = add(out, n, c->a, len_a, false);
        return add(out, n, c->b, len_a, false);
    }
    return 0;
}

/* Whether the fault at addr (untagged; a check reports the granule or the access start)
 * lies in range g's granules. */
static bool holds(const struct range *g, uintptr_t addr)
{
    uintptr_t start = mte_untag((const void *)g->start);
    uintptr_t lo = hwt_align_down(start, HWT_GRANULE);
    uintptr_t hi = hwt_align_up(start + g->size, HWT_GRANULE);
    return addr >= lo && addr < hi;
}

/* The first byte of g the pointer's tag does not allow: the end of the live object the
 * range starts in (byte-exact, from the requested size), else its first granule of
 * another tag; fallback when it finds none. */
static uintptr_t first_bad(const struct range *g, uintptr_t fallback)
{
    uintptr_t start = mte_untag((const void *)g->start), end = start + g->size;
    unsigned tag = mte_ptr_tag((const void *)g->start);
    struct hwt_object o;

    if (hwt_lookup_addr(start, &o) && o.live && o.tag == tag && start >= o.start &&
        start < o.start + o.requested)
        return end > o.start + o.requested ? o.start + o.requested : fallback;
    for (uintptr_t p = hwt_align_down(start, HWT_GRANULE); p < end; p += HWT_GRANULE)
        if (mte_load_tag(p) != tag)
            return p > start ? p : start;
    return fallback;
}

bool hwt_call_access_describe(struct hwt_report *r, const struct hwt_libc_call *call)
{
    struct range ranges[MAX_RANGES];
    const struct range *hit = NULL;
    uintptr_t addr = mte_untag((const void *)r->addr);

    if (call->fn == NULL)
        return false;
    bool ours = false;
    for (unsigned i = 1; i < r->stack_len && i <= CALLER_FRAMES; i++)
        ours |= r->stack[i] == call->ret;
    if (!ours)
        return false; /* an earlier call's record: this fault is elsewhere */
    unsigned n = call_ranges(call, ranges);
    /* the instruction's direction first: memmove's ranges may overlap */
    for (unsigned pass = 0; pass < 2 && hit == NULL; pass++)
        for (unsigned i = 0; i < n && hit == NULL; i++)
            if (holds(&ranges[i], addr) &&
                (pass == 1 || ranges[i].write == (r->access == HWTAG_ACCESS_WRITE)))
                hit = &ranges[i];
    if (hit == NULL)
        return false;
    r->call_name = call->fn->name;
    r->call_addr = hit->start;
    r->call_size = hit->size;
    r->access = hit->write ? HWTAG_ACCESS_WRITE : HWTAG_ACCESS_READ;
    r->access_size = hit->size;
    uintptr_t bad = first_bad(hit, addr);
    r->pointer_tag = mte_ptr_tag((const void *)hit->start);
    r->addr = (uintptr_t)mte_with_tag(bad, r->pointer_tag);
    r->memory_tag = mte_load_tag(hwt_align_down(bad, HWT_GRANULE));
    return true;
}
