/* SPDX-License-Identifier: MIT */
/* The process's memory map, one mapping at a time, for the unwinder and the symbolizer. */
#ifndef HWT_MAPS_H
#define HWT_MAPS_H

#include <stdbool.h>
#include <stdint.h>

/* One line of /proc/self/maps. */
struct hwt_mapping {
    uintptr_t start, end;
    uint64_t offset; /* file offset of start */
    uint64_t inode;
    bool readable, writable, executable;
    const char *path; /* "" when anonymous; valid only during the callback */
};

/* Calls fn on each line of /proc/self/maps, in address order, until it returns false. Raw
 * syscalls and a stack buffer only. Returns false when the file cannot be read. signal-safe */
bool hwt_maps_foreach(bool (*fn)(const struct hwt_mapping *m, void *arg), void *arg);

#endif
