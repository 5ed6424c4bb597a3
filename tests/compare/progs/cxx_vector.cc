// SPDX-License-Identifier: MIT
// std::vector index past the end through data(): the sample count is off by one.
#include <cstdio>
#include <vector>

__attribute__((noinline)) void store_samples(std::vector<int> &v, int count)
{
    int *d = v.data();
    for (int i = 0; i <= count; i++)     /* BUG: d[count] is past the end */
        d[i] = i * 3;
}

int main()
{
    std::vector<int> v(10);
    store_samples(v, (int)v.size());
    std::printf("%d\n", v[1]);
    return 0;
}
