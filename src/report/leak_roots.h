/* SPDX-License-Identifier: MIT */
/* Where the leak check looks for pointers: the writable segments of every loaded module,
 * every thread's stack, registers and TLS, and the regions the program registered. */
#ifndef HWT_LEAK_ROOTS_H
#define HWT_LEAK_ROOTS_H

#include <stdbool.h>

#include "leak_graph.h"
#include "leak_world.h"

/* The writable segments of the loaded modules (dl_iterate_phdr, which takes the loader's
 * lock: call it before the world stops), libhwtag's own data excluded. */
bool hwt_leak_roots_modules(struct hwt_leak_graph *g);
/* The code of the dynamic loader (before the world stops, like the modules). Objects it
 * allocated (the DTV, dynamic TLS blocks) are reachable through places that are no roots:
 * the TCBs of the threads glibc keeps in its stack cache after they exit. */
bool hwt_leak_roots_loader(struct hwt_leak_range *code);
/* The stopped threads' registers, stacks and TLS, and the calling thread's (from
 * caller_sp up), and the program's own anonymous mappings less skip[0, nskip) (sorted by
 * lo: the heap's mappings and libhwtag's metadata); the world is stopped. */
bool hwt_leak_roots_threads(struct hwt_leak_graph *g, const struct hwt_leak_world *w,
                            uintptr_t caller_sp, const struct hwt_leak_range *skip, size_t nskip);
/* The ranges the scan of anonymous mappings leaves out, sorted: slab regions, large
 * objects' mappings, metadata, the check's own tables. Mapped in *out (free with
 * hwt_leak_roots_skip_free); false when there is no memory. */
bool hwt_leak_roots_skip(const struct hwt_leak_graph *g, const struct hwt_leak_world *w,
                         struct hwt_leak_range **out, size_t *n, size_t *bytes);

#endif
