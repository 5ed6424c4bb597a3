/* SPDX-License-Identifier: MIT */
/* Per-class transfer caches: whole batches of free slots passed from one thread cache's
 * drain to another's refill under a lock held for a copy only. Knows nothing of spans. */
#ifndef HWT_TRANSFER_H
#define HWT_TRANSFER_H

#include <stdbool.h>

#include "size_class.h"
#include "slab.h"

#define HWT_TRANSFER_BATCH_MAX 16u /* slots in one batch, at most */

/* Each arena (slab.h) has its own, so the batches of threads of different arenas do not
 * mix their slots. */

/* Keeps the n free slots (n <= HWT_TRANSFER_BATCH_MAX) as one batch of class cls in arena;
 * false, with nothing kept, when it keeps no more. */
bool hwt_transfer_put(unsigned arena, unsigned cls, const struct hwt_slab_ref *slots, unsigned n);
/* Takes the newest batch of cls in arena into out if it has at most n slots; returns its
 * size, 0 when there is none. */
unsigned hwt_transfer_take(unsigned arena, unsigned cls, struct hwt_slab_ref *out, unsigned n);
/* Gives every kept slot back to its span (hwt_slab_give); for trimming. */
void hwt_transfer_flush(void);
/* Fork child: whether a kept batch holds the slot at addr. */
bool hwt_transfer_holds(unsigned cls, uintptr_t addr);

void hwt_transfer_lock_all(void);
void hwt_transfer_unlock_all(void);
void hwt_transfer_reset_locks(void);

#endif
