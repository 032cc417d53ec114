/* pbconv.c - copies between protobuf-c messages and the IR.
 *
 * Write order follows Paddle's C++ Flush: ops in order; a dirty op's slots
 * and attrs sorted by name (OpDesc::Flush); vars read from the input in
 * their order, then added vars sorted by name (BlockDesc::Flush). */
#include "pbconv.h"

#include <stdlib.h>
#include <string.h>

#include "../ir/ir_internal.h"
#include "../ir/util.h"

typedef Paddle__Framework__Proto__BlockDesc PbBlock;
typedef Paddle__Framework__Proto__VarDesc PbVar;
typedef Paddle__Framework__Proto__VarDesc__Attr PbVarAttr;
typedef Paddle__Framework__Proto__VarType PbVarType;
typedef Paddle__Framework__Proto__VarType__TensorDesc PbTensor;
typedef Paddle__Framework__Proto__VarType__LoDTensorDesc PbLod;
typedef Paddle__Framework__Proto__OpDesc PbOp;
typedef Paddle__Framework__Proto__OpDesc__Var PbSlot;
typedef Paddle__Framework__Proto__OpDesc__Attr PbAttr;
typedef Paddle__Framework__Proto__Scalar PbScalar;

/* ---- unknown fields <-> bytes ---------------------------------------- */

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        out[n++] = b | (v ? 0x80 : 0);
    } while (v);
    return n;
}

/* Stores each unknown field as tag + protobuf-c's data (value bytes,
 * including any length prefix), back to back. */
static ir_bytes unknown_to_bytes(ir_arena *a, const ProtobufCMessage *m)
{
    ir_bytes r = {NULL, 0};
    if (!m->n_unknown_fields)
        return r;
    size_t total = 0;
    for (unsigned i = 0; i < m->n_unknown_fields; i++)
        total += 10 + m->unknown_fields[i].len;
    uint8_t *buf = ir_arena_alloc(a, total + 1);
    size_t n = 0;
    for (unsigned i = 0; i < m->n_unknown_fields; i++) {
        const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
        n += put_varint(buf + n, ((uint64_t)u->tag << 3) | u->wire_type);
        memcpy(buf + n, u->data, u->len);
        n += u->len;
    }
    r.data = buf;
    r.len = n;
    return r;
}

static bool get_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; *pos < len && shift < 64; shift += 7) {
        uint8_t b = p[(*pos)++];
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

static void bytes_to_unknown(ir_arena *a, ir_bytes b, ProtobufCMessage *m)
{
    if (!b.len)
        return;
    size_t count = 0, cap = 4;
    ProtobufCMessageUnknownField *f = ir_arena_alloc(a, cap * sizeof *f);
    size_t pos = 0;
    while (pos < b.len) {
        uint64_t key, v;
        if (!get_varint(b.data, b.len, &pos, &key))
            break;
        size_t start = pos;
        switch (key & 7) {
        case 0: if (!get_varint(b.data, b.len, &pos, &v)) pos = b.len; break;
        case 1: pos += 8; break;
        case 5: pos += 4; break;
        case 2:
            if (!get_varint(b.data, b.len, &pos, &v)) { pos = b.len; break; }
            pos += (size_t)v;
            break;
        default: pos = b.len; break;  /* groups never reach here */
        }
        if (pos > b.len)
            pos = b.len;
        if (count == cap) {
            ProtobufCMessageUnknownField *nf = ir_arena_alloc(a, 2 * cap * sizeof *nf);
            memcpy(nf, f, cap * sizeof *f);
            f = nf;
            cap *= 2;
        }
        f[count].tag = (uint32_t)(key >> 3);
        f[count].wire_type = (ProtobufCWireType)(key & 7);
        f[count].len = pos - start;
        f[count].data = (uint8_t *)(uintptr_t)(b.data + start);
        count++;
    }
    m->n_unknown_fields = (unsigned)count;
    m->unknown_fields = f;
}

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
    d->unknown = unknown_to_bytes(a, &s->base);
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
    d->unknown = unknown_to_bytes(a, &s->base);
}

static void attr_in(ir_arena *a, ir_attr *d, const PbAttr *s)
{
    ir_attr_full full = {0};
    attr_in_full(a, &full, s);
    ir_attr_compact(a, d, &full);
}

static void slots_in(ir_arena *a, ir_slot **out, size_t *n, size_t *cap,
                     PbSlot *const *src, size_t count)
{
    *n = *cap = count;
    *out = count ? ir_arena_alloc(a, count * sizeof **out) : NULL;
    for (size_t i = 0; i < count; i++) {
        ir_slot *d = &(*out)[i];
        d->name = ir_intern(src[i]->parameter);
        d->n_args = d->cap_args = src[i]->n_arguments;
        d->args = d->n_args ? ir_arena_alloc(a, d->n_args * sizeof *d->args) : NULL;
        for (size_t k = 0; k < d->n_args; k++)
            d->args[k] = ir_intern(src[i]->arguments[k]);
        d->unknown = unknown_to_bytes(a, &src[i]->base);
    }
}

