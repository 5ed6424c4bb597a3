/* SPDX-License-Identifier: MIT */
/* Checked versions of the C library's string and memory routines: each records the call
 * (hwt_libc_call: which routine, its pointers and size) and runs the C library's own. A
 * tag-check fault inside it then reports the whole call, `Write of size 80` for
 * memcpy(dst, src, 80), as the kernel's checked memcpy does, not the size of the one
 * instruction that faulted (report/call_access.c); the title names the caller (frame.c).
 * The routines run unchanged: the record is five stores, and the routine is tail-called. */
#include <string.h>
#include <strings.h>

#include "arch/caller.h"
#include "entry.h"
#include "libc.h"

/* The fortified variants (_FORTIFY_SOURCE), which glibc's headers call but do not declare. */
void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__mempcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memset_chk(void *dst, int c, size_t n, size_t dstlen);
char *__strcpy_chk(char *dst, const char *src, size_t dstlen);
char *__stpcpy_chk(char *dst, const char *src, size_t dstlen);
char *__strncpy_chk(char *dst, const char *src, size_t n, size_t dstlen);
char *__strcat_chk(char *dst, const char *src, size_t dstlen);
char *__strncat_chk(char *dst, const char *src, size_t n, size_t dstlen);

/* Records the call as routine id with the return address into the program, which a fault
 * handler compares with the faulting stack's: the record is never cleared (the routine is
 * tail-called, so that the program's stack is the routine's and nothing runs after it), and
 * a record is the fault's only when its caller is on that stack. */
static inline __attribute__((always_inline)) void record(enum hwt_libc_id id, const void *a,
                                                         const void *b, size_t n)
{
    struct hwt_libc_call *c = &hwt_libc_call;
    c->fn = &hwt_libc_fns[id];
    c->a = (uintptr_t)a;
    c->b = (uintptr_t)b;
    c->n = n;
    hwt_arch_entry_return_to(&c->ret);
}

/* RET NAME(PARAMS): records (A, B, N) as routine ID and tail-calls the C library's routine;
 * while that is not resolved, NAME_unresolved resolves it or runs FALLBACK. */
#define CHECKED(ret, name, id, params, args, a, b, n, fallback)                                    \
    static __attribute__((noinline)) ret name##_unresolved params                                  \
    {                                                                                              \
        ret(*real) params = (ret(*) params)hwt_libc_real(id);                                      \
        return real != NULL ? real args : (fallback);                                              \
    }                                                                                              \
    EXPORT HWT_ARCH_FRAMELESS ret name params                                                      \
    {                                                                                              \
        record(id, a, b, n);                                                                       \
        /* volatile, as a relaxed atomic load, whose address gcc would form apart */               \
        ret(*real) params = (ret(*) params)((void *volatile *)&hwt_libc_fns[id].real)[0];          \
        if (__builtin_expect(real == NULL, 0))                                                     \
            return name##_unresolved args;                                                         \
        return real args;                                                                          \
    }

/* Plain versions of the routines with no counterpart among the library's own calls. */
static char *plain_stpcpy(char *dst, const char *src)
{
    size_t len = hwt_libc_strlen(src);
    hwt_libc_memcpy(dst, src, len + 1);
    return dst + len;
}

static char *plain_strncpy(char *dst, const char *src, size_t n)
{
    size_t len = hwt_libc_strnlen(src, n);
    hwt_libc_memcpy(dst, src, len);
    hwt_libc_memset(dst + len, 0, n - len);
    return dst;
}

static char *plain_strncat(char *dst, const char *src, size_t n)
{
    char *end_of_dst = dst + hwt_libc_strlen(dst);
    size_t len = hwt_libc_strnlen(src, n);
    hwt_libc_memcpy(end_of_dst, src, len);
    end_of_dst[len] = '\0';
    return dst;
}

/* clang-format off */
CHECKED(void *, memcpy, HWT_LIBC_MEMCPY, (void *dst, const void *src, size_t n), (dst, src, n),
        dst, src, n, hwt_libc_memcpy(dst, src, n))
CHECKED(void *, memmove, HWT_LIBC_MEMMOVE, (void *dst, const void *src, size_t n), (dst, src, n),
        dst, src, n, hwt_libc_memmove(dst, src, n))
CHECKED(void *, mempcpy, HWT_LIBC_MEMPCPY, (void *dst, const void *src, size_t n), (dst, src, n),
        dst, src, n, (char *)hwt_libc_memcpy(dst, src, n) + n)
CHECKED(void *, memset, HWT_LIBC_MEMSET, (void *dst, int ch, size_t n), (dst, ch, n),
        dst, NULL, n, hwt_libc_memset(dst, ch, n))
CHECKED(int, memcmp, HWT_LIBC_MEMCMP, (const void *x, const void *y, size_t n), (x, y, n),
        x, y, n, hwt_libc_memcmp(x, y, n))
