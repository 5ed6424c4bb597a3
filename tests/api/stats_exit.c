/* SPDX-License-Identifier: MIT */
/* The program of stats_at_exit.sh: allocates small and large objects, then ends the way
 * argv[1] says: "return" from main, "exit", "_exit", "bug" (a use after free read, then
 * a return from main; run it with HWTAG_FAULT=report) or "double" (a double free, then a
 * return; HWTAG_FAULT=report too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "return";
    for (int i = 0; i < 20; i++) {
        char *volatile big = malloc(64 << 10); /* order 4: sampled */
        memset(big, i, 64 << 10);
        free(big);
    }
    for (int i = 0; i < 100; i++) {
        char *volatile small = malloc(24 + (size_t)i);
        small[0] = 1;
        free(small);
    }
    if (strcmp(how, "bug") == 0) {
        char *volatile p = malloc(32);
        free(p);
        volatile char c = p[0];
        (void)c;
    }
    if (strcmp(how, "double") == 0) {
        char *volatile p = malloc(48);
        free(p);
        free(p);
    }
    printf("stats_exit: %s\n", how);
    fflush(stdout);
    if (strcmp(how, "exit") == 0)
        exit(0);
    if (strcmp(how, "_exit") == 0)
        _exit(0);
    return 0;
}
