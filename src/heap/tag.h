/* SPDX-License-Identifier: MIT */
/* Tag policy: which tag a new object gets, and writing tags over a range. */
#ifndef HWT_TAG_H
#define HWT_TAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/mte.h"
#include "arch/mte_range.h"
#include "check.h"

#define HWT_TAG_BIT(t) ((uint16_t)(1u << (t)))

/* A random tag for a new object, never HWT_TAG_UNTAGGED or HWT_TAG_FREE nor any tag
 * whose bit is set in exclude. HWT_TAG_UNTAGGED when tagging is off. */
static inline unsigned hwt_tag_pick(uint16_t exclude)
{
    return mte_random_tag((uint64_t)exclude | HWT_TAG_BIT(HWT_TAG_UNTAGGED) |
                          HWT_TAG_BIT(HWT_TAG_FREE));
}

/* Sets the memory tag of [addr, addr+size) to tag; addr and size granule-aligned.
 * zero: also zero the bytes (tag-and-zero instructions, or memset without MTE).
 * Inline: it is on every malloc and free. */
static inline void hwt_tag_range(uintptr_t addr, size_t size, unsigned tag, bool zero)
{
    HWT_DCHECK((addr & (HWT_GRANULE - 1)) == 0 && (size & (HWT_GRANULE - 1)) == 0);
    if (size == 0)
        return;
    if (hwt_mte_active) {
        mte_store_tags(mte_with_tag(addr, tag), size, zero);
        return;
    }
    if (zero)
        __builtin_memset((void *)addr, 0, size);
}

#endif
