/* infershape.c - plays the InferShape field-effect table (infershape.h,
 * rows in infershape_rows.c) as Paddle's compile-time contexts do
 * (paddle/fluid/framework/op_desc.cc, var_type_inference.h):
 * - ShareLoD returns when the input is not a LOD_TENSOR or
 *   LOD_TENSOR_ARRAY and otherwise calls
 *   out_var->SetLoDLevel(in_var->GetLoDLevel()), which writes the field
 *   even when the level is 0;
 * - GetDim reads a var's shape, [0] when it has none; SetDim calls
 *   VarDesc::SetShape, which writes the dims of the var's tensor desc;
 * - SetType / SetDataType write VarType.type and the tensor's data_type.
 * Operator.__init__ (framework.py) runs infer_var_type before
 * infer_shape. */
#include <string.h>

#include "env.h"
#include "infershape.h"
#include "infershape_rows.h"
#include "pmap.h"
#include "util.h"

#define IR_INFER_MAX_DIMS 16    /* more than any DDim holds (9) */

const ir_infer_row *ir_infer_find(const char *type)
{
    /* keyed by interned names, so it lives in the env, which ends with
     * them (ir_intern_shutdown) */
    pmap *index_by_type = pdt_env_get(PDT_ENV_INFER_INDEX);
    if (!index_by_type) {
        size_t n;
        const ir_infer_row *table = ir_infer_rows(&n);
        index_by_type = pdt_env_put(PDT_ENV_INFER_INDEX, xcalloc(1, sizeof *index_by_type),
                                    pdt_env_free_pmap);
        for (size_t i = 0; i < n; i++)
            pmap_put(index_by_type, ir_intern(table[i].type), (void *)&table[i]);
    }
    return pmap_get(index_by_type, ir_intern(type));
}

/* The var of slot `name`'s k-th arg in op's inputs or outputs; NULL when
 * the op has no such arg or b cannot find the var. */
static ir_var *slot_var(ir_block *b, const ir_slot *s, size_t k)
{
    return s && k < s->n_args ? ir_block_find_var_recursive(b, s->args[k]) : NULL;
}

/* Splits the "IN:OUT" pair at `pair` into two slot names (slot lookups
 * fall back to strcmp for names not interned); returns the rest of the
 * list after the pair, NULL at its end. */
static const char *next_pair(const char *pair, char in[32], char out[32])
{
    while (*pair == ' ')
        pair++;
    if (!*pair)
        return NULL;
    size_t ni = strcspn(pair, ":"), no = strcspn(pair + ni + 1, " ");
    if (ni >= 32 || no >= 32)   /* the table's names are short */
        return NULL;
    memcpy(in, pair, ni);
    in[ni] = '\0';
    memcpy(out, pair + ni + 1, no);
    out[no] = '\0';
    return pair + ni + 1 + no;
}

static void share_lod(ir_block *b, const ir_op *op, const ir_infer_row *row)
{
    const ir_slot *in = ir_op_input(op, row->in), *out = ir_op_output(op, row->out);
    if (!out)
        return;
    const ir_var *iv = slot_var(b, in, 0);
    if (iv && iv->type != IR_LOD_TENSOR && iv->type != IR_LOD_TENSOR_ARRAY)
        return;
    int32_t level = iv && iv->has_lod_level ? iv->lod_level : 0;
    for (size_t k = 0; k < out->n_args; k++) {
        ir_var *v = slot_var(b, out, k);
        if (!v || v->tensor_slot != IR_TD_LOD_TENSOR)
            continue;
        v->has_lod_level = true;
        v->lod_level = level;
    }
}

/* GetDim: a var's dims, [0] when it has none */
static const int64_t *get_dim(const ir_var *v, size_t *n)
{
    static const int64_t zero[1] = {0};
    if (!v->n_dims) {
        *n = 1;
        return zero;
    }
    *n = v->n_dims;
    return v->dims;
}

/* SetDim on every var of output slot `out`: VarDesc::SetShape, for the
 * types with a tensor desc (mutable_tensor_desc throws for the others) */
