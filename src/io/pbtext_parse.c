/* pbtext_parse.c - protobuf text format parser over protobuf-c descriptors.
 *
 * Builds the message the way protobuf_c_message_unpack does: every
 * sub-message, string, bytes buffer, repeated array and unknown field is
 * malloc'd, so protobuf_c_message_free_unpacked(msg, NULL) releases it.
 * The tree stays consistent after every step (counts only cover filled
 * elements), so on error the partial message is freed the same way. */
#include "pbtext_parse.h"

#include "../ir/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- message building ----------------------------------------------- */


/* Where the next value of f goes: a new slot of a repeated array (the count
 * is bumped by commit_slot once the value is complete) or the field. */
void *ptx_value_slot(P *ps, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
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
            ptx_oom(ps);
            return NULL;
        }
        *arr = q;
        fr->cap[i] = cap;
    }
    return (char *)*arr + n * sz;
}

void ptx_commit_slot(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
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
        return ptx_fail_at(ps, line, col, "value %s%" PRIu64 " is out of range for field '%s'",
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
    if (ptx_is_sym(ps, '-')) {
        neg = true;
        if (!ptx_next(ps))
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
                        ptx_tok_desc(ps, t, sizeof t));
    } else if (ps->kind == T_INT && (ps->tn > 1 && ps->tp[0] == '0')) {
        uint64_t mag;
        bool n2;
        if (!ptx_parse_integer(ps, f->name, &mag, &n2, NULL))
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
                    ptx_tok_desc(ps, t, sizeof t));
    }
    if (!ptx_next(ps))
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
bool ptx_parse_scalar(P *ps, const ProtobufCFieldDescriptor *f, void *dst)
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
        if (ptx_tok_is(ps, "true") || ptx_tok_is(ps, "True") || ptx_tok_is(ps, "t"))
            v = 1;
        else if (ptx_tok_is(ps, "false") || ptx_tok_is(ps, "False") || ptx_tok_is(ps, "f"))
            v = 0;
        else if (ps->kind == T_INT && ps->tn == 1 && (*ps->tp == '0' || *ps->tp == '1'))
            v = *ps->tp == '1';
        else
            return FAIL(ps, "expected true or false for field '%s', got %s", f->name,
                        ptx_tok_desc(ps, t, sizeof t));
        *(protobuf_c_boolean *)dst = v;
        return ptx_next(ps);
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
            return ptx_next(ps);
        }
        if (!ptx_parse_integer(ps, f->name, &mag, &neg, NULL))
            return false;
        if (neg ? mag > (uint64_t)INT32_MAX + 1 : mag > INT32_MAX)
            return ptx_fail_at(ps, line, col, "value is out of range for enum field '%s'", f->name);
        *(int32_t *)dst = (int32_t)(neg ? -(int64_t)mag : (int64_t)mag);
        return true;
    case PROTOBUF_C_TYPE_STRING: {
        if (!ptx_parse_string(ps, f->name))
            return false;
        if (ps->str.len && memchr(ps->str.p, 0, ps->str.len))
            return ptx_fail_at(ps, line, col,
                           "string field '%s' cannot hold a NUL byte", f->name);
        char *s = xmalloc(ps->str.len + 1);
        if (!s)
            return ptx_oom(ps);
        if (ps->str.len)
            memcpy(s, ps->str.p, ps->str.len);
        s[ps->str.len] = 0;
        *(char **)dst = s;
        return true;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *bd = dst;
        if (!ptx_parse_string(ps, f->name))
            return false;
        bd->len = ps->str.len;
        bd->data = NULL;
        if (ps->str.len) {
            if (!(bd->data = xmalloc(ps->str.len)))
                return ptx_oom(ps);
            memcpy(bd->data, ps->str.p, ps->str.len);
        }
        return true;
    }
    default:
        if (!ptx_parse_integer(ps, f->name, &mag, &neg, NULL))
            return false;
        return store_integer(ps, f, dst, mag, neg, line, col);
    }
}

/* ---- unknown (numbered) fields -------------------------------------- */

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
            return ptx_oom(ps);
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
    char close = ptx_is_sym(ps, '{') ? '}' : ptx_is_sym(ps, '<') ? '>' : 0;
    if (!close)
        return FAIL(ps, "expected '{' for field '%s', got %s", f->name,
                    ptx_tok_desc(ps, t, sizeof t));
    if (depth >= MAX_DEPTH)
        return FAIL(ps, "nesting deeper than %d", MAX_DEPTH);
    const ProtobufCMessageDescriptor *sd = f->descriptor;
    void *slot = ptx_value_slot(ps, m, f, fr);
    size_t saved;
    if (!slot || !push_path(ps, f, m, &saved))
        return false;
    ProtobufCMessage *sub = xmalloc(sd->sizeof_message);
    if (!sub)
        return ptx_oom(ps);
    protobuf_c_message_init(sd, sub);
    *(ProtobufCMessage **)slot = sub;
    ptx_commit_slot(m, f);
    bool ok = ptx_next(ps) && parse_body(ps, sub, close, depth + 1);
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
    void *slot = ptx_value_slot(ps, m, f, fr);
    if (!slot || !ptx_parse_scalar(ps, f, slot))
        return false;
    ptx_commit_slot(m, f);
    return true;
}

