/* SPDX-License-Identifier: MIT */
/* A ring of recent allocation and free events (the kernel's KASAN stack ring), so a report
 * can name the object a stale pointer belonged to after its slot was reused. Lock-free:
 * writers claim entries with one atomic increment; readers never block. */
#ifndef HWT_HISTORY_H
#define HWT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HWT_HISTORY_ENTRIES 4096u /* a power of two; 96 KiB */

struct hwt_history_event {
    uintptr_t ptr;  /* tagged pointer of the object */
    uint32_t size;  /* requested size (truncated to 32 bits) */
    uint32_t stack; /* depot id of the allocation or free (thread id is in the depot) */
    uint32_t is_free;
    uint32_t seq; /* claim number + 1, written last: 0 or a mismatch = torn entry */
};

/* Records an event; no-op until hwt_history_init() has run. */
void hwt_history_record(const void *ptr, size_t size, uint32_t stack, bool is_free);
bool hwt_history_init(void);

/* Finds the most recent free and allocation events of an object that contained the tagged
 * address addr (same tag, addr inside [ptr, ptr+size)). Either may be missing (its seq 0).
 * Returns true when an allocation was found. signal-safe */
bool hwt_history_find(uintptr_t addr, struct hwt_history_event *alloc,
                      struct hwt_history_event *freed);

#endif