static void set_dim(ir_block *b, const ir_op *op, const char *out, const int64_t *d, size_t n)
{
    const ir_slot *s = ir_op_output(op, out);
    for (size_t k = 0; s && k < s->n_args; k++) {
        ir_var *v = slot_var(b, s, k);
        if (!v || (v->type != IR_LOD_TENSOR && v->type != IR_SELECTED_ROWS
                   && !(v->type == IR_LOD_TENSOR_ARRAY && v->tensor_slot == IR_TD_TENSOR_ARRAY)))
            continue;
        if (v->n_dims == n && (!n || !memcmp(v->dims, d, n * sizeof *d)) && v->tensor_slot)
            continue;   /* already so: no new copy in the arena */
        ir_var_set_dims(b->program, v, d, n);
    }
}

/* SumOp::InferShape: the first X whose product is not 0, else [0] */
static const int64_t *sum_dim(ir_block *b, const ir_slot *x, size_t *n)
{
    static const int64_t zero[1] = {0};
    for (size_t k = 0; x && k < x->n_args; k++) {
        const ir_var *v = slot_var(b, x, k);
        if (!v)
            return NULL;
        size_t m, i = 0;
        const int64_t *d = get_dim(v, &m);
        while (i < m && d[i] != 0)
            i++;
        if (i == m) {   /* product(x_dim) != 0: no dim is 0 */
            *n = m;
            return d;
        }
    }
    *n = 1;
    return zero;
}

/* ElementwiseOp::InferShape: X's dims when X's and Y's agree, else
 * GetBroadcastDimsArrays with axis (-1: the rank difference); a pair of
 * dims no broadcast allows (Paddle throws) changes nothing */
static size_t bcast_dim(ir_block *b, const ir_op *op, int64_t *out)
{
    const ir_var *xv = slot_var(b, ir_op_input(op, "X"), 0);
    const ir_var *yv = slot_var(b, ir_op_input(op, "Y"), 0);
    if (!xv || !yv)
        return 0;
    size_t nx, ny;
    const int64_t *x = get_dim(xv, &nx), *y = get_dim(yv, &ny);
    if (nx == ny && !memcmp(x, y, nx * sizeof *x)) {
        memcpy(out, x, nx * sizeof *x);
        return nx;
    }
    size_t max = nx > ny ? nx : ny;
    const ir_attr *a = ir_op_attr(op, "axis");
    long axis = a && a->type == IR_ATTR_INT ? a->i : -1;
    if (axis == -1)
        axis = (long)(max - (nx < ny ? nx : ny));
    const int64_t *small = nx > ny ? y : x;
    size_t ns = nx > ny ? ny : nx;
    if (axis < 0 || (size_t)axis >= max || (size_t)axis + ns > max || max > IR_INFER_MAX_DIMS)
        return 0;
    for (size_t i = 0; i < max; i++) {
        int64_t big = nx > ny ? x[i] : y[i];
        int64_t sm = i >= (size_t)axis && i < (size_t)axis + ns ? small[i - (size_t)axis] : 1;
        int64_t xi = nx > ny ? big : sm, yi = nx > ny ? sm : big;
        if (!(xi == yi || xi <= 1 || yi <= 1))
            return 0;
        out[i] = (xi > 1 || yi > 1) || (xi == 1 && yi == 1) ? (xi > yi ? xi : yi) : -1;
    }
    return max;
}

/* FillConstantOp::InferShape: the shape attr (ints or longs); with a
 * ShapeTensor and an empty shape Paddle writes -1s, not modelled */
static bool attr_dim(const ir_op *op, const char *attr, int64_t *out, size_t *n)
{
    const ir_attr *a = ir_op_attr(op, attr);
    if (!a || (a->type != IR_ATTR_INTS && a->type != IR_ATTR_LONGS))
        return false;
    size_t m = a->type == IR_ATTR_INTS ? a->n_ints : a->n_longs;
    const ir_slot *st = ir_op_input(op, "ShapeTensor");
    if (m > IR_INFER_MAX_DIMS || (!m && st && st->n_args))
        return false;
    for (size_t i = 0; i < m; i++)
        out[i] = a->type == IR_ATTR_INTS ? a->ints[i] : a->longs[i];
    *n = m;
    return true;
}

