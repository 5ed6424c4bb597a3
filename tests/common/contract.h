/* SPDX-License-Identifier: MIT */
/* The malloc family's contract, checked on random sequences of every entry point: each byte
 * of every live object is known (a pattern from the object's seed and the byte's offset),
 * so a lost, moved or corrupted byte, a calloc byte that is not zero, a realloc that drops
 * part of min(old, new), a bad alignment, a usable size below the request, two live objects
 * that overlap, or an errno changed by a successful call is found at the next check of that
 * object. Header-only, shared by the api test (the real symbols) and the fuzz target (the
 * core's entry points); the caller supplies the heap's functions and the random words. */
#ifndef HWT_TEST_CONTRACT_H
#define HWT_TEST_CONTRACT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The entry points under test. Any may be NULL: the sequences then skip it. */
struct contract_heap {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*reallocarray)(void *, size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void (*free)(void *);
    void (*free_sized)(void *, size_t);
    size_t (*usable)(void *);
    size_t page_size;
    bool check_errno;  /* successful calls leave errno alone; failures set ENOMEM */
    size_t large_max;  /* the largest size drawn */
    size_t big_max;    /* the page-backed sizes' usual range above 16 KiB (0: 1 MiB) */
    unsigned live_max; /* live objects at most (<= CONTRACT_LIVE_MAX) */
};

#define CONTRACT_LIVE_MAX 256u
/* errno before each call: a successful one must leave it so */
#define CONTRACT_ERRNO_MARK 4242

struct contract_object {
    unsigned char *ptr;
    size_t size;   /* requested */
    size_t usable; /* malloc_usable_size may not fall below size */
    uint64_t seed;
};

struct contract {
    const struct contract_heap *heap;
    struct contract_object live[CONTRACT_LIVE_MAX];
    unsigned nlive;
    uint64_t ops, bytes_checked;
    uint64_t by_op[16];
    char failure[512]; /* the first broken promise, empty while all hold */
};

/* The byte at offset i of an object of seed: word i / 8 of a sequence only that object
 * has, so a byte moved within an object or between two is seen as wrong. */
static inline uint64_t contract_word(uint64_t seed, size_t word)
{
    uint64_t x = seed ^ (word * UINT64_C(0x9E3779B97F4A7C15));
    x ^= x >> 29;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    return x ^ (x >> 32);
}

static inline unsigned char contract_byte(uint64_t seed, size_t i)
{
    return (unsigned char)(contract_word(seed, i / 8) >> (8 * (i % 8)));
}

static inline bool contract_fail(struct contract *c, const char *what, const void *ptr, size_t a,
                                 size_t b)
{
    if (c->failure[0] == '\0')
        snprintf(c->failure, sizeof(c->failure), "op %llu: %s (ptr %p, %zu, %zu)",
                 (unsigned long long)c->ops, what, ptr, a, b);
    return false;
}

static inline void contract_fill(struct contract_object *o, uint64_t seed)
{
    o->seed = seed;
    size_t words = o->size / 8;
    uint64_t *w = (uint64_t *)o->ptr; /* objects are at least 16-byte aligned */
    for (size_t k = 0; k < words; k++)
        w[k] = contract_word(seed, k);
    for (size_t i = words * 8; i < o->size; i++)
        o->ptr[i] = contract_byte(seed, i);
}

/* Whether bytes [0, n) of o hold its pattern. */
static inline bool contract_intact(struct contract *c, const struct contract_object *o, size_t n,
                                   const char *what)
{
    const uint64_t *w = (const uint64_t *)o->ptr;
    size_t words = n / 8;
    c->bytes_checked += n;
    for (size_t k = 0; k < words; k++)
        if (w[k] != contract_word(o->seed, k)) {
            for (size_t i = k * 8;; i++)
                if (o->ptr[i] != contract_byte(o->seed, i))
                    return contract_fail(c, what, o->ptr, i, o->size);
        }
    for (size_t i = words * 8; i < n; i++)
        if (o->ptr[i] != contract_byte(o->seed, i))
            return contract_fail(c, what, o->ptr, i, o->size);
    return true;
}

static inline bool contract_zero(struct contract *c, const unsigned char *p, size_t n)
{
    c->bytes_checked += n;
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return contract_fail(c, "calloc byte not zero", p, i, n);
    return true;
}

static inline uintptr_t contract_addr(const void *p)
{
    return (uintptr_t)p & ~((uintptr_t)0xff << 56); /* the address, without a tag */
}

/* A new object [p, p + size) overlaps none of the live ones (except skip, the one it
 * replaces in a realloc). */
