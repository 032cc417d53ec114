/* pbdec_op.c - OpDesc, its slots and attrs, wire bytes straight into the IR
 * (see pbdec.c for what the fast reader accepts and what it leaves to
 * protobuf-c). */
#include "pbdec.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/ir_codec.h"
#include "../ir/util.h"

#define BIT(n) (1u << (n))

/* OpDesc.Attr fields: the wire type each expects; which are repeated. */
static const unsigned char attr_wt[22] = {
    [1] = WT_LEN, [2] = WT_VARINT, [3] = WT_VARINT, [4] = WT_32BIT, [5] = WT_LEN,
    [6] = WT_VARINT, [7] = WT_32BIT, [8] = WT_LEN, [10] = WT_VARINT, [11] = WT_VARINT,
    [12] = WT_VARINT, [13] = WT_VARINT, [14] = WT_VARINT, [15] = WT_VARINT,
    [16] = WT_64BIT, [17] = WT_LEN, [18] = WT_LEN, [19] = WT_64BIT, [20] = WT_LEN,
    [21] = WT_LEN,
};
#define ATTR_KNOWN 0x3ffdfeu        /* 1-8, 10-21 */
#define ATTR_REPEATED (BIT(6) | BIT(7) | BIT(8) | BIT(11) | BIT(14) | BIT(15) | BIT(16) | \
                       BIT(18) | BIT(21))
#define VAR_ATTR_KNOWN 0x3eu        /* 1-5 */

/* VarDesc.Attr numbers its fields name 1, type 2, i 3, s 4, ints 5: the
 * OpDesc.Attr fields 1, 2, 3, 5 and 6. */
static uint32_t attr_field(uint32_t num, bool var_attr)
{
    static const uint32_t from_var[6] = {0, 1, 2, 3, 5, 6};
    if (var_attr)
        return num < 6 ? from_var[num] : 0;
    return num < 22 && (ATTR_KNOWN >> num & 1) ? num : 0;
}

static bool complex_in(ir_scalar *d, const pbd_field *c)
{
    pbd_msg m = {c->data, c->data + c->len};
    pbd_field f;
    bool bad;
    uint32_t seen = 0;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num == 1 && !(pbd_once(&seen, 1) && pbd_double(&f, &d->c_r)))
            return false;
        if (f.num == 2 && !(pbd_once(&seen, 2) && pbd_double(&f, &d->c_i)))
            return false;
    }
    /* Complex's own unknown fields are dropped, as pbconv_in.c drops them. */
    d->has_c = true;
    return !bad && seen == (BIT(1) | BIT(2));
}

/* Scalar: type 1, b 2, i 3, r 4, c 5. */
static bool scalar_in(ir_arena *a, ir_scalar *d, const pbd_field *s)
{
    pbd_msg m = {s->data, s->data + s->len};
    pbd_field f;
    bool bad, ok = true;
    uint32_t seen = 0;
    int32_t type = 0;
    while (ok && pbd_next(&m, &f, &bad)) {
        if (f.num > 5)
            continue;
        ok = pbd_once(&seen, f.num);
        switch (f.num) {
        case 1: ok = ok && pbd_int32(&f, &type); break;
        case 2: ok = ok && pbd_bool(&f, &d->b); break;
        case 3: ok = ok && pbd_int64(&f, &d->i); break;
        case 4: ok = ok && pbd_double(&f, &d->r); break;
        case 5: ok = ok && pbd_len(&f) && complex_in(d, &f); break;
        }
    }
    if (!ok || bad || !(seen & BIT(1)))
        return false;
    d->type = type;
    d->has_b = seen & BIT(2);
    d->has_i = seen & BIT(3);
    d->has_r = seen & BIT(4);
    d->unknown = pbd_unknown(a, s->data, s->len, 0x3e);
    return true;
}

