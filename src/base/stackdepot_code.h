/* SPDX-License-Identifier: MIT */
/* The stack depot's record format: headers, varints, frame codes, and the decoding a lookup
 * runs on every record it compares (inline). It never finds, stores or publishes records. */
#ifndef HWT_STACKDEPOT_CODE_H
#define HWT_STACKDEPOT_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "stackdepot_limits.h"
#include "stackdepot_frame.h"

/* A record, at a unit boundary. Its first 32-bit word is a header: bits 0-19 the id of the next
 * record in the bucket (0 = end), bits 24-25 its kind; the other bits by kind.
 *   DEPOT_FRAMES  a head or a tail: bits 20-23 the top bits of the frames' hash, bits 26-31
 *           the frame count (1..32); then the codes of the frames (frame_put). Named by stacks
 *           only, never handed out.
 *   DEPOT_STACK  two units: the ids of its head and of its tail (0: the stack has no more
 *           than HWT_DEPOT_INLINE frames), 40 bits in the 42 bits left of the 64 (stack_pack);
 *           bit 62 set when a third unit follows, the count of frames past the stack's last
 *           that the capture left out (a stack cut at the depth limit).
 *           The stack as the first thread the depot saw captured it.
 *   DEPOT_ALIAS  the same stack from another thread: bits 20-23 and 26-31 as for frames;
 *           varint zigzag(tid - the first tid), varint id of the DEPOT_STACK record. The
 *           thread is part of what a report says, the frames are shared.
 * A record only names older records. Immutable once published through a bucket (release
 * CAS), so readers that reach it with an acquire load need no lock. */
#define HWT_DEPOT_UNIT sizeof(uint32_t) /* records start at unit boundaries */
#define DEPOT_NEXT_MASK ((1u << HWT_STACKDEPOT_ID_BITS) - 1)
#define DEPOT_CHECK_SHIFT 20u
#define DEPOT_CHECK_MASK 0xfu
#define DEPOT_KIND_SHIFT 24u
#define DEPOT_KIND_MASK 0x3u
#define DEPOT_NR_SHIFT 26u
#define DEPOT_STACK_MORE (UINT64_C(1) << 62) /* a DEPOT_STACK record's third unit is there */
#define DEPOT_VARINT_MAX 10u /* bytes of a 64-bit varint; a frame code is never longer */
#define DEPOT_RECORD_MAX (sizeof(uint32_t) + DEPOT_VARINT_MAX * (HWT_STACK_MAX_FRAMES + 2))
/* Zero bytes past the pool, never written. A decoder reads at most this far from the unit it
 * starts at (a varint stops after 10 bytes, a frame code after 11, a record after its count),
 * so whatever id it is given it stays inside the mapping without checking byte by byte. */
#define DEPOT_PAD (sizeof(uint32_t) + (DEPOT_VARINT_MAX + 1) * (HWT_STACK_MAX_FRAMES + 2))

enum { DEPOT_DEAD = 0, DEPOT_STACK = 1, DEPOT_ALIAS = 2, DEPOT_FRAMES = 3 };

_Static_assert(HWT_STACK_MAX_FRAMES < (1u << (32 - DEPOT_NR_SHIFT)), "frame count fits");
_Static_assert(HWT_STACKDEPOT_ID_BITS <= DEPOT_CHECK_SHIFT, "next id fits the header");
_Static_assert(HWT_DEPOT_PCS >= (1u << 13),
               "an index of a 1- or 2-byte code is inside the frame table");

/* What a record holds, and what a chain walk looks for, by kind: frames (pcs, n), a stack
 * (head, tail), or an alias (tid_code, target; n frames). tid_code: zigzag(tid - the first
 * tid), as the record holds it. */
struct hwt_stackdepot_key {
    uint32_t hash;
    unsigned kind;
    const uintptr_t *pcs;
    unsigned n;
    uint32_t head, tail;
    uint32_t more; /* DEPOT_STACK: frames past the last left out */
    uint64_t tid_code;
    uint32_t target;
};

