/* pbtext_parse.c - protobuf text format parser over protobuf-c descriptors.
 *
 * Builds the message the way protobuf_c_message_unpack does: every
 * sub-message, string, bytes buffer, repeated array and unknown field is
 * malloc'd, so protobuf_c_message_free_unpacked(msg, NULL) releases it.
 * The tree stays consistent after every step (counts only cover filled
 * elements), so on error the partial message is freed the same way. */
#include "pbtext.h"

#include "../ir/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DEPTH 100     /* protobuf's default text-format recursion limit */
#define MAX_FIELD 536870911u
#define SMALL 32          /* fields per message tracked without malloc */

enum tok { T_EOF, T_IDENT, T_INT, T_FLOAT, T_STRING, T_SYM };

typedef struct {
    uint8_t *p;
    size_t len, cap;
} bytes;

typedef struct {
    const char *name, *p, *end, *line_start;
    int line;
    /* current token */
    enum tok kind;
    const char *tp;
    size_t tn;
    int tline, tcol;
    /* error state: the first error wins */
    char *err;
    size_t errlen;
    bool failed;
    /* dotted path of the message being parsed, for required fields */
    char *path;
    size_t plen, pcap;
    char *missing;
    size_t n_missing;
    bytes str;            /* decoded string literal scratch */
} P;

/* ---- small helpers -------------------------------------------------- */

static bool b_put(bytes *b, const void *p, size_t n)
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

static bool b_varint(bytes *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return b_put(b, tmp, n);
}

static bool fail_at(P *ps, int line, int col, const char *fmt, ...)
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

#define FAIL(ps, ...) fail_at((ps), (ps)->tline, (ps)->tcol, __VA_ARGS__)

static bool oom(P *ps) { return FAIL(ps, "out of memory"); }

/* The current token quoted for messages, shortened if long. */
static const char *tok_desc(P *ps, char *buf, size_t n)
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

static bool next(P *ps)
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

static bool is_sym(P *ps, char c) { return ps->kind == T_SYM && *ps->tp == c; }

static bool tok_is(P *ps, const char *word)
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
    return b_put(b, u, n);
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
        if (!b_put(b, run, (size_t)(q - run)))
            return oom(ps);
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
                return fail_at(ps, ps->tline, col, "\\x needs hex digits");
            v = (uint8_t)x;
            break;
        }
        case 'u': case 'U': {
            int want = c == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int k = 0; k < want; k++, q++) {
                if (q == e || !is_hex((unsigned char)*q))
                    return fail_at(ps, ps->tline, col, "\\%c needs %d hex digits", c, want);
                cp = cp * 16 + (uint32_t)hexval((unsigned char)*q);
            }
            if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return fail_at(ps, ps->tline, col, "invalid code point \\%c%.*s",
                               c, want, q - want);
            if (!put_utf8(b, cp))
                return oom(ps);
            continue;
        }
        default:
            if (c >= '0' && c <= '7') {
                unsigned o = (unsigned)(c - '0');
                for (int k = 0; k < 2 && q < e && *q >= '0' && *q <= '7'; k++)
                    o = o * 8 + (unsigned)(*q++ - '0');
                if (o > 0xff)
                    return fail_at(ps, ps->tline, col, "octal escape above \\377");
                v = (uint8_t)o;
                break;
            }
            return fail_at(ps, ps->tline, col, "invalid escape sequence '\\%c'", c);
        }
        if (!b_put(b, &v, 1))
            return oom(ps);
    }
    return true;
}

/* One or more adjacent string literals, concatenated into ps->str. */
static bool parse_string(P *ps, const char *what)
{
    char t[64];
    ps->str.len = 0;
    if (ps->kind != T_STRING)
        return FAIL(ps, "expected string for %s, got %s", what, tok_desc(ps, t, sizeof t));
    while (ps->kind == T_STRING)
        if (!decode_string(ps) || !next(ps))
            return false;
    return true;
}

