/* SPDX-License-Identifier: MIT */
/* Out of address space: memory freed by one size class must serve another. Fills a child
 * under RLIMIT_AS with 4000-byte objects until malloc fails, frees them all, then asks for
 * small objects of other classes. qemu-user does not apply RLIMIT_AS to the guest, so
 * there the test skips; natively it runs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define LIMIT ((rlim_t)1 << 30) /* 1 GiB of address space, as `ulimit -v 1048576` */
#define MAX_OBJECTS (1u << 20)
#define SKIP_STATUS 77

static void *objs[MAX_OBJECTS];

/* Exit status: 0 ok, SKIP_STATUS when the limit does not apply, else the failing step. */
static int fill_free_reuse(void)
{
    struct rlimit rl = {LIMIT, LIMIT};
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 2;
    void *probe = mmap(NULL, (size_t)LIMIT * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe != MAP_FAILED)
        return SKIP_STATUS; /* the limit is not enforced (qemu-user) */
    size_t n = 0;
    while (n < MAX_OBJECTS && (objs[n] = malloc(4000)) != NULL)
        n++;
    if (n == MAX_OBJECTS || n < 1000)
        return 3;
    for (size_t i = 0; i < n; i++)
        free(objs[i]);
    /* with nothing live, other classes must get memory back */
    static const size_t sizes[] = {100, 16, 1000, 8000, 200};
    for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        for (size_t i = 0; i < 2000; i++) {
            objs[i] = malloc(sizes[k]);
            if (objs[i] == NULL) {
                fprintf(stderr, "malloc(%zu) failed after %zu with nothing else live\n", sizes[k],
                        i);
                return 4;
            }
            memset(objs[i], 1, sizes[k]);
        }
        for (size_t i = 0; i < 2000; i++)
            free(objs[i]);
    }
    return 0;
}

static void test_freed_memory_serves_other_classes(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(fill_free_reuse());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == SKIP_STATUS)
        skip();
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_freed_memory_serves_other_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
