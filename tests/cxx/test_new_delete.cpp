// SPDX-License-Identifier: MIT
// C++ programs allocate through operator new/delete, which libstdc++ routes to malloc and
// free: under libhwtag they must work, and their objects must be ours (tagged).
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "hwtag.h"

extern "C" int hwtag_get_stats(struct hwtag_stats *out, size_t size) __attribute__((weak));

static int failures;
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                  \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

struct Node {
    std::string key;
    std::vector<int> values;
};

int main()
{
    CHECK(hwtag_get_stats != nullptr);
    if (hwtag_get_stats == nullptr)
        return 1;
    hwtag_stats before{}, after{};
    CHECK(hwtag_get_stats(&before, sizeof(before)) == 0);

    std::map<std::string, std::unique_ptr<Node>> nodes;
    long expected = 0;
    for (int i = 0; i < 2000; i++) {
        expected += i % 300;
        auto n = std::make_unique<Node>();
        n->key = "node-" + std::to_string(i) + std::string(static_cast<size_t>(i % 50), 'x');
        n->values.assign(static_cast<size_t>(i % 300), i);
        nodes[n->key] = std::move(n);
    }
    long sum = 0;
    for (auto &kv : nodes)
        sum += static_cast<long>(kv.second->values.size());
    CHECK(sum == expected);
    int *array = new int[100000];
    array[99999] = 7;
    CHECK(array[99999] == 7);
    delete[] array;
    try {
        throw std::runtime_error(std::string(200, 'e'));
    } catch (const std::exception &e) {
        CHECK(std::string(e.what()).size() == 200);
    }
    auto *p = new Node{"tagged", {1, 2, 3}};
    if (after.mte_active || before.mte_active)
        CHECK((reinterpret_cast<uintptr_t>(p) >> 56) != 0);
    delete p;
    nodes.clear();

    CHECK(hwtag_get_stats(&after, sizeof(after)) == 0);
    CHECK(after.small_allocs > before.small_allocs + 6000);
    CHECK(after.large_allocs >= before.large_allocs + 1);
    CHECK(after.small_frees > before.small_frees + 6000);
    std::printf("%d passed, %d failed\n", failures == 0 ? 1 : 0, failures == 0 ? 0 : 1);
    return failures == 0 ? 0 : 1;
}
