/* SPDX-License-Identifier: MIT */
// Double free: an error path releases the configuration, then the normal path does too.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

struct config { char name[32]; int verbose; };

__attribute__((noinline)) struct config *config_load(const char *name)
{
    struct config *c = calloc(1, sizeof *c);
    strncpy(c->name, name, sizeof c->name - 1);
    return c;
}

__attribute__((noinline)) void config_release(struct config *c)
{
    free(c);
}

__attribute__((noinline)) int config_apply(struct config *c)
{
    if (c->verbose == 0) {
        config_release(c);           /* error path frees ... */
        return -1;
    }
    return 0;
}

int main(void)
{
    struct config *c = config_load("server");
    if (config_apply(c) < 0)
        fprintf(stderr, "apply failed\n");
    config_release(c);               /* BUG: ... and so does the caller */
    return 0;
}
