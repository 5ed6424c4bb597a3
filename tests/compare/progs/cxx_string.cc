// SPDX-License-Identifier: MIT
// Overflow inside the C++ library: a std::string built from a buffer shorter than the
// length passed, so libstdc++ copies 24 bytes out of a 16-byte array.
#include <cstdio>
#include <cstring>
#include <string>

__attribute__((noinline)) std::string make_label(const char *buf, size_t len)
{
    return std::string(buf, len);    /* BUG: len 24, buf holds 16 */
}

int main(int argc, char **)
{
    char *buf = new char[16];
    std::memcpy(buf, "sensor-01-north!", 16);
    std::string s = make_label(buf, 24 + (argc > 5));
    std::printf("%zu\n", s.size());
    delete[] buf;
    return 0;
}
