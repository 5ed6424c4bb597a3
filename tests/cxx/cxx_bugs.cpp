// SPDX-License-Identifier: MIT
// Heap bugs that fault inside the C++ library or inside the C library called from it:
// run_cxx_bugs.sh checks that the report's title names this program's function.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

static volatile std::size_t sink;

// std::string's constructor copies 100 bytes out of a 64-byte object: memcpy, called from
// the C++ library, called from here.
__attribute__((noinline)) static void string_from_short_buffer()
{
    char *volatile p = static_cast<char *>(std::malloc(64));
    std::memset(p, 'x', 64);
    std::string s(p, 100);
    sink = s.size();
}

// std::hash reads the bytes itself, in the C++ library (_Hash_bytes).
__attribute__((noinline)) static void hash_past_end()
{
    char *volatile p = static_cast<char *>(std::malloc(48));
    std::memset(p, 'y', 48);
    sink = std::hash<std::string_view>{}(std::string_view(p, 96));
}

int main(int argc, char **argv)
{
    if (argc > 1 && std::strcmp(argv[1], "string") == 0)
        string_from_short_buffer();
    else if (argc > 1 && std::strcmp(argv[1], "hash") == 0)
        hash_past_end();
    return 0;
}
