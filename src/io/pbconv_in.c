/* pbconv_in.c - protobuf-c messages to the IR (see pbconv.h). */
#include "pbconv.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/ir_codec.h"
#include "../ir/util.h"

/* ---- reading ---------------------------------------------------------- */

static ir_bytes str_bytes(ir_arena *a, const char *s)
{
    ir_bytes r = {NULL, 0};
    if (!s)
        return r;
    r.len = strlen(s);
    r.data = ir_arena_dup(a, s, r.len);
    return r;
}

static void scalar_in(ir_arena *a, ir_scalar *d, const PbScalar *s)
{
    d->type = s->type;
    d->has_b = s->has_b; d->b = s->b;
    d->has_i = s->has_i; d->i = s->i;
    d->has_r = s->has_r; d->r = s->r;
    if (s->c) {
        d->has_c = true;
        d->c_r = s->c->r;
        d->c_i = s->c->i;
    }
    d->unknown = pbconv_unknown_to_bytes(a, &s->base);
}

#define DUPN(dst, src, n) ((n) ? ir_arena_dup(a, (src), (n) * sizeof *(src)) : NULL)

static void attr_in_full(ir_arena *a, ir_attr_full *d, const PbAttr *s)
{
    d->name = ir_intern(s->name);
    d->type = (ir_attr_type)s->type;
    d->has_i = s->has_i; d->i = s->i;
    d->has_f = s->has_f; d->f = s->f;
    if (s->s) { d->has_s = true; d->s = str_bytes(a, s->s); }
    d->has_b = s->has_b; d->b = s->b;
    d->has_block_idx = s->has_block_idx; d->block_idx = s->block_idx;
    d->has_l = s->has_l; d->l = s->l;
    if (s->var_name) { d->has_var_name = true; d->var_name = ir_intern(s->var_name); }
    d->has_float64 = s->has_float64; d->float64 = s->float64;
    if (s->scalar) { d->has_scalar = true; scalar_in(a, &d->scalar, s->scalar); }
    d->n_ints = s->n_ints; d->ints = DUPN(d->ints, s->ints, s->n_ints);
    d->n_floats = s->n_floats; d->floats = DUPN(d->floats, s->floats, s->n_floats);
    d->n_blocks_idx = s->n_blocks_idx;
    d->blocks_idx = DUPN(d->blocks_idx, s->blocks_idx, s->n_blocks_idx);
    d->n_longs = s->n_longs; d->longs = DUPN(d->longs, s->longs, s->n_longs);
    d->n_float64s = s->n_float64s;
    d->float64s = DUPN(d->float64s, s->float64s, s->n_float64s);
    d->n_bools = s->n_bools;
    if (s->n_bools) {
        d->bools = ir_arena_alloc(a, s->n_bools * sizeof *d->bools);
        for (size_t i = 0; i < s->n_bools; i++)
            d->bools[i] = s->bools[i] != 0;
    }
    d->n_strings = s->n_strings;
    if (s->n_strings) {
        d->strings = ir_arena_alloc(a, s->n_strings * sizeof *d->strings);
        for (size_t i = 0; i < s->n_strings; i++)
            d->strings[i] = str_bytes(a, s->strings[i]);
    }
    d->n_vars_name = s->n_vars_name;
    if (s->n_vars_name) {
        d->vars_name = ir_arena_alloc(a, s->n_vars_name * sizeof *d->vars_name);
        for (size_t i = 0; i < s->n_vars_name; i++)
            d->vars_name[i] = ir_intern(s->vars_name[i]);
    }
    d->n_scalars = s->n_scalars;
    if (s->n_scalars) {
        d->scalars = ir_arena_alloc(a, s->n_scalars * sizeof *d->scalars);
        for (size_t i = 0; i < s->n_scalars; i++)
            scalar_in(a, &d->scalars[i], s->scalars[i]);
    }
    d->unknown = pbconv_unknown_to_bytes(a, &s->base);
}

