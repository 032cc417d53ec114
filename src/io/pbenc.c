/* pbenc.c - the IR straight to ProgramDesc wire bytes (issue 14 point 3).
 *
 * The bytes are exactly what protobuf_c_message_pack writes for the message
 * pbconv_from_ir builds: fields in field-number order (protoc-c sorts the
 * descriptor's fields so), repeated fields unpacked (proto2), strings up to
 * their first NUL (protobuf-c packs strlen), a negative int32 or enum as ten
 * bytes, a message's unknown fields after its known ones.  The test
 * tests/unit/test_pbenc.c holds it to that on every golden and real program.
 *
 * Two walks over the IR in the same order: the first counts sizes, the
 * second writes.  A message that holds others (block, var, op) has its size
 * recorded by the first walk in a uint32 array indexed in the order the
 * messages start (counted before it is allocated); a leaf message (slot,
 * attr, VarType and what it holds) is small and has its size counted again
 * just before it is written, which keeps the array to a few entries per op
 * instead of one per slot and attr.  A block's added vars are sorted in
 * the first walk and the order replayed in the second; a dirty op's slots
 * and attrs (a few each) are sorted again in each walk, so nothing per op
 * is kept between the walks (pbenc_out.h `sorted`).
 *
 * The second walk writes into a buffer: the whole output (pbconv_encode),
 * or a chunk handed to a sink each time it fills (pbconv_encode_to), so a
 * file is written without its bytes ever being whole in memory. */
#include "pbconv.h"
#include "pbdec.h"
#include "pbenc_out.h"
#include "pdio.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/ir_codec.h"
#include "../ir/util.h"

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

static void complex_body(enc *e, const void *item)
{
    const ir_scalar *s = item;
    field_double(e, 1, s->c_r);
    field_double(e, 2, s->c_i);
}

static void scalar_body(enc *e, const void *item)
{
    const ir_scalar *s = item;
    field_int32(e, 1, s->type);
    if (s->has_b)
        field_bool(e, 2, s->b);
    if (s->has_i)
        field_varint(e, 3, (uint64_t)s->i);
    if (s->has_r)
        field_double(e, 4, s->r);
    if (s->has_c)
        leaf_msg(e, 5, complex_body, s);
    put_unknown(e, s->unknown);
}