static inline bool contract_apart(struct contract *c, const void *p, size_t size, unsigned skip)
{
    uintptr_t a = contract_addr(p), e = a + (size ? size : 1);
    for (unsigned k = 0; k < c->nlive; k++) {
        if (k == skip)
            continue;
        uintptr_t b = contract_addr(c->live[k].ptr);
        uintptr_t f = b + (c->live[k].size ? c->live[k].size : 1);
        if (a < f && b < e)
            return contract_fail(c, "overlaps a live object", p, size, c->live[k].size);
    }
    return true;
}

/* A size: tiny, small-class, class and page boundaries, page-backed, a few MiB. */
static inline size_t contract_size(const struct contract_heap *h, uint64_t r)
{
    unsigned kind = (unsigned)(r % 100);
    uint64_t v = r >> 8;
    size_t page = h->page_size;
    if (kind < 35)
        return (size_t)(v % 257);
    if (kind < 60)
        return 257 + (size_t)(v % 3840);
    if (kind < 72)
        return 4097 + (size_t)(v % 12288);
    if (kind < 82) { /* just around a granule, a page or a small-class boundary */
        static const size_t around[] = {16,   32,   48,   64,    128,   256,   512,   1024,
                                        2048, 4096, 8192, 16384, 16385, 32768, 65536, 131072};
        size_t base = kind < 77 ? around[v % 16] : page * (1 + (v >> 4) % 40);
        return base - 1 + (size_t)((v >> 12) % 3);
    }
    if (kind < 96)
        return 16385 + (size_t)(v % (h->big_max ? h->big_max : (size_t)1 << 20));
    return (size_t)(v % (h->large_max ? h->large_max : 1)) + 1;
}

/* Checks a fresh object p of size bytes aligned to align and makes it live. */
static inline bool contract_adopt(struct contract *c, void *p, size_t size, size_t align, bool zero,
                                  int err, uint64_t seed)
{
    const struct contract_heap *h = c->heap;
    if (p == NULL)
        return contract_fail(c, "allocation failed", p, size, align);
    if (h->check_errno && err != CONTRACT_ERRNO_MARK)
        return contract_fail(c, "a successful allocation changed errno", p, size, (size_t)err);
    if (contract_addr(p) % align != 0)
        return contract_fail(c, "misaligned", p, size, align);
    size_t usable = h->usable != NULL ? h->usable(p) : size;
    if (usable < size)
        return contract_fail(c, "usable size below the request", p, size, usable);
    if (zero && !contract_zero(c, p, size))
        return false;
    if (!contract_apart(c, p, size, CONTRACT_LIVE_MAX))
        return false;
    struct contract_object *o = &c->live[c->nlive++];
    o->ptr = p;
    o->size = size;
    o->usable = usable;
    contract_fill(o, seed);
    return true;
}

static inline void contract_forget(struct contract *c, unsigned k)
{
    c->live[k] = c->live[--c->nlive];
}

enum {
    CONTRACT_MALLOC,
    CONTRACT_CALLOC,
    CONTRACT_REALLOC,
    CONTRACT_REALLOCARRAY,
    CONTRACT_POSIX_MEMALIGN,
    CONTRACT_ALIGNED_ALLOC,
    CONTRACT_MEMALIGN,
    CONTRACT_VALLOC,
    CONTRACT_PVALLOC,
    CONTRACT_FREE,
    CONTRACT_FREE_SIZED,
    CONTRACT_USABLE,
    CONTRACT_OPS
};

/* Frees live object k after checking all of its bytes. */
static inline bool contract_release(struct contract *c, unsigned k, bool sized)
{
    const struct contract_heap *h = c->heap;
    struct contract_object *o = &c->live[k];
    if (!contract_intact(c, o, o->size, "a byte changed while live"))
        return false;
    errno = CONTRACT_ERRNO_MARK;
    if (sized && h->free_sized != NULL)
        h->free_sized(o->ptr, o->size);
    else
        h->free(o->ptr);
    if (h->check_errno && errno != CONTRACT_ERRNO_MARK)
        return contract_fail(c, "free changed errno", o->ptr, o->size, (size_t)errno);
    contract_forget(c, k);
    return true;
}

