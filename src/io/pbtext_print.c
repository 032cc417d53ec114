/* pbtext_print.c - protobuf text format printer over protobuf-c descriptors.
 *
 * Mirrors protobuf 3.21's TextFormat::Printer with default settings, which
 * is what `protoc --decode` uses.  A field is printed iff protobuf-c would
 * pack it, so the output is what protoc prints for protobuf_c_message_pack's
 * bytes. */
#include "pbtext.h"

#include "../ir/util.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* protobuf's kUnknownFieldRecursionLimit: how many levels of unknown
 * length-delimited fields are tried as embedded messages. */
#define UNKNOWN_BUDGET 10
/* With a FILE sink the buffer is written out whenever it grows past this,
 * so printing a large program does not hold the whole text in memory. */
#define FLUSH_AT 65536

typedef struct {
    char *p;
    size_t len, cap;
    FILE *sink;
    bool err;
} obuf;

static void ob_flush(obuf *b)
{
    if (b->sink && b->len) {
        if (fwrite(b->p, 1, b->len, b->sink) != b->len)
            b->err = true;
        b->len = 0;
    }
}

static bool ob_reserve(obuf *b, size_t n)
{
    if (b->err)
        return false;
    if (b->sink && b->len + n > FLUSH_AT)
        ob_flush(b);
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = xrealloc(b->p, cap);
    if (!p) {
        b->err = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

static void ob_put(obuf *b, const char *s, size_t n)
{
    if (n && ob_reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

static void ob_puts(obuf *b, const char *s) { ob_put(b, s, strlen(s)); }

static void ob_indent(obuf *b, int depth)
{
    size_t n = (size_t)depth * 2;
    if (n && ob_reserve(b, n)) {
        memset(b->p + b->len, ' ', n);
        b->len += n;
    }
}

/* protobuf's CEscape: C escapes for the usual suspects, 3-digit octal for
 * every other byte outside printable ASCII (UTF-8 included). */
static void put_escaped(obuf *b, const uint8_t *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        char tmp[5];
        const char *esc;
        switch (s[i]) {
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '"': esc = "\\\""; break;
        case '\'': esc = "\\'"; break;
        case '\\': esc = "\\\\"; break;
        default:
            if (s[i] >= 0x20 && s[i] < 0x7f)
                continue;
            tmp[0] = '\\';
            tmp[1] = (char)('0' + (s[i] >> 6));
            tmp[2] = (char)('0' + ((s[i] >> 3) & 7));
            tmp[3] = (char)('0' + (s[i] & 7));
            tmp[4] = 0;
            esc = tmp;
        }
        ob_put(b, (const char *)s + run, i - run);
        ob_puts(b, esc);
        run = i + 1;
    }
    ob_put(b, (const char *)s + run, n - run);
}

static void put_quoted(obuf *b, const uint8_t *s, size_t n)
{
    ob_put(b, "\"", 1);
    put_escaped(b, s, n);
    ob_put(b, "\"", 1);
}

/* SimpleFtoa / SimpleDtoa: the short form unless it does not read back. */
static void put_float(obuf *b, float v)
{
    char tmp[48];
    if (isnan(v)) {
        ob_puts(b, "nan");
    } else if (isinf(v)) {
        ob_puts(b, v > 0 ? "inf" : "-inf");
    } else {
        /* protobuf's safe_strtof also fails on ERANGE, which glibc sets
         * for subnormals, so those always get 9 digits */
        int saved = errno;
        snprintf(tmp, sizeof tmp, "%.*g", FLT_DIG, (double)v);
        errno = 0;
        if (strtof(tmp, NULL) != v || errno != 0)
            snprintf(tmp, sizeof tmp, "%.*g", FLT_DIG + 3, (double)v);
        errno = saved;
        ob_puts(b, tmp);
    }
}

static void put_double(obuf *b, double v)
{
    char tmp[48];
    if (isnan(v)) {
        ob_puts(b, "nan");
    } else if (isinf(v)) {
        ob_puts(b, v > 0 ? "inf" : "-inf");
    } else {
        snprintf(tmp, sizeof tmp, "%.*g", DBL_DIG, v);
        if (strtod(tmp, NULL) != v)
            snprintf(tmp, sizeof tmp, "%.*g", DBL_DIG + 2, v);
        ob_puts(b, tmp);
    }
}

static void put_fmt_u64(obuf *b, uint64_t v)
{
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    ob_puts(b, tmp);
}

static void put_fmt_i64(obuf *b, int64_t v)
{
    char tmp[24];
    snprintf(tmp, sizeof tmp, "%" PRId64, v);
    ob_puts(b, tmp);
}

/* ---- unknown fields ------------------------------------------------ */

/* CodedInputStream::ReadVarint64: at most 10 bytes, high bits dropped. */
static bool rd_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= n)
            return false;
        uint8_t c = p[(*pos)++];
        r |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* Whether [*pos, n) is a well-formed unknown-field set by the rules of
 * UnknownFieldSet::ParseFromCodedStream: a zero tag, a stray end-group or a
 * negative length fails; groups must close with their own number and may
 * nest only `budget` deep.  `group` is the open group's number, 0 at the
 * top, where only the end of the data ends the set. */
static bool uf_skip(const uint8_t *p, size_t n, size_t *pos, uint32_t group,
                    int budget)
{
    for (;;) {
        uint64_t t64, v;
        if (*pos == n)
            return group == 0;
        if (!rd_varint(p, n, pos, &t64))
            return false;
        uint32_t tag = (uint32_t)t64, num = tag >> 3;
        if (tag == 0)
            return false;
        if ((tag & 7) == 4)
            return group != 0 && tag == (group << 3 | 4);
        if (num == 0)
            return false;
        switch (tag & 7) {
        case 0:
            if (!rd_varint(p, n, pos, &v))
                return false;
            break;
        case 1:
        case 5: {
            size_t w = (tag & 7) == 1 ? 8 : 4;
            if (n - *pos < w)
                return false;
            *pos += w;
            break;
        }
        case 2:
            if (!rd_varint(p, n, pos, &v) || (int32_t)(uint32_t)v < 0 ||
                (uint32_t)v > n - *pos)
                return false;
            *pos += (uint32_t)v;
            break;
        case 3:
            if (budget - 1 < 0 || !uf_skip(p, n, pos, num, budget - 1))
                return false;
            break;
        default:
            return false;
        }
    }
}

static void print_ld(obuf *b, uint32_t num, const uint8_t *p, size_t n,
                     int depth, int budget);

/* Prints a set already accepted by uf_skip (same walk, same limits). */
static void uf_print(obuf *b, const uint8_t *p, size_t n, size_t *pos,
                     int depth, int budget)
{
    char tmp[48];
    while (*pos < n) {
        uint64_t t64, v = 0;
        if (!rd_varint(p, n, pos, &t64))
            return;
        uint32_t tag = (uint32_t)t64, num = tag >> 3;
        if ((tag & 7) == 4)
            return;
        ob_indent(b, depth);
        switch (tag & 7) {
        case 0:
            rd_varint(p, n, pos, &v);
            snprintf(tmp, sizeof tmp, "%" PRIu32 ": %" PRIu64 "\n", num, v);
            ob_puts(b, tmp);
            break;
        case 1:
            for (int i = 7; i >= 0; i--)
                v = v << 8 | p[*pos + (size_t)i];
            *pos += 8;
            snprintf(tmp, sizeof tmp, "%" PRIu32 ": 0x%016" PRIx64 "\n", num, v);
            ob_puts(b, tmp);
            break;
        case 5:
            for (int i = 3; i >= 0; i--)
                v = v << 8 | p[*pos + (size_t)i];
            *pos += 4;
            snprintf(tmp, sizeof tmp, "%" PRIu32 ": 0x%08" PRIx32 "\n", num,
                     (uint32_t)v);
            ob_puts(b, tmp);
            break;
        case 2:
            rd_varint(p, n, pos, &v);
            print_ld(b, num, p + *pos, (uint32_t)v, depth, budget);
            *pos += (uint32_t)v;
            break;
        case 3:
            snprintf(tmp, sizeof tmp, "%" PRIu32 " {\n", num);
            ob_puts(b, tmp);
            /* protobuf does not charge the budget for printing groups */
            uf_print(b, p, n, pos, depth + 1, budget);
            ob_indent(b, depth);
            ob_puts(b, "}\n");
            break;
        }
    }
}

/* A length-delimited unknown field, its indentation already written:
 * an embedded message if it parses as one within the budget, else a
 * string. */
static void print_ld(obuf *b, uint32_t num, const uint8_t *p, size_t n,
                     int depth, int budget)
{
    char tmp[24];
    size_t pos = 0;
    if (n > 0 && budget > 0 && uf_skip(p, n, &pos, 0, budget)) {
        snprintf(tmp, sizeof tmp, "%" PRIu32 " {\n", num);
        ob_puts(b, tmp);
        pos = 0;
        uf_print(b, p, n, &pos, depth + 1, budget - 1);
        ob_indent(b, depth);
        ob_puts(b, "}\n");
    } else {
        snprintf(tmp, sizeof tmp, "%" PRIu32 ": ", num);
        ob_puts(b, tmp);
        put_quoted(b, p, n);
        ob_puts(b, "\n");
    }
}

/* protobuf-c keeps an unknown field as its raw bytes after the tag
 * (the length prefix included), in the order read. */
static void print_unknown(obuf *b, const ProtobufCMessageUnknownField *u,
                          int depth)
{
    size_t pos = 0;
    uint64_t v = 0;
    char tmp[48];
    const uint8_t *d = u->data;

    ob_indent(b, depth);
    switch (u->wire_type) {
    case PROTOBUF_C_WIRE_TYPE_VARINT:
        rd_varint(d, u->len, &pos, &v);
        snprintf(tmp, sizeof tmp, "%" PRIu32 ": %" PRIu64 "\n", u->tag, v);
        break;
    case PROTOBUF_C_WIRE_TYPE_64BIT:
        for (size_t i = u->len < 8 ? u->len : 8; i-- > 0;)
            v = v << 8 | d[i];
        snprintf(tmp, sizeof tmp, "%" PRIu32 ": 0x%016" PRIx64 "\n", u->tag, v);
        break;
    case PROTOBUF_C_WIRE_TYPE_32BIT:
        for (size_t i = u->len < 4 ? u->len : 4; i-- > 0;)
            v = v << 8 | d[i];
        snprintf(tmp, sizeof tmp, "%" PRIu32 ": 0x%08" PRIx32 "\n", u->tag,
                 (uint32_t)v);
        break;
    case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
        if (!rd_varint(d, u->len, &pos, &v) || v > u->len - pos)
            v = 0;
        print_ld(b, u->tag, d + pos, (size_t)v, depth, UNKNOWN_BUDGET);
        return;
    default: /* groups never reach protobuf-c's unknown fields */
        snprintf(tmp, sizeof tmp, "%" PRIu32 ": \"\"\n", u->tag);
    }
    ob_puts(b, tmp);
}

/* ---- known fields -------------------------------------------------- */

size_t pbtext_elt_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
    default: return 4;
    }
}

