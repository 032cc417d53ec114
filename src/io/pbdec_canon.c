/* pbdec_canon.c - whether an op's bytes are exactly what pbenc.c writes for
 * the op pbd_op builds from them, so that a clean op may be written back as
 * the bytes it was read from (issue 14 point 5).
 *
 * pbenc.c writes a clean op as protobuf-c packs it: known fields in
 * field-number order (the slots and attrs of one field in the order read),
 * then the unknown fields as read; minimal keys and length prefixes; an
 * int32 or enum as its sign-extended varint, an int64 as its minimal
 * varint; strings up to their first NUL.  So the bytes are canonical iff,
 * in the op and in each slot and attr: no known field follows a larger one
 * or an unknown one, every varint and length prefix is the one the encoder
 * would write, and no string holds a NUL.  (Keys are minimal already: the
 * fast reader declines others.)  Scalar attrs are rare and left to the
 * full path.  A canonical op's attrs also pass every check of pbd_attr, so
 * they may stay bytes until asked for (pbdec_op.c).  tests/unit/test_pbenc.c and the fuzz targets hold the
 * verbatim copies to protobuf-c's packing. */
#include "pbdec.h"

#include <string.h>

#define BIT(n) (1u << (n))

static size_t key_len(const pbd_field *f)
{
    return pb_varint_len((uint64_t)f->num << 3 | f->wt);
}

/* The field's varint is the one the encoder writes for `want`. */
static bool varint_is(const pbd_field *f, uint64_t want)
{
    const uint8_t *at = f->key + key_len(f);
    if ((size_t)f->vbytes != pb_varint_len(want))
        return false;
    for (int i = 0; i < f->vbytes; i++, want >>= 7)
        if (at[i] != (uint8_t)((want & 0x7f) | (want >= 0x80 ? 0x80 : 0)))
            return false;
    return true;
}

static bool int32_canonical(const pbd_field *f)
{
    return f->wt == WT_VARINT && varint_is(f, (uint64_t)(int64_t)(int32_t)(uint32_t)f->v);
}

static bool int64_canonical(const pbd_field *f)
{
    return f->wt == WT_VARINT && varint_is(f, f->v);
}

static bool len_canonical(const pbd_field *f)
{
    return f->wt == WT_LEN &&
           (size_t)(f->data - f->key) == key_len(f) + pb_varint_len(f->len);
}

static bool string_canonical(const pbd_field *f)
{
    return len_canonical(f) && !memchr(f->data, 0, f->len);
}

/* Known fields in field-number order, a singular one at most once, all
 * before the unknown ones. */
typedef struct {
    uint32_t last;
    bool unknown_seen;
} order;

static bool in_order(order *o, uint32_t num, bool known, bool repeated)
{
    if (!known) {
        o->unknown_seen = true;
        return true;
    }
    if (o->unknown_seen || num < o->last || (num == o->last && !repeated))
        return false;
    o->last = num;
    return true;
}

/* OpDesc.Var: parameter 1, arguments 2. */
static bool slot_canonical(const pbd_field *s)
{
    pbd_msg m = {s->data, s->data + s->len};
    pbd_field f;
    bool bad = false;
    order o = {0, false};
    while (pbd_next(&m, &f, &bad)) {
        bool known = f.num == 1 || f.num == 2;
        if (!in_order(&o, f.num, known, f.num == 2) || (known && !string_canonical(&f)))
            return false;
    }
    return !bad;
}

#define ATTR_KNOWN 0x3ffdfeu        /* 1-8, 10-21 */
#define ATTR_REPEATED (BIT(6) | BIT(7) | BIT(8) | BIT(11) | BIT(14) | BIT(15) | BIT(16) | \
                       BIT(18) | BIT(21))

/* Also everything pbd_attr checks, so that an attr kept as bytes is sure to
 * decode later (the wire type each field needs, bools of one byte 0 or 1). */
static bool attr_field_canonical(const pbd_field *f)
{
    switch (f->num) {
    case 1: case 5: case 8: case 17: case 18:
        return string_canonical(f);
    case 2: case 3: case 6: case 12: case 14:
        return int32_canonical(f);
    case 13: case 15:
        return int64_canonical(f);
    case 4: case 7:
        return f->wt == WT_32BIT;
    case 16: case 19:
        return f->wt == WT_64BIT;
    case 10: case 11:
        return f->wt == WT_VARINT && f->vbytes == 1 && f->v <= 1;
    default:
        return false;               /* 20, 21: scalars take the full path */
    }
}

/* Keeps peek->attrs_sorted true while each attr's name sorts after the
 * one before it (*last; no name holds a NUL here). */
static void name_follows(pbd_op_peek *peek, ir_bytes *last, const pbd_field *name)
{
    if (last->data && pbd_name_cmp(last->data, last->len, name->data, name->len) >= 0)
        peek->attrs_sorted = false;
    *last = (ir_bytes){name->data, name->len};
}

static bool attr_canonical(const pbd_field *a, pbd_op_peek *peek, ir_bytes *last_name)
{
    pbd_msg m = {a->data, a->data + a->len};
    pbd_field f;
    bool bad = false, is_role = false;
    order o = {0, false};
    uint32_t seen = 0;
    uint64_t type = 0;
    while (pbd_next(&m, &f, &bad)) {
        bool known = f.num < 32 && (ATTR_KNOWN >> f.num & 1);
        if (!in_order(&o, f.num, known, known && (ATTR_REPEATED >> f.num & 1)))
            return false;
        if (!known)
            continue;
        if (!attr_field_canonical(&f))
            return false;
        seen |= BIT(f.num);
        if (f.num == 1) {
            is_role = f.len == 7 && memcmp(f.data, "op_role", 7) == 0;
            name_follows(peek, last_name, &f);
        }
        else if (f.num == 2)
            type = f.v;
    }
    if (bad || (seen & (BIT(1) | BIT(2))) != (BIT(1) | BIT(2)))
        return false;
    /* BLOCK, BLOCKS, VAR, VARS: what walks over attrs look for */
    if (type == 8 || type == 10 || type == 13 || type == 14)
        peek->names_blocks = true;
    if (is_role && !peek->role.data) {
        peek->role.data = a->data;
        peek->role.len = a->len;
    }
    return true;
}

bool pbd_op_canonical(const uint8_t *data, size_t len, pbd_op_peek *peek)
{
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad = false, ok = true;
    order o = {0, false};
    *peek = (pbd_op_peek){false, {NULL, 0}, true};
    ir_bytes last_name = {NULL, 0};
    while (ok && pbd_next(&m, &f, &bad)) {
        bool known = f.num >= 1 && f.num <= 5;
        ok = in_order(&o, f.num, known, f.num == 1 || f.num == 2 || f.num == 4);
        if (!ok || !known)
            continue;
        switch (f.num) {
        case 1: case 2: ok = len_canonical(&f) && slot_canonical(&f); break;
        case 3: ok = string_canonical(&f); break;
        case 4: ok = len_canonical(&f) && attr_canonical(&f, peek, &last_name); break;
        case 5: ok = f.vbytes == 1; break;
        }
    }
    return ok && !bad;
}