/* Checks the attr and counts its repeated fields (by OpDesc.Attr number). */
static bool attr_scan(const uint8_t *data, size_t len, bool var_attr, size_t count[22])
{
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad;
    uint32_t seen = 0;
    while (pbd_next(&m, &f, &bad)) {
        uint32_t k = attr_field(f.num, var_attr);
        if (!k) {
            count[0]++;         /* an unknown field: pbd_attr copies them */
            continue;
        }
        if (f.wt != attr_wt[k])
            return false;
        if (!(ATTR_REPEATED >> k & 1) && !pbd_once(&seen, k))
            return false;
        bool b;
        if ((k == 10 || k == 11) && !pbd_bool(&f, &b))
            return false;
        count[k]++;
    }
    return !bad && (seen & (BIT(1) | BIT(2))) == (BIT(1) | BIT(2));
}

#define ARRAY(field, k) \
    (d->field = count[k] ? ir_arena_alloc_raw(a, count[k] * sizeof *d->field) : NULL)

static void attr_arrays(ir_arena *a, ir_attr_full *d, const size_t count[22])
{
    ARRAY(ints, 6);
    ARRAY(floats, 7);
    ARRAY(strings, 8);
    ARRAY(bools, 11);
    ARRAY(blocks_idx, 14);
    ARRAY(longs, 15);
    ARRAY(float64s, 16);
    ARRAY(vars_name, 18);
    d->scalars = count[21] ? ir_arena_alloc(a, count[21] * sizeof *d->scalars) : NULL;
}

/* One field into the full form; the arrays have room (attr_scan counted). */
static bool attr_field_in(ir_arena *a, ir_attr_full *d, uint32_t k, const pbd_field *f)
{
    int32_t t;
    switch (k) {
    case 1: d->name = pbd_name(f); return true;
    case 2: pbd_int32(f, &t); d->type = (ir_attr_type)t; return true;
    case 3: d->has_i = true; return pbd_int32(f, &d->i);
    case 4: d->has_f = true; return pbd_float(f, &d->f);
    case 5: d->has_s = true; d->s = pbd_string(a, f); return true;
    case 6: return pbd_int32(f, &d->ints[d->n_ints++]);
    case 7: return pbd_float(f, &d->floats[d->n_floats++]);
    case 8: d->strings[d->n_strings++] = pbd_string(a, f); return true;
    case 10: d->has_b = true; return pbd_bool(f, &d->b);
    case 11: return pbd_bool(f, &d->bools[d->n_bools++]);
    case 12: d->has_block_idx = true; return pbd_int32(f, &d->block_idx);
    case 13: d->has_l = true; return pbd_int64(f, &d->l);
    case 14: return pbd_int32(f, &d->blocks_idx[d->n_blocks_idx++]);
    case 15: return pbd_int64(f, &d->longs[d->n_longs++]);
    case 16: return pbd_double(f, &d->float64s[d->n_float64s++]);
    case 17: d->has_var_name = true; d->var_name = pbd_name(f); return true;
    case 18: d->vars_name[d->n_vars_name++] = pbd_name(f); return true;
    case 19: d->has_float64 = true; return pbd_double(f, &d->float64);
    case 20: d->has_scalar = true; return scalar_in(a, &d->scalar, f);
    case 21: return scalar_in(a, &d->scalars[d->n_scalars++], f);
    }
    return true;
}

bool pbd_attr(ir_arena *a, ir_attr *dst, const uint8_t *data, size_t len, bool var_attr)
{
    size_t count[22] = {0};
    if (!attr_scan(data, len, var_attr, count))
        return false;
    ir_attr_full full = {0};
    attr_arrays(a, &full, count);
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad;
    while (pbd_next(&m, &f, &bad)) {
        uint32_t k = attr_field(f.num, var_attr);
        if (k && !attr_field_in(a, &full, k, &f))
            return false;
    }
    if (count[0])   /* the scan saw some: a walk to copy them */
        full.unknown = pbd_unknown(a, data, len, var_attr ? VAR_ATTR_KNOWN : ATTR_KNOWN);
    ir_attr_compact(a, dst, &full);
    return true;
}