/* An integer literal with optional '-': magnitude and sign. */
static bool parse_integer(P *ps, const char *what, uint64_t *mag, bool *neg,
                          int *hexdigits)
{
    char t[64];
    *neg = false;
    if (is_sym(ps, '-')) {
        *neg = true;
        if (!next(ps))
            return false;
    }
    if (ps->kind != T_INT)
        return FAIL(ps, "expected integer for %s, got %s", what, tok_desc(ps, t, sizeof t));
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
    return next(ps);
}

/* ---- message building ----------------------------------------------- */

typedef struct {
    bool *seen;          /* per field index: given in the text */
    size_t *cap;         /* per field index: allocated repeated slots */
    size_t ucap;         /* allocated unknown-field slots */
    bool small_seen[SMALL];
    size_t small_cap[SMALL];
} frame;

/* Where the next value of f goes: a new slot of a repeated array (the count
 * is bumped by commit_slot once the value is complete) or the field. */
static void *value_slot(P *ps, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                        frame *fr)
{
    char *base = (char *)m;
    if (f->label != PROTOBUF_C_LABEL_REPEATED)
        return base + f->offset;
    size_t i = (size_t)(f - m->descriptor->fields);
    size_t n = *(size_t *)(base + f->quantifier_offset), sz = pbtext_elt_size(f->type);
    void **arr = (void **)(base + f->offset);
    if (n == fr->cap[i]) {
        size_t cap = n ? n * 2 : 4;
        void *q = xrealloc(*arr, cap * sz);
        if (!q) {
            oom(ps);
            return NULL;
        }
        *arr = q;
        fr->cap[i] = cap;
    }
    return (char *)*arr + n * sz;
}

static void commit_slot(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    char *base = (char *)m;
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        (*(size_t *)(base + f->quantifier_offset))++;
    else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        *(uint32_t *)(base + f->quantifier_offset) = f->id;
    else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
             f->type != PROTOBUF_C_TYPE_MESSAGE && f->quantifier_offset)
        *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
}

/* Converts a signed literal to f's integer type, checking the range. */
static bool store_integer(P *ps, const ProtobufCFieldDescriptor *f, void *dst,
                          uint64_t mag, bool neg, int line, int col)
{
    uint64_t max_pos, max_neg;
    bool wide = pbtext_elt_size(f->type) == 8;
    bool is_unsigned = f->type == PROTOBUF_C_TYPE_UINT32 || f->type == PROTOBUF_C_TYPE_FIXED32 ||
                       f->type == PROTOBUF_C_TYPE_UINT64 || f->type == PROTOBUF_C_TYPE_FIXED64;
    if (is_unsigned) {
        max_pos = wide ? UINT64_MAX : UINT32_MAX;
        max_neg = 0;
    } else {
        max_pos = wide ? (uint64_t)INT64_MAX : (uint64_t)INT32_MAX;
        max_neg = max_pos + 1;
    }
    if (neg ? mag > max_neg : mag > max_pos)
        return fail_at(ps, line, col, "value %s%" PRIu64 " is out of range for field '%s'",
                       neg ? "-" : "", mag, f->name);
    uint64_t v = neg ? (uint64_t)0 - mag : mag;
    if (wide)
        memcpy(dst, &v, 8);
    else {
        uint32_t w = (uint32_t)v;
        memcpy(dst, &w, 4);
    }
    return true;
}

