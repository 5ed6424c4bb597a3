/* SPDX-License-Identifier: MIT */
/* What the allocator knows about any address, for reports: read-only, lock-free
 * lookups over the out-of-band metadata of small slots and large mappings. */
#ifndef HWT_LOOKUP_H
#define HWT_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object.h"

/* Describes the object whose slot or mapping (including a large object's guard tail)
 * holds addr. Returns false when addr is not in the heap. signal-safe (no locks). */
bool hwt_lookup_addr(uintptr_t addr, struct hwt_object *out);

/* The slot delta slots away from the one holding addr, within the same span
 * (delta may be negative). Returns false past the span's ends or for large objects.
 * signal-safe. */
bool hwt_lookup_neighbor(uintptr_t addr, long delta, struct hwt_object *out);

#endif