/* protobuf-c's field_is_zeroish, for proto3 fields without presence. */
static bool is_zeroish(const ProtobufCFieldDescriptor *f, const void *p)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_BOOL: return *(const protobuf_c_boolean *)p == 0;
    case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0;
    case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE: return *(ProtobufCMessage *const *)p == NULL;
    default:
        return pbtext_elt_size(f->type) == 8 ? *(const uint64_t *)p == 0
                                      : *(const uint32_t *)p == 0;
    }
}

/* Whether protobuf_c_message_pack would write this singular field. */
static bool is_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    const char *base = (const char *)m;
    const void *p = base + f->offset;
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        if (*(const uint32_t *)(base + f->quantifier_offset) != f->id)
            return false;
        if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE) {
            const void *ptr = *(const void *const *)p;
            return ptr && ptr != f->default_value;
        }
        return true;
    }
    switch (f->label) {
    case PROTOBUF_C_LABEL_REQUIRED:
        return true;
    case PROTOBUF_C_LABEL_OPTIONAL:
        if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_MESSAGE) {
            const void *ptr = *(const void *const *)p;
            return ptr && ptr != f->default_value;
        }
        return *(const protobuf_c_boolean *)(base + f->quantifier_offset) != 0;
    case PROTOBUF_C_LABEL_NONE:
        return !is_zeroish(f, p);
    default:
        return false;
    }
}

