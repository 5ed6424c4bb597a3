/* SPDX-License-Identifier: MIT */
/* Metadata memory: a bump allocator over untagged anonymous mappings, so metadata never
 * shares tag storage with user objects. It never frees and never calls malloc. */
#include "meta.h"

#include "align.h"
#include "lock.h"
#include "os.h"

#define META_CHUNK (1u << 20)

static struct hwt_lock meta_lock = HWT_LOCK_INIT;
static uintptr_t meta_cur, meta_end; /* protected by meta_lock */
/* Every mapping made, for hwt_meta_ranges; published count after the entry. */
static struct hwt_meta_range chunks[HWT_META_MAX_CHUNKS];
static unsigned nchunks;
static uint64_t meta_total; /* bytes mapped, protected by meta_lock */

void *hwt_meta_alloc(size_t size, size_t align)
{
    if (align < 16)
        align = 16;
    if (size > ((size_t)1 << 40))
        return NULL;
    hwt_lock(&meta_lock);
    uintptr_t p = hwt_align_up(meta_cur, align);
    if (meta_cur == 0 || p + size > meta_end) {
        size_t chunk = hwt_align_up(size + align, META_CHUNK);
        void *m = hwt_os_map(chunk, false);
        if (m == NULL) {
            hwt_unlock(&meta_lock);
            return NULL;
        }
        meta_total += chunk;
        if (nchunks < HWT_META_MAX_CHUNKS) {
            chunks[nchunks] = (struct hwt_meta_range){(uintptr_t)m, (uintptr_t)m + chunk};
            __atomic_store_n(&nchunks, nchunks + 1, __ATOMIC_RELEASE);
        }
        /* A large request gets its own mapping so the current chunk's tail stays usable. */
        if (size >= META_CHUNK / 4 && meta_cur != 0) {
            hwt_unlock(&meta_lock);
            return (void *)hwt_align_up((uintptr_t)m, align);
        }
        meta_cur = (uintptr_t)m;
        meta_end = meta_cur + chunk;
        p = hwt_align_up(meta_cur, align);
    }
    meta_cur = p + size;
    hwt_unlock(&meta_lock);
    return (void *)p;
}

const struct hwt_meta_range *hwt_meta_ranges(unsigned *count)
{
    *count = __atomic_load_n(&nchunks, __ATOMIC_ACQUIRE);
    return chunks;
}

uint64_t hwt_meta_mapped(void)
{
    return __atomic_load_n(&meta_total, __ATOMIC_RELAXED);
}

void hwt_meta_lock(void)
{
    hwt_lock(&meta_lock);
}

void hwt_meta_unlock(void)
{
    hwt_unlock(&meta_lock);
}

void hwt_meta_reset_lock(void)
{
    hwt_lock_reset(&meta_lock);
}
