/* SPDX-License-Identifier: MIT */
/* Consumer of the packaged libhwtag-dev, built by tests/package/run.sh with pkg-config and
 * with find_package(hwtag): the header and the library are the package's version, and the
 * malloc family is libhwtag's. */
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

static void *volatile sink;

int main(void)
{
    struct hwtag_stats before, after;
    const char *version = hwtag_version();
    const char *header =
        XSTR(HWTAG_VERSION_MAJOR) "." XSTR(HWTAG_VERSION_MINOR) "." XSTR(HWTAG_VERSION_PATCH);
    int failed = 0;

    if (version == NULL || strcmp(version, HWTAG_EXPECT_VERSION) != 0) {
        printf("%s: hwtag_version() is %s, the package is %s\n", HWTAG_VARIANT,
               version ? version : "(null)", HWTAG_EXPECT_VERSION);
        failed = 1;
    }
    if (strcmp(header, HWTAG_EXPECT_VERSION) != 0) {
        printf("%s: hwtag.h is %s, the package is %s\n", HWTAG_VARIANT, header,
               HWTAG_EXPECT_VERSION);
        failed = 1;
    }
    if (hwtag_get_stats(&before, sizeof(before)) != 0)
        failed = 1;
    sink = malloc(40);
    free(sink);
    if (hwtag_get_stats(&after, sizeof(after)) != 0 ||
        after.small_allocs < before.small_allocs + 1 ||
        after.small_frees < before.small_frees + 1) {
        printf("%s: malloc and free are not libhwtag's\n", HWTAG_VARIANT);
        failed = 1;
    }
    printf("%s: hwtag %s, mte_active=%d: %s\n", HWTAG_VARIANT, version ? version : "(null)",
           after.mte_active, failed ? "FAILED" : "ok");
    return failed;
}