static void attr_in(ir_arena *a, ir_attr *d, const PbAttr *s)
{
    ir_attr_full full = {0};
    attr_in_full(a, &full, s);
    ir_attr_compact(a, d, &full);
}

static void slots_in(ir_op *op, bool is_out, PbSlot *const *src, size_t count)
{
    ir_arena *a = ir_op_arena(op);
    ir_slot **out = is_out ? &op->outputs_ : &op->inputs_;
    uint32_t *n = is_out ? &op->n_outputs : &op->n_inputs;
    uint32_t *cap = is_out ? &op->cap_outputs : &op->cap_inputs;
    *n = *cap = ir_count32(count);  /* protobuf-c holds fewer than 4G */
    *out = count ? ir_arena_alloc(a, count * sizeof **out) : NULL;
    for (size_t i = 0; i < count; i++) {
        ir_slot *d = &(*out)[i];
        d->name = ir_intern(src[i]->parameter);
        d->n_args = d->cap_args = ir_count32(src[i]->n_arguments);
        d->args = d->n_args ? ir_arena_alloc(a, d->n_args * sizeof *d->args) : NULL;
        for (size_t k = 0; k < d->n_args; k++)
            d->args[k] = ir_intern(src[i]->arguments[k]);
        ir_op_set_slot_unknown(op, is_out, i, pbconv_unknown_to_bytes(a, &src[i]->base));
    }
}

static ir_op *op_in(ir_program *p, const PbOp *s)
{
    ir_arena *a = p->arena;
    ir_op *op = ir_op_new_bare(p, s->type);
    op->enc_dirty_ = false;
    slots_in(op, false, s->inputs, s->n_inputs);
    slots_in(op, true, s->outputs, s->n_outputs);
    op->n_attrs = op->cap_attrs = ir_count32(s->n_attrs);
    op->attrs = s->n_attrs ? ir_arena_alloc(a, s->n_attrs * sizeof *op->attrs) : NULL;
    for (size_t i = 0; i < s->n_attrs; i++)
        attr_in(a, &op->attrs[i], s->attrs[i]);
    op->has_is_target = s->has_is_target;
    op->is_target = s->is_target;
    ir_op_set_unknown(op, pbconv_unknown_to_bytes(a, &s->base));
    return op;
}

static ir_bytes pack_sub(ir_arena *a, const ProtobufCMessage *m)
{
    ir_bytes r = {NULL, 0};
    r.len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = ir_arena_alloc(a, r.len + 1);
    protobuf_c_message_pack(m, buf);
    r.data = buf;
    return r;
}

static void tensor_in(ir_arena *a, ir_var *v, ir_var_rare *r, const PbTensor *t,
                      ir_tensor_slot slot)
{
    v->tensor_slot = slot;
    v->dtype = t->data_type;
    v->n_dims = (uint32_t)t->n_dims;  /* protobuf-c holds fewer than 4G */
    v->dims = DUPN(v->dims, t->dims, t->n_dims);
    r->tensor_unknown = pbconv_unknown_to_bytes(a, &t->base);
}

static void vartype_in(ir_arena *a, ir_var *v, ir_var_rare *r, const PbVarType *t)
{
    v->type = t->type;
    const PbLod *lod = NULL;
    if (t->lod_tensor) {
        lod = t->lod_tensor;
        tensor_in(a, v, r, lod->tensor, IR_TD_LOD_TENSOR);
    } else if (t->tensor_array) {
        lod = (const PbLod *)(const void *)t->tensor_array;
        tensor_in(a, v, r, lod->tensor, IR_TD_TENSOR_ARRAY);
    } else if (t->selected_rows) {
        tensor_in(a, v, r, t->selected_rows, IR_TD_SELECTED_ROWS);
    } else if (t->string) {
        tensor_in(a, v, r, t->string, IR_TD_STRING);
    } else if (t->strings) {
        tensor_in(a, v, r, t->strings, IR_TD_STRINGS);
    } else if (t->vocab) {
        tensor_in(a, v, r, t->vocab, IR_TD_VOCAB);
    } else if (t->sparse_coo) {
        tensor_in(a, v, r, t->sparse_coo, IR_TD_SPARSE_COO);
    } else if (t->sparse_csr) {
        tensor_in(a, v, r, t->sparse_csr, IR_TD_SPARSE_CSR);
    }
    if (lod) {
        v->has_lod_level = lod->has_lod_level;
        v->lod_level = lod->lod_level;
        r->lod_unknown = pbconv_unknown_to_bytes(a, &lod->base);
    }
    if (t->reader) {
        r->has_reader = true;
        r->reader_raw = pack_sub(a, &t->reader->base);
    }
    if (t->tuple) {
        r->has_tuple = true;
        r->tuple_raw = pack_sub(a, &t->tuple->base);
    }
    r->type_unknown = pbconv_unknown_to_bytes(a, &t->base);
}