CHECKED(int, bcmp, HWT_LIBC_BCMP, (const void *x, const void *y, size_t n), (x, y, n),
        x, y, n, hwt_libc_memcmp(x, y, n))
CHECKED(void *, memchr, HWT_LIBC_MEMCHR, (const void *s, int ch, size_t n), (s, ch, n),
        s, NULL, n, hwt_libc_memchr(s, ch, n))
CHECKED(size_t, strlen, HWT_LIBC_STRLEN_ID, (const char *s), (s),
        s, NULL, 0, hwt_libc_strlen(s))
CHECKED(size_t, strnlen, HWT_LIBC_STRNLEN_ID, (const char *s, size_t n), (s, n),
        s, NULL, n, hwt_libc_strnlen(s, n))
CHECKED(int, strcmp, HWT_LIBC_STRCMP_ID, (const char *x, const char *y), (x, y),
        x, y, 0, hwt_libc_strcmp(x, y))
CHECKED(int, strncmp, HWT_LIBC_STRNCMP_ID, (const char *x, const char *y, size_t n), (x, y, n),
        x, y, n, hwt_libc_strncmp(x, y, n))
CHECKED(char *, strchr, HWT_LIBC_STRCHR, (const char *s, int ch), (s, ch),
        s, NULL, 0, hwt_libc_strchr(s, ch))
CHECKED(char *, strrchr, HWT_LIBC_STRRCHR, (const char *s, int ch), (s, ch),
        s, NULL, 0, hwt_libc_strrchr(s, ch))
CHECKED(char *, strcpy, HWT_LIBC_STRCPY_ID, (char *dst, const char *src), (dst, src),
        dst, src, 0, (plain_stpcpy(dst, src), dst))
CHECKED(char *, stpcpy, HWT_LIBC_STPCPY, (char *dst, const char *src), (dst, src),
        dst, src, 0, plain_stpcpy(dst, src))
CHECKED(char *, strncpy, HWT_LIBC_STRNCPY_ID, (char *dst, const char *src, size_t n), (dst, src, n),
        dst, src, n, plain_strncpy(dst, src, n))
CHECKED(char *, strcat, HWT_LIBC_STRCAT_ID, (char *dst, const char *src), (dst, src),
        dst, src, 0, (plain_stpcpy(dst + hwt_libc_strlen(dst), src), dst))
CHECKED(char *, strncat, HWT_LIBC_STRNCAT_ID, (char *dst, const char *src, size_t n), (dst, src, n),
        dst, src, n, plain_strncat(dst, src, n))

/* The fortified ones check dstlen in the C library; their plain stand-ins do not. */
CHECKED(void *, __memcpy_chk, HWT_LIBC_MEMCPY_CHK,
        (void *dst, const void *src, size_t n, size_t dstlen), (dst, src, n, dstlen),
        dst, src, n, hwt_libc_memcpy(dst, src, n))
CHECKED(void *, __memmove_chk, HWT_LIBC_MEMMOVE_CHK,
        (void *dst, const void *src, size_t n, size_t dstlen), (dst, src, n, dstlen),
        dst, src, n, hwt_libc_memmove(dst, src, n))
CHECKED(void *, __mempcpy_chk, HWT_LIBC_MEMPCPY_CHK,
        (void *dst, const void *src, size_t n, size_t dstlen), (dst, src, n, dstlen),
        dst, src, n, (char *)hwt_libc_memcpy(dst, src, n) + n)
CHECKED(void *, __memset_chk, HWT_LIBC_MEMSET_CHK,
        (void *dst, int ch, size_t n, size_t dstlen), (dst, ch, n, dstlen),
        dst, NULL, n, hwt_libc_memset(dst, ch, n))
CHECKED(char *, __strcpy_chk, HWT_LIBC_STRCPY_CHK,
        (char *dst, const char *src, size_t dstlen), (dst, src, dstlen),
        dst, src, 0, (plain_stpcpy(dst, src), dst))
CHECKED(char *, __stpcpy_chk, HWT_LIBC_STPCPY_CHK,
        (char *dst, const char *src, size_t dstlen), (dst, src, dstlen),
        dst, src, 0, plain_stpcpy(dst, src))
CHECKED(char *, __strncpy_chk, HWT_LIBC_STRNCPY_CHK,
        (char *dst, const char *src, size_t n, size_t dstlen), (dst, src, n, dstlen),
        dst, src, n, plain_strncpy(dst, src, n))
CHECKED(char *, __strcat_chk, HWT_LIBC_STRCAT_CHK,
        (char *dst, const char *src, size_t dstlen), (dst, src, dstlen),
        dst, src, 0, (plain_stpcpy(dst + hwt_libc_strlen(dst), src), dst))
CHECKED(char *, __strncat_chk, HWT_LIBC_STRNCAT_CHK,
        (char *dst, const char *src, size_t n, size_t dstlen), (dst, src, n, dstlen),
        dst, src, n, plain_strncat(dst, src, n))
/* clang-format on */
