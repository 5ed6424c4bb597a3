/* SPDX-License-Identifier: MIT */
/* A library the leak tests dlopen: its one global holds the only pointer to an object. */
#include <stdlib.h>

void *leak_dso_global;

void leak_dso_keep(void *p);
void leak_dso_keep(void *p)
{
    leak_dso_global = p;
}
