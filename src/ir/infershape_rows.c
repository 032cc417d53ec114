/* infershape_rows.c - the InferShape field-effect table (infershape.h):
 * one row per op type pdtrans creates whose compile-time InferShape or var
 * type inference writes a var-desc field.  Sources are Paddle 1.8's
 * paddle/fluid/operators (the same calls stand in 2.x and 3.x, moved to
 * phi's InferMeta for the dims); each row names the file and function.
 * Columns: type, ShareLoD in/out, dims rule and "IN:OUT" pairs, var type
 * rule and its pair, source. */
#include <stddef.h>

#include "infershape_rows.h"

#define ACT(t) {t, "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_SYNC, "X:Out", \
    "activation_op.cc ActivationOp::InferShape: ShareDim and ShareLoD X -> Out; " \
    "ActivationOpInferVarType: SyncTypeAndDataType(X, Out)"}
#define ELEM(t) {t, "X", "Out", IR_DIM_BCAST, "X:Out", IR_VT_SYNC, "X:Out", \
    "elementwise/elementwise_op.h ElementwiseOp::InferShape: ShareDim when X and Y dims " \
    "agree, else SetOutputDim(GetBroadcastDimsArrays), ShareLoD(X, Out); " \
    "ElementwiseOpInferVarType: SyncTypeAndDataType(X, Out)"}
#define CMP(t, f) {t, "X", "Out", IR_DIM_NONE, NULL, IR_VT_NONE, NULL, \
    f ": ShareLoD(X, Out) (dims not modelled: their broadcast changed across versions)"}

static const ir_infer_row table[] = {
    {"sum", "X", "Out", IR_DIM_SUM, "X:Out", IR_VT_SUM, "X:Out",
     "sum_op.cc SumOp::InferShape: SetOutputDim(Out, first X whose product is not 0), "
     "ShareLoD(X, Out); SumOpVarTypeInference"},
    {"scale", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_SYNC, "X:Out",
     "scale_op.cc ScaleOp::InferShape: SetOutputDim(Out, X), ShareLoD(X, Out); "
     "ScaleOpVarTypeInference: SetType and SetDataType of X"},
    {"cast", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_NONE, NULL,
     "cast_op.cc CastOp::InferShape: SetOutputDim(Out, X), ShareLoD(X, Out)"},
    {"assign", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_SYNC, "X:Out",
     "assign_op.cc AssignOp::InferShape: SetOutputDim(Out, X), ShareLoD(X, Out); "
     "AssignInferVarType: SyncTypeAndDataType(X, Out)"},
    {"increment", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_NONE, NULL,
     "increment_op.cc IncrementOp::InferShape: SetOutputDim(Out, X), ShareLoD(X, Out)"},
    {"fill_any_like", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_NONE, NULL,
     "fill_any_like_op.cc FillAnyLikeOp::InferShape: SetOutputDim(Out, X), ShareLoD"},
    {"clip", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_NONE, NULL,
     "clip_op.cc ClipOp::InferShape: SetOutputDim(Out, X), ShareLoD(X, Out)"},
    {"clip_by_norm", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_NONE, NULL,
     "clip_by_norm_op.h ClipByNormOp::InferShape: SetOutputDim(Out, X), ShareLoD"},
    {"sign", "X", "Out", IR_DIM_COPY, "X:Out", IR_VT_NONE, NULL,
     "sign_op.cc SignOp::InferShape: SetOutputDim(Out, X), ShareLoD(X, Out)"},
    ACT("square"), ACT("sqrt"), ACT("exp"), ACT("cos"), ACT("floor"), ACT("ceil"),
    ELEM("elementwise_add"), ELEM("elementwise_sub"), ELEM("elementwise_mul"),
    ELEM("elementwise_div"), ELEM("elementwise_pow"), ELEM("elementwise_min"),
    ELEM("elementwise_max"),
    CMP("less_than", "controlflow/compare_op.cc CompareOp::InferShape"),
    CMP("less_equal", "controlflow/compare_op.cc CompareOp::InferShape"),
    CMP("greater_than", "controlflow/compare_op.cc CompareOp::InferShape"),
    CMP("greater_equal", "controlflow/compare_op.cc CompareOp::InferShape"),
    CMP("equal", "controlflow/compare_op.cc CompareOp::InferShape"),
    CMP("not_equal", "controlflow/compare_op.cc CompareOp::InferShape"),
    CMP("logical_and", "controlflow/logical_op.cc BinaryLogicalOp::InferShape"),
    CMP("logical_or", "controlflow/logical_op.cc BinaryLogicalOp::InferShape"),
    CMP("logical_not", "controlflow/logical_op.cc UnaryLogicalOp::InferShape"),
    {"fill_constant", NULL, NULL, IR_DIM_ATTR, "shape:Out", IR_VT_DTYPE, "dtype:Out",
     "fill_constant_op.cc FillConstantOp::InferShape: SetOutputDim(Out, attr shape) "
     "(not with a ShapeTensor and an empty shape); FillConstantOpVarTypeInference: "
     "SetOutputDataType(Out, attr dtype)"},
    /* the update ops: no ShareLoD */
    {"sgd", NULL, NULL, IR_DIM_COPY, "Param:ParamOut", IR_VT_TYPE, "Param:ParamOut",
     "optimizers/sgd_op.cc SGDOp::InferShape: SetOutputDim(ParamOut, Param); "
     "SGDOpInferVarType: SetOutputType(ParamOut, Param's type)"},
    {"momentum", NULL, NULL, IR_DIM_COPY, "Param:ParamOut Param:VelocityOut", IR_VT_TYPE,
     "Param:ParamOut",
     "optimizers/momentum_op.h MomentumOp::InferShape: SetOutputDim(ParamOut and "
     "VelocityOut, Param); momentum_op.cc MomentumOpInferVarType: ParamOut's type"},
    {"adam", NULL, NULL, IR_DIM_COPY,
     "Param:ParamOut Param:Moment1Out Param:Moment2Out Beta1Pow:Beta1PowOut "
     "Beta2Pow:Beta2PowOut", IR_VT_NONE, NULL,
     "optimizers/adam_op.cc AdamOp::InferShape: SetOutputDim(ParamOut, Moment1Out, "
     "Moment2Out: Param; Beta1PowOut, Beta2PowOut: Beta1Pow, Beta2Pow, where the op has them)"},
};

const ir_infer_row *ir_infer_rows(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}