static bool parse_float_value(P *ps, const ProtobufCFieldDescriptor *f, void *dst)
{
    char t[64], num[512];
    bool neg = false, dbl = f->type == PROTOBUF_C_TYPE_DOUBLE;
    double d = 0;
    float fl = 0;
    if (is_sym(ps, '-')) {
        neg = true;
        if (!next(ps))
            return false;
    }
    if (ps->kind == T_IDENT) {
        char w[16];
        size_t n = ps->tn < sizeof w - 1 ? ps->tn : sizeof w - 1;
        memcpy(w, ps->tp, n);
        w[n] = 0;
        if (!strcasecmp(w, "inf") || !strcasecmp(w, "infinity"))
            d = INFINITY, fl = INFINITY;
        else if (!strcasecmp(w, "nan"))
            d = NAN, fl = NAN;
        else
            return FAIL(ps, "expected number for field '%s', got %s", f->name,
                        tok_desc(ps, t, sizeof t));
    } else if (ps->kind == T_INT && (ps->tn > 1 && ps->tp[0] == '0')) {
        uint64_t mag;
        bool n2;
        if (!parse_integer(ps, f->name, &mag, &n2, NULL))
            return false;
        d = (double)mag, fl = (float)mag;
        goto store;
    } else if (ps->kind == T_INT || ps->kind == T_FLOAT) {
        size_t n = ps->tn;
        if (n && (ps->tp[n - 1] == 'f' || ps->tp[n - 1] == 'F'))
            n--;
        if (n >= sizeof num)
            return FAIL(ps, "number too long");
        memcpy(num, ps->tp, n);
        num[n] = 0;
        /* strtof directly: going through double could round twice */
        if (dbl)
            d = strtod(num, NULL);
        else
            fl = strtof(num, NULL);
    } else {
        return FAIL(ps, "expected number for field '%s', got %s", f->name,
                    tok_desc(ps, t, sizeof t));
    }
    if (!next(ps))
        return false;
store:
    if (dbl) {
        d = neg ? -d : d;
        memcpy(dst, &d, 8);
    } else {
        fl = neg ? -fl : fl;
        memcpy(dst, &fl, 4);
    }
    return true;
}

/* A scalar (non-message) value of f into dst, allocating strings. */
static bool parse_scalar(P *ps, const ProtobufCFieldDescriptor *f, void *dst)
{
    char t[64];
    int line = ps->tline, col = ps->tcol;
    uint64_t mag;
    bool neg;
    switch (f->type) {
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE:
        return parse_float_value(ps, f, dst);
    case PROTOBUF_C_TYPE_BOOL: {
        protobuf_c_boolean v;
        if (tok_is(ps, "true") || tok_is(ps, "True") || tok_is(ps, "t"))
            v = 1;
        else if (tok_is(ps, "false") || tok_is(ps, "False") || tok_is(ps, "f"))
            v = 0;
        else if (ps->kind == T_INT && ps->tn == 1 && (*ps->tp == '0' || *ps->tp == '1'))
            v = *ps->tp == '1';
        else
            return FAIL(ps, "expected true or false for field '%s', got %s", f->name,
                        tok_desc(ps, t, sizeof t));
        *(protobuf_c_boolean *)dst = v;
        return next(ps);
    }
    case PROTOBUF_C_TYPE_ENUM:
        if (ps->kind == T_IDENT) {
            char w[256];
            if (ps->tn >= sizeof w)
                return FAIL(ps, "enum value name too long");
            memcpy(w, ps->tp, ps->tn);
            w[ps->tn] = 0;
            const ProtobufCEnumValue *ev =
                protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, w);
            if (!ev)
                return FAIL(ps, "unknown value '%s' for enum field '%s' (%s)", w, f->name,
                            ((const ProtobufCEnumDescriptor *)f->descriptor)->name);
            *(int32_t *)dst = ev->value;
            return next(ps);
        }
        if (!parse_integer(ps, f->name, &mag, &neg, NULL))
            return false;
        if (neg ? mag > (uint64_t)INT32_MAX + 1 : mag > INT32_MAX)
            return fail_at(ps, line, col, "value is out of range for enum field '%s'", f->name);
        *(int32_t *)dst = (int32_t)(neg ? -(int64_t)mag : (int64_t)mag);
        return true;
    case PROTOBUF_C_TYPE_STRING: {
        if (!parse_string(ps, f->name))
            return false;
        if (ps->str.len && memchr(ps->str.p, 0, ps->str.len))
            return fail_at(ps, line, col,
                           "string field '%s' cannot hold a NUL byte", f->name);
        char *s = xmalloc(ps->str.len + 1);
        if (!s)
            return oom(ps);
        if (ps->str.len)
            memcpy(s, ps->str.p, ps->str.len);
        s[ps->str.len] = 0;
        *(char **)dst = s;
        return true;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *bd = dst;
        if (!parse_string(ps, f->name))
            return false;
        bd->len = ps->str.len;
        bd->data = NULL;
        if (ps->str.len) {
            if (!(bd->data = xmalloc(ps->str.len)))
                return oom(ps);
            memcpy(bd->data, ps->str.p, ps->str.len);
        }
        return true;
    }
    default:
        if (!parse_integer(ps, f->name, &mag, &neg, NULL))
            return false;
        return store_integer(ps, f, dst, mag, neg, line, col);
    }
}

