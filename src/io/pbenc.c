/* pbenc.c - the IR straight to ProgramDesc wire bytes (issue 14 point 3).
 *
 * The bytes are exactly what protobuf_c_message_pack writes for the message
 * pbconv_from_ir builds: fields in field-number order (protoc-c sorts the
 * descriptor's fields so), repeated fields unpacked (proto2), strings up to
 * their first NUL (protobuf-c packs strlen), a negative int32 or enum as ten
 * bytes, a message's unknown fields after its known ones.  The test
 * tests/unit/test_pbenc.c holds it to that on every golden and real program.
 *
 * Two walks over the IR in the same order: the first counts each message's
 * size (leaves first, since a message's size is known when its last field
 * is counted) into a scratch array indexed in the order the messages start;
 * the second writes, taking each length prefix from that array.  So every
 * size is computed once and nothing is built besides the output buffer.
 * The orders that need sorting (a dirty op's slots and attrs, a block's
 * added vars) are sorted in the first walk and replayed in the second. */
#include "pbconv.h"
#include "pbdec.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/ir_internal.h"
#include "../ir/util.h"

/* Program > Block > Var > VarType > LoDTensorDesc > TensorDesc is the
 * deepest nesting of the schema (Op > Attr > Scalar > Complex is as deep). */
enum { MAX_NEST = 8 };

typedef struct {
    bool writing;
    uint8_t *out;               /* writing: the next byte */
    size_t count;               /* sizing: bytes of the open message so far */
    size_t *sizes;              /* each message's size, in the order they start */
    size_t n_sizes, cap_sizes, next_size;
    size_t saved_count[MAX_NEST], saved_index[MAX_NEST];
    int depth;
    const void **order;         /* sorted sequences, in the order they are made */
    size_t n_order, cap_order, next_order;
} enc;

static void put_varint(enc *e, uint64_t v)
{
    if (!e->writing) {
        e->count += pb_varint_len(v);
        return;
    }
    uint8_t *o = e->out;
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    e->out = o;
}

static void put_raw(enc *e, const void *p, size_t n)
{
    if (!e->writing) {
        e->count += n;
        return;
    }
    if (n)
        memcpy(e->out, p, n);
    e->out += n;
}

static void put_key(enc *e, unsigned field, unsigned wt)
{
    put_varint(e, ((uint64_t)field << 3) | wt);
}

static void field_varint(enc *e, unsigned field, uint64_t v)
{
    put_key(e, field, WT_VARINT);
    put_varint(e, v);
}

/* int32 and enum: a negative value is sign-extended to ten bytes. */
static void field_int32(enc *e, unsigned field, int32_t v)
{
    field_varint(e, field, (uint64_t)(int64_t)v);
}

static void field_bool(enc *e, unsigned field, bool v)
{
    field_varint(e, field, v ? 1 : 0);
}

static void field_float(enc *e, unsigned field, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
                     (uint8_t)(bits >> 24)};
    put_key(e, field, WT_32BIT);
    put_raw(e, le, 4);
}

static void field_double(enc *e, unsigned field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    put_key(e, field, WT_64BIT);
    put_raw(e, le, 8);
}

static void field_bytes(enc *e, unsigned field, const void *p, size_t n)
{
    put_key(e, field, WT_LEN);
    put_varint(e, n);
    put_raw(e, p, n);
}

/* A C string, as protobuf-c packs one: NULL as empty. */
static void field_str(enc *e, unsigned field, const char *s)
{
    field_bytes(e, field, s, s ? strlen(s) : 0);
}

/* An ir_bytes string: protobuf-c sees it as a C string, so it ends at the
 * first NUL. */
static void field_irstr(enc *e, unsigned field, ir_bytes s)
{
    field_bytes(e, field, s.data, s.data ? strnlen((const char *)s.data, s.len) : 0);
}

static void put_unknown(enc *e, ir_bytes b)
{
    put_raw(e, b.data, b.len);
}

