/* SPDX-License-Identifier: MIT */
/* Writing tags over ranges, with the zeroing fallback when tagging is off. The choice of
 * a tag (hwt_tag_pick) is inline in tags.h; callers pass the exclusions they know. */
#include "tags.h"

#include <string.h>

void hwt_tag_range(uintptr_t addr, size_t size, unsigned tag, bool zero)
{
    HWT_DCHECK((addr & (HWT_GRANULE - 1)) == 0 && (size & (HWT_GRANULE - 1)) == 0);
    if (size == 0)
        return;
    if (hwt_mte_active) {
        mte_store_tags(mte_with_tag(addr, tag), size, zero);
        return;
    }
    if (zero)
        memset((void *)addr, 0, size);
}
