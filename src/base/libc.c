/* SPDX-License-Identifier: MIT */
/* The C library's string and memory routines behind libhwtag's own calls (libc_names.h
 * renames them here) and behind the checked versions of src/libcall.c. Each resolves the
 * C library's definition once (libc_next.c, RTLD_NEXT's answer without dlsym); while a
 * lookup runs, whose own strcmp comes here too, a plain loop does the work. Built with
 * -fno-builtin and no loop-to-call rewriting (CMakeLists.txt): a loop here must not turn
 * into a call of the routine it stands in for. HWT_LIBC_DEFINER (CMakeLists.txt) keeps
 * libc_names.h from renaming the C library's names here. */
#include "libc.h"

#include "libc_next.h"

__thread struct hwt_libc_call hwt_libc_call;

#define FN(id, nm, sh) [id] = {.name = nm, .shape = sh}
struct hwt_libc_fn hwt_libc_fns[HWT_LIBC_COUNT] = {
    FN(HWT_LIBC_MEMCPY, "memcpy", HWT_LIBC_COPY),
    FN(HWT_LIBC_MEMMOVE, "memmove", HWT_LIBC_COPY),
    FN(HWT_LIBC_MEMSET, "memset", HWT_LIBC_SET),
    FN(HWT_LIBC_MEMCMP, "memcmp", HWT_LIBC_CMP),
    FN(HWT_LIBC_MEMCHR, "memchr", HWT_LIBC_SCAN),
    FN(HWT_LIBC_STRLEN_ID, "strlen", HWT_LIBC_STRLEN),
    FN(HWT_LIBC_STRNLEN_ID, "strnlen", HWT_LIBC_STRNLEN),
    FN(HWT_LIBC_STRCMP_ID, "strcmp", HWT_LIBC_STRCMP),
    FN(HWT_LIBC_STRNCMP_ID, "strncmp", HWT_LIBC_STRNCMP),
    FN(HWT_LIBC_STRCHR, "strchr", HWT_LIBC_STRLEN),
    FN(HWT_LIBC_STRRCHR, "strrchr", HWT_LIBC_STRLEN),
    FN(HWT_LIBC_MEMPCPY, "mempcpy", HWT_LIBC_COPY),
    FN(HWT_LIBC_BCMP, "bcmp", HWT_LIBC_CMP),
    FN(HWT_LIBC_STRCPY_ID, "strcpy", HWT_LIBC_STRCPY),
    FN(HWT_LIBC_STPCPY, "stpcpy", HWT_LIBC_STRCPY),
    FN(HWT_LIBC_STRNCPY_ID, "strncpy", HWT_LIBC_STRNCPY),
    FN(HWT_LIBC_STRCAT_ID, "strcat", HWT_LIBC_STRCAT),
    FN(HWT_LIBC_STRNCAT_ID, "strncat", HWT_LIBC_STRNCAT),
    FN(HWT_LIBC_MEMCPY_CHK, "__memcpy_chk", HWT_LIBC_COPY),
    FN(HWT_LIBC_MEMMOVE_CHK, "__memmove_chk", HWT_LIBC_COPY),
    FN(HWT_LIBC_MEMPCPY_CHK, "__mempcpy_chk", HWT_LIBC_COPY),
    FN(HWT_LIBC_MEMSET_CHK, "__memset_chk", HWT_LIBC_SET),
    FN(HWT_LIBC_STRCPY_CHK, "__strcpy_chk", HWT_LIBC_STRCPY),
    FN(HWT_LIBC_STPCPY_CHK, "__stpcpy_chk", HWT_LIBC_STRCPY),
    FN(HWT_LIBC_STRNCPY_CHK, "__strncpy_chk", HWT_LIBC_STRNCPY),
    FN(HWT_LIBC_STRCAT_CHK, "__strcat_chk", HWT_LIBC_STRCAT),
    FN(HWT_LIBC_STRNCAT_CHK, "__strncat_chk", HWT_LIBC_STRNCAT),
};
#undef FN

/* A lookup is running on some thread: its own calls of these routines take the loops. */
static int resolving;

void *hwt_libc_real(enum hwt_libc_id id)
{
    struct hwt_libc_fn *fn = &hwt_libc_fns[id];
    void *real = __atomic_load_n(&fn->real, __ATOMIC_ACQUIRE);
    if (real != NULL)
        return real;
    if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQUIRE) != 0)
        return NULL;
    real = hwt_libc_next(fn->name);
    /* without a C library behind this one, the loops stay */
    if (real != NULL)
        __atomic_store_n(&fn->real, real, __ATOMIC_RELEASE);
    __atomic_store_n(&resolving, 0, __ATOMIC_RELEASE);
    return real;
}