/* Reads a varint at *p (at most DEPOT_VARINT_MAX bytes). Returns false past 64 bits. */
static inline bool depot_varint_get(const uint8_t **p, uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v = 0;

    if (likely(!(*q & 0x80))) {
        *out = *q;
        *p = q + 1;
        return true;
    }
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = *q++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            *p = q;
            return true;
        }
    }
    return false;
}

static inline uint64_t depot_zigzag(uint64_t diff)
{
    return diff << 1 ^ (uint64_t)((int64_t)diff >> 63);
}

static inline uint64_t depot_unzigzag(uint64_t v)
{
    return v >> 1 ^ (0 - (v & 1));
}

static inline uint8_t depot_hash_check(uint32_t hash)
{
    return (uint8_t)(hash >> (32 - 4));
}

static inline void depot_stack_unpack(uint64_t v, uint32_t *head, uint32_t *tail)
{
    uint64_t x = (v >> DEPOT_CHECK_SHIFT & 0xf) | (v >> DEPOT_NR_SHIFT) << 4;
    *head = (uint32_t)(x & DEPOT_NEXT_MASK);
    *tail = (uint32_t)(x >> HWT_STACKDEPOT_ID_BITS & DEPOT_NEXT_MASK);
}

static inline unsigned depot_record_kind(uint32_t header)
{
    return header >> DEPOT_KIND_SHIFT & DEPOT_KIND_MASK;
}

/* The header of a DEPOT_FRAMES or DEPOT_ALIAS record of key, without the next id. */
static inline uint32_t depot_counted_header(const struct hwt_stackdepot_key *key)
{
    return (uint32_t)depot_hash_check(key->hash) << DEPOT_CHECK_SHIFT |
           (uint32_t)key->kind << DEPOT_KIND_SHIFT | key->n << DEPOT_NR_SHIFT;
}

/* Decodes n frame codes from *p into pcs; with expect, stops at the first frame that differs
 * from it (false), so a chain walk rejects another stack after a frame or two. */
static inline __attribute__((always_inline)) bool
depot_decode_frames(const uint8_t **p, unsigned n, uintptr_t *pcs, const uintptr_t *expect)
{
    const uint8_t *q = *p;
    uint64_t prev = 0, x;

    for (unsigned i = 0; i < n; i++) {
        unsigned w = q[0] | (unsigned)q[1] << 8;
        /* the common codes, an index of 1 or 2 bytes: always inside the table (an entry not
         * yet written reads as a made-up address, hwt_stackdepot_frame_pc) */
        if (likely(!(w & 0x81))) {
            prev = hwt_stackdepot_frame_pc(w >> 1 & 0x7f);
            q++;
        } else if ((w & 0x8081) == 0x80) {
            prev = hwt_stackdepot_frame_pc((w >> 1 & 0x3f) | (w >> 8) << 6);
            q += 2;
        } else {
            x = (uint64_t)(w >> 1 & 0x3f);
            q++;
            if (w & 0x80) {
                uint64_t rest;
                if (!depot_varint_get(&q, &rest) || rest >> 58 != 0)
                    return false;
                x |= rest << 6;
            }
            if (w & 1)
                prev += depot_unzigzag(x);
            else if (x < HWT_DEPOT_PCS)
                prev = hwt_stackdepot_frame_pc((uint32_t)x);
            else
                return false;
        }
        pcs[i] = (uintptr_t)prev;
        if (expect && expect[i] != pcs[i])
            return false;
    }
    *p = q;
    return true;
}

/* Codes the record of key into buf: its header without the next id (bits 0-19 clear), then its
 * body, zero-padded to whole units. Returns the units. */
unsigned hwt_stackdepot_code_encode(uint8_t *buf, const struct hwt_stackdepot_key *key);

#endif