static void msg_begin(enc *e, unsigned field)
{
    if (e->writing) {
        put_key(e, field, WT_LEN);
        put_varint(e, e->sizes[e->next_size++]);
        return;
    }
    if (e->n_sizes == e->cap_sizes) {
        e->cap_sizes = e->cap_sizes ? 2 * e->cap_sizes : 1024;
        e->sizes = xrealloc_n(e->sizes, e->cap_sizes, sizeof *e->sizes);
    }
    e->saved_count[e->depth] = e->count;
    e->saved_index[e->depth] = e->n_sizes++;
    e->depth++;
    e->count = 0;
}

static void msg_end(enc *e, unsigned field)
{
    if (e->writing)
        return;
    e->depth--;
    size_t size = e->count;
    e->sizes[e->saved_index[e->depth]] = size;
    e->count = e->saved_count[e->depth] + pb_varint_len((uint64_t)field << 3) +
               pb_varint_len(size) + size;
}

/* A sub-message the IR keeps as wire bytes (protobuf-c's own packing of it,
 * made when it was read, so packing it again gives the same bytes). */
static void field_raw_msg(enc *e, unsigned field, ir_bytes b)
{
    field_bytes(e, field, b.data, b.len);
}

/* ---- sorted orders ----------------------------------------------------- */

static void order_push(enc *e, const void *item)
{
    if (e->n_order == e->cap_order) {
        e->cap_order = e->cap_order ? 2 * e->cap_order : 1024;
        e->order = xrealloc_n(e->order, e->cap_order, sizeof *e->order);
    }
    e->order[e->n_order++] = item;
}

/* Sizing: appends pointers to items[0..n) sorted by cmp and returns where
 * they start; writing: returns where the same sequence starts.  Read them
 * back as e->order[start + i] (the array may move while they are encoded).
 * qsort sees the same pointers in the same order with the same comparison
 * as it did on the protobuf-c messages, so ties come out as they did there. */
static size_t sorted(enc *e, const void *items, size_t elem, size_t n,
                     int (*cmp)(const void *, const void *))
{
    if (e->writing) {
        size_t start = e->next_order;
        e->next_order += n;
        return start;
    }
    size_t start = e->n_order;
    for (size_t i = 0; i < n; i++)
        order_push(e, (const char *)items + i * elem);
    qsort(e->order + start, n, sizeof *e->order, cmp);
    return start;
}

static int cmp_slot(const void *x, const void *y)
{
    return strcmp((*(const ir_slot *const *)x)->name, (*(const ir_slot *const *)y)->name);
}

static int cmp_attr(const void *x, const void *y)
{
    return strcmp((*(const ir_attr *const *)x)->name, (*(const ir_attr *const *)y)->name);
}

static int cmp_var(const void *x, const void *y)
{
    return strcmp((*(const ir_var *const *)x)->name, (*(const ir_var *const *)y)->name);
}

/* ---- attrs -------------------------------------------------------------- */

static void scalar_msg(enc *e, unsigned field, const ir_scalar *s)
{
    msg_begin(e, field);
    field_int32(e, 1, s->type);
    if (s->has_b)
        field_bool(e, 2, s->b);
    if (s->has_i)
        field_varint(e, 3, (uint64_t)s->i);
    if (s->has_r)
        field_double(e, 4, s->r);
    if (s->has_c) {
        msg_begin(e, 5);
        field_double(e, 1, s->c_r);
        field_double(e, 2, s->c_i);
        msg_end(e, 5);
    }
    put_unknown(e, s->unknown);
    msg_end(e, field);
}

static void ints_field(enc *e, unsigned field, const int32_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_int32(e, field, v[i]);
}

static void floats_field(enc *e, const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_float(e, 7, v[i]);
}

static void strings_field(enc *e, const ir_bytes *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_irstr(e, 8, v[i]);
}

static void bools_field(enc *e, const bool *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_bool(e, 11, v[i]);
}

static void longs_field(enc *e, unsigned field, const int64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_varint(e, field, (uint64_t)v[i]);
}

static void float64s_field(enc *e, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_double(e, 16, v[i]);
}