/* ---- unknown (numbered) fields -------------------------------------- */

typedef struct {
    ProtobufCWireType wt;
    uint64_t v;          /* the value of a varint */
    bytes raw;           /* bytes after the tag, as protobuf-c keeps them */
    bool empty_braces;   /* `N { }` */
} uvalue;

static bool parse_uset(P *ps, bytes *out, char close, int depth);

/* The value after a field number: `: int`, `: "str"`, `{...}`, `<...>`. */
static bool parse_uvalue(P *ps, uvalue *u, int depth)
{
    char t[64];
    bool colon = is_sym(ps, ':');
    if (colon && !next(ps))
        return false;
    if (is_sym(ps, '{') || is_sym(ps, '<')) {
        char close = is_sym(ps, '{') ? '}' : '>';
        bytes inner = { 0 };
        bool ok = depth < MAX_DEPTH ? next(ps) && parse_uset(ps, &inner, close, depth + 1)
                                    : FAIL(ps, "nesting deeper than %d", MAX_DEPTH);
        u->wt = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
        u->empty_braces = ok && inner.len == 0;
        if (ok && !(b_varint(&u->raw, inner.len) && b_put(&u->raw, inner.p, inner.len)))
            ok = oom(ps);
        free(inner.p);
        return ok;
    }
    if (!colon)
        return FAIL(ps, "expected ':' or '{' after field number, got %s",
                    tok_desc(ps, t, sizeof t));
    if (ps->kind == T_STRING) {
        if (!parse_string(ps, "field number"))
            return false;
        u->wt = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
        if (!b_varint(&u->raw, ps->str.len) || !b_put(&u->raw, ps->str.p, ps->str.len))
            return oom(ps);
        return true;
    }
    if (ps->kind == T_INT || is_sym(ps, '-')) {
        uint64_t mag;
        bool neg;
        int hex;
        if (!parse_integer(ps, "unknown field", &mag, &neg, &hex))
            return false;
        u->v = neg ? (uint64_t)0 - mag : mag;
        /* the printer writes fixed32/fixed64 as 0x + 8 / 16 digits */
        if (!neg && (hex == 8 || hex == 16)) {
            uint8_t le[8];
            for (int i = 0; i < 8; i++)
                le[i] = (uint8_t)(u->v >> (8 * i));
            u->wt = hex == 8 ? PROTOBUF_C_WIRE_TYPE_32BIT : PROTOBUF_C_WIRE_TYPE_64BIT;
            if (!b_put(&u->raw, le, (size_t)hex / 2))
                return oom(ps);
        } else {
            u->wt = PROTOBUF_C_WIRE_TYPE_VARINT;
            if (!b_varint(&u->raw, u->v))
                return oom(ps);
        }
        return true;
    }
    return FAIL(ps, "expected integer, string or '{' for unknown field, got %s",
                tok_desc(ps, t, sizeof t));
}

static bool parse_field_number(P *ps, uint32_t *num)
{
    uint64_t mag;
    bool neg;
    int line = ps->tline, col = ps->tcol;
    if (!parse_integer(ps, "field number", &mag, &neg, NULL))
        return false;
    if (neg || mag == 0 || mag > MAX_FIELD)
        return fail_at(ps, line, col, "field number %s%" PRIu64 " is out of range",
                       neg ? "-" : "", mag);
    *num = (uint32_t)mag;
    return true;
}

/* The body of an unknown embedded message: numbered fields only, written
 * to out as wire format. */
