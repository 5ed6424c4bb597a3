/* SPDX-License-Identifier: MIT */
/* Out of memory under a real limit (oom_limit.sh runs it under `ulimit -v`, around qemu
 * where the guest's own setrlimit would not apply): fills the address space with one size,
 * frees everything, fills it with another, and so on: large after large, small after
 * large, large after small, mixed. Each fill must end in NULL + ENOMEM (never a crash),
 * and each must get about as much as the first fill of its kind did: memory freed by
 * one size serves every other once nothing is live. Prints one line per step; exit status
 * 0 when every step held, else the number of the failed step. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OBJECTS (1u << 22)
#define MIB ((size_t)1 << 20)

static void *objs[MAX_OBJECTS];
static size_t sizes[MAX_OBJECTS];

/* Allocates size(i) bytes until malloc fails; every object's first and last bytes are
 * written (the pages are really used). Returns the bytes got; *err the failure's errno. */
static size_t fill(size_t (*size_of)(size_t), size_t *count, int *err)
{
    size_t n = 0, bytes = 0;
    for (; n < MAX_OBJECTS; n++) {
        size_t s = size_of(n);
        errno = 0;
        unsigned char *p = malloc(s);
        if (p == NULL) {
            *err = errno;
            break;
        }
        p[0] = (unsigned char)n;
        p[s - 1] = (unsigned char)n;
        objs[n] = p;
        sizes[n] = s;
        bytes += s;
    }
    *count = n;
    return bytes;
}

static int empty(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char *p = objs[i];
        if (p[0] != (unsigned char)i || p[sizes[i] - 1] != (unsigned char)i)
            return 1;
        free(p);
    }
    return 0;
}

static size_t large(size_t i)
{
    (void)i;
    return MIB;
}

static size_t small(size_t i)
{
    return 4000 + (i % 7) * 8;
}

static size_t medium(size_t i)
{
    return 200 + (i % 5) * 208;
}

static size_t mixed(size_t i)
{
    static const size_t kinds[] = {48, 700, 5000, 40000, 300000, 2 * MIB};
    return kinds[(i * 2654435761u >> 8) % 6];
}

struct step {
    const char *name;
    size_t (*size_of)(size_t);
    unsigned base; /* the step whose bytes this one must reach (its own first fill) */
};

int main(int argc, char **argv)
{
    /* at least this share (in percent) of the first fill of a kind, in every later one */
    unsigned share = argc > 1 ? (unsigned)atoi(argv[1]) : 85;
    static const struct step steps[] = {
        {"large 1 MiB", large, 0},
        {"large again", large, 0},
        {"large again", large, 0},
        {"small 4000 B", small, 3},
        {"large after small", large, 0},
        {"200..1032 B", medium, 5},
        {"large after 200..1032 B", large, 0},
        {"4000 B again", small, 3},
        {"mixed 48 B..2 MiB", mixed, 8},
        {"large after mixed", large, 0},
        {"mixed again", mixed, 8},
    };
    size_t got[sizeof(steps) / sizeof(steps[0])];
    int status = 0;
    for (unsigned k = 0; k < sizeof(steps) / sizeof(steps[0]) && status == 0; k++) {
        size_t n;
        int err = 0;
        got[k] = fill(steps[k].size_of, &n, &err);
        unsigned pct = (unsigned)(got[k] * 100 / (got[steps[k].base] ? got[steps[k].base] : 1));
        printf("oom: step %u, %s: %zu objects, %zu MiB, errno %s, %u%% of step %u\n", k + 1,
               steps[k].name, n, got[k] / MIB, err == ENOMEM ? "ENOMEM" : strerror(err), pct,
               steps[k].base + 1);
        if (n == MAX_OBJECTS || err != ENOMEM || got[k] < MIB ||
            (steps[k].base != k && pct < share))
            status = (int)k + 1;
        if (empty(n) != 0) {
            printf("oom: step %u: an object's bytes changed\n", k + 1);
            status = (int)k + 1;
        }
        /* with nothing live, a small request must always succeed */
        void *p = malloc(100);
        if (p == NULL) {
            printf("oom: step %u: malloc(100) failed with nothing live\n", k + 1);
            status = (int)k + 1;
        }
        free(p);
    }
    printf("oom: %s\n", status == 0 ? "every step held" : "FAILED");
    return status;
}
