/* SPDX-License-Identifier: MIT */
/* A slot as an object: made live, freed, resized in place, described. */
#ifndef HWT_SLOT_H
#define HWT_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "object.h"
#include "slab.h"

/* Makes slot addr of class cls a live object of size requested: picks its tag (policy in
 * slab.c), tags it (zeroing when zero), writes its tail pattern (tail.h), records it.
 * Returns the tagged pointer. */
void *hwt_slot_prepare(uintptr_t addr, size_t requested, bool zero, uint32_t stack);

/* Marks the checked slot freed (atomically: a racing second free gets false), retags it
 * free and records the stack. Returns the untagged slot address or 0 on a lost race. */
uintptr_t hwt_slot_release(struct hwt_span *s, uint32_t idx, uint32_t stack);

/* realloc in place when new_size belongs in the same slot: keeps the tag, tags the grown
 * part or frees the cut tail. Returns false when the object must move. */
bool hwt_slot_resize(struct hwt_span *s, uint32_t idx, size_t new_size);

/* Describes the slot delta slots away from the one holding addr (0: that one) in the same
 * span. Lock-free. signal-safe */
bool hwt_slot_lookup(uintptr_t addr, long delta, struct hwt_object *out);

#endif
