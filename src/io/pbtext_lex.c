/* pbtext_lex.c - the text parser's tokens: numbers, identifiers,
 * symbols, string literals and integers (see pbtext_parse.c). */
#include "pbtext_parse.h"

#include "../ir/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers -------------------------------------------------- */

bool ptx_b_put(bytes *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *q = xrealloc(b->p, cap);
        if (!q)
            return false;
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    return true;
}

bool ptx_b_varint(bytes *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return ptx_b_put(b, tmp, n);
}

bool ptx_fail_at(P *ps, int line, int col, const char *fmt, ...)
{
    if (ps->failed)
        return false;
    ps->failed = true;
    if (ps->err && ps->errlen) {
        int k = snprintf(ps->err, ps->errlen, "%s:%d:%d: ", ps->name, line, col);
        if (k >= 0 && (size_t)k < ps->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(ps->err + k, ps->errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return false;
}


bool ptx_oom(P *ps) { return FAIL(ps, "out of memory"); }

/* The current token quoted for messages, shortened if long. */
const char *ptx_tok_desc(P *ps, char *buf, size_t n)
{
    if (ps->kind == T_EOF)
        return "end of input";
    int len = ps->tn > 40 ? 40 : (int)ps->tn;
    snprintf(buf, n, "'%.*s%s'", len, ps->tp, ps->tn > 40 ? "..." : "");
    return buf;
}

/* ---- tokenizer ------------------------------------------------------ */

static bool is_id0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool is_dig(int c) { return c >= '0' && c <= '9'; }
static bool is_id(int c) { return is_id0(c) || is_dig(c); }
static bool is_hex(int c) { return is_dig(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* Numbers follow protobuf's Tokenizer: 0x hex, leading-0 octal, decimal,
 * floats with '.', exponent or an f suffix; a letter right after a number
 * is an error. */
static bool scan_number(P *ps)
{
    const char *s = ps->p, *e = ps->end, *q = s;
    bool is_float = false;
    if (e - q > 1 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        q += 2;
        if (q == e || !is_hex((unsigned char)*q))
            return FAIL(ps, "'0x' must be followed by hex digits");
        while (q < e && is_hex((unsigned char)*q))
            q++;
    } else if (*q == '0' && q + 1 < e && is_dig((unsigned char)q[1])) {
        while (q < e && *q >= '0' && *q <= '7')
            q++;
        if (q < e && is_dig((unsigned char)*q))
            return FAIL(ps, "numbers starting with 0 must be octal");
    } else {
        while (q < e && is_dig((unsigned char)*q))
            q++;
        if (q < e && *q == '.') {
            is_float = true;
            q++;
            while (q < e && is_dig((unsigned char)*q))
                q++;
        }
        if (q < e && (*q == 'e' || *q == 'E')) {
            const char *x = q + 1;
            if (x < e && (*x == '+' || *x == '-'))
                x++;
            if (x == e || !is_dig((unsigned char)*x))
                return FAIL(ps, "exponent needs digits");
            is_float = true;
            q = x;
            while (q < e && is_dig((unsigned char)*q))
                q++;
        }
        if (q < e && (*q == 'f' || *q == 'F')) {
            is_float = true;
            q++;
        }
    }
    if (q < e && (is_id(*q) || *q == '.'))
        return FAIL(ps, "need space between number and '%c'", *q);
    ps->kind = is_float ? T_FLOAT : T_INT;
    ps->tn = (size_t)(q - s);
    ps->p = q;
    return true;
}

bool ptx_next(P *ps)
{
    const char *e = ps->end;
    for (;;) {
        while (ps->p < e && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' ||
                             *ps->p == '\n' || *ps->p == '\v' || *ps->p == '\f')) {
            if (*ps->p == '\n') {
                ps->line++;
                ps->line_start = ps->p + 1;
            }
            ps->p++;
        }
        if (ps->p < e && *ps->p == '#') {
            while (ps->p < e && *ps->p != '\n')
                ps->p++;
            continue;
        }
        break;
    }
    ps->tp = ps->p;
    ps->tline = ps->line;
    ps->tcol = (int)(ps->p - ps->line_start) + 1;
    if (ps->p == e) {
        ps->kind = T_EOF;
        ps->tn = 0;
        return true;
    }
    unsigned char c = (unsigned char)*ps->p;
    if (is_id0(c)) {
        while (ps->p < e && is_id((unsigned char)*ps->p))
            ps->p++;
        ps->kind = T_IDENT;
        ps->tn = (size_t)(ps->p - ps->tp);
        return true;
    }
    if (is_dig(c) || (c == '.' && ps->p + 1 < e && is_dig((unsigned char)ps->p[1])))
        return scan_number(ps);
    if (c == '"' || c == '\'') {
        const char *q = ps->p + 1;
        while (q < e && *q != (char)c && *q != '\n') {
            if (*q == '\\' && q + 1 < e && q[1] != '\n')
                q++;
            q++;
        }
        if (q == e || *q != (char)c)
            return FAIL(ps, "unterminated string");
        ps->p = q + 1;
        ps->kind = T_STRING;
        ps->tn = (size_t)(ps->p - ps->tp);
        return true;
    }
    if (strchr("{}<>[]:;,-", c) && c) {
        ps->p++;
        ps->kind = T_SYM;
        ps->tn = 1;
        return true;
    }
    if (c >= 0x20 && c < 0x7f)
        return FAIL(ps, "unexpected character '%c'", c);
    return FAIL(ps, "unexpected byte 0x%02x", c);
}

bool ptx_is_sym(P *ps, char c) { return ps->kind == T_SYM && *ps->tp == c; }

bool ptx_tok_is(P *ps, const char *word)
{
    return ps->kind == T_IDENT && strlen(word) == ps->tn &&
           memcmp(ps->tp, word, ps->tn) == 0;
}

/* ---- literal values ------------------------------------------------- */

static int hexval(int c)
{
    return is_dig(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

static bool put_utf8(bytes *b, uint32_t cp)
{
    uint8_t u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (uint8_t)(0xc0 | cp >> 6);
        u[1] = (uint8_t)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xe0 | cp >> 12);
        u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (uint8_t)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        u[0] = (uint8_t)(0xf0 | cp >> 18);
        u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
        u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        u[3] = (uint8_t)(0x80 | (cp & 0x3f));
        n = 4;
    }
    return ptx_b_put(b, u, n);
}

/* Decodes one quoted token (already known to be terminated) onto ps->str. */
static bool decode_string(P *ps)
{
    const char *q = ps->tp + 1, *e = ps->tp + ps->tn - 1;
    bytes *b = &ps->str;
    while (q < e) {
        const char *run = q;
        while (q < e && *q != '\\')
            q++;
        if (!ptx_b_put(b, run, (size_t)(q - run)))
            return ptx_oom(ps);
        if (q == e)
            break;
        const char *esc = q++;
        int col = ps->tcol + (int)(esc - ps->tp);
        char c = *q++;
        uint8_t v;
        switch (c) {
        case 'a': v = '\a'; break;
        case 'b': v = '\b'; break;
        case 'f': v = '\f'; break;
        case 'n': v = '\n'; break;
        case 'r': v = '\r'; break;
        case 't': v = '\t'; break;
        case 'v': v = '\v'; break;
        case '\\': case '?': case '\'': case '"': v = (uint8_t)c; break;
        case 'x': case 'X': {
            unsigned x = 0;
            int k = 0;
            while (k < 2 && q < e && is_hex((unsigned char)*q))
                x = x * 16 + (unsigned)hexval((unsigned char)*q++), k++;
            if (!k)
                return ptx_fail_at(ps, ps->tline, col, "\\x needs hex digits");
            v = (uint8_t)x;
            break;
        }
        case 'u': case 'U': {
            int want = c == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int k = 0; k < want; k++, q++) {
                if (q == e || !is_hex((unsigned char)*q))
                    return ptx_fail_at(ps, ps->tline, col, "\\%c needs %d hex digits", c, want);
                cp = cp * 16 + (uint32_t)hexval((unsigned char)*q);
            }
            if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return ptx_fail_at(ps, ps->tline, col, "invalid code point \\%c%.*s",
                               c, want, q - want);
            if (!put_utf8(b, cp))
                return ptx_oom(ps);
            continue;
        }
        default:
            if (c >= '0' && c <= '7') {
                unsigned o = (unsigned)(c - '0');
                for (int k = 0; k < 2 && q < e && *q >= '0' && *q <= '7'; k++)
                    o = o * 8 + (unsigned)(*q++ - '0');
                if (o > 0xff)
                    return ptx_fail_at(ps, ps->tline, col, "octal escape above \\377");
                v = (uint8_t)o;
                break;
            }
            return ptx_fail_at(ps, ps->tline, col, "invalid escape sequence '\\%c'", c);
        }
        if (!ptx_b_put(b, &v, 1))
            return ptx_oom(ps);
    }
    return true;
}

/* One or more adjacent string literals, concatenated into ps->str. */
bool ptx_parse_string(P *ps, const char *what)
{
    char t[64];
    ps->str.len = 0;
    if (ps->kind != T_STRING)
        return FAIL(ps, "expected string for %s, got %s", what, ptx_tok_desc(ps, t, sizeof t));
    while (ps->kind == T_STRING)
        if (!decode_string(ps) || !ptx_next(ps))
            return false;
    return true;
}

/* An integer literal with optional '-': magnitude and sign. */
bool ptx_parse_integer(P *ps, const char *what, uint64_t *mag, bool *neg,
                          int *hexdigits)
{
    char t[64];
    *neg = false;
    if (ptx_is_sym(ps, '-')) {
        *neg = true;
        if (!ptx_next(ps))
            return false;
    }
    if (ps->kind != T_INT)
        return FAIL(ps, "expected integer for %s, got %s", what, ptx_tok_desc(ps, t, sizeof t));
    const char *q = ps->tp, *e = ps->tp + ps->tn;
    unsigned base = 10;
    if (ps->tn > 1 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
        base = 16, q += 2;
    else if (ps->tn > 1 && q[0] == '0')
        base = 8, q++;
    if (hexdigits)
        *hexdigits = base == 16 ? (int)(e - q) : 0;
    uint64_t v = 0;
    for (; q < e; q++) {
        unsigned d = (unsigned)hexval((unsigned char)*q);
        if (v > (UINT64_MAX - d) / base)
            return FAIL(ps, "integer %.*s is out of range", (int)ps->tn, ps->tp);
        v = v * base + d;
    }
    *mag = v;
    return ptx_next(ps);
}