static void names_field(enc *e, unsigned field, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        field_str(e, field, v[i]);
}

static void scalars_field(enc *e, const ir_scalar *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        scalar_msg(e, 21, &v[i]);
}

/* An OpDesc.Attr with whatever the file held (ir_attr_full). */
static void attr_full_body(enc *e, const ir_attr_full *a)
{
    field_str(e, 1, a->name);
    field_int32(e, 2, (int32_t)a->type);
    if (a->has_i) field_int32(e, 3, a->i);
    if (a->has_f) field_float(e, 4, a->f);
    if (a->has_s) field_irstr(e, 5, a->s);
    ints_field(e, 6, a->ints, a->n_ints);
    floats_field(e, a->floats, a->n_floats);
    strings_field(e, a->strings, a->n_strings);
    if (a->has_b) field_bool(e, 10, a->b);
    bools_field(e, a->bools, a->n_bools);
    if (a->has_block_idx) field_int32(e, 12, a->block_idx);
    if (a->has_l) field_varint(e, 13, (uint64_t)a->l);
    ints_field(e, 14, a->blocks_idx, a->n_blocks_idx);
    longs_field(e, 15, a->longs, a->n_longs);
    float64s_field(e, a->float64s, a->n_float64s);
    if (a->has_var_name) field_str(e, 17, a->var_name);
    names_field(e, 18, a->vars_name, a->n_vars_name);
    if (a->has_float64) field_double(e, 19, a->float64);
    if (a->has_scalar) scalar_msg(e, 20, &a->scalar);
    scalars_field(e, a->scalars, a->n_scalars);
    put_unknown(e, a->unknown);
}

/* The usual attr: only the value of its own type (what attr_full_body
 * writes for its widened form, without building that form). */
static void attr_compact_body(enc *e, const ir_attr *a)
{
    field_str(e, 1, a->name);
    field_int32(e, 2, (int32_t)a->type);
    switch (a->type) {
    case IR_ATTR_INT: if (a->has_i) field_int32(e, 3, a->i); break;
    case IR_ATTR_FLOAT: if (a->has_f) field_float(e, 4, a->f); break;
    case IR_ATTR_STRING: if (a->has_s) field_irstr(e, 5, a->s); break;
    case IR_ATTR_INTS: ints_field(e, 6, a->ints, a->n_ints); break;
    case IR_ATTR_FLOATS: floats_field(e, a->floats, a->n_floats); break;
    case IR_ATTR_STRINGS: strings_field(e, a->strings, a->n_strings); break;
    case IR_ATTR_BOOLEAN: if (a->has_b) field_bool(e, 10, a->b); break;
    case IR_ATTR_BOOLEANS: bools_field(e, a->bools, a->n_bools); break;
    case IR_ATTR_BLOCK: if (a->has_block_idx) field_int32(e, 12, a->block_idx); break;
    case IR_ATTR_LONG: if (a->has_l) field_varint(e, 13, (uint64_t)a->l); break;
    case IR_ATTR_BLOCKS: ints_field(e, 14, a->blocks_idx, a->n_blocks_idx); break;
    case IR_ATTR_LONGS: longs_field(e, 15, a->longs, a->n_longs); break;
    case IR_ATTR_FLOAT64S: float64s_field(e, a->float64s, a->n_float64s); break;
    case IR_ATTR_VAR: if (a->has_var_name) field_str(e, 17, a->var_name); break;
    case IR_ATTR_VARS: names_field(e, 18, a->vars_name, a->n_vars_name); break;
    case IR_ATTR_FLOAT64: if (a->has_float64) field_double(e, 19, a->float64); break;
    case IR_ATTR_SCALAR: if (a->has_scalar) scalar_msg(e, 20, a->scalar); break;
    case IR_ATTR_SCALARS: scalars_field(e, a->scalars, a->n_scalars); break;
    }
}

static void attr_msg(enc *e, const ir_attr *a)
{
    msg_begin(e, 4);
    if (a->more) {
        ir_attr_full full;
        ir_attr_widen(a, &full);
        attr_full_body(e, &full);
    } else {
        attr_compact_body(e, a);
    }
    msg_end(e, 4);
}