static void scalar_msg(enc *e, unsigned field, const ir_scalar *s)
{
    leaf_msg(e, field, scalar_body, s);
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

static void attr_body(enc *e, const void *item)
{
    const ir_attr *a = item;
    if (a->more) {
        ir_attr_full full;
        ir_attr_widen(a, &full);
        attr_full_body(e, &full);
    } else {
        attr_compact_body(e, a);
    }
}

static void attr_msg(enc *e, const ir_attr *a)
{
    leaf_msg(e, 4, attr_body, a);
}

/* ---- ops ---------------------------------------------------------------- */

static void slot_body(enc *e, const void *item)
{
    const ir_slot *s = item;
    field_str(e, 1, s->name);
    names_field(e, 2, s->args, s->n_args);
    /* a slot's unknown fields are its op's, by the slot's place (slots) */
    put_unknown(e, ir_slot_unknown(e->slot_op, e->slot_out, (size_t)(s - e->slot_base)));
}

static void slot_msg(enc *e, unsigned field, const ir_slot *s)
{
    leaf_msg(e, field, slot_body, s);
}

static void slots(enc *e, unsigned field, const ir_op *op, bool out)
{
    const ir_slot *s = out ? ir_op_outs(op) : ir_op_ins(op);
    size_t n = out ? op->n_outputs : op->n_inputs;
    bool sort = op->enc_dirty_;
    e->slot_op = op;
    e->slot_out = out;
    e->slot_base = s;
    if (!sort || n < 2) {
        for (size_t i = 0; i < n; i++)
            slot_msg(e, field, &s[i]);
        return;
    }
    const void *stackbuf[SORT_STACK];
    const void **by = n <= SORT_STACK ? stackbuf : xmalloc_n(n, sizeof *by);
    const void **order = sorted(s, sizeof *s, n, cmp_slot, by);
    for (size_t i = 0; i < n; i++)
        slot_msg(e, field, order ? order[i] : &s[i]);
    if (by != stackbuf)
        free(by);
}

/* An interned name against a name in the bytes, in strcmp's order. */
static int cmp_name_bytes(const char *a, const pbd_field *b)
{
    return pbd_name_cmp(a, strlen(a), b->data, b->len);
}

static bool overlay_has(const ir_attr *over, size_t n, const pbd_field *name)
{
    for (size_t i = 0; i < n; i++)
        if (cmp_name_bytes(over[i].name, name) == 0)
            return true;
    return false;
}

/* The attrs of a dirty op that borrows another's kept attrs (attr.c),
 * sorted by name like any dirty op's: the kept ones the overlay does not
 * replace as the bytes they are (canonical: what attr_msg writes for them,
 * pbdec_canon.c), the overlay's from the IR.  The kept names are sorted
 * and distinct (a borrowed op's attrs_sorted), so merging in the sorted
 * overlay gives the order qsort would, and both walks redo it: nothing is
 * decoded, and nothing recorded in e->order. */
static void borrowed_attrs(enc *e, const ir_op *op)
{
    size_t n_over, next = 0;
    const ir_attr *over = ir_op_overlay(op, &n_over);
    const ir_attr *stackbuf[8];
    const ir_attr **by_name = n_over <= 8 ? stackbuf : xmalloc_n(n_over, sizeof *by_name);
    for (size_t i = 0; i < n_over; i++)
        by_name[i] = &over[i];
    qsort(by_name, n_over, sizeof *by_name, cmp_attr);
    pbd_msg m = {ir_enc(op)->wire, ir_enc(op)->wire + op->enc_wire_len_};
    pbd_field f, name;
    bool bad;
    while (pbd_next(&m, &f, &bad)) {
        pbd_msg am = {f.data, f.data + f.len};
        /* canonical: an attr's first field is its name */
        if (f.num != 4 || !pbd_next(&am, &name, &bad))
            continue;
        while (next < n_over && cmp_name_bytes(by_name[next]->name, &name) < 0)
            attr_msg(e, by_name[next++]);
        if (overlay_has(over, n_over, &name))
            continue;
        const ir_op_enc *oe = ir_enc(op);
        if (ir_enc_op(oe)->enc_role_set_ && cmp_name_bytes(oe->pending_role->name, &name) == 0)
            attr_msg(e, oe->pending_role);  /* set since: ir_codec.h's role_set */
        else
            field_bytes(e, 4, f.data, f.len);
    }
    while (next < n_over)
        attr_msg(e, by_name[next++]);
    if (by_name != stackbuf)
        free(by_name);
}

static void op_msg(enc *e, const ir_op *op)
{
    /* A clean op read from a file: its bytes are what the rest of this
     * function would write (pbdec_canon.c checked them when read). */
    const ir_op_enc *oe = ir_enc(op);
    if (!ir_enc_op(oe)->enc_dirty_ && oe->wire) {
        field_bytes(e, 4, oe->wire, ir_enc_op(oe)->enc_wire_len_);
        return;
    }
    msg_begin(e, 4);
    slots(e, 1, op, false);
    slots(e, 2, op, true);
    field_str(e, 3, op->type);
    const ir_attr *attrs = ir_enc_op(oe)->enc_attrs_pending_ ? NULL : ir_op_attrs(op);
    if (ir_enc_op(oe)->enc_attrs_pending_) {
        borrowed_attrs(e, op);  /* dirty and pending: a borrower */
    } else if (ir_enc_op(oe)->enc_dirty_ && op->n_attrs > 1) {
        size_t n = op->n_attrs;
        const void *stackbuf[SORT_STACK];
        const void **by = n <= SORT_STACK ? stackbuf : xmalloc_n(n, sizeof *by);
        const void **order = sorted(attrs, sizeof *attrs, n, cmp_attr, by);
        for (size_t i = 0; i < n; i++)
            attr_msg(e, order ? order[i] : &attrs[i]);
        if (by != stackbuf)
            free(by);
    } else {
        for (size_t i = 0; i < op->n_attrs; i++)
            attr_msg(e, &attrs[i]);
    }
    if (op->has_is_target)
        field_bool(e, 5, op->is_target);
    put_unknown(e, ir_op_unknown(op));
    msg_end(e, 4);
}

/* ---- vars --------------------------------------------------------------- */

static void tensor_body(enc *e, const void *item)
{
    const ir_var *v = item;
    field_int32(e, 1, v->dtype);
    longs_field(e, 2, v->dims, v->n_dims);
    put_unknown(e, ir_var_rare_of(v)->tensor_unknown);
}

static void lod_body(enc *e, const void *item)
{
    const ir_var *v = item;
    leaf_msg(e, 1, tensor_body, v);
    if (v->has_lod_level)
        field_int32(e, 2, v->lod_level);
    put_unknown(e, ir_var_rare_of(v)->lod_unknown);
}

/* VarType field number of each ir_tensor_slot (0: none). */
static const unsigned tensor_field[] = {
    [IR_TD_NONE] = 0, [IR_TD_SELECTED_ROWS] = 2, [IR_TD_LOD_TENSOR] = 3,
    [IR_TD_TENSOR_ARRAY] = 4, [IR_TD_STRING] = 8, [IR_TD_STRINGS] = 9,
    [IR_TD_VOCAB] = 10, [IR_TD_SPARSE_COO] = 11, [IR_TD_SPARSE_CSR] = 12,
};

static void vartype_body(enc *e, const void *item)
{
    const ir_var *v = item;
    field_int32(e, 1, v->type);
    unsigned tf = (unsigned)v->tensor_slot < sizeof tensor_field / sizeof *tensor_field
                      ? tensor_field[v->tensor_slot] : 0;
    if (tf == 2 || tf == 3 || tf == 4)   /* the fields below 5 (reader) */
        leaf_msg(e, tf, tf == 2 ? tensor_body : lod_body, v);
    const ir_var_rare *r = ir_var_rare_of(v);
    if (r->has_reader)
        field_raw_msg(e, 5, r->reader_raw);
    if (r->has_tuple)
        field_raw_msg(e, 7, r->tuple_raw);
    if (tf >= 8)
        leaf_msg(e, tf, tensor_body, v);
    put_unknown(e, r->type_unknown);
}

static void var_attr_body(enc *e, const void *item)
{
    ir_attr_full a;
    ir_attr_widen(item, &a);
    field_str(e, 1, a.name);
    field_int32(e, 2, (int32_t)a.type);
    if (a.has_i)
        field_int32(e, 3, a.i);
    if (a.has_s)
        field_irstr(e, 4, a.s);
    ints_field(e, 5, a.ints, a.n_ints);
    put_unknown(e, a.unknown);
}

static void var_msg(enc *e, const ir_var *v)
{
    msg_begin(e, 3);
    field_str(e, 1, v->name);
    leaf_msg(e, 2, vartype_body, v);
    if (v->has_persistable) field_bool(e, 3, v->persistable);
    if (v->has_need_check_feed) field_bool(e, 4, v->need_check_feed);
    if (v->has_is_parameter) field_bool(e, 5, v->is_parameter);
    if (v->has_stop_gradient) field_bool(e, 6, v->stop_gradient);
    const ir_var_rare *r = ir_var_rare_of(v);
    for (size_t i = 0; i < r->n_var_attrs; i++)
        leaf_msg(e, 7, var_attr_body, &r->var_attrs[i]);
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
    for (size_t i = 0; i < b->n_ops; i++) {
        op_msg(e, b->ops[i]);
        /* sizing a borrower reads its source's bytes (issue 33) */
        if (e->drop && !e->writing && ++e->n_swept % 16384 == 0)
            pdio_drop_input_pages(e->drop);
    }
    if (b->has_forward_block_idx)
        field_int32(e, 5, b->forward_block_idx);
    put_unknown(e, b->unknown);
    msg_end(e, 1);
}

static void version_body(enc *e, const void *item)
{
    const ir_program *p = item;
    if (p->version_has_value)
        field_varint(e, 1, (uint64_t)p->version);
    put_unknown(e, p->version_unknown);
}

static void program_body(enc *e, const ir_program *p)
{
    for (size_t i = 0; i < p->n_blocks; i++)
        block_msg(e, p->blocks[i]);
    if (p->has_version)
        leaf_msg(e, 4, version_body, p);
    if (p->has_op_version_map)
        field_raw_msg(e, 5, p->op_version_map);
    put_unknown(e, p->unknown);
}

/* How many recorded messages the first walk meets: a block, each var
 * written, each op not copied as its bytes. */
static size_t count_recorded(const ir_program *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_blocks; i++) {
        const ir_block *b = p->blocks[i];
        n++;
        for (size_t k = 0; k < b->n_vars; k++)
            n += !b->vars[k]->removed;
        for (size_t k = 0; k < b->n_ops; k++)
            n += b->ops[k]->enc_dirty_ || !ir_enc(b->ops[k])->wire;
    }
    return n;
}

