/* SPDX-License-Identifier: MIT */
/* Coding a stack depot record: varints, frame codes (frame table indexes or deltas) and the
 * records of frames, stacks and aliases. It never finds, stores or publishes a record. */
#include "stackdepot_code.h"

static unsigned varint_put(uint8_t *p, uint64_t v)
{
    unsigned i = 0;
    while (v >= 0x80) {
        p[i++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[i++] = (uint8_t)v;
    return i;
}

/* A frame code: bit 0 of the first byte says what the rest is, 0 an index into the frame table,
 * 1 the zigzag difference from the previous frame (the frame itself for the first); the first
 * byte carries 6 bits of it, a varint of the rest follows when bit 7 is set. */
static unsigned frame_put(uint8_t *p, bool delta, uint64_t v)
{
    p[0] = (uint8_t)((v & 0x3f) << 1 | (delta ? 1u : 0u));
    if (v >> 6 == 0)
        return 1;
    p[0] |= 0x80;
    return 1 + varint_put(p + 1, v >> 6);
}

/* A DEPOT_STACK record's two ids, in the bits of its 64 that the header leaves free: bits
 * 20-23, then 26-61. */
static uint64_t stack_pack(uint32_t head, uint32_t tail)
{
    uint64_t x = (uint64_t)head | (uint64_t)tail << HWT_STACKDEPOT_ID_BITS;
    return (x & 0xf) << DEPOT_CHECK_SHIFT | (x >> 4) << DEPOT_NR_SHIFT;
}

static unsigned encode_frames(uint8_t *p, const uintptr_t *pcs, unsigned n)
{
    unsigned len = 0;
    uint64_t prev = 0;

    for (unsigned i = 0; i < n; i++) {
        long index = hwt_stackdepot_frame_index(pcs[i]);
        if (index >= 0)
            len += frame_put(p + len, false, (uint64_t)index);
        else
            len += frame_put(p + len, true, depot_zigzag((uint64_t)pcs[i] - prev));
        prev = pcs[i];
    }
    return len;
}

unsigned hwt_stackdepot_code_encode(uint8_t *buf, const struct hwt_stackdepot_key *key)
{
    uint32_t header = depot_counted_header(key);
    unsigned len = sizeof(uint32_t);

    if (key->kind == DEPOT_STACK) {
        uint64_t v = stack_pack(key->head, key->tail) | (uint32_t)DEPOT_STACK << DEPOT_KIND_SHIFT;
        if (key->more == 0) {
            __builtin_memcpy(buf, &v, sizeof(v));
            return 2;
        }
        v |= DEPOT_STACK_MORE;
        __builtin_memcpy(buf, &v, sizeof(v));
        __builtin_memcpy(buf + sizeof(v), &key->more, sizeof(key->more));
        return 3;
    }
    if (key->kind == DEPOT_FRAMES) {
        len += encode_frames(buf + len, key->pcs, key->n);
    } else { /* DEPOT_ALIAS */
        len += varint_put(buf + len, key->tid_code);
        len += varint_put(buf + len, key->target);
    }
    __builtin_memcpy(buf, &header, sizeof(header));
    while (len % HWT_DEPOT_UNIT)
        buf[len++] = 0;
    return len / HWT_DEPOT_UNIT;
}
