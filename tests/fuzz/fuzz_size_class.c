/* SPDX-License-Identifier: MIT */
/* Fuzzes the size-class math: fit, minimality, monotonicity, alignment, no overflow. */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "init.h"
#include "os.h"
#include "size_class.h"
#include "../common/size_class_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond, v)                                                                             \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_size_class: check failed for %#llx: %s (%s:%d)\n",               \
                    (unsigned long long)(v), #cond, __FILE__, __LINE__);                           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check_size(size_t n)
{
    unsigned cls = hwt_size_class_of(n);
    CHECK(cls < HWT_NUM_CLASSES, n);
    size_t slot = hwt_size_class_size(cls);
    CHECK(slot >= n, n);
    CHECK(slot % 16 == 0, n);
    CHECK(slot == model_slot_size(n), n);
    CHECK(n > 256 ? slot - n <= n / 8 : slot - n < 16, n);
    /* the smallest class that fits */
    CHECK(cls == 0 || hwt_size_class_size(cls - 1) < n, n);
    /* monotonic around n */
    if (n > 1)
        CHECK(hwt_size_class_of(n - 1) <= cls, n);
    if (n < HWT_SMALL_MAX)
        CHECK(hwt_size_class_of(n + 1) >= cls && hwt_size_class_of(n + 1) <= cls + 1, n);
    size_t span = hwt_size_class_span(cls);
    CHECK((span & (span - 1)) == 0 && span >= hwt_os_page_size &&
              span / slot >= (slot > 4096 ? 4u : 8u),
          n);
}

static void check_aligned(size_t n, size_t align)
{
    unsigned cls = hwt_size_class_aligned(n, align);
    if (n > HWT_SMALL_MAX || align > HWT_SMALL_MAX) {
        CHECK(cls == HWT_NUM_CLASSES, n);
        return;
    }
    /* the largest class is a multiple of every power of two up to itself */
    CHECK(cls < HWT_NUM_CLASSES, n);
    size_t slot = hwt_size_class_size(cls);
    CHECK(slot >= n && slot >= align && slot % align == 0, n);
    for (unsigned c = 0; c < cls; c++) {
        size_t s = hwt_size_class_size(c);
        CHECK(s < n || s < align || s % align != 0, n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hwt_init_ensure();
    /* each record: 8 bytes of size, 1 byte of alignment exponent */
    for (size_t off = 0; off + 9 <= size; off += 9) {
        uint64_t raw;
        memcpy(&raw, data + off, sizeof(raw));
        size_t align = (size_t)1 << (data[off + 8] % 64);
        check_aligned((size_t)raw, align);
        check_aligned(SIZE_MAX - (size_t)(raw & 0xffff), align);
        size_t n = (size_t)(raw % HWT_SMALL_MAX) + 1;
        check_size(n);
        check_aligned(n, align);
    }
    return 0;
}

#ifndef HWTAG_LIBFUZZER
#include "replay.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s corpus-dir|file...\n", argv[0]);
        return 2;
    }
    int runs = replay_corpus(argc, argv);
    for (size_t n = 1; n <= HWT_SMALL_MAX; n++)
        check_size(n);
    printf("fuzz_size_class: %d inputs replayed\n", runs);
    return runs > 0 ? 0 : 1;
}
#endif
