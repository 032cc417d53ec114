/* pbconv_out.c - the IR to protobuf-c messages, in Paddle's canonical
 * order (see pbconv.h and src/io/README.md). */
#include "pbconv.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/ir_codec.h"
#include "../ir/util.h"

/* ---- writing ---------------------------------------------------------- */


static void *alloc_msg(pbconv_out *out, size_t size, const void *init)
{
    void *m = ir_arena_alloc(out->scratch, size);
    memcpy(m, init, size);
    return m;
}

/* protobuf-c's default allocator, but counted and never failing (util.h);
 * what it allocates is still released with free(). */
static void *owned_alloc(void *data, size_t size)
{
    (void)data;
    return xmalloc(size);
}

static void owned_free(void *data, void *p)
{
    (void)data;
    free(p);
}

static ProtobufCMessage *unpack_owned(pbconv_out *out, const ProtobufCMessageDescriptor *d,
                                      ir_bytes b)
{
    ProtobufCAllocator alloc = {owned_alloc, owned_free, NULL};
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &alloc, b.len, b.data);
    if (!m)
        return NULL;
    if (out->n_owned == out->cap_owned) {
        out->cap_owned = out->cap_owned ? out->cap_owned * 2 : 8;
        out->owned = xrealloc(out->owned, out->cap_owned * sizeof *out->owned);
    }
    out->owned[out->n_owned++] = m;
    return m;
}

void pbconv_release(pbconv_out *out)
{
    for (size_t i = 0; i < out->n_owned; i++)
        protobuf_c_message_free_unpacked(out->owned[i], NULL);
    free(out->owned);
    out->owned = NULL;
    out->n_owned = out->cap_owned = 0;
}

static PbScalar *scalar_out(pbconv_out *out, const ir_scalar *s)
{
    static const PbScalar init = PADDLE__FRAMEWORK__PROTO__SCALAR__INIT;
    PbScalar *d = alloc_msg(out, sizeof *d, &init);
    d->type = (Paddle__Framework__Proto__Scalar__Type)s->type;
    d->has_b = s->has_b; d->b = s->b;
    d->has_i = s->has_i; d->i = s->i;
    d->has_r = s->has_r; d->r = s->r;
    if (s->has_c) {
        static const Paddle__Framework__Proto__Complex cinit = PADDLE__FRAMEWORK__PROTO__COMPLEX__INIT;
        d->c = alloc_msg(out, sizeof *d->c, &cinit);
        d->c->r = s->c_r;
        d->c->i = s->c_i;
    }
    pbconv_bytes_to_unknown(out->scratch, s->unknown, &d->base);
    return d;
}

