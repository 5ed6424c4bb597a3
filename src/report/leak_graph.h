/* SPDX-License-Identifier: MIT */
/* The leak check's graph: every live object in one sorted table with its mark, the roots
 * as address ranges, and the marking over them. Scratch memory is mapped for a check and
 * given back after it; nothing here prints or stops threads. */
#ifndef HWT_LEAK_GRAPH_H
#define HWT_LEAK_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Marks of an object, one bit each. */
enum {
    HWT_LEAK_REACHED = 1,  /* from the roots, pointer tags matched */
    HWT_LEAK_LOOSE = 2,    /* from the roots, pointer tags ignored */
    HWT_LEAK_IGNORED = 4,  /* hwt_leak_ignore, or allocated with checks disabled: a root */
    HWT_LEAK_INDIRECT = 8, /* pointed to by another leaked object */
    HWT_LEAK_LARGE = 16,   /* a page-backed object: a mapping of its own */
};

struct hwt_leak_object {
    uintptr_t start; /* untagged */
    size_t size;     /* requested */
    uint32_t stack;  /* allocation stack id */
    uint8_t tag;
    uint8_t marks;
};

struct hwt_leak_range {
    uintptr_t lo, hi;
};

struct hwt_leak_graph {
    struct hwt_leak_object *objects; /* sorted by start */
    size_t count, cap;
    struct hwt_leak_range *roots;
    size_t nroots, roots_cap;
    uint32_t *work; /* the mark's stack of object indices */
    size_t map_bytes, roots_bytes;
};

/* Maps the root table (before the world stops). False: no memory. */
bool hwt_leak_graph_init(struct hwt_leak_graph *g);
/* Takes every live object (the world is stopped) into a sorted table. False: no memory. */
bool hwt_leak_graph_build(struct hwt_leak_graph *g);
void hwt_leak_graph_free(struct hwt_leak_graph *g);
/* Adds a root range (clipped to nothing when empty); false when the table is full. */
bool hwt_leak_graph_add_root(struct hwt_leak_graph *g, uintptr_t lo, uintptr_t hi);
/* Index of the object holding the untagged address addr, or -1. */
long hwt_leak_graph_find(const struct hwt_leak_graph *g, uintptr_t addr);
/* Marks with bit (HWT_LEAK_REACHED: tags must match; HWT_LEAK_LOOSE: tags ignored) every
 * object reachable from the roots and the ignored objects. */
void hwt_leak_graph_mark(struct hwt_leak_graph *g, unsigned bit);
/* Marks HWT_LEAK_INDIRECT the leaked objects (none of leaked_bit) that another leaked
 * object points to. */
void hwt_leak_graph_mark_indirect(struct hwt_leak_graph *g, unsigned reached_bit);

#endif
