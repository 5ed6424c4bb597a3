/* SPDX-License-Identifier: MIT */
/* The cost of a fork to the allocator: forks N times; each child makes one malloc and free
 * and leaves with _exit, the parent waits. Prints the children's minor page faults a fork
 * (getrusage RUSAGE_CHILDREN). Under qemu-user a child faults for every page of the guest's
 * mapped address space it touches and for each page of its own state QEMU copies, so this
 * is where an allocator's mapped footprint and its fork handlers show.
 *
 *   bench_fork [N]          (default 300)
 *   bench_fork N --maps     also prints the parent's /proc/self/maps */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void print_maps(void)
{
    int fd = open("/proc/self/maps", O_RDONLY);
    if (fd < 0)
        return;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)n, stdout);
    close(fd);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 300;
    if (n <= 0) {
        fprintf(stderr, "usage: bench_fork [N>0] [--maps]\n");
        return 2;
    }
    void *keep = malloc(100); /* the parent has a heap, as any real program */
    if (keep == NULL)
        return 1;
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            /* the object is not written: a first call of a routine the parent never ran
             * (memset here) is translated afresh in every child under qemu, which costs
             * faults of its own */
            free(malloc(50));
            _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench_fork: child %ld failed\n", i);
            return 1;
        }
    }
    free(keep);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    printf("RESULT forks=%ld child_minflt_per_fork=%.1f\n", n, (double)ru.ru_minflt / (double)n);
    if (argc > 2 && strcmp(argv[2], "--maps") == 0)
        print_maps();
    return 0;
}
