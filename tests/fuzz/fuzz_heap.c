/* SPDX-License-Identifier: MIT */
/* Fuzzes the allocator core with random sequences of malloc, calloc, free, realloc and
 * memalign against a model of every live object's contents: nothing may be lost, no object
 * may overlap another, usable sizes and alignments hold, and the core's own checks
 * (HWT_CHECK, the tail check) never fire on a correct sequence. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "init.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIVE_MAX 64
#define FILL_MAX 4096 /* bytes of each object filled and checked */

struct live {
    unsigned char *ptr;
    size_t size;
    unsigned char fill;
};

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_heap: %s (%s:%d)\n", #cond, __FILE__, __LINE__);                 \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static size_t checked(size_t size)
{
    return size < FILL_MAX ? size : FILL_MAX;
}

static void verify(const struct live *o)
{
    for (size_t i = 0; i < checked(o->size); i++)
        CHECK(o->ptr[i] == (unsigned char)(o->fill + i));
}

static void fill(struct live *o, unsigned char seed)
{
    o->fill = seed;
    for (size_t i = 0; i < checked(o->size); i++)
        o->ptr[i] = (unsigned char)(seed + i);
}

/* Sizes spread over small classes, class boundaries and page-backed objects. */
static size_t pick_size(uint8_t a, uint8_t b)
{
    size_t v = (size_t)a << 8 | b;
    switch (a >> 6) {
    case 0:
        return v & 63;
    case 1:
        return v & 1023;
    case 2:
        return v & 16383;
    default:
        return (v & 0x3fff) * 5;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct live objs[LIVE_MAX];
    unsigned n = 0;
    hwt_init_ensure();
    for (size_t i = 0; i + 3 < size; i += 4) {
        uint8_t op = data[i], a = data[i + 1], b = data[i + 2], seed = data[i + 3];
        unsigned which = n > 0 ? (unsigned)(a ^ b) % n : 0;
        switch (op % 5) {
        case 0: /* malloc or calloc */
        case 1: {
            if (n == LIVE_MAX)
                break;
            size_t sz = pick_size(a, b);
            bool zero = op % 5 == 1;
            unsigned char *p = hwt_alloc(
                sz, 16, zero, hwt_caller_of_record((uintptr_t)__builtin_frame_address(0)));
            CHECK(p != NULL);
            CHECK(((uintptr_t)p & 15) == 0);
            CHECK(hwt_alloc_usable(p) == sz);
            for (size_t k = 0; zero && k < checked(sz); k++)
                CHECK(p[k] == 0);
            objs[n] = (struct live){p, sz, 0};
            fill(&objs[n++], seed);
            break;
        }
        case 2: /* free */
            if (n == 0)
                break;
            verify(&objs[which]);
            hwt_alloc_free(objs[which].ptr,
                           hwt_caller_of_record((uintptr_t)__builtin_frame_address(0)));
            objs[which] = objs[--n];
            break;
        case 3: { /* realloc */
            if (n == 0)
                break;
            size_t sz = pick_size(a, b) + 1;
            bool bad = false;
            struct live *o = &objs[which];
            verify(o);
            unsigned char *p = hwt_alloc_realloc(
                o->ptr, sz, &bad, hwt_caller_of_record((uintptr_t)__builtin_frame_address(0)));
            CHECK(p != NULL && !bad);
            for (size_t k = 0; k < checked(sz < o->size ? sz : o->size); k++)
                CHECK(p[k] == (unsigned char)(o->fill + k));
            o->ptr = p;
            o->size = sz;
            fill(o, seed);
            break;
        }
        default: { /* aligned */
            if (n == LIVE_MAX)
                break;
            size_t align = (size_t)16 << (a % 9);
            size_t sz = pick_size(b, seed);
            unsigned char *p = hwt_alloc(
                sz, align, false, hwt_caller_of_record((uintptr_t)__builtin_frame_address(0)));
            CHECK(p != NULL);
            CHECK(((uintptr_t)p & (align - 1)) == 0);
            objs[n] = (struct live){p, sz, 0};
            fill(&objs[n++], seed);
            break;
        }
        }
    }
    for (unsigned k = 0; k < n; k++) {
        verify(&objs[k]);
        hwt_alloc_free(objs[k].ptr, hwt_caller_of_record((uintptr_t)__builtin_frame_address(0)));
    }
    return 0;
}

#ifndef HWTAG_LIBFUZZER
#include "replay.h"

int main(int argc, char **argv)
{
    return replay_main(argc, argv, "fuzz_heap");
}
#endif