/* `N: value` or `N { ... }`: an unknown field kept as wire bytes, or an
 * enum value the printer wrote as a number. */
static bool parse_numbered_field(P *ps, ProtobufCMessage *m, frame *fr, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    int line = ps->tline, col = ps->tcol;
    uint32_t num;
    uvalue u = { 0 };
    if (!ptx_parse_field_number(ps, &num))
        return false;
    bool ok = ptx_parse_uvalue(ps, &u, depth);
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, num);
    /* the printer's spelling of an enum value without a name */
    if (ok && f && f->type == PROTOBUF_C_TYPE_ENUM && u.wt == PROTOBUF_C_WIRE_TYPE_VARINT) {
        size_t i = (size_t)(f - d->fields);
        if (f->label != PROTOBUF_C_LABEL_REPEATED && fr->seen[i])
            ok = ptx_fail_at(ps, line, col, "field '%s' is specified more than once", f->name);
        void *slot = ok ? ptx_value_slot(ps, m, f, fr) : NULL;
        if (slot) {
            *(int32_t *)slot = (int32_t)(uint32_t)u.v;
            ptx_commit_slot(m, f);
            fr->seen[i] = true;
        }
        ok = slot != NULL;
    } else if (ok && f) {
        /* A known field under its number would bypass the type and
         * repetition checks and pack a field twice or mistyped. */
        ok = ptx_fail_at(ps, line, col, "field %u is '%s': write it by name", num, f->name);
    } else if (ok) {
        ok = ptx_add_unknown(ps, m, fr, num, &u);
    }
    free(u.raw.p);
    return ok;
}

/* `[v, v, ...]` after a repeated field's name. */
static bool parse_list(P *ps, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                       frame *fr, int depth)
{
    char t[64];
    if (f->label != PROTOBUF_C_LABEL_REPEATED)
        return FAIL(ps, "field '%s' is not repeated, so it cannot take a list", f->name);
    if (!ptx_next(ps))
        return false;
    if (!ptx_is_sym(ps, ']')) {
        for (;;) {
            if (!parse_one(ps, m, f, fr, depth))
                return false;
            if (ptx_is_sym(ps, ']'))
                break;
            if (!ptx_is_sym(ps, ','))
                return FAIL(ps, "expected ',' or ']' in list, got %s",
                            ptx_tok_desc(ps, t, sizeof t));
            if (!ptx_next(ps))
                return false;
        }
    }
    return ptx_next(ps);
}

/* One `name: value`, `name {...}` or `N: value` entry. */
static bool parse_field(P *ps, ProtobufCMessage *m, frame *fr, int depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    int line = ps->tline, col = ps->tcol;
    char t[64], name[256];

    if (ps->kind == T_INT)
        return parse_numbered_field(ps, m, fr, depth);
    if (ps->kind != T_IDENT)
        return FAIL(ps, "expected field name, got %s", ptx_tok_desc(ps, t, sizeof t));
    if (ps->tn >= sizeof name)
        return FAIL(ps, "field name too long");
    memcpy(name, ps->tp, ps->tn);
    name[ps->tn] = 0;
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, name);
    if (!f)
        return FAIL(ps, "message %s has no field named '%s'", d->name, name);
    if (!ptx_next(ps))
        return false;

    size_t i = (size_t)(f - d->fields);
    if (f->label != PROTOBUF_C_LABEL_REPEATED && fr->seen[i])
        return ptx_fail_at(ps, line, col, "field '%s' is specified more than once", name);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        uint32_t c = *(uint32_t *)((char *)m + f->quantifier_offset);
        const ProtobufCFieldDescriptor *o =
            c ? protobuf_c_message_descriptor_get_field(d, c) : NULL;
        if (o && o != f)
            return ptx_fail_at(ps, line, col,
                               "field '%s' and field '%s' belong to the same oneof", o->name, name);
    }
    fr->seen[i] = true;

    if (ptx_is_sym(ps, ':')) {
        if (!ptx_next(ps))
            return false;
    } else if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
        return FAIL(ps, "expected ':' after field name '%s', got %s", name,
                    ptx_tok_desc(ps, t, sizeof t));
    }
    if (ptx_is_sym(ps, '['))
        return parse_list(ps, m, f, fr, depth);
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
                return ptx_oom(ps);
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
            ok = ptx_oom(ps);
    }
    while (ok) {
        if (close ? ptx_is_sym(ps, close) : ps->kind == T_EOF)
            break;
        if (ps->kind == T_EOF) {
            ok = FAIL(ps, "expected '%c' before end of input", close);
            break;
        }
        if (ps->kind == T_SYM && strchr("}>", *ps->tp)) {
            ok = FAIL(ps, "unexpected %s", ptx_tok_desc(ps, t, sizeof t));
            break;
        }
        ok = parse_field(ps, m, &fr, depth) &&
             (!(ptx_is_sym(ps, ',') || ptx_is_sym(ps, ';')) || ptx_next(ps));
    }
    if (ok && close)
        ok = ptx_next(ps);
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
    bool ok = ptx_next(&ps) && parse_body(&ps, m, 0, 0);
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
