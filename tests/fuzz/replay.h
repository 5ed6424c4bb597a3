/* SPDX-License-Identifier: MIT */
/* The replay main of the fuzz targets where libFuzzer is not there: runs
 * LLVMFuzzerTestOneInput on every file of the corpus directories or files given. */
#ifndef HWT_FUZZ_REPLAY_H
#define HWT_FUZZ_REPLAY_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0, got;
    uint8_t *data = malloc(cap);
    while (data != NULL && (got = fread(data + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            uint8_t *bigger = realloc(data, cap);
            if (bigger == NULL)
                free(data);
            data = bigger;
        }
    }
    fclose(f);
    if (data == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, len);
    free(data);
    return 0;
}

/* Returns the number of inputs replayed, or -1 when a path cannot be read. */
static int replay_corpus(int argc, char **argv)
{
    int runs = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) {
            perror(argv[a]);
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[a]) != 0)
                return -1;
            runs++;
            continue;
        }
        DIR *dir = opendir(argv[a]);
        if (dir == NULL) {
            perror(argv[a]);
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[a], e->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (replay_file(path) != 0) {
                closedir(dir);
                return -1;
            }
            runs++;
        }
        closedir(dir);
    }
    return runs;
}

/* The whole main of a target without extra checks: usage, replay, one summary line. */
static inline int replay_main(int argc, char **argv, const char *name)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s corpus-dir|file...\n", argv[0]);
        return 2;
    }
    int runs = replay_corpus(argc, argv);
    printf("%s: %d inputs replayed\n", name, runs);
    return runs > 0 ? 0 : 1;
}

#endif