static bool parse_uset(P *ps, bytes *out, char close, int depth)
{
    char t[64];
    while (!is_sym(ps, close)) {
        uint32_t num;
        if (ps->kind != T_INT)
            return FAIL(ps, "expected field number or '%c' in unknown field, got %s",
                        close, tok_desc(ps, t, sizeof t));
        if (!parse_field_number(ps, &num))
            return false;
        uvalue u = { 0 };
        bool ok = parse_uvalue(ps, &u, depth);
        /* Wire types 3 and 4 start and end a group (protobuf-c names
         * neither).  The printer writes an empty length-delimited field as `N: ""`,
         * so an empty `N { }` inside an unknown field was an empty group. */
        if (ok && u.empty_braces) {
            if (!(b_varint(out, (uint64_t)num << 3 | 3u) &&
                  b_varint(out, (uint64_t)num << 3 | 4u)))
                ok = oom(ps);
        } else if (ok && !(b_varint(out, (uint64_t)num << 3 | u.wt) &&
                           b_put(out, u.raw.p, u.raw.len))) {
            ok = oom(ps);
        }
        free(u.raw.p);
        if (!ok)
            return false;
        if ((is_sym(ps, ',') || is_sym(ps, ';')) && !next(ps))
            return false;
    }
    return next(ps);
}

static bool add_unknown(P *ps, ProtobufCMessage *m, frame *fr, uint32_t num, uvalue *u)
{
    if (m->n_unknown_fields == fr->ucap) {
        size_t cap = fr->ucap ? fr->ucap * 2 : 4;
        void *q = xrealloc(m->unknown_fields, cap * sizeof *m->unknown_fields);
        if (!q)
            return oom(ps);
        m->unknown_fields = q;
        fr->ucap = cap;
    }
    ProtobufCMessageUnknownField *uf = &m->unknown_fields[m->n_unknown_fields];
    uf->tag = num;
    uf->wire_type = u->wt;
    uf->len = u->raw.len;
    uf->data = u->raw.p;     /* ownership moves to the message */
    u->raw.p = NULL;
    if (!uf->data && !(uf->data = xmalloc(1)))
        return oom(ps);
    m->n_unknown_fields++;
    return true;
}

/* ---- known fields and messages -------------------------------------- */

static bool parse_body(P *ps, ProtobufCMessage *m, char close, int depth);

static bool push_path(P *ps, const ProtobufCFieldDescriptor *f, ProtobufCMessage *m,
                      size_t *saved)
{
    char idx[32] = "";
    *saved = ps->plen;
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        snprintf(idx, sizeof idx, "[%zu]",
                 *(size_t *)((char *)m + f->quantifier_offset));
    size_t need = ps->plen + strlen(f->name) + strlen(idx) + 2;
    if (need > ps->pcap) {
        size_t cap = ps->pcap ? ps->pcap * 2 : 256;
        while (cap < need)
            cap *= 2;
        char *q = xrealloc(ps->path, cap);
        if (!q)
            return oom(ps);
        ps->path = q;
        ps->pcap = cap;
    }
    ps->plen += (size_t)sprintf(ps->path + ps->plen, "%s%s%s", ps->plen ? "." : "",
                                f->name, idx);
    return true;
}

static bool parse_submessage(P *ps, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                             frame *fr, int depth)
{
    char t[64];
    char close = is_sym(ps, '{') ? '}' : is_sym(ps, '<') ? '>' : 0;
    if (!close)
        return FAIL(ps, "expected '{' for field '%s', got %s", f->name,
                    tok_desc(ps, t, sizeof t));
    if (depth >= MAX_DEPTH)
        return FAIL(ps, "nesting deeper than %d", MAX_DEPTH);
    const ProtobufCMessageDescriptor *sd = f->descriptor;
    void *slot = value_slot(ps, m, f, fr);
    size_t saved;
    if (!slot || !push_path(ps, f, m, &saved))
        return false;
    ProtobufCMessage *sub = xmalloc(sd->sizeof_message);
    if (!sub)
        return oom(ps);
    protobuf_c_message_init(sd, sub);
    *(ProtobufCMessage **)slot = sub;
    commit_slot(m, f);
    bool ok = next(ps) && parse_body(ps, sub, close, depth + 1);
    ps->plen = saved;
    if (ps->path)
        ps->path[saved] = 0;
    return ok;
}