/* Closed (proto2) enums: protobuf's parser diverts values without a name
 * into the unknown fields, so they print there, as the varint they were. */
static bool enum_unnamed(const ProtobufCFieldDescriptor *f, const void *p)
{
    return f->type == PROTOBUF_C_TYPE_ENUM && f->label != PROTOBUF_C_LABEL_NONE &&
           !protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int32_t *)p);
}

static void print_message(obuf *b, const ProtobufCMessage *m, int depth);

static void print_value(obuf *b, const ProtobufCFieldDescriptor *f,
                        const void *p, int depth)
{
    ob_indent(b, depth);
    ob_puts(b, f->name);
    if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
        ob_puts(b, " {\n");
        const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
        if (sub)
            print_message(b, sub, depth + 1);
        ob_indent(b, depth);
        ob_puts(b, "}\n");
        return;
    }
    ob_puts(b, ": ");
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        put_fmt_i64(b, *(const int32_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        put_fmt_u64(b, *(const uint32_t *)p);
        break;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        put_fmt_i64(b, *(const int64_t *)p);
        break;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        put_fmt_u64(b, *(const uint64_t *)p);
        break;
    case PROTOBUF_C_TYPE_FLOAT: put_float(b, *(const float *)p); break;
    case PROTOBUF_C_TYPE_DOUBLE: put_double(b, *(const double *)p); break;
    case PROTOBUF_C_TYPE_BOOL:
        ob_puts(b, *(const protobuf_c_boolean *)p ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        int32_t v = *(const int32_t *)p;
        const ProtobufCEnumValue *ev =
            protobuf_c_enum_descriptor_get_value(f->descriptor, v);
        if (ev)
            ob_puts(b, ev->name);
        else
            put_fmt_i64(b, v);
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        put_quoted(b, (const uint8_t *)(s ? s : ""), s ? strlen(s) : 0);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *bd = p;
        put_quoted(b, bd->data, bd->data ? bd->len : 0);
        break;
    }
    default:
        break;
    }
    ob_puts(b, "\n");
}

