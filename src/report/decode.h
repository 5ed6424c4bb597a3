/* SPDX-License-Identifier: MIT */
/* Decodes an AArch64 load/store instruction into the access it makes: size and
 * direction. Pure and signal-safe. */
#ifndef HWT_DECODE_H
#define HWT_DECODE_H

#include <stdbool.h>
#include <stdint.h>

struct hwt_access {
    unsigned size; /* bytes transferred by the instruction (pairs: both registers) */
    bool is_write; /* stores, and read-modify-write atomics */
    bool is_read;
};

/* Returns false when insn is not a load/store we know. signal-safe */
bool hwt_decode_access(uint32_t insn, struct hwt_access *out);

#endif