static ir_op *op_in(ir_program *p, const PbOp *s)
{
    ir_arena *a = p->arena;
    ir_op *op = ir_op_new(p, s->type);
    op->dirty = false;
    slots_in(a, &op->inputs, &op->n_inputs, &op->cap_inputs, s->inputs, s->n_inputs);
    slots_in(a, &op->outputs, &op->n_outputs, &op->cap_outputs, s->outputs, s->n_outputs);
    op->n_attrs = op->cap_attrs = s->n_attrs;
    op->attrs = s->n_attrs ? ir_arena_alloc(a, s->n_attrs * sizeof *op->attrs) : NULL;
    for (size_t i = 0; i < s->n_attrs; i++)
        attr_in(a, &op->attrs[i], s->attrs[i]);
    op->has_is_target = s->has_is_target;
    op->is_target = s->is_target;
    op->unknown = unknown_to_bytes(a, &s->base);
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

static void tensor_in(ir_arena *a, ir_var *v, const PbTensor *t, ir_tensor_slot slot)
{
    v->tensor_slot = slot;
    v->dtype = t->data_type;
    v->n_dims = t->n_dims;
    v->dims = DUPN(v->dims, t->dims, t->n_dims);
    v->tensor_unknown = unknown_to_bytes(a, &t->base);
}

static void vartype_in(ir_arena *a, ir_var *v, const PbVarType *t)
{
    v->type = t->type;
    const PbLod *lod = NULL;
    if (t->lod_tensor) {
        lod = t->lod_tensor;
        tensor_in(a, v, lod->tensor, IR_TD_LOD_TENSOR);
    } else if (t->tensor_array) {
        lod = (const PbLod *)(const void *)t->tensor_array;
        tensor_in(a, v, lod->tensor, IR_TD_TENSOR_ARRAY);
    } else if (t->selected_rows) {
        tensor_in(a, v, t->selected_rows, IR_TD_SELECTED_ROWS);
    } else if (t->string) {
        tensor_in(a, v, t->string, IR_TD_STRING);
    } else if (t->strings) {
        tensor_in(a, v, t->strings, IR_TD_STRINGS);
    } else if (t->vocab) {
        tensor_in(a, v, t->vocab, IR_TD_VOCAB);
    } else if (t->sparse_coo) {
        tensor_in(a, v, t->sparse_coo, IR_TD_SPARSE_COO);
    } else if (t->sparse_csr) {
        tensor_in(a, v, t->sparse_csr, IR_TD_SPARSE_CSR);
    }
    if (lod) {
        v->has_lod_level = lod->has_lod_level;
        v->lod_level = lod->lod_level;
        v->lod_unknown = unknown_to_bytes(a, &lod->base);
    }
    if (t->reader) {
        v->has_reader = true;
        v->reader_raw = pack_sub(a, &t->reader->base);
    }
    if (t->tuple) {
        v->has_tuple = true;
        v->tuple_raw = pack_sub(a, &t->tuple->base);
    }
    v->type_unknown = unknown_to_bytes(a, &t->base);
}

static void var_in(ir_block *b, const PbVar *s)
{
    ir_arena *a = b->program->arena;
    ir_var *v = ir_block_add_var_raw(b, s->name);
    v->from_input = true;
    vartype_in(a, v, s->type);
    v->has_persistable = s->has_persistable; v->persistable = s->persistable;
    v->has_need_check_feed = s->has_need_check_feed; v->need_check_feed = s->need_check_feed;
    v->has_is_parameter = s->has_is_parameter; v->is_parameter = s->is_parameter;
    v->has_stop_gradient = s->has_stop_gradient; v->stop_gradient = s->stop_gradient;
    v->n_var_attrs = s->n_attrs;
    v->var_attrs = s->n_attrs ? ir_arena_alloc(a, s->n_attrs * sizeof *v->var_attrs) : NULL;
    for (size_t i = 0; i < s->n_attrs; i++) {
        const PbVarAttr *sa = s->attrs[i];
        ir_attr_full full = {0}, *d = &full;
        d->name = ir_intern(sa->name);
        d->type = (ir_attr_type)sa->type;
        d->has_i = sa->has_i; d->i = sa->i;
        if (sa->s) { d->has_s = true; d->s = str_bytes(a, sa->s); }
        d->n_ints = sa->n_ints; d->ints = DUPN(d->ints, sa->ints, sa->n_ints);
        d->unknown = unknown_to_bytes(a, &sa->base);
        ir_attr_compact(a, &v->var_attrs[i], &full);
    }
    v->unknown = unknown_to_bytes(a, &s->base);
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
        for (size_t k = 0; k < sb->n_vars; k++)
            var_in(b, sb->vars[k]);
        ir_op **ops = sb->n_ops ? xmalloc(sb->n_ops * sizeof *ops) : NULL;
        for (size_t k = 0; k < sb->n_ops; k++)
            ops[k] = op_in(p, sb->ops[k]);
        ir_block_set_ops(b, ops, sb->n_ops);
        free(ops);
        b->unknown = unknown_to_bytes(a, &sb->base);
    }
    if (msg->version) {
        p->has_version = true;
        p->version_has_value = msg->version->has_version;
        p->version = msg->version->version;
        p->version_unknown = unknown_to_bytes(a, &msg->version->base);
    }
    if (msg->op_version_map) {
        p->has_op_version_map = true;
        p->op_version_map = pack_sub(a, &msg->op_version_map->base);
    }
    p->unknown = unknown_to_bytes(a, &msg->base);
    return p;
}

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
    bytes_to_unknown(out->scratch, s->unknown, &d->base);
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
    bytes_to_unknown(a, s->unknown, &d->base);
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