/* The first walk: every recorded size and the total. */
static bool size_walk(enc *e, const ir_program *p, uint64_t *total)
{
    e->cap_sizes = count_recorded(p);
    e->sizes = xmalloc_n(e->cap_sizes ? e->cap_sizes : 1, sizeof *e->sizes);
    program_body(e, p);
    *total = e->count;
    return !e->too_large;
}

/* The second walk, into e->buf; false if the walks disagree. */
static bool write_walk(enc *e, const ir_program *p, uint64_t total)
{
    e->writing = true;
    e->out = e->buf;
    program_body(e, p);
    return e->handed + (uint64_t)(e->out - e->buf) == total && e->next_size == e->n_sizes &&
           e->next_order == e->n_order;
}

static void enc_free(enc *e)
{
    free(e->sizes);
    free(e->order);
}

uint8_t *pbconv_encode(const ir_program *p, size_t *len)
{
    enc e = {0};
    uint64_t total = 0;
    if (!size_walk(&e, p, &total) || total >= SIZE_MAX) {
        enc_free(&e);
        return NULL;
    }
    e.buf = xmalloc((size_t)total + 1);
    e.end = e.buf + total + 1;
    if (!write_walk(&e, p, total))
        abort();   /* the two walks disagree: a bug here, never the input */
    enc_free(&e);
    *len = (size_t)total;
    return e.buf;
}