static bool parse_one(P *ps, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                      frame *fr, int depth)
{
    if (f->type == PROTOBUF_C_TYPE_MESSAGE)
        return parse_submessage(ps, m, f, fr, depth);
    void *slot = value_slot(ps, m, f, fr);
    if (!slot || !parse_scalar(ps, f, slot))
        return false;
    commit_slot(m, f);
    return true;
}

/* One `name: value`, `name {...}` or `N: value` entry. */
static bool parse_field(P *ps, ProtobufCMessage *m, frame *fr, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const ProtobufCFieldDescriptor *f = NULL;
    int line = ps->tline, col = ps->tcol;
    char t[64], name[256];

    if (ps->kind == T_INT) {
        uint32_t num;
        uvalue u = { 0 };
        if (!parse_field_number(ps, &num))
            return false;
        bool ok = parse_uvalue(ps, &u, depth);
        f = protobuf_c_message_descriptor_get_field(d, num);
        /* the printer's spelling of an enum value without a name */
        if (ok && f && f->type == PROTOBUF_C_TYPE_ENUM && u.wt == PROTOBUF_C_WIRE_TYPE_VARINT) {
            size_t i = (size_t)(f - d->fields);
            if (f->label != PROTOBUF_C_LABEL_REPEATED && fr->seen[i])
                ok = fail_at(ps, line, col, "field '%s' is specified more than once", f->name);
            void *slot = ok ? value_slot(ps, m, f, fr) : NULL;
            if (slot) {
                *(int32_t *)slot = (int32_t)(uint32_t)u.v;
                commit_slot(m, f);
                fr->seen[i] = true;
            }
            ok = slot != NULL;
        } else if (ok && f) {
            /* A known field under its number would bypass the type and
             * repetition checks and pack a field twice or mistyped. */
            ok = fail_at(ps, line, col, "field %u is '%s': write it by name", num, f->name);
        } else if (ok) {
            ok = add_unknown(ps, m, fr, num, &u);
        }
        free(u.raw.p);
        return ok;
    }
    if (ps->kind != T_IDENT)
        return FAIL(ps, "expected field name, got %s", tok_desc(ps, t, sizeof t));
    if (ps->tn >= sizeof name)
        return FAIL(ps, "field name too long");
    memcpy(name, ps->tp, ps->tn);
    name[ps->tn] = 0;
    f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    if (!f)
        return FAIL(ps, "message %s has no field named '%s'", d->name, name);
    if (!next(ps))
        return false;

    size_t i = (size_t)(f - d->fields);
    bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
    if (!repeated && fr->seen[i])
        return fail_at(ps, line, col, "field '%s' is specified more than once", name);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t c = *(uint32_t *)((char *)m + f->quantifier_offset);
        const ProtobufCFieldDescriptor *o =
            c ? protobuf_c_message_descriptor_get_field(d, c) : NULL;
        if (o && o != f)
            return fail_at(ps, line, col, "field '%s' and field '%s' belong to the same oneof",
                           o->name, name);
    }
    fr->seen[i] = true;

    bool is_msg = f->type == PROTOBUF_C_TYPE_MESSAGE;
    if (is_sym(ps, ':')) {
        if (!next(ps))
            return false;
    } else if (!is_msg) {
        return FAIL(ps, "expected ':' after field name '%s', got %s", name,
                    tok_desc(ps, t, sizeof t));
    }
    if (is_sym(ps, '[')) {
        if (!repeated)
            return FAIL(ps, "field '%s' is not repeated, so it cannot take a list", name);
        if (!next(ps))
            return false;
        if (!is_sym(ps, ']')) {
            for (;;) {
                if (!parse_one(ps, m, f, fr, depth))
                    return false;
                if (is_sym(ps, ']'))
                    break;
                if (!is_sym(ps, ','))
                    return FAIL(ps, "expected ',' or ']' in list, got %s",
                                tok_desc(ps, t, sizeof t));
                if (!next(ps))
                    return false;
            }
        }
        return next(ps);
    }
    return parse_one(ps, m, f, fr, depth);
}

/* Notes every required field this message lacks (protobuf-c cannot tell
 * a missing required scalar from a zero one, so we track what the text
 * gave). */