static char **strs_out(ir_arena *a, const ir_bytes *s, size_t n)
{
    if (!n)
        return NULL;
    char **r = ir_arena_alloc(a, n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = (char *)(uintptr_t)s[i].data;  /* arena bytes end in NUL */
    return r;
}

static PbAttr *attr_out(pbconv_out *out, const ir_attr *compact)
{
    static const PbAttr init = PADDLE__FRAMEWORK__PROTO__OP_DESC__ATTR__INIT;
    ir_attr_full full;
    ir_attr_widen(compact, &full);
    const ir_attr_full *s = &full;
    ir_arena *a = out->scratch;
    PbAttr *d = alloc_msg(out, sizeof *d, &init);
    d->name = (char *)(uintptr_t)s->name;
    d->type = (Paddle__Framework__Proto__AttrType)s->type;
    d->has_i = s->has_i; d->i = s->i;
    d->has_f = s->has_f; d->f = s->f;
    if (s->has_s)
        d->s = s->s.data ? (char *)(uintptr_t)s->s.data : (char *)(uintptr_t)"";
    d->has_b = s->has_b; d->b = s->b;
    d->has_block_idx = s->has_block_idx; d->block_idx = s->block_idx;
    d->has_l = s->has_l; d->l = s->l;
    if (s->has_var_name)
        d->var_name = (char *)(uintptr_t)s->var_name;
    d->has_float64 = s->has_float64; d->float64 = s->float64;
    if (s->has_scalar)
        d->scalar = scalar_out(out, &s->scalar);
    d->n_ints = s->n_ints; d->ints = s->ints;
    d->n_floats = s->n_floats; d->floats = s->floats;
    d->n_blocks_idx = s->n_blocks_idx; d->blocks_idx = s->blocks_idx;
    d->n_longs = s->n_longs; d->longs = s->longs;
    d->n_float64s = s->n_float64s; d->float64s = s->float64s;
    d->n_bools = s->n_bools;
    if (s->n_bools) {
        d->bools = ir_arena_alloc(a, s->n_bools * sizeof *d->bools);
        for (size_t i = 0; i < s->n_bools; i++)
            d->bools[i] = s->bools[i];
    }
    d->n_strings = s->n_strings;
    d->strings = strs_out(a, s->strings, s->n_strings);
    d->n_vars_name = s->n_vars_name;
    d->vars_name = (char **)(uintptr_t)s->vars_name;
    d->n_scalars = s->n_scalars;
    if (s->n_scalars) {
        d->scalars = ir_arena_alloc(a, s->n_scalars * sizeof *d->scalars);
        for (size_t i = 0; i < s->n_scalars; i++)
            d->scalars[i] = scalar_out(out, &s->scalars[i]);
    }
    pbconv_bytes_to_unknown(a, s->unknown, &d->base);
    return d;
}

static int cmp_slot(const void *x, const void *y)
{
    return strcmp((*(PbSlot *const *)x)->parameter, (*(PbSlot *const *)y)->parameter);
}

static int cmp_attr(const void *x, const void *y)
{
    return strcmp((*(PbAttr *const *)x)->name, (*(PbAttr *const *)y)->name);
}

static PbSlot **slots_out(pbconv_out *out, const ir_op *op, bool is_out)
{
    const ir_slot *s = is_out ? ir_op_outs(op) : ir_op_ins(op);
    size_t n = is_out ? op->n_outputs : op->n_inputs;
    bool sort = op->enc_dirty_;
    static const PbSlot init = PADDLE__FRAMEWORK__PROTO__OP_DESC__VAR__INIT;
    if (!n)
        return NULL;
    PbSlot **r = ir_arena_alloc(out->scratch, n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        PbSlot *d = alloc_msg(out, sizeof *d, &init);
        d->parameter = (char *)(uintptr_t)s[i].name;
        d->n_arguments = s[i].n_args;
        d->arguments = (char **)(uintptr_t)s[i].args;
        pbconv_bytes_to_unknown(out->scratch, ir_slot_unknown(op, is_out, i), &d->base);
        r[i] = d;
    }
    if (sort)
        qsort(r, n, sizeof *r, cmp_slot);
    return r;
}

static PbOp *op_out(pbconv_out *out, const ir_op *s)
{
    static const PbOp init = PADDLE__FRAMEWORK__PROTO__OP_DESC__INIT;
    PbOp *d = alloc_msg(out, sizeof *d, &init);
    d->type = (char *)(uintptr_t)s->type;
    d->n_inputs = s->n_inputs;
    d->inputs = slots_out(out, s, false);
    d->n_outputs = s->n_outputs;
    d->outputs = slots_out(out, s, true);
    d->n_attrs = s->n_attrs;
    if (s->n_attrs) {
        const ir_attr *attrs = ir_op_attrs(s);
        d->attrs = ir_arena_alloc(out->scratch, s->n_attrs * sizeof *d->attrs);
        for (size_t i = 0; i < s->n_attrs; i++)
            d->attrs[i] = attr_out(out, &attrs[i]);
        if (s->enc_dirty_)
            qsort(d->attrs, s->n_attrs, sizeof *d->attrs, cmp_attr);
    }
    d->has_is_target = s->has_is_target;
    d->is_target = s->is_target;
    pbconv_bytes_to_unknown(out->scratch, ir_op_unknown(s), &d->base);
    return d;
}

static PbTensor *tensor_out(pbconv_out *out, const ir_var *v)
{
    static const PbTensor init = PADDLE__FRAMEWORK__PROTO__VAR_TYPE__TENSOR_DESC__INIT;
    PbTensor *t = alloc_msg(out, sizeof *t, &init);
    t->data_type = (Paddle__Framework__Proto__VarType__Type)v->dtype;
    t->n_dims = v->n_dims;
    t->dims = v->dims;
    pbconv_bytes_to_unknown(out->scratch, ir_var_rare_of(v)->tensor_unknown, &t->base);
    return t;
}

static PbVarType *vartype_out(pbconv_out *out, const ir_var *v)
{
    static const PbVarType init = PADDLE__FRAMEWORK__PROTO__VAR_TYPE__INIT;
    static const PbLod lodinit = PADDLE__FRAMEWORK__PROTO__VAR_TYPE__LO_DTENSOR_DESC__INIT;
    PbVarType *t = alloc_msg(out, sizeof *t, &init);
    t->type = (Paddle__Framework__Proto__VarType__Type)v->type;
    PbLod *lod = NULL;
    switch (v->tensor_slot) {
    case IR_TD_NONE: break;
    case IR_TD_SELECTED_ROWS: t->selected_rows = tensor_out(out, v); break;
    case IR_TD_LOD_TENSOR:
    case IR_TD_TENSOR_ARRAY:
        /* LoDTensorDesc and LoDTensorArrayDesc share one layout. */
        lod = alloc_msg(out, sizeof *lod, &lodinit);
        if (v->tensor_slot == IR_TD_TENSOR_ARRAY) {
            lod->base.descriptor = &paddle__framework__proto__var_type__lo_dtensor_array_desc__descriptor;
            t->tensor_array = (Paddle__Framework__Proto__VarType__LoDTensorArrayDesc *)(void *)lod;
        } else {
            t->lod_tensor = lod;
        }
        lod->tensor = tensor_out(out, v);
        lod->has_lod_level = v->has_lod_level;
        lod->lod_level = v->lod_level;
        pbconv_bytes_to_unknown(out->scratch, ir_var_rare_of(v)->lod_unknown, &lod->base);
        break;
    case IR_TD_STRING: t->string = tensor_out(out, v); break;
    case IR_TD_STRINGS: t->strings = tensor_out(out, v); break;
    case IR_TD_VOCAB: t->vocab = tensor_out(out, v); break;
    case IR_TD_SPARSE_COO: t->sparse_coo = tensor_out(out, v); break;
    case IR_TD_SPARSE_CSR: t->sparse_csr = tensor_out(out, v); break;
    }
    if (ir_var_rare_of(v)->has_reader)
        t->reader = (Paddle__Framework__Proto__VarType__ReaderDesc *)unpack_owned(
            out, &paddle__framework__proto__var_type__reader_desc__descriptor, ir_var_rare_of(v)->reader_raw);
    if (ir_var_rare_of(v)->has_tuple)
        t->tuple = (Paddle__Framework__Proto__VarType__Tuple *)unpack_owned(
            out, &paddle__framework__proto__var_type__tuple__descriptor, ir_var_rare_of(v)->tuple_raw);
    pbconv_bytes_to_unknown(out->scratch, ir_var_rare_of(v)->type_unknown, &t->base);
    return t;
}

static PbVar *var_out(pbconv_out *out, const ir_var *v)
{
    static const PbVar init = PADDLE__FRAMEWORK__PROTO__VAR_DESC__INIT;
    static const PbVarAttr ainit = PADDLE__FRAMEWORK__PROTO__VAR_DESC__ATTR__INIT;
    PbVar *d = alloc_msg(out, sizeof *d, &init);
    d->name = (char *)(uintptr_t)v->name;
    d->type = vartype_out(out, v);
    d->has_persistable = v->has_persistable; d->persistable = v->persistable;
    d->has_need_check_feed = v->has_need_check_feed; d->need_check_feed = v->need_check_feed;
    d->has_is_parameter = v->has_is_parameter; d->is_parameter = v->is_parameter;
    d->has_stop_gradient = v->has_stop_gradient; d->stop_gradient = v->stop_gradient;
    const ir_var_rare *r = ir_var_rare_of(v);
    d->n_attrs = r->n_var_attrs;
    if (r->n_var_attrs) {
        d->attrs = ir_arena_alloc(out->scratch, r->n_var_attrs * sizeof *d->attrs);
        for (size_t i = 0; i < r->n_var_attrs; i++) {
            ir_attr_full full;
            ir_attr_widen(&r->var_attrs[i], &full);
            const ir_attr_full *s = &full;
            PbVarAttr *da = alloc_msg(out, sizeof *da, &ainit);
            da->name = (char *)(uintptr_t)s->name;
            da->type = (Paddle__Framework__Proto__AttrType)s->type;
            da->has_i = s->has_i; da->i = s->i;
            if (s->has_s)
                da->s = s->s.data ? (char *)(uintptr_t)s->s.data : (char *)(uintptr_t)"";
            da->n_ints = s->n_ints; da->ints = s->ints;
            pbconv_bytes_to_unknown(out->scratch, s->unknown, &da->base);
            d->attrs[i] = da;
        }
    }
    pbconv_bytes_to_unknown(out->scratch, r->unknown, &d->base);
    return d;
}

static int cmp_var_name(const void *x, const void *y)
{
    return strcmp((*(ir_var *const *)x)->name, (*(ir_var *const *)y)->name);
}

static PbBlock *block_out(pbconv_out *out, const ir_block *b)
{
    static const PbBlock init = PADDLE__FRAMEWORK__PROTO__BLOCK_DESC__INIT;
    ir_arena *a = out->scratch;
    PbBlock *d = alloc_msg(out, sizeof *d, &init);
    d->idx = b->idx;
    d->parent_idx = b->parent_idx;
    d->has_forward_block_idx = b->has_forward_block_idx;
    d->forward_block_idx = b->forward_block_idx;
    ir_var **vars = ir_arena_alloc(a, (b->n_vars + 1) * sizeof *vars);
    size_t n = 0, n_input = 0;
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && b->vars[i]->from_input)
            vars[n++] = b->vars[i];
    n_input = n;
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && !b->vars[i]->from_input)
            vars[n++] = b->vars[i];
    qsort(vars + n_input, n - n_input, sizeof *vars, cmp_var_name);
    d->n_vars = n;
    d->vars = n ? ir_arena_alloc(a, n * sizeof *d->vars) : NULL;
    for (size_t i = 0; i < n; i++)
        d->vars[i] = var_out(out, vars[i]);
    d->n_ops = b->n_ops;
    d->ops = b->n_ops ? ir_arena_alloc(a, b->n_ops * sizeof *d->ops) : NULL;
    for (size_t i = 0; i < b->n_ops; i++)
        d->ops[i] = op_out(out, b->ops[i]);
    pbconv_bytes_to_unknown(a, b->unknown, &d->base);
    return d;
}