static int encode_to(const ir_program *p, size_t chunk, pbconv_sink sink, void *arg,
                     uint64_t *len, bool drop)
{
    enc e = {0};
    e.drop = drop ? p : NULL;
    uint64_t total = 0;
    if (!size_walk(&e, p, &total)) {
        enc_free(&e);
        return PBCONV_TOO_LARGE;
    }
    chunk = chunk ? chunk : 1;
    e.buf = xmalloc(chunk);
    e.end = e.buf + chunk;
    e.sink = sink;
    e.sink_arg = arg;
    if (!write_walk(&e, p, total))
        abort();   /* the two walks disagree: a bug here, never the input */
    flush(&e);
    bool failed = e.sink_failed;
    free(e.buf);
    enc_free(&e);
    if (len)
        *len = total;
    return failed ? PBCONV_SINK_FAILED : 0;
}

int pbconv_encode_to(const ir_program *p, size_t chunk, pbconv_sink sink, void *arg,
                     uint64_t *len)
{
    return encode_to(p, chunk, sink, arg, len, false);
}

int pbconv_encode_sweep(const ir_program *p, size_t chunk, pbconv_sink sink, void *arg,
                        const ir_program *drop)
{
    return encode_to(p, chunk, sink, arg, NULL, drop == p);
}