void hwt_libc_resolve_all(void)
{
    for (unsigned id = 0; id < HWT_LIBC_COUNT; id++)
        (void)hwt_libc_real((enum hwt_libc_id)id);
}

/* The library's own calls (libc_names.h): the C library's routine, else a loop. */
#define REAL(id, type) ((type)hwt_libc_real(id))

void *hwt_libc_memcpy(void *dst, const void *src, size_t n)
{
    void *(*real)(void *, const void *, size_t) =
        REAL(HWT_LIBC_MEMCPY, void *(*)(void *, const void *, size_t));
    if (real != NULL)
        return real(dst, src, n);
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
    return dst;
}

void *hwt_libc_memmove(void *dst, const void *src, size_t n)
{
    void *(*real)(void *, const void *, size_t) =
        REAL(HWT_LIBC_MEMMOVE, void *(*)(void *, const void *, size_t));
    if (real != NULL)
        return real(dst, src, n);
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        for (size_t i = n; i > 0; i--)
            d[i - 1] = s[i - 1];
    }
    return dst;
}

void *hwt_libc_memset(void *dst, int c, size_t n)
{
    void *(*real)(void *, int, size_t) = REAL(HWT_LIBC_MEMSET, void *(*)(void *, int, size_t));
    if (real != NULL)
        return real(dst, c, n);
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)c;
    return dst;
}

int hwt_libc_memcmp(const void *a, const void *b, size_t n)
{
    int (*real)(const void *, const void *, size_t) =
        REAL(HWT_LIBC_MEMCMP, int (*)(const void *, const void *, size_t));
    if (real != NULL)
        return real(a, b, n);
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

void *hwt_libc_memchr(const void *s, int c, size_t n)
{
    void *(*real)(const void *, int, size_t) =
        REAL(HWT_LIBC_MEMCHR, void *(*)(const void *, int, size_t));
    if (real != NULL)
        return real(s, c, n);
    const unsigned char *p = s;
    for (size_t i = 0; i < n; i++)
        if (p[i] == (unsigned char)c)
            return (void *)(p + i);
    return NULL;
}

size_t hwt_libc_strnlen(const char *s, size_t n)
{
    size_t (*real)(const char *, size_t) =
        REAL(HWT_LIBC_STRNLEN_ID, size_t(*)(const char *, size_t));
    if (real != NULL)
        return real(s, n);
    size_t i = 0;
    while (i < n && s[i] != '\0')
        i++;
    return i;
}

size_t hwt_libc_strlen(const char *s)
{
    size_t (*real)(const char *) = REAL(HWT_LIBC_STRLEN_ID, size_t(*)(const char *));
    if (real != NULL)
        return real(s);
    size_t i = 0;
    while (s[i] != '\0')
        i++;
    return i;
}

int hwt_libc_strncmp(const char *a, const char *b, size_t n)
{
    int (*real)(const char *, const char *, size_t) =
        REAL(HWT_LIBC_STRNCMP_ID, int (*)(const char *, const char *, size_t));
    if (real != NULL)
        return real(a, b, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y)
            return x < y ? -1 : 1;
        if (x == '\0')
            return 0;
    }
    return 0;
}

int hwt_libc_strcmp(const char *a, const char *b)
{
    int (*real)(const char *, const char *) =
        REAL(HWT_LIBC_STRCMP_ID, int (*)(const char *, const char *));
    if (real != NULL)
        return real(a, b);
    return hwt_libc_strncmp(a, b, (size_t)-1);
}

char *hwt_libc_strchr(const char *s, int c)
{
    char *(*real)(const char *, int) = REAL(HWT_LIBC_STRCHR, char *(*)(const char *, int));
    if (real != NULL)
        return real(s, c);
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (*s == '\0')
            return NULL;
    }
}

char *hwt_libc_strrchr(const char *s, int c)
{
    char *(*real)(const char *, int) = REAL(HWT_LIBC_STRRCHR, char *(*)(const char *, int));
    if (real != NULL)
        return real(s, c);
    const char *last = NULL;
    for (;; s++) {
        if (*s == (char)c)
            last = s;
        if (*s == '\0')
            return (char *)last;
    }
}
