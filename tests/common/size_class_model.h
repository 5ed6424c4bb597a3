/* SPDX-License-Identifier: MIT */
/* An independent model of the size-class table, for the unit test and the fuzzer: written
 * from the documented rule, not from src/size_class.h. */
#ifndef HWT_TEST_SIZE_CLASS_MODEL_H
#define HWT_TEST_SIZE_CLASS_MODEL_H

#include <stddef.h>

/* The slot size a request of n bytes (1 <= n <= 16384) should get: 16-byte steps up to
 * 256, then eight equal steps per doubling. */
static inline size_t model_slot_size(size_t n)
{
    if (n <= 256)
        return (n + 15) / 16 * 16;
    size_t lo = 256;
    while (lo * 2 < n)
        lo *= 2;
    size_t step = lo / 8;
    return (n + step - 1) / step * step;
}

#endif