static void set_dims(ir_block *b, const ir_op *op, const ir_infer_row *row)
{
    char in[32], out[32];
    int64_t buf[IR_INFER_MAX_DIMS];
    size_t n = 0;
    for (const char *p = row->dims; p && (p = next_pair(p, in, out));) {
        const int64_t *d = buf;
        switch (row->dim) {
        case IR_DIM_COPY: {
            const ir_var *v = slot_var(b, ir_op_input(op, in), 0);
            d = v ? get_dim(v, &n) : NULL;
            break;
        }
        case IR_DIM_SUM: d = sum_dim(b, ir_op_input(op, in), &n); break;
        case IR_DIM_BCAST: n = bcast_dim(b, op, buf); d = n ? buf : NULL; break;
        case IR_DIM_ATTR: d = attr_dim(op, in, buf, &n) ? buf : NULL; break;
        default: d = NULL;
        }
        if (d)
            set_dim(b, op, out, d, n);
    }
}

static ir_tensor_slot slot_of_type(int type)
{
    switch (type) {
    case IR_LOD_TENSOR: return IR_TD_LOD_TENSOR;
    case IR_SELECTED_ROWS: return IR_TD_SELECTED_ROWS;
    case IR_LOD_TENSOR_ARRAY: return IR_TD_TENSOR_ARRAY;
    default: return IR_TD_NONE;
    }
}

/* VarDesc::SetType, when the var's tensor desc stays in its VarType field
 * (infershape.h says why a move is not played); false: not played */
static bool set_type(ir_var *v, int type)
{
    if (v->type == type)
        return true;
    if (slot_of_type(type) == IR_TD_NONE || slot_of_type(type) != v->tensor_slot)
        return false;
    v->type = type;
    return true;
}

/* VarDesc::SetDataType: the tensor desc's data_type */
static void set_dtype(ir_var *v, int dtype)
{
    if (slot_of_type(v->type) != IR_TD_NONE && v->tensor_slot == slot_of_type(v->type))
        v->dtype = dtype;
}

/* SumOpVarTypeInference: LOD_TENSOR_ARRAY when the inputs are arrays,
 * LOD_TENSOR when one is a LoD tensor, else SELECTED_ROWS; X[0]'s dtype */
static int sum_type(ir_block *b, const ir_slot *x)
{
    int type = IR_SELECTED_ROWS;
    for (size_t k = 0; x && k < x->n_args; k++) {
        const ir_var *v = slot_var(b, x, k);
        if (!v)
            return -1;
        if (v->type == IR_LOD_TENSOR_ARRAY)
            return IR_LOD_TENSOR_ARRAY;   /* Paddle refuses a mix */
        if (v->type == IR_LOD_TENSOR)
            type = IR_LOD_TENSOR;
    }
    return type;
}

static void infer_var_type(ir_block *b, const ir_op *op, const ir_infer_row *row)
{
    char in[32], out[32];
    if (row->vt == IR_VT_NONE || !next_pair(row->vts, in, out))
        return;
    const ir_slot *os = ir_op_output(op, out), *is = ir_op_input(op, in);
    ir_var *ov = slot_var(b, os, 0);
    if (row->vt == IR_VT_DTYPE) {
        const ir_attr *a = ir_op_attr(op, in);
        if (ov && a && a->type == IR_ATTR_INT)
            set_dtype(ov, a->i);
        return;
    }
    const ir_var *iv = slot_var(b, is, 0);
    if (!ov || !iv)
        return;
    if (row->vt == IR_VT_TYPE) {   /* ALL_ELEMENTS */
        for (size_t k = 0; k < os->n_args; k++) {
            ir_var *v = slot_var(b, os, k);
            if (v)
                set_type(v, iv->type);
        }
        return;
    }
    int type = row->vt == IR_VT_SUM ? sum_type(b, is) : iv->type;
    if (type >= 0 && set_type(ov, type))
        set_dtype(ov, iv->dtype);
}

void ir_infer_apply(ir_block *b, const ir_op *op)
{
    const ir_infer_row *row = ir_infer_find(op->type);
    if (!row)
        return;
    infer_var_type(b, op, row);
    if (row->dim != IR_DIM_NONE)
        set_dims(b, op, row);
    if (row->in && row->out)
        share_lod(b, op, row);
}

void ir_infer_apply_made(ir_block *b, size_t from)
{
    for (size_t i = from; i < b->n_ops; i++)
        if (b->ops[i]->made)
            ir_infer_apply(b, b->ops[i]);
}