/* OpDesc.Var: parameter 1, arguments 2. */
/* One OpDesc.Var into d; the unknown fields it held into *unknown. */
static bool slot_in(ir_arena *a, ir_slot *d, const pbd_field *s, ir_bytes *unknown)
{
    pbd_msg m = {s->data, s->data + s->len};
    pbd_field f, param = {0};
    bool bad;
    uint32_t seen = 0;
    size_t n = 0;
    bool other = false;
    while (pbd_next(&m, &f, &bad)) {
        other |= f.num != 1 && f.num != 2;
        if ((f.num == 1 || f.num == 2) && !pbd_len(&f))
            return false;
        if (f.num == 1 && !pbd_once(&seen, 1))
            return false;
        if (f.num == 1)
            param = f;
        n += f.num == 2;
    }
    if (bad || !seen || n > UINT32_MAX)
        return false;
    d->name = pbd_name(&param);
    d->n_args = d->cap_args = (uint32_t)n;
    d->args = n ? ir_arena_alloc_raw(a, n * sizeof *d->args) : NULL;
    size_t k = 0;
    m.at = s->data;
    while (k < n && pbd_next(&m, &f, &bad))
        if (f.num == 2)
            d->args[k++] = pbd_name(&f);
    /* unknown fields are rare: walk again only when the scan saw one */
    *unknown = other ? pbd_unknown(a, s->data, s->len, BIT(1) | BIT(2)) : (ir_bytes){NULL, 0};
    return true;
}

/* OpDesc: inputs 1, outputs 2, type 3, attrs 4, is_target 5. */
static bool op_scan(const uint8_t *data, size_t len, size_t count[6], pbd_field *type,
                    uint32_t *seen, bool *is_target)
{
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num > 5) {
            count[0]++;         /* unknown: pbd_op copies them */
            continue;
        }
        if (f.num == 5) {
            if (!(pbd_once(seen, 5) && pbd_bool(&f, is_target)))
                return false;
            continue;
        }
        if (!pbd_len(&f) || (f.num == 3 && !pbd_once(seen, 3)))
            return false;
        if (f.num == 3)
            *type = f;
        count[f.num]++;
    }
    return !bad && (*seen & BIT(3));
}

/* How the name of the kept attr f compares with `name`: 0 equal, -1 not
 * it (go on), 1 not it and no later attr can be (the op's attrs are
 * sorted, `attrs_sorted`: names strictly increase, so a walk for a name the
 * op lacks, which passes make on every op, stops at the first name after
 * it instead of at the end; issue 33 point 2). */
static int kept_name_cmp(const ir_op *op, const pbd_field *f, const char *name)
{
    /* canonical: an attr's first field is its name */
    pbd_msg am = {f->data, f->data + f->len};
    pbd_field first = {0};
    bool bad;
    if (!pbd_next(&am, &first, &bad) || first.num != 1)
        return -1;
    int c = pbd_name_cmp(first.data, first.len, name, strlen(name));
    if (c == 0)
        return 0;
    return c > 0 && op->enc_attrs_sorted_ ? 1 : -1;
}

/* Decodes an op's kept attrs into `out`, their lists and strings in `a`
 * (the op's own arena when the op decodes them for itself, a scratch one
 * when they are only copied to another op): all of them (n_attrs bounds
 * them; a borrower's overlay may add more), or with `only` the first of
 * that name.  Returns how many were decoded. */
static size_t decode_pending_attrs(const ir_op *op, ir_arena *a, ir_attr *out,
                                   const char *only)
{
    size_t n = op->n_attrs, k = 0;
    pbd_msg m = {ir_enc(op)->wire, ir_enc(op)->wire + op->enc_wire_len_};
    pbd_field f;
    bool bad;
    while (k < n && pbd_next(&m, &f, &bad)) {
        if (f.num != 4)
            continue;
        int c = only ? kept_name_cmp(op, &f, only) : 0;
        if (c > 0)
            return 0;   /* sorted, and past it: not there */
        if (c < 0)
            continue;
        if (!pbd_attr(a, &out[k++], f.data, f.len, false))
            abort();    /* pbd_op_canonical checked these bytes when read */
        if (only)
            return 1;
    }
    return k;
}

