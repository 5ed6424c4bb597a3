/* SPDX-License-Identifier: MIT */
/* Force-included into every file of the library (CMakeLists.txt): the library's own calls
 * of the string and memory routines it exports checked versions of (src/libcall.c), the
 * ones the compiler emits included, go to hwt_libc_* (base/libc.c), straight to the C
 * library's, so they neither pay for nor overwrite the record of a program's call. */
#ifndef HWT_LIBC_NAMES_H
#define HWT_LIBC_NAMES_H

#ifndef HWT_LIBC_DEFINER
#include <stddef.h>

void *memcpy(void *dst, const void *src, size_t n) __asm__("hwt_libc_memcpy");
void *memmove(void *dst, const void *src, size_t n) __asm__("hwt_libc_memmove");
void *memset(void *dst, int c, size_t n) __asm__("hwt_libc_memset");
int memcmp(const void *a, const void *b, size_t n) __asm__("hwt_libc_memcmp");
void *memchr(const void *s, int c, size_t n) __asm__("hwt_libc_memchr");
size_t strlen(const char *s) __asm__("hwt_libc_strlen");
size_t strnlen(const char *s, size_t n) __asm__("hwt_libc_strnlen");
int strcmp(const char *a, const char *b) __asm__("hwt_libc_strcmp");
int strncmp(const char *a, const char *b, size_t n) __asm__("hwt_libc_strncmp");
char *strchr(const char *s, int c) __asm__("hwt_libc_strchr");
char *strrchr(const char *s, int c) __asm__("hwt_libc_strrchr");
#endif

#endif