/* ---- ops ---------------------------------------------------------------- */

static void slot_msg(enc *e, unsigned field, const ir_slot *s)
{
    msg_begin(e, field);
    field_str(e, 1, s->name);
    names_field(e, 2, s->args, s->n_args);
    put_unknown(e, s->unknown);
    msg_end(e, field);
}

static void slots(enc *e, unsigned field, const ir_slot *s, size_t n, bool sort)
{
    if (!sort || n < 2) {
        for (size_t i = 0; i < n; i++)
            slot_msg(e, field, &s[i]);
        return;
    }
    size_t start = sorted(e, s, sizeof *s, n, cmp_slot);
    for (size_t i = 0; i < n; i++)
        slot_msg(e, field, e->order[start + i]);
}

static void op_msg(enc *e, const ir_op *op)
{
    /* A clean op read from a file: its bytes are what the rest of this
     * function would write (pbdec_canon.c checked them when read). */
    if (!op->dirty && op->wire.data) {
        field_bytes(e, 4, op->wire.data, op->wire.len);
        return;
    }
    const ir_attr *attrs = ir_op_attrs(op);
    msg_begin(e, 4);
    slots(e, 1, op->inputs, op->n_inputs, op->dirty);
    slots(e, 2, op->outputs, op->n_outputs, op->dirty);
    field_str(e, 3, op->type);
    if (op->dirty && op->n_attrs > 1) {
        size_t start = sorted(e, attrs, sizeof *attrs, op->n_attrs, cmp_attr);
        for (size_t i = 0; i < op->n_attrs; i++)
            attr_msg(e, e->order[start + i]);
    } else {
        for (size_t i = 0; i < op->n_attrs; i++)
            attr_msg(e, &attrs[i]);
    }
    if (op->has_is_target)
        field_bool(e, 5, op->is_target);
    put_unknown(e, op->unknown);
    msg_end(e, 4);
}

/* ---- vars --------------------------------------------------------------- */

static void tensor_msg(enc *e, unsigned field, const ir_var *v)
{
    msg_begin(e, field);
    field_int32(e, 1, v->dtype);
    longs_field(e, 2, v->dims, v->n_dims);
    put_unknown(e, ir_var_rare_of(v)->tensor_unknown);
    msg_end(e, field);
}

static void lod_msg(enc *e, unsigned field, const ir_var *v)
{
    msg_begin(e, field);
    tensor_msg(e, 1, v);
    if (v->has_lod_level)
        field_int32(e, 2, v->lod_level);
    put_unknown(e, ir_var_rare_of(v)->lod_unknown);
    msg_end(e, field);
}

/* VarType field number of each ir_tensor_slot (0: none). */
static const unsigned tensor_field[] = {
    [IR_TD_NONE] = 0, [IR_TD_SELECTED_ROWS] = 2, [IR_TD_LOD_TENSOR] = 3,
    [IR_TD_TENSOR_ARRAY] = 4, [IR_TD_STRING] = 8, [IR_TD_STRINGS] = 9,
    [IR_TD_VOCAB] = 10, [IR_TD_SPARSE_COO] = 11, [IR_TD_SPARSE_CSR] = 12,
};

static void vartype_msg(enc *e, const ir_var *v)
{
    msg_begin(e, 2);
    field_int32(e, 1, v->type);
    unsigned tf = (unsigned)v->tensor_slot < sizeof tensor_field / sizeof *tensor_field
                      ? tensor_field[v->tensor_slot] : 0;
    if (tf == 2 || tf == 3 || tf == 4) {   /* the fields below 5 (reader) */
        if (tf == 2)
            tensor_msg(e, 2, v);
        else
            lod_msg(e, tf, v);
    }
    if (ir_var_rare_of(v)->has_reader)
        field_raw_msg(e, 5, ir_var_rare_of(v)->reader_raw);
    if (ir_var_rare_of(v)->has_tuple)
        field_raw_msg(e, 7, ir_var_rare_of(v)->tuple_raw);
    if (tf >= 8)
        tensor_msg(e, tf, v);
    put_unknown(e, ir_var_rare_of(v)->type_unknown);
    msg_end(e, 2);
}

