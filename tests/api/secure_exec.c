/* SPDX-License-Identifier: MIT */
/* The program of secure_exec.sh, linked with libhwtag.a (the loader preloads nothing into
 * a secure-execution process from a path): prints what the kernel said (AT_SECURE, the
 * ids) and the options the library took, then frees an object twice, which is reported
 * with or without MTE; run it with HWTAG_FAULT=report so that it returns. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "options.h"

int main(void)
{
    char *volatile p = malloc(40);
    printf("secure=%lu uid=%d euid=%d\n", getauxval(AT_SECURE), (int)getuid(), (int)geteuid());
    printf("log_path=%s symbolizer=%s fault=%u sample=%u max_reports=%u\n",
           hwt_opts.log_path != NULL ? hwt_opts.log_path : "(none)",
           hwt_opts.symbolizer != NULL ? hwt_opts.symbolizer : "(none)", hwt_opts.fault,
           hwt_opts.sample, hwt_opts.max_reports);
    fflush(stdout);
    free(p);
    free(p);
    return 0;
}
