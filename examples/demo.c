/* SPDX-License-Identifier: MIT */
/* A small program with a real heap bug: it copies a user name into a buffer sized by
 * strlen() and forgets the terminating NUL, an off-by-one heap overflow that a plain
 * allocator lets pass silently. Run it under libhwtag to see the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct user {
    int id;
    char *name;
};

static __attribute__((noinline)) struct user *user_new(int id, const char *name)
{
    struct user *u = malloc(sizeof(*u));
    if (u == NULL)
        return NULL;
    u->id = id;
    u->name = malloc(strlen(name)); /* bug: no room for the terminating NUL */
    if (u->name == NULL) {
        free(u);
        return NULL;
    }
    strcpy(u->name, name);
    return u;
}

static void user_free(struct user *u)
{
    free(u->name);
    free(u);
}

int main(int argc, char **argv)
{
    /* 32 characters: the NUL lands in the next 16-byte granule, which MTE can see */
    const char *name = argc > 1 ? argv[1] : "grace.hopper@navy.example.org.us";
    struct user *u = user_new(1, name);
    if (u == NULL)
        return 1;
    printf("user %d: %s\n", u->id, u->name);
    user_free(u);
    return 0;
}