static void var_attr_msg(enc *e, const ir_attr *compact)
{
    ir_attr_full a;
    ir_attr_widen(compact, &a);
    msg_begin(e, 7);
    field_str(e, 1, a.name);
    field_int32(e, 2, (int32_t)a.type);
    if (a.has_i)
        field_int32(e, 3, a.i);
    if (a.has_s)
        field_irstr(e, 4, a.s);
    ints_field(e, 5, a.ints, a.n_ints);
    put_unknown(e, a.unknown);
    msg_end(e, 7);
}

static void var_msg(enc *e, const ir_var *v)
{
    msg_begin(e, 3);
    field_str(e, 1, v->name);
    vartype_msg(e, v);
    if (v->has_persistable) field_bool(e, 3, v->persistable);
    if (v->has_need_check_feed) field_bool(e, 4, v->need_check_feed);
    if (v->has_is_parameter) field_bool(e, 5, v->is_parameter);
    if (v->has_stop_gradient) field_bool(e, 6, v->stop_gradient);
    const ir_var_rare *r = ir_var_rare_of(v);
    for (size_t i = 0; i < r->n_var_attrs; i++)
        var_attr_msg(e, &r->var_attrs[i]);
    put_unknown(e, r->unknown);
    msg_end(e, 3);
}

/* Vars read from the input in their order, then the added ones sorted by
 * name (BlockDesc::Flush); removed ones are skipped. */
static void block_vars(enc *e, const ir_block *b)
{
    size_t n_added = 0;
    for (size_t i = 0; i < b->n_vars; i++) {
        const ir_var *v = b->vars[i];
        if (v->removed)
            continue;
        if (v->from_input)
            var_msg(e, v);
        else
            n_added++;
    }
    if (!n_added)
        return;
    size_t start;
    if (e->writing) {
        start = e->next_order;
        e->next_order += n_added;
    } else {
        start = e->n_order;
        for (size_t i = 0; i < b->n_vars; i++)
            if (!b->vars[i]->removed && !b->vars[i]->from_input)
                order_push(e, b->vars[i]);
        qsort(e->order + start, n_added, sizeof *e->order, cmp_var);
    }
    for (size_t i = 0; i < n_added; i++)
        var_msg(e, e->order[start + i]);
}

static void block_msg(enc *e, const ir_block *b)
{
    msg_begin(e, 1);
    field_int32(e, 1, b->idx);
    field_int32(e, 2, b->parent_idx);
    block_vars(e, b);
    for (size_t i = 0; i < b->n_ops; i++)
        op_msg(e, b->ops[i]);
    if (b->has_forward_block_idx)
        field_int32(e, 5, b->forward_block_idx);
    put_unknown(e, b->unknown);
    msg_end(e, 1);
}

static void program_body(enc *e, const ir_program *p)
{
    for (size_t i = 0; i < p->n_blocks; i++)
        block_msg(e, p->blocks[i]);
    if (p->has_version) {
        msg_begin(e, 4);
        if (p->version_has_value)
            field_varint(e, 1, (uint64_t)p->version);
        put_unknown(e, p->version_unknown);
        msg_end(e, 4);
    }
    if (p->has_op_version_map)
        field_raw_msg(e, 5, p->op_version_map);
    put_unknown(e, p->unknown);
}

uint8_t *pbconv_encode(const ir_program *p, size_t *len)
{
    enc e = {0};
    program_body(&e, p);
    size_t total = e.count;
    uint8_t *buf = xmalloc(total + 1);
    e.writing = true;
    e.out = buf;
    program_body(&e, p);
    if ((size_t)(e.out - buf) != total || e.next_size != e.n_sizes ||
        e.next_order != e.n_order)
        abort();   /* the two walks disagree: a bug here, never the input */
    free(e.sizes);
    free(e.order);
    *len = total;
    return buf;
}