static void var_in(ir_block *b, const PbVar *s)
{
    ir_arena *a = b->program->arena;
    ir_var *v = ir_block_add_var_raw(b, s->name);
    ir_var_rare r = {0};
    v->from_input = true;
    vartype_in(a, v, &r, s->type);
    v->has_persistable = s->has_persistable; v->persistable = s->persistable;
    v->has_need_check_feed = s->has_need_check_feed; v->need_check_feed = s->need_check_feed;
    v->has_is_parameter = s->has_is_parameter; v->is_parameter = s->is_parameter;
    v->has_stop_gradient = s->has_stop_gradient; v->stop_gradient = s->stop_gradient;
    r.n_var_attrs = s->n_attrs;
    r.var_attrs = s->n_attrs ? ir_arena_alloc(a, s->n_attrs * sizeof *r.var_attrs) : NULL;
    for (size_t i = 0; i < s->n_attrs; i++) {
        const PbVarAttr *sa = s->attrs[i];
        ir_attr_full full = {0}, *d = &full;
        d->name = ir_intern(sa->name);
        d->type = (ir_attr_type)sa->type;
        d->has_i = sa->has_i; d->i = sa->i;
        if (sa->s) { d->has_s = true; d->s = str_bytes(a, sa->s); }
        d->n_ints = sa->n_ints; d->ints = DUPN(d->ints, sa->ints, sa->n_ints);
        d->unknown = pbconv_unknown_to_bytes(a, &sa->base);
        ir_attr_compact(a, &r.var_attrs[i], &full);
    }
    r.unknown = pbconv_unknown_to_bytes(a, &s->base);
    ir_var_set_rare(a, v, &r);
}

ir_program *pbconv_to_ir(const PbProgram *msg)
{
    ir_program *p = ir_program_new();
    ir_arena *a = p->arena;
    for (size_t i = 0; i < msg->n_blocks; i++) {
        const PbBlock *sb = msg->blocks[i];
        ir_block *b = ir_program_add_block(p, sb->parent_idx);
        b->idx = sb->idx;
        b->has_forward_block_idx = sb->has_forward_block_idx;
        b->forward_block_idx = sb->forward_block_idx;
        ir_block_reserve_vars(b, sb->n_vars);
        for (size_t k = 0; k < sb->n_vars; k++)
            var_in(b, sb->vars[k]);
        ir_op **ops = sb->n_ops ? xmalloc(sb->n_ops * sizeof *ops) : NULL;
        for (size_t k = 0; k < sb->n_ops; k++)
            ops[k] = op_in(p, sb->ops[k]);
        ir_block_set_ops(b, ops, sb->n_ops);
        free(ops);
        b->unknown = pbconv_unknown_to_bytes(a, &sb->base);
    }
    if (msg->version) {
        p->has_version = true;
        p->version_has_value = msg->version->has_version;
        p->version = msg->version->version;
        p->version_unknown = pbconv_unknown_to_bytes(a, &msg->version->base);
    }
    if (msg->op_version_map) {
        p->has_op_version_map = true;
        p->op_version_map = pack_sub(a, &msg->op_version_map->base);
    }
    p->unknown = pbconv_unknown_to_bytes(a, &msg->base);
    return p;
}
