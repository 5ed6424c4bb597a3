// SPDX-License-Identifier: MIT
// Allocation and free stacks of C++ and of the entry points that allocate for the program
// (stacks.sh checks the reports): operator new and delete alike, the program's call first,
// no frame of the library, and a stack cut at HWTAG_STACK_DEPTH says how much it left out.
#include <cstdio>
#include <cstdlib>
#include <cstring>

static void *volatile sink;

extern "C" __attribute__((noinline)) int *make_one(void)
{
    int *p = new int[25];
    sink = p;
    return p;
}

extern "C" __attribute__((noinline)) void drop_one(int *p)
{
    delete[] p;
    sink = nullptr;
}

extern "C" __attribute__((noinline)) void *realloc_one(void)
{
    void *p = std::realloc(nullptr, 100);
    sink = p;
    return p;
}

extern "C" __attribute__((noinline)) void free_one(void *p)
{
    std::free(p);
    sink = nullptr;
}

// levels frames of its own above make_one and drop_one
extern "C" __attribute__((noinline)) void deep(int levels)
{
    if (levels > 0) {
        deep(levels - 1);
        sink = nullptr;
        return;
    }
    int *p = make_one();
    drop_one(p);
    drop_one(p);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    if (std::strcmp(how, "delete") == 0) {
        int *p = make_one();
        drop_one(p);
        drop_one(p); // a double free: the report shows both stacks
    } else if (std::strcmp(how, "realloc") == 0) {
        void *p = realloc_one();
        free_one(p);
        free_one(p);
    } else if (std::strcmp(how, "deep") == 0) {
        deep(40);
    } else if (std::strcmp(how, "shallow") == 0) {
        deep(10);
    } else {
        std::fprintf(stderr, "usage: %s delete|realloc|deep|shallow\n", argv[0]);
        return 2;
    }
    return 0;
}