PbProgram *pbconv_from_ir(const ir_program *p, pbconv_out *out)
{
    static const PbProgram init = PADDLE__FRAMEWORK__PROTO__PROGRAM_DESC__INIT;
    PbProgram *d = alloc_msg(out, sizeof *d, &init);
    d->n_blocks = p->n_blocks;
    d->blocks = p->n_blocks ? ir_arena_alloc(out->scratch, p->n_blocks * sizeof *d->blocks) : NULL;
    for (size_t i = 0; i < p->n_blocks; i++)
        d->blocks[i] = block_out(out, p->blocks[i]);
    if (p->has_version) {
        static const Paddle__Framework__Proto__Version vinit = PADDLE__FRAMEWORK__PROTO__VERSION__INIT;
        d->version = alloc_msg(out, sizeof *d->version, &vinit);
        d->version->has_version = p->version_has_value;
        d->version->version = p->version;
        pbconv_bytes_to_unknown(out->scratch, p->version_unknown, &d->version->base);
    }
    if (p->has_op_version_map)
        d->op_version_map = (Paddle__Framework__Proto__OpVersionMap *)unpack_owned(
            out, &paddle__framework__proto__op_version_map__descriptor, p->op_version_map);
    pbconv_bytes_to_unknown(out->scratch, p->unknown, &d->base);
    return d;
}