static bool probe_pending_attr(const ir_op *op, const char *name)
{
    pbd_msg m = {ir_enc(op)->wire, ir_enc(op)->wire + op->enc_wire_len_};
    pbd_field f;
    bool bad;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num != 4)
            continue;
        int c = kept_name_cmp(op, &f, name);
        if (c >= 0)
            return c == 0;
    }
    return false;
}

/* Builds the slots of an op read with them left as bytes (keep_bytes):
 * both lists at once, in the wire's order, names interned. */
static void decode_pending_slots(ir_op *op, ir_arena *a)
{
    const ir_op_enc *e = ir_enc(op);
    op->inputs_ = op->n_inputs ? ir_arena_alloc(a, op->n_inputs * sizeof *op->inputs_) : NULL;
    op->outputs_ = op->n_outputs ? ir_arena_alloc(a, op->n_outputs * sizeof *op->outputs_) : NULL;
    op->cap_inputs = op->n_inputs;
    op->cap_outputs = op->n_outputs;
    op->enc_slots_pending_ = false;
    pbd_msg m = {e->wire, e->wire + op->enc_wire_len_};
    pbd_field f;
    bool bad;
    size_t in = 0, out = 0;
    ir_bytes unknown;
    while (pbd_next(&m, &f, &bad)) {
        if (f.num != 1 && f.num != 2)
            continue;
        bool is_out = f.num == 2;
        size_t i = is_out ? out++ : in++;
        if (i >= (is_out ? op->n_outputs : op->n_inputs) ||
            !slot_in(a, is_out ? &op->outputs_[i] : &op->inputs_[i], &f, &unknown))
            abort();    /* pbd_op checked these bytes when read */
        ir_op_set_slot_unknown(op, is_out, i, unknown);
    }
    if (in != op->n_inputs || out != op->n_outputs)
        abort();
}

/* What slot_in checks that pbd_op_canonical does not: a parameter name
 * (canonical, it is the slot's first field).  So that slots left as bytes
 * are sure to decode later. */
static bool slot_has_param(const pbd_field *s)
{
    pbd_msg m = {s->data, s->data + s->len};
    pbd_field f;
    bool bad;
    return pbd_next(&m, &f, &bad) && f.num == 1 && pbd_len(&f);
}

static bool slots_have_params(const uint8_t *data, size_t len)
{
    pbd_msg m = {data, data + len};
    pbd_field f;
    bool bad;
    while (pbd_next(&m, &f, &bad))
        if ((f.num == 1 || f.num == 2) && !slot_has_param(&f))
            return false;
        else if (f.num > 2)
            break;      /* canonical: the slots come first */
    return true;
}

/* The program's decoder of what ops left as bytes (ir_codec.h). */
static const ir_attr_codec codec = {decode_pending_attrs, probe_pending_attr,
                                    decode_pending_slots};

/* Keeps the op's bytes when canonical, and its slots as those bytes (their
 * names interned only when a pass asks for them); and its attrs as those
 * bytes unless one names a block or var (walks over attrs look for those)
 * or the op has none; op_role is decoded at once, as every pass asks for
 * it.  *lazy_slots: the slots were left as bytes. */
static bool keep_bytes(ir_op *op, const uint8_t *data, size_t len, bool in_place,
                       size_t n_attrs, bool *lazy_slots)
{
    pbd_op_peek peek;
    *lazy_slots = false;
    if (len > UINT32_MAX || !pbd_op_canonical(data, len, &peek))
        return false;
    ir_arena *a = ir_op_arena(op);
    ir_op_enc *e = ir_enc(op);
    e->wire = in_place ? data : ir_arena_dup(a, data, len);
    ir_enc_op(e)->enc_wire_len_ = (uint32_t)len;
    if ((op->n_inputs || op->n_outputs) && slots_have_params(data, len)) {
        *lazy_slots = true;
        op->enc_slots_pending_ = true;
        e->program->attr_codec = &codec;
    }
    if (peek.names_blocks || !n_attrs)
        return false;
    if (peek.role.data) {
        ir_attr role = {0};
        if (!pbd_attr(a, &role, peek.role.data, peek.role.len, false))
            abort();    /* canonical: it decodes */
        e->pending_role = ir_attr_shared(&role);
        if (!e->pending_role)
            e->pending_role = ir_arena_dup(a, &role, sizeof role);
    }
    ir_enc_op(e)->enc_attrs_pending_ = true;
    ir_enc_op(e)->enc_attrs_sorted_ = peek.attrs_sorted;
    e->program->attr_codec = &codec;
    return true;
}

