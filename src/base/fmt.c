/* SPDX-License-Identifier: MIT */
/* A minimal printf into a fixed buffer for the fault path and diagnostics.
 * Must not allocate, take locks, consult the locale or touch stdio. */
#include "fmt.h"

#include <stdint.h>

/* Large enough for a 64-bit value in octal-free bases (20 decimal digits) plus sign. */
#define NUM_BUF 24

void hwt_fmt_init(struct hwt_buf *b, char *mem, size_t cap)
{
    b->data = mem;
    b->cap = cap;
    b->len = 0;
    b->truncated = false;
    if (cap > 0)
        mem[0] = '\0';
    else
        b->truncated = true;
}

static void put_char(struct hwt_buf *b, char c)
{
    if (b->cap == 0 || b->len + 1 >= b->cap) {
        b->truncated = true;
        return;
    }
    b->data[b->len++] = c;
}

static void put_repeat(struct hwt_buf *b, char c, int count)
{
    for (; count > 0; count--)
        put_char(b, c);
}

static size_t str_len_max(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n] != '\0')
        n++;
    return n;
}

struct spec {
    bool left; /* '-' */
    bool zero; /* '0' */
    int width; /* -1 when absent */
    int prec;  /* -1 when absent */
};

/* Writes body[0..n) padded to the spec's width; prefix (sign or "0x") goes before any
 * zero padding, as printf does. */
static void put_padded(struct hwt_buf *b, const struct spec *sp, const char *prefix,
                       const char *body, size_t n, int min_digits)
{
    size_t prefix_len = str_len_max(prefix, 4);
    int digits_pad = min_digits > (int)n ? min_digits - (int)n : 0;
    int total = (int)(prefix_len + n) + digits_pad;
    int pad = sp->width > total ? sp->width - total : 0;
    bool zero_pad = sp->zero && !sp->left && sp->prec < 0;

    if (!sp->left && !zero_pad)
        put_repeat(b, ' ', pad);
    for (size_t i = 0; i < prefix_len; i++)
        put_char(b, prefix[i]);
    if (zero_pad)
        put_repeat(b, '0', pad);
    put_repeat(b, '0', digits_pad);
    for (size_t i = 0; i < n; i++)
        put_char(b, body[i]);
    if (sp->left)
        put_repeat(b, ' ', pad);
}

/* Digits of v in base (10 or 16) at the end of out; returns the first digit. */
static char *utoa(uint64_t v, unsigned base, char *end)
{
    static const char digits[] = "0123456789abcdef";
    char *p = end;
    do {
        *--p = digits[v % base];
        v /= base;
    } while (v != 0);
    return p;
}

static void put_unsigned(struct hwt_buf *b, const struct spec *sp, uint64_t v, unsigned base,
                         const char *prefix)
{
    char num[NUM_BUF];
    char *end = num + sizeof(num);
    char *p = utoa(v, base, end);
    size_t n = (size_t)(end - p);
    if (sp->prec == 0 && v == 0)
        n = 0;
    put_padded(b, sp, prefix, p, n, sp->prec);
}

static void put_signed(struct hwt_buf *b, const struct spec *sp, int64_t v)
{
    /* Negate in unsigned arithmetic so INT64_MIN does not overflow. */
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    put_unsigned(b, sp, mag, 10, v < 0 ? "-" : "");
}

enum length { LEN_INT, LEN_LONG, LEN_LLONG, LEN_SIZE };

static uint64_t arg_unsigned(va_list *ap, enum length len)
{
    switch (len) {
    case LEN_LONG:
        return va_arg(*ap, unsigned long);
    case LEN_LLONG:
        return va_arg(*ap, unsigned long long);
    case LEN_SIZE:
        return va_arg(*ap, size_t);
    default:
        return va_arg(*ap, unsigned int);
    }
}

static int64_t arg_signed(va_list *ap, enum length len)
{
    switch (len) {
    case LEN_LONG:
        return va_arg(*ap, long);
    case LEN_LLONG:
        return va_arg(*ap, long long);
    case LEN_SIZE:
        /* %zd: the signed type matching size_t */
        return (int64_t)va_arg(*ap, long);
    default:
        return va_arg(*ap, int);
    }
}

/* Parses a decimal field or '*'; *fmt is left past it. */
static int parse_number(const char **fmt, va_list *ap)
{
    int v = 0;
    if (**fmt == '*') {
        (*fmt)++;
        return va_arg(*ap, int);
    }
    while (**fmt >= '0' && **fmt <= '9') {
        if (v < 100000)
            v = v * 10 + (**fmt - '0');
        (*fmt)++;
    }
    return v;
}

static void format(struct hwt_buf *b, const char *fmt, va_list *ap)
{
    while (*fmt != '\0') {
        if (*fmt != '%') {
            put_char(b, *fmt++);
            continue;
        }
        fmt++;

        struct spec sp = {false, false, -1, -1};
        for (;; fmt++) {
            if (*fmt == '-')
                sp.left = true;
            else if (*fmt == '0')
                sp.zero = true;
            else
                break;
        }
        if ((*fmt >= '1' && *fmt <= '9') || *fmt == '*') {
            sp.width = parse_number(&fmt, ap);
            if (sp.width < 0) {
                sp.left = true;
                sp.width = -sp.width;
            }
        }
        if (*fmt == '.') {
            fmt++;
            sp.prec = parse_number(&fmt, ap);
            if (sp.prec < 0)
                sp.prec = -1;
        }

        enum length len = LEN_INT;
        if (*fmt == 'l') {
            fmt++;
            len = LEN_LONG;
            if (*fmt == 'l') {
                fmt++;
                len = LEN_LLONG;
            }
        } else if (*fmt == 'z') {
            fmt++;
            len = LEN_SIZE;
        }

        char conv = *fmt;
        if (conv == '\0')
            break;
        fmt++;
        switch (conv) {
        case 'd':
        case 'i':
            put_signed(b, &sp, arg_signed(ap, len));
            break;
        case 'u':
            put_unsigned(b, &sp, arg_unsigned(ap, len), 10, "");
            break;
        case 'x':
            put_unsigned(b, &sp, arg_unsigned(ap, len), 16, "");
            break;
        case 'p':
            sp.prec = -1;
            put_unsigned(b, &sp, (uintptr_t)va_arg(*ap, void *), 16, "0x");
            break;
        case 'c': {
            char c = (char)va_arg(*ap, int);
            sp.zero = false;
            put_padded(b, &sp, "", &c, 1, 0);
            break;
        }
        case 's': {
            const char *s = va_arg(*ap, const char *);
            if (s == NULL)
                s = "(null)";
            size_t n = str_len_max(s, sp.prec >= 0 ? (size_t)sp.prec : SIZE_MAX);
            sp.zero = false;
            sp.prec = -1;
            put_padded(b, &sp, "", s, n, 0);
            break;
        }
        case '%':
            put_char(b, '%');
            break;
        default:
            /* Unknown conversion: show it verbatim rather than guess at arguments. */
            put_char(b, '%');
            put_char(b, conv);
            break;
        }
    }
    if (b->cap > 0)
        b->data[b->len] = '\0';
}

void hwt_fmt_vprintf(struct hwt_buf *b, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    format(b, fmt, &copy);
    va_end(copy);
}

void hwt_fmt_printf(struct hwt_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format(b, fmt, &ap);
    va_end(ap);
}
