/* SPDX-License-Identifier: MIT */
/* lookup.h: one place that answers "what is at this address" for reports, over the slab
 * and large back ends. Lock-free reads only. */
#include "lookup.h"

#include "large.h"
#include "slab.h"
#include "slot.h"

bool hwt_lookup_addr(uintptr_t addr, struct hwt_object *out)
{
    if (hwt_slot_lookup(addr, 0, out))
        return true;
    return hwt_large_lookup(addr, out);
}

bool hwt_lookup_neighbor(uintptr_t addr, long delta, struct hwt_object *out)
{
    return hwt_slot_lookup(addr, delta, out);
}
