/* SPDX-License-Identifier: MIT */
// Overflow inside strcpy called from a user function: the name plus its NUL needs 21 bytes.
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

__attribute__((noinline)) char *user_set_name(const char *name)
{
    char *copy = malloc(16);
    strcpy(copy, name);              /* BUG: strlen(name) + 1 == 21 > 16 */
    return copy;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "administrator-backup";
    char *n = user_set_name(name);
    printf("%s\n", n);
    free(n);
    return 0;
}