ir_op *pbd_op(ir_program *p, const uint8_t *data, size_t len, bool in_place)
{
    size_t count[6] = {0};
    pbd_field type = {0}, f;
    uint32_t seen = 0;
    bool is_target = false, bad, ok = true;
    if (!op_scan(data, len, count, &type, &seen, &is_target) ||
        count[1] > UINT32_MAX || count[2] > UINT32_MAX || count[4] > UINT32_MAX)
        return NULL;
    ir_arena *a = p->arena;
    ir_op *op = ir_op_new_bare(p, pbd_name(&type));
    op->enc_dirty_ = false;
    op->n_inputs = (uint32_t)count[1];
    op->n_outputs = (uint32_t)count[2];
    op->n_attrs = count[4];
    bool lazy_slots, lazy = keep_bytes(op, data, len, in_place, count[4], &lazy_slots);
    if (!lazy_slots) {
        op->cap_inputs = count[1];
        op->inputs_ = count[1] ? ir_arena_alloc(a, count[1] * sizeof *op->inputs_) : NULL;
        op->cap_outputs = count[2];
        op->outputs_ = count[2] ? ir_arena_alloc(a, count[2] * sizeof *op->outputs_) : NULL;
    }
    if (!lazy) {
        op->cap_attrs = count[4];
        op->attrs = count[4] ? ir_arena_alloc(a, count[4] * sizeof *op->attrs) : NULL;
    }
    size_t in = 0, out = 0, at = 0;
    pbd_msg m = {data, data + len};
    ir_bytes unknown;
    while (ok && pbd_next(&m, &f, &bad)) {
        if ((f.num == 1 || f.num == 2) && !lazy_slots) {
            bool is_out = f.num == 2;
            size_t i = is_out ? out++ : in++;
            ok = slot_in(a, is_out ? &op->outputs_[i] : &op->inputs_[i], &f, &unknown);
            if (ok)
                ir_op_set_slot_unknown(op, is_out, i, unknown);
        } else if (f.num == 4 && !lazy)
            ok = pbd_attr(a, &op->attrs[at++], f.data, f.len, false);
    }
    if (!ok)
        return NULL;
    op->has_is_target = seen & BIT(5);
    op->is_target = is_target;
    if (count[0])
        ir_op_set_unknown(op, pbd_unknown(a, data, len, 0x3e));
    return op;
}

static void prefetch_name(const pbd_field *f)
{
    if (pbd_len(f))
        ir_intern_prefetch((const char *)f->data, f->len);
}

/* Starts loading the intern table's slot for the name block field f (a
 * VarDesc) will look up, while the fields before it decode.  At 1M ops the
 * table is tens of MiB and each lookup a cache miss of its own; ahead,
 * they overlap.  An OpDesc's argument names are no longer looked up at
 * read: a canonical op keeps its slots as bytes until a pass asks
 * (keep_bytes), so prefetching them would only hash every name for
 * nothing.  Only a hint: bytes that do not parse are left to the decode
 * proper, which reports them. */
void pbd_prefetch_names(const pbd_field *f)
{
    if (!pbd_len(f) || f->num != 3)
        return;
    pbd_msg m = {f->data, f->data + f->len};
    pbd_field g;
    bool bad;
    while (pbd_next(&m, &g, &bad))
        if (g.num == 1) {
            prefetch_name(&g);
            return;
        }
}