static bool check_required(P *ps, ProtobufCMessage *m, frame *fr)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        if (d->fields[i].label != PROTOBUF_C_LABEL_REQUIRED || fr->seen[i])
            continue;
        if (ps->n_missing++ == 0) {
            size_t n = ps->plen + strlen(d->fields[i].name) + 2;
            if (!(ps->missing = xmalloc(n)))
                return oom(ps);
            snprintf(ps->missing, n, "%.*s%s%s", (int)ps->plen, ps->plen ? ps->path : "",
                     ps->plen ? "." : "", d->fields[i].name);
        }
    }
    return true;
}

/* Gives repeated arrays their exact size, as unpack allocates them. */
static void trim_arrays(ProtobufCMessage *m, frame *fr)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label != PROTOBUF_C_LABEL_REPEATED)
            continue;
        size_t n = *(size_t *)((char *)m + f->quantifier_offset);
        void **arr = (void **)((char *)m + f->offset);
        if (n && n < fr->cap[i]) {
            void *q = xrealloc(*arr, n * pbtext_elt_size(f->type));
            if (q)
                *arr = q;
        }
    }
    if (m->n_unknown_fields && m->n_unknown_fields < fr->ucap) {
        void *q = xrealloc(m->unknown_fields, m->n_unknown_fields * sizeof *m->unknown_fields);
        if (q)
            m->unknown_fields = q;
    }
}

static bool parse_body(P *ps, ProtobufCMessage *m, char close, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    frame fr = { .seen = NULL };
    bool ok = true;
    char t[64];

    if (d->n_fields <= SMALL) {
        memset(fr.small_seen, 0, sizeof fr.small_seen);
        memset(fr.small_cap, 0, sizeof fr.small_cap);
        fr.seen = fr.small_seen;
        fr.cap = fr.small_cap;
    } else {
        fr.seen = xcalloc(d->n_fields, sizeof *fr.seen);
        fr.cap = xcalloc(d->n_fields, sizeof *fr.cap);
        if (!fr.seen || !fr.cap)
            ok = oom(ps);
    }
    while (ok) {
        if (close ? is_sym(ps, close) : ps->kind == T_EOF)
            break;
        if (ps->kind == T_EOF) {
            ok = FAIL(ps, "expected '%c' before end of input", close);
            break;
        }
        if (ps->kind == T_SYM && strchr("}>", *ps->tp)) {
            ok = FAIL(ps, "unexpected %s", tok_desc(ps, t, sizeof t));
            break;
        }
        ok = parse_field(ps, m, &fr, depth) &&
             (!(is_sym(ps, ',') || is_sym(ps, ';')) || next(ps));
    }
    if (ok && close)
        ok = next(ps);
    if (ok)
        ok = check_required(ps, m, &fr);
    trim_arrays(m, &fr);
    if (fr.seen != fr.small_seen) {
        free(fr.seen);
        free(fr.cap);
    }
    return ok;
}

ProtobufCMessage *pbtext_parse(const ProtobufCMessageDescriptor *desc, const char *name,
                               const char *text, size_t len, char *err, size_t errlen)
{
    if (!text)
        text = "", len = 0;
    P ps = { .name = name ? name : "<text>", .p = text, .end = text + len,
             .line_start = text, .line = 1, .err = err, .errlen = errlen };
    if (err && errlen)
        err[0] = 0;
    ProtobufCMessage *m = xmalloc(desc->sizeof_message);
    if (!m) {
        if (err && errlen)
            snprintf(err, errlen, "%s: out of memory", ps.name);
        return NULL;
    }
    protobuf_c_message_init(desc, m);
    bool ok = next(&ps) && parse_body(&ps, m, 0, 0);
    if (ok && ps.n_missing) {
        ok = false;
        if (err && errlen) {
            int k = snprintf(err, errlen, "%s: missing required field '%s'", ps.name,
                             ps.missing ? ps.missing : "?");
            if (ps.n_missing > 1 && k >= 0 && (size_t)k < errlen)
                snprintf(err + k, errlen - (size_t)k, " (and %zu more)", ps.n_missing - 1);
        }
    }
    free(ps.path);
    free(ps.missing);
    free(ps.str.p);
    if (!ok) {
        protobuf_c_message_free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}
