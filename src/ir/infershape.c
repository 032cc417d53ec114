/* infershape.c - the InferShape field-effect table (infershape.h).
 * ShareLoD is CompileTimeInferShapeContext::ShareLoD
 * (paddle/fluid/framework/op_desc.cc): it returns when the input is not
 * a LOD_TENSOR or LOD_TENSOR_ARRAY and otherwise calls
 * out_var->SetLoDLevel(in_var->GetLoDLevel()), which writes the field even
 * when the level is 0.  SetOutputDim's dims and the var type inference are
 * written by the creators themselves (the shapes Python passes to
 * create_var are those InferShape computes for these ops). */
#include <string.h>

#include "env.h"
#include "infershape.h"
#include "pmap.h"
#include "util.h"

/* Ops whose InferShape calls ShareLoD; the sources are Paddle 1.8's
 * paddle/fluid/operators (the same calls stand in 2.x and 3.x). */
static const ir_infer_row table[] = {
    {"sum", "X", "Out", "sum_op.cc SumOp::InferShape: ShareLoD(\"X\", \"Out\") (X[0])"},
    {"scale", "X", "Out", "scale_op.cc ScaleOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"cast", "X", "Out", "cast_op.cc CastOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"assign", "X", "Out", "assign_op.cc AssignOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"increment", "X", "Out", "increment_op.cc IncrementOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"fill_any_like", "X", "Out", "fill_any_like_op.cc FillAnyLikeOp::InferShape: ShareLoD"},
    {"clip", "X", "Out", "clip_op.cc ClipOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"clip_by_norm", "X", "Out", "clip_by_norm_op.h ClipByNormOp::InferShape: ShareLoD"},
    {"sign", "X", "Out", "sign_op.cc SignOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    /* activation_op.cc ActivationOp::InferShape: ShareDim and ShareLoD, X -> Out */
    {"square", "X", "Out", "activation_op.cc ActivationOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"sqrt", "X", "Out", "activation_op.cc ActivationOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"exp", "X", "Out", "activation_op.cc ActivationOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"cos", "X", "Out", "activation_op.cc ActivationOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"floor", "X", "Out", "activation_op.cc ActivationOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    {"ceil", "X", "Out", "activation_op.cc ActivationOp::InferShape: ShareLoD(\"X\", \"Out\")"},
    /* elementwise/elementwise_op.h ElementwiseOp::InferShape */
    {"elementwise_add", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    {"elementwise_sub", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    {"elementwise_mul", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    {"elementwise_div", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    {"elementwise_pow", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    {"elementwise_min", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    {"elementwise_max", "X", "Out", "elementwise_op.h ElementwiseOp::InferShape: ShareLoD(X)"},
    /* controlflow/compare_op.cc CompareOp, logical_op.cc */
    {"less_than", "X", "Out", "controlflow/compare_op.cc CompareOp::InferShape: ShareLoD"},
    {"less_equal", "X", "Out", "controlflow/compare_op.cc CompareOp::InferShape: ShareLoD"},
    {"greater_than", "X", "Out", "controlflow/compare_op.cc CompareOp::InferShape: ShareLoD"},
    {"greater_equal", "X", "Out", "controlflow/compare_op.cc CompareOp::InferShape: ShareLoD"},
    {"equal", "X", "Out", "controlflow/compare_op.cc CompareOp::InferShape: ShareLoD"},
    {"not_equal", "X", "Out", "controlflow/compare_op.cc CompareOp::InferShape: ShareLoD"},
    {"logical_and", "X", "Out", "controlflow/logical_op.cc BinaryLogicalOp: ShareLoD(X)"},
    {"logical_or", "X", "Out", "controlflow/logical_op.cc BinaryLogicalOp: ShareLoD(X)"},
    {"logical_not", "X", "Out", "controlflow/logical_op.cc UnaryLogicalOp: ShareLoD(X)"},
};

const ir_infer_row *ir_infer_find(const char *type)
{
    /* keyed by interned names, so it lives in the env, which ends with
     * them (ir_intern_shutdown) */
    pmap *index_by_type = pdt_env_get(PDT_ENV_INFER_INDEX);
    if (!index_by_type) {
        index_by_type = pdt_env_put(PDT_ENV_INFER_INDEX, xcalloc(1, sizeof *index_by_type),
                                    pdt_env_free_pmap);
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            pmap_put(index_by_type, ir_intern(table[i].type), (void *)&table[i]);
    }
    return pmap_get(index_by_type, ir_intern(type));
}

void ir_infer_apply(ir_block *b, const ir_op *op)
{
    const ir_infer_row *row = ir_infer_find(op->type);
    if (!row)
        return;
    const ir_slot *in = ir_op_input(op, row->in), *out = ir_op_output(op, row->out);
    if (!out)
        return;
    const ir_var *iv = in && in->n_args ? ir_block_find_var_recursive(b, in->args[0]) : NULL;
    if (iv && iv->type != IR_LOD_TENSOR && iv->type != IR_LOD_TENSOR_ARRAY)
        return;
    int32_t level = iv && iv->has_lod_level ? iv->lod_level : 0;
    for (size_t k = 0; k < out->n_args; k++) {
        ir_var *v = ir_block_find_var_recursive(b, out->args[k]);
        if (!v || v->tensor_slot != IR_TD_LOD_TENSOR)
            continue;
        v->has_lod_level = true;
        v->lod_level = level;
    }
}