static inline bool contract_resize(struct contract *c, unsigned k, size_t size, bool array,
                                   uint64_t seed)
{
    const struct contract_heap *h = c->heap;
    struct contract_object *o = &c->live[k];
    if (!contract_intact(c, o, o->size, "a byte changed while live"))
        return false;
    if (size == 0)
        size = 1; /* realloc(p, 0) frees: tested apart */
    errno = CONTRACT_ERRNO_MARK;
    void *p;
    if (array && h->reallocarray != NULL)
        p = size % 8 == 0 ? h->reallocarray(o->ptr, size / 8, 8) : h->reallocarray(o->ptr, size, 1);
    else
        p = h->realloc(o->ptr, size);
    int err = errno;
    if (p == NULL)
        return contract_fail(c, "realloc failed", o->ptr, o->size, size);
    if (h->check_errno && err != CONTRACT_ERRNO_MARK)
        return contract_fail(c, "a successful realloc changed errno", p, size, (size_t)err);
    if (contract_addr(p) % 16 != 0)
        return contract_fail(c, "realloc misaligned", p, size, 16);
    size_t old = o->size;
    o->ptr = p;
    o->size = size < old ? size : old;
    if (!contract_intact(c, o, o->size, "realloc lost min(old, new) bytes"))
        return false;
    o->size = size;
    o->usable = h->usable != NULL ? h->usable(p) : size;
    if (o->usable < size)
        return contract_fail(c, "usable size below the realloc request", p, size, o->usable);
    if (!contract_apart(c, p, size, k))
        return false;
    contract_fill(o, seed);
    return true;
}

/* One random operation from the words r (which one, its size) and seed (the object's
 * content); false when a promise broke (c->failure says which). */
static inline bool contract_step(struct contract *c, uint64_t r, uint64_t s, uint64_t seed)
{
    const struct contract_heap *h = c->heap;
    unsigned live_max = h->live_max < CONTRACT_LIVE_MAX ? h->live_max : CONTRACT_LIVE_MAX;
    unsigned pick = (unsigned)(r % 100);
    unsigned op;
    /* weights: the allocations, realloc, the frees, a usable-size check */
    if (pick < 18)
        op = CONTRACT_MALLOC;
    else if (pick < 32)
        op = CONTRACT_CALLOC;
    else if (pick < 48)
        op = CONTRACT_REALLOC;
    else if (pick < 52)
        op = CONTRACT_REALLOCARRAY;
    else if (pick < 57)
        op = CONTRACT_POSIX_MEMALIGN;
    else if (pick < 61)
        op = CONTRACT_ALIGNED_ALLOC;
    else if (pick < 64)
        op = CONTRACT_MEMALIGN;
    else if (pick < 66)
        op = CONTRACT_VALLOC;
    else if (pick < 68)
        op = CONTRACT_PVALLOC;
    else if (pick < 92)
        op = CONTRACT_FREE;
    else if (pick < 97)
        op = CONTRACT_FREE_SIZED;
    else
        op = CONTRACT_USABLE;
    unsigned k = c->nlive > 0 ? (unsigned)((r >> 8) % c->nlive) : 0;
    bool allocates = op < CONTRACT_FREE && op != CONTRACT_REALLOC && op != CONTRACT_REALLOCARRAY;
    if (allocates && c->nlive >= live_max)
        op = CONTRACT_FREE;
    if (!allocates && c->nlive == 0)
        op = CONTRACT_MALLOC;
    c->ops++;
    c->by_op[op]++;
    size_t size = contract_size(h, s);
    size_t align = (size_t)16 << ((r >> 40) % 9); /* 16 B .. 4 KiB */
    if ((r >> 50) % 16 == 0)
        align = (size_t)1 << (13 + (r >> 54) % 4); /* now and then 8 .. 64 KiB */
    void *p = NULL;
    int ret;
    errno = CONTRACT_ERRNO_MARK;
    switch (op) {
    case CONTRACT_MALLOC:
        p = h->malloc(size);
        return contract_adopt(c, p, size, 16, false, errno, seed);
    case CONTRACT_CALLOC: {
        size_t n = (r >> 20) % 4 == 0 && size % 8 == 0 ? size / 8 : size;
        size_t each = n == size ? 1 : 8;
        p = h->calloc(n, each);
        return contract_adopt(c, p, size, 16, true, errno, seed);
    }
    case CONTRACT_REALLOC:
    case CONTRACT_REALLOCARRAY:
        /* in place as often as moved: a size close to the old one */
        if ((r >> 20) % 3 == 0)
            size = c->live[k].size + (size_t)(s % 64) - (c->live[k].size >= 32 ? 32 : 0);
        return contract_resize(c, k, size, op == CONTRACT_REALLOCARRAY, seed);
    case CONTRACT_POSIX_MEMALIGN:
        if (h->posix_memalign == NULL)
            return true;
        ret = h->posix_memalign(&p, align, size);
        if (ret != 0)
            return contract_fail(c, "posix_memalign failed", p, size, (size_t)ret);
        return contract_adopt(c, p, size, align, false, errno, seed);
    case CONTRACT_ALIGNED_ALLOC:
        if (h->aligned_alloc == NULL)
            return true;
        p = h->aligned_alloc(align, size);
        return contract_adopt(c, p, size, align, false, errno, seed);
    case CONTRACT_MEMALIGN:
        if (h->memalign == NULL)
            return true;
        p = h->memalign(align, size);
        return contract_adopt(c, p, size, align, false, errno, seed);
    case CONTRACT_VALLOC:
        if (h->valloc == NULL)
            return true;
        p = h->valloc(size);
        return contract_adopt(c, p, size, h->page_size, false, errno, seed);
    case CONTRACT_PVALLOC: {
        if (h->pvalloc == NULL)
            return true;
        p = h->pvalloc(size);
        /* whole pages, one at least, are the caller's */
        size_t rounded = (size + h->page_size - 1) / h->page_size * h->page_size;
        return contract_adopt(c, p, rounded ? rounded : h->page_size, h->page_size, false, errno,
                              seed);
    }
    case CONTRACT_FREE:
    case CONTRACT_FREE_SIZED:
        return contract_release(c, k, op == CONTRACT_FREE_SIZED);
    default:
        if (h->usable != NULL && h->usable(c->live[k].ptr) < c->live[k].size)
            return contract_fail(c, "usable size fell below the request", c->live[k].ptr,
                                 c->live[k].size, h->usable(c->live[k].ptr));
        return contract_intact(c, &c->live[k], c->live[k].size, "a byte changed while live");
    }
}

