/* pbtext_unknown.c - numbered entries (`3: 7`, `3 { 1: "x" }`) of the
 * text form, kept as unknown fields in wire bytes (see pbtext_parse.c). */
#include "pbtext_parse.h"

#include "../ir/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool parse_uset(P *ps, bytes *out, char close, int depth);

/* The value after a field number: `: int`, `: "str"`, `{...}`, `<...>`. */
bool ptx_parse_uvalue(P *ps, uvalue *u, int depth)
{
    char t[64];
    bool colon = ptx_is_sym(ps, ':');
    if (colon && !ptx_next(ps))
        return false;
    if (ptx_is_sym(ps, '{') || ptx_is_sym(ps, '<')) {
        char close = ptx_is_sym(ps, '{') ? '}' : '>';
        bytes inner = { 0 };
        bool ok = depth < MAX_DEPTH ? ptx_next(ps) && parse_uset(ps, &inner, close, depth + 1)
                                    : FAIL(ps, "nesting deeper than %d", MAX_DEPTH);
        u->wt = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
        u->empty_braces = ok && inner.len == 0;
        if (ok && !(ptx_b_varint(&u->raw, inner.len) && ptx_b_put(&u->raw, inner.p, inner.len)))
            ok = ptx_oom(ps);
        free(inner.p);
        return ok;
    }
    if (!colon)
        return FAIL(ps, "expected ':' or '{' after field number, got %s",
                    ptx_tok_desc(ps, t, sizeof t));
    if (ps->kind == T_STRING) {
        if (!ptx_parse_string(ps, "field number"))
            return false;
        u->wt = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
        if (!ptx_b_varint(&u->raw, ps->str.len) || !ptx_b_put(&u->raw, ps->str.p, ps->str.len))
            return ptx_oom(ps);
        return true;
    }
    if (ps->kind == T_INT || ptx_is_sym(ps, '-')) {
        uint64_t mag;
        bool neg;
        int hex;
        if (!ptx_parse_integer(ps, "unknown field", &mag, &neg, &hex))
            return false;
        u->v = neg ? (uint64_t)0 - mag : mag;
        /* the printer writes fixed32/fixed64 as 0x + 8 / 16 digits */
        if (!neg && (hex == 8 || hex == 16)) {
            uint8_t le[8];
            for (int i = 0; i < 8; i++)
                le[i] = (uint8_t)(u->v >> (8 * i));
            u->wt = hex == 8 ? PROTOBUF_C_WIRE_TYPE_32BIT : PROTOBUF_C_WIRE_TYPE_64BIT;
            if (!ptx_b_put(&u->raw, le, (size_t)hex / 2))
                return ptx_oom(ps);
        } else {
            u->wt = PROTOBUF_C_WIRE_TYPE_VARINT;
            if (!ptx_b_varint(&u->raw, u->v))
                return ptx_oom(ps);
        }
        return true;
    }
    return FAIL(ps, "expected integer, string or '{' for unknown field, got %s",
                ptx_tok_desc(ps, t, sizeof t));
}

bool ptx_parse_field_number(P *ps, uint32_t *num)
{
    uint64_t mag;
    bool neg;
    int line = ps->tline, col = ps->tcol;
    if (!ptx_parse_integer(ps, "field number", &mag, &neg, NULL))
        return false;
    if (neg || mag == 0 || mag > MAX_FIELD)
        return ptx_fail_at(ps, line, col, "field number %s%" PRIu64 " is out of range",
                       neg ? "-" : "", mag);
    *num = (uint32_t)mag;
    return true;
}

/* The body of an unknown embedded message: numbered fields only, written
 * to out as wire format. */
static bool parse_uset(P *ps, bytes *out, char close, int depth)
{
    char t[64];
    while (!ptx_is_sym(ps, close)) {
        uint32_t num;
        if (ps->kind != T_INT)
            return FAIL(ps, "expected field number or '%c' in unknown field, got %s",
                        close, ptx_tok_desc(ps, t, sizeof t));
        if (!ptx_parse_field_number(ps, &num))
            return false;
        uvalue u = { 0 };
        bool ok = ptx_parse_uvalue(ps, &u, depth);
        /* Wire types 3 and 4 start and end a group (protobuf-c names
         * neither).  The printer writes an empty length-delimited field as `N: ""`,
         * so an empty `N { }` inside an unknown field was an empty group. */
        if (ok && u.empty_braces) {
            if (!(ptx_b_varint(out, (uint64_t)num << 3 | 3u) &&
                  ptx_b_varint(out, (uint64_t)num << 3 | 4u)))
                ok = ptx_oom(ps);
        } else if (ok && !(ptx_b_varint(out, (uint64_t)num << 3 | u.wt) &&
                           ptx_b_put(out, u.raw.p, u.raw.len))) {
            ok = ptx_oom(ps);
        }
        free(u.raw.p);
        if (!ok)
            return false;
        if ((ptx_is_sym(ps, ',') || ptx_is_sym(ps, ';')) && !ptx_next(ps))
            return false;
    }
    return ptx_next(ps);
}

bool ptx_add_unknown(P *ps, ProtobufCMessage *m, frame *fr, uint32_t num, uvalue *u)
{
    if (m->n_unknown_fields == fr->ucap) {
        size_t cap = fr->ucap ? fr->ucap * 2 : 4;
        void *q = xrealloc(m->unknown_fields, cap * sizeof *m->unknown_fields);
        if (!q)
            return ptx_oom(ps);
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
        return ptx_oom(ps);
    m->n_unknown_fields++;
    return true;
}

/* ---- known fields and messages -------------------------------------- */
