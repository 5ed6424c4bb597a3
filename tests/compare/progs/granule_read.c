/* SPDX-License-Identifier: MIT */
// A read past the end that stays inside the object's last 16-byte granule: malloc(13) and a
// loop reading 14 bytes. MTE tags whole granules, so no tag check can see it; HWASan's
// short granules and ASan's 8-byte shadow can. libhwtag does not claim this one.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

__attribute__((noinline)) unsigned checksum(const unsigned char *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i <= n; i++)      /* BUG: reads p[n] */
        s = s * 31 + p[i];
    return s;
}

int main(void)
{
    unsigned char *p = malloc(13);
    memset(p, 7, 13);
    printf("%u\n", checksum(p, 13));
    free(p);
    return 0;
}