static PbSlot **slots_out(pbconv_out *out, const ir_slot *s, size_t n, bool sort)
{
    static const PbSlot init = PADDLE__FRAMEWORK__PROTO__OP_DESC__VAR__INIT;
    if (!n)
        return NULL;
    PbSlot **r = ir_arena_alloc(out->scratch, n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        PbSlot *d = alloc_msg(out, sizeof *d, &init);
        d->parameter = (char *)(uintptr_t)s[i].name;
        d->n_arguments = s[i].n_args;
        d->arguments = (char **)(uintptr_t)s[i].args;
        bytes_to_unknown(out->scratch, s[i].unknown, &d->base);
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
    d->inputs = slots_out(out, s->inputs, s->n_inputs, s->dirty);
    d->n_outputs = s->n_outputs;
    d->outputs = slots_out(out, s->outputs, s->n_outputs, s->dirty);
    d->n_attrs = s->n_attrs;
    if (s->n_attrs) {
        d->attrs = ir_arena_alloc(out->scratch, s->n_attrs * sizeof *d->attrs);
        for (size_t i = 0; i < s->n_attrs; i++)
            d->attrs[i] = attr_out(out, &s->attrs[i]);
        if (s->dirty)
            qsort(d->attrs, s->n_attrs, sizeof *d->attrs, cmp_attr);
    }
    d->has_is_target = s->has_is_target;
    d->is_target = s->is_target;
    bytes_to_unknown(out->scratch, s->unknown, &d->base);
    return d;
}

static PbTensor *tensor_out(pbconv_out *out, const ir_var *v)
{
    static const PbTensor init = PADDLE__FRAMEWORK__PROTO__VAR_TYPE__TENSOR_DESC__INIT;
    PbTensor *t = alloc_msg(out, sizeof *t, &init);
    t->data_type = (Paddle__Framework__Proto__VarType__Type)v->dtype;
    t->n_dims = v->n_dims;
    t->dims = v->dims;
    bytes_to_unknown(out->scratch, v->tensor_unknown, &t->base);
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
        bytes_to_unknown(out->scratch, v->lod_unknown, &lod->base);
        break;
    case IR_TD_STRING: t->string = tensor_out(out, v); break;
    case IR_TD_STRINGS: t->strings = tensor_out(out, v); break;
    case IR_TD_VOCAB: t->vocab = tensor_out(out, v); break;
    case IR_TD_SPARSE_COO: t->sparse_coo = tensor_out(out, v); break;
    case IR_TD_SPARSE_CSR: t->sparse_csr = tensor_out(out, v); break;
    }
    if (v->has_reader)
        t->reader = (Paddle__Framework__Proto__VarType__ReaderDesc *)unpack_owned(
            out, &paddle__framework__proto__var_type__reader_desc__descriptor, v->reader_raw);
    if (v->has_tuple)
        t->tuple = (Paddle__Framework__Proto__VarType__Tuple *)unpack_owned(
            out, &paddle__framework__proto__var_type__tuple__descriptor, v->tuple_raw);
    bytes_to_unknown(out->scratch, v->type_unknown, &t->base);
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
    d->n_attrs = v->n_var_attrs;
    if (v->n_var_attrs) {
        d->attrs = ir_arena_alloc(out->scratch, v->n_var_attrs * sizeof *d->attrs);
        for (size_t i = 0; i < v->n_var_attrs; i++) {
            ir_attr_full full;
            ir_attr_widen(&v->var_attrs[i], &full);
            const ir_attr_full *s = &full;
            PbVarAttr *da = alloc_msg(out, sizeof *da, &ainit);
            da->name = (char *)(uintptr_t)s->name;
            da->type = (Paddle__Framework__Proto__AttrType)s->type;
            da->has_i = s->has_i; da->i = s->i;
            if (s->has_s)
                da->s = s->s.data ? (char *)(uintptr_t)s->s.data : (char *)(uintptr_t)"";
            da->n_ints = s->n_ints; da->ints = s->ints;
            bytes_to_unknown(out->scratch, s->unknown, &da->base);
            d->attrs[i] = da;
        }
    }
    bytes_to_unknown(out->scratch, v->unknown, &d->base);
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
    bytes_to_unknown(a, b->unknown, &d->base);
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
        bytes_to_unknown(out->scratch, p->version_unknown, &d->version->base);
    }
    if (p->has_op_version_map)
        d->op_version_map = (Paddle__Framework__Proto__OpVersionMap *)unpack_owned(
            out, &paddle__framework__proto__op_version_map__descriptor, p->op_version_map);
    bytes_to_unknown(out->scratch, p->unknown, &d->base);
    return d;
}