/* Prints the values of field f that packing would write: the named ones
 * in the first pass (noting unnamed enum values), the unnamed in the
 * second. */
static void for_each_value(obuf *b, const ProtobufCMessage *m,
                           const ProtobufCFieldDescriptor *f, int depth,
                           bool unnamed_pass, bool *saw_unnamed)
{
    const char *base = (const char *)m;
    size_t n = 1;
    const char *arr = base + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        n = *(const size_t *)(base + f->quantifier_offset);
        arr = *(const char *const *)(base + f->offset);
        if (!arr)
            return;
    } else if (!is_present(m, f)) {
        return;
    }
    size_t sz = pbtext_elt_size(f->type);
    for (size_t i = 0; i < n; i++) {
        const void *p = arr + i * sz;
        bool unnamed = enum_unnamed(f, p);
        if (unnamed && !unnamed_pass) {
            *saw_unnamed = true;
        } else if (unnamed) {
            char tmp[48];
            ob_indent(b, depth);
            snprintf(tmp, sizeof tmp, "%" PRIu32 ": %" PRIu64 "\n", f->id,
                     (uint64_t)(int64_t) * (const int32_t *)p);
            ob_puts(b, tmp);
        } else if (!unnamed_pass) {
            print_value(b, f, p, depth);
        }
    }
}

static int cmp_field_id(const void *a, const void *b)
{
    const ProtobufCFieldDescriptor *x = *(const ProtobufCFieldDescriptor *const *)a;
    const ProtobufCFieldDescriptor *y = *(const ProtobufCFieldDescriptor *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void print_message(obuf *b, const ProtobufCMessage *m, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const ProtobufCFieldDescriptor **order = NULL;
    bool sorted = true, saw_unnamed = false;

    /* protoc-c emits fields by number; handle other descriptors anyway */
    for (unsigned i = 1; i < d->n_fields; i++)
        if (d->fields[i - 1].id > d->fields[i].id)
            sorted = false;
    if (!sorted) {
        order = xmalloc(d->n_fields * sizeof *order);
        if (!order) {
            b->err = true;
            return;
        }
        for (unsigned i = 0; i < d->n_fields; i++)
            order[i] = &d->fields[i];
        qsort(order, d->n_fields, sizeof *order, cmp_field_id);
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && !saw_unnamed)
            break;
        for (unsigned i = 0; i < d->n_fields; i++)
            for_each_value(b, m, order ? order[i] : &d->fields[i], depth,
                           pass == 1, &saw_unnamed);
    }
    free(order);
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        print_unknown(b, &m->unknown_fields[i], depth);
}

int pbtext_print(FILE *out, const ProtobufCMessage *msg)
{
    obuf b = { .sink = out };
    print_message(&b, msg, 0);
    ob_flush(&b);
    free(b.p);
    if (fflush(out) != 0 || ferror(out))
        b.err = true;
    return b.err ? -1 : 0;
}

char *pbtext_print_to_string(const ProtobufCMessage *msg, size_t *len)
{
    obuf b = { 0 };
    print_message(&b, msg, 0);
    if (!ob_reserve(&b, 0)) {
        free(b.p);
        return NULL;
    }
    b.p[b.len] = 0;
    if (len)
        *len = b.len;
    return b.p;
}