/* Checks and frees everything live. */
static inline bool contract_finish(struct contract *c)
{
    while (c->nlive > 0)
        if (!contract_release(c, c->nlive - 1, false))
            return false;
    return true;
}

/* The failures a program relies on: NULL (or the error code) and the errno glibc gives,
 * and nothing lost. huge: a size no heap can give. */
static inline bool contract_failures(struct contract *c, size_t huge)
{
    const struct contract_heap *h = c->heap;
    void *p;
    errno = 0;
    if (h->malloc(huge) != NULL || errno != ENOMEM)
        return contract_fail(c, "malloc(huge) is not NULL + ENOMEM", NULL, huge, (size_t)errno);
    errno = 0;
    if (h->calloc(huge / 4, 8) != NULL || errno != ENOMEM)
        return contract_fail(c, "calloc overflow is not NULL + ENOMEM", NULL, huge, (size_t)errno);
    unsigned char *q = h->malloc(100);
    struct contract_object o = {q, 100, 100, 7};
    if (q == NULL)
        return contract_fail(c, "malloc(100) failed", NULL, 100, 0);
    contract_fill(&o, 7);
    errno = 0;
    if (h->realloc(q, huge) != NULL || errno != ENOMEM)
        return contract_fail(c, "realloc(p, huge) is not NULL + ENOMEM", q, huge, (size_t)errno);
    if (h->reallocarray != NULL) {
        errno = 0;
        if (h->reallocarray(q, huge, 4) != NULL || errno != ENOMEM)
            return contract_fail(c, "reallocarray overflow is not NULL + ENOMEM", q, huge,
                                 (size_t)errno);
    }
    if (!contract_intact(c, &o, 100, "a failed realloc changed the old object"))
        return false;
    if (h->posix_memalign != NULL) {
        p = q;
        errno = 0;
        int r = h->posix_memalign(&p, 64, huge);
        if (r != ENOMEM || errno != ENOMEM || p != q)
            return contract_fail(c, "posix_memalign(huge) is not ENOMEM, errno ENOMEM", p, huge,
                                 (size_t)r);
        errno = CONTRACT_ERRNO_MARK;
        r = h->posix_memalign(&p, 24, 10);
        if (r != EINVAL || p != q || errno != CONTRACT_ERRNO_MARK)
            return contract_fail(c, "posix_memalign(24) is not EINVAL", p, 24, (size_t)r);
    }
    if (h->aligned_alloc != NULL) {
        errno = 0;
        if (h->aligned_alloc(64, huge) != NULL || errno != ENOMEM)
            return contract_fail(c, "aligned_alloc(huge) is not NULL + ENOMEM", NULL, huge,
                                 (size_t)errno);
    }
    if (h->memalign != NULL) {
        errno = 0;
        if (h->memalign(64, huge) != NULL || errno != ENOMEM)
            return contract_fail(c, "memalign(huge) is not NULL + ENOMEM", NULL, huge,
                                 (size_t)errno);
    }
    if (h->valloc != NULL) {
        errno = 0;
        if (h->valloc(huge) != NULL || errno != ENOMEM)
            return contract_fail(c, "valloc(huge) is not NULL + ENOMEM", NULL, huge, (size_t)errno);
    }
    if (h->pvalloc != NULL) {
        errno = 0;
        if (h->pvalloc(huge) != NULL || errno != ENOMEM)
            return contract_fail(c, "pvalloc(huge) is not NULL + ENOMEM", NULL, huge,
                                 (size_t)errno);
    }
    h->free(q);
    return true;
}

#endif
