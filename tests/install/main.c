/* SPDX-License-Identifier: MIT */
/* Consumer of an installed libhwtag: the header, hwtag_version() and the malloc family resolve
 * to the library. It must not depend on anything outside the installed tree. */
#include <hwtag.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HWTAG_EXPECT_VERSION
#error "build with -DHWTAG_EXPECT_VERSION=\"x.y.z\""
#endif
#ifndef HWTAG_VARIANT
#define HWTAG_VARIANT "consumer"
#endif

#define STR(x) #x
#define XSTR(x) STR(x)
#define HEADER_VERSION                                                                             \
    XSTR(HWTAG_VERSION_MAJOR) "." XSTR(HWTAG_VERSION_MINOR) "." XSTR(HWTAG_VERSION_PATCH)

/* volatile: the compiler may not drop a malloc/free pair whose pointer escapes here */
static void *volatile sink;

static int failed;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s: %s\n", HWTAG_VARIANT, what);
        failed = 1;
    }
}

int main(void)
{
    struct hwtag_stats before, after_alloc, after_free;
    const char *version = hwtag_version();

    check(version != NULL && strcmp(version, HWTAG_EXPECT_VERSION) == 0,
          "hwtag_version() is the installed package's version");
    check(strcmp(HEADER_VERSION, HWTAG_EXPECT_VERSION) == 0, "hwtag.h is the package's version");
    check(hwtag_get_stats(&before, sizeof(before)) == 0, "hwtag_get_stats()");

    sink = malloc(48);
    check(sink != NULL, "malloc(48)");
    if (sink)
        memset(sink, 0x5a, 48);
    check(hwtag_get_stats(&after_alloc, sizeof(after_alloc)) == 0, "hwtag_get_stats()");
    check(after_alloc.small_allocs >= before.small_allocs + 1, "malloc() is counted by libhwtag");

    free(sink);
    sink = NULL;
    check(hwtag_get_stats(&after_free, sizeof(after_free)) == 0, "hwtag_get_stats()");
    check(after_free.small_frees >= after_alloc.small_frees + 1, "free() is counted by libhwtag");
    check(hwtag_get_stats(&after_free, sizeof(after_free) - 1) == -1,
          "hwtag_get_stats() refuses a short buffer");

    printf("%s: hwtag %s, mte_active=%d\n", HWTAG_VARIANT, version ? version : "(null)",
           after_free.mte_active);
    printf("%s: %d passed, %d failed\n", HWTAG_VARIANT, !failed, failed);
    return failed;
}
