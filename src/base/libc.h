/* SPDX-License-Identifier: MIT */
/* The C library's own string and memory routines, found as RTLD_NEXT would (libc_next.c) because
 * libhwtag exports routines of the same names (src/libcall.c), and the record of the
 * program's call in progress that a tag-check fault inside one of them reads. */
#ifndef HWT_LIBC_H
#define HWT_LIBC_H

#include <stddef.h>
#include <stdint.h>

/* What a routine reads and writes, for the report's access line (report/libcall.c). */
enum hwt_libc_shape {
    HWT_LIBC_COPY,    /* (dst, src, n): writes dst[0, n), reads src[0, n) */
    HWT_LIBC_SET,     /* (dst, c, n): writes dst[0, n) */
    HWT_LIBC_CMP,     /* (a, b, n): reads a[0, n) and b[0, n) */
    HWT_LIBC_SCAN,    /* (s, c, n): reads s[0, n) */
    HWT_LIBC_STRLEN,  /* (s): reads the string s and its NUL */
    HWT_LIBC_STRNLEN, /* (s, n): reads the string s, at most n bytes */
    HWT_LIBC_STRCPY,  /* (dst, src): reads the string src, writes it to dst */
    HWT_LIBC_STRNCPY, /* (dst, src, n): reads src up to n bytes, writes dst[0, n) */
    HWT_LIBC_STRCAT,  /* (dst, src): reads both strings, writes src after dst's */
    HWT_LIBC_STRNCAT, /* (dst, src, n): the same, at most n bytes of src and a NUL */
    HWT_LIBC_STRCMP,  /* (a, b): reads both up to the first difference or NUL */
    HWT_LIBC_STRNCMP, /* (a, b, n): the same, at most n bytes */
};

/* The routines with a checked version (src/libcall.c); the first ones are also the
 * library's own (libc_names.h). */
enum hwt_libc_id {
    HWT_LIBC_MEMCPY,
    HWT_LIBC_MEMMOVE,
    HWT_LIBC_MEMSET,
    HWT_LIBC_MEMCMP,
    HWT_LIBC_MEMCHR,
    HWT_LIBC_STRLEN_ID,
    HWT_LIBC_STRNLEN_ID,
    HWT_LIBC_STRCMP_ID,
    HWT_LIBC_STRNCMP_ID,
    HWT_LIBC_STRCHR,
    HWT_LIBC_STRRCHR,
    HWT_LIBC_MEMPCPY,
    HWT_LIBC_BCMP,
    HWT_LIBC_STRCPY_ID,
    HWT_LIBC_STPCPY,
    HWT_LIBC_STRNCPY_ID,
    HWT_LIBC_STRCAT_ID,
    HWT_LIBC_STRNCAT_ID,
    HWT_LIBC_MEMCPY_CHK,
    HWT_LIBC_MEMMOVE_CHK,
    HWT_LIBC_MEMPCPY_CHK,
    HWT_LIBC_MEMSET_CHK,
    HWT_LIBC_STRCPY_CHK,
    HWT_LIBC_STPCPY_CHK,
    HWT_LIBC_STRNCPY_CHK,
    HWT_LIBC_STRCAT_CHK,
    HWT_LIBC_STRNCAT_CHK,
    HWT_LIBC_COUNT
};

/* One routine: its name and shape, and the C library's definition once resolved. */
struct hwt_libc_fn {
    const char *name;
    enum hwt_libc_shape shape;
    void *real;
};

/* The program's last call of a checked routine on this thread (src/libcall.c); fn NULL
 * before the first. It is the call a fault is in only when ret, where the routine returns
 * to, is on the faulting stack. A signal handler's own call overwrites it: a fault of the
 * interrupted call is then described by its instruction alone. */
struct hwt_libc_call {
    const struct hwt_libc_fn *fn;
    uintptr_t a, b; /* first and second pointer argument (b unused by SET and SCAN) */
    size_t n;       /* the size argument, where there is one */
    uintptr_t ret;  /* the program's return address */
};
extern __thread struct hwt_libc_call hwt_libc_call;
extern struct hwt_libc_fn hwt_libc_fns[HWT_LIBC_COUNT];

/* The C library's definition of fn->name, resolved on first use; NULL while a lookup runs
 * (its own strcmp comes here): the caller then uses its own simple version. */
void *hwt_libc_real(enum hwt_libc_id id);

/* The library's own calls of the routines (libc_names.h renames them to these): the C
 * library's routine, else a loop. signal-safe once resolved */
void *hwt_libc_memcpy(void *dst, const void *src, size_t n);
void *hwt_libc_memmove(void *dst, const void *src, size_t n);
void *hwt_libc_memset(void *dst, int c, size_t n);
int hwt_libc_memcmp(const void *a, const void *b, size_t n);
void *hwt_libc_memchr(const void *s, int c, size_t n);
size_t hwt_libc_strlen(const char *s);
size_t hwt_libc_strnlen(const char *s, size_t n);
int hwt_libc_strcmp(const char *a, const char *b);
int hwt_libc_strncmp(const char *a, const char *b, size_t n);
char *hwt_libc_strchr(const char *s, int c);
char *hwt_libc_strrchr(const char *s, int c);

/* Resolves every routine once (at start-up, before any signal handler may need one). */
void hwt_libc_resolve_all(void);

#endif
