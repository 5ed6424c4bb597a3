/* SPDX-License-Identifier: MIT */
/* The internal-error path of HWT_CHECK: one line on stderr, then a trap. Uses nothing
 * that could itself fail a check. */
#include "check.h"

#include <string.h>

#include "os.h"

static void write_str(const char *s)
{
    hwt_os_write_all(2, s, strlen(s));
}

void hwt_check_fail(const char *msg, const char *file, int line)
{
    char num[16];
    int n = 0;
    char digits[16];
    do {
        digits[n++] = (char)('0' + line % 10);
        line /= 10;
    } while (line > 0 && n < (int)sizeof(digits));
    for (int i = 0; i < n; i++)
        num[i] = digits[n - 1 - i];
    num[n] = '\0';
    write_str("hwtag: internal error: ");
    write_str(msg);
    write_str(" (");
    write_str(file);
    write_str(":");
    write_str(num);
    write_str(")\n");
    __builtin_trap();
}
