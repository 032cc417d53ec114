/* grad_special.c - makers whose gradient is an ordinary forward op, or whose
 * slots depend on attrs: sum, scale, split, cast, assign, increment,
 * batch_norm, data_norm, sequence_pool, sequence_conv.  Each mirrors the
 * named Paddle maker (paddle/fluid/operators/...). */
#include "grad.h"

#include <string.h>

/* sum_op.cc SumGradDescMaker: one `scale` per entry of InputGrad("X", false),
 * each reading OutputGrad("Out"), attr scale = 1.0 only. */
bool grad_fn_sum(grad_ctx *c)
{
    ir_op *tmp = ir_op_new(c->prog, "tmp");
    if (!grad_set_ig(c, tmp, false, "G", "X", false))
        return false;
    const ir_slot *xg = ir_op_output(tmp, "G");
    for (size_t i = 0; i < xg->n_args; i++) {
        ir_op *op = grad_new_op(c, "scale");
        grad_set_og(c, op, false, "X", "Out");
        ir_op_set_output1(op, "Out", xg->args[i]);
        ir_op_set_float(op, "scale", 1.0f);
    }
    return true;
}

/* scale_op.cc ScaleGradMaker (E3: invoke scale(out_grad, scale, 0.0, true)). */
bool grad_fn_scale(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "scale");
    grad_set_og(c, op, false, "X", "Out");
    if (grad_has_in(c, "ScaleTensor"))
        grad_set_in(c, op, "ScaleTensor", "ScaleTensor");
    if (!grad_set_ig(c, op, false, "Out", "X", true))
        return false;
    const ir_attr *s = ir_op_attr(c->fwd, "scale");
    if (s)
        ir_op_copy_attr(op, s);
    else
        ir_op_set_float(op, "scale", 1.0f);
    ir_op_set_float(op, "bias", 0.0f);
    ir_op_set_bool(op, "bias_after_scale", true);
    const ir_attr *mk = ir_op_attr(c->fwd, "use_mkldnn");
    if (mk)
        ir_op_copy_attr(op, mk);
    return true;
}

/* split_op.h SplitGradMaker: the gradient is a forward `concat` of the
 * grads of every output. */
bool grad_fn_split(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "concat");
    grad_set_og(c, op, false, "X", "Out");
    if (grad_has_in(c, "AxisTensor"))
        grad_set_in(c, op, "AxisTensor", "AxisTensor");
    if (!grad_set_ig(c, op, false, "Out", "X", true))
        return false;
    ir_op_copy_attrs(op, c->fwd);
    return true;
}

/* cast_op.cc CastOpGradMaker: cast back, dtypes swapped. */
bool grad_fn_cast(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "cast");
    grad_set_og(c, op, false, "X", "Out");
    if (!grad_set_ig(c, op, false, "Out", "X", true))
        return false;
    ir_op_set_int(op, "out_dtype", (int32_t)ir_op_get_int(c->fwd, "in_dtype", IR_FP32));
    ir_op_set_int(op, "in_dtype", (int32_t)ir_op_get_int(c->fwd, "out_dtype", IR_FP32));
    const ir_attr *mk = ir_op_attr(c->fwd, "use_mkldnn");
    if (mk)
        ir_op_copy_attr(op, mk);
    return true;
}

/* assign_op.cc AssignGradMaker: assign(OG(Out)) -> IG(X), no attrs. */
bool grad_fn_assign(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "assign");
    grad_set_og(c, op, false, "X", "Out");
    return grad_set_ig(c, op, false, "Out", "X", true);
}

/* increment_op.cc IncrementGradOpMaker: undo the step in place; no @GRAD
 * var is involved. */
bool grad_fn_increment(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "increment");
    grad_set_out_as_in(c, op, "X", "Out");
    const ir_slot *x = grad_fwd_in(c, "X");
    ir_op_set_output(op, "Out", x->args, x->n_args);
    ir_op_set_float(op, "step", (float)-ir_op_get_float(c->fwd, "step", 1.0));
    return true;
}

/* batch_norm_op.cc BatchNormGradMaker (late E2 / E3): running stats are
 * read only with use_global_stats or is_test. */
bool grad_fn_batch_norm(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, ir_internf("%s_grad", c->fwd->type));
    grad_set_in(c, op, "X", "X");
    grad_set_og(c, op, false, "Y" GRAD_SUFFIX, "Y");
    grad_set_in(c, op, "Scale", "Scale");
    grad_set_in(c, op, "Bias", "Bias");
    grad_set_out_as_in(c, op, "SavedMean", "SavedMean");
    grad_set_out_as_in(c, op, "SavedVariance", "SavedVariance");
    if (grad_has_out(c, "ReserveSpace"))
        grad_set_out_as_in(c, op, "ReserveSpace", "ReserveSpace");
    if (ir_op_get_bool(c->fwd, "use_global_stats", false) ||
        ir_op_get_bool(c->fwd, "is_test", false)) {
        grad_set_out_as_in(c, op, "Mean", "MeanOut");
        grad_set_out_as_in(c, op, "Variance", "VarianceOut");
    }
    ir_op_copy_attrs(op, c->fwd);
    return grad_set_ig(c, op, false, "X" GRAD_SUFFIX, "X", true) &&
           grad_set_ig(c, op, false, "Scale" GRAD_SUFFIX, "Scale", true) &&
           grad_set_ig(c, op, false, "Bias" GRAD_SUFFIX, "Bias", true);
}

/* data_norm_op.cc DataNormGradMaker: the batch statistics are inputs and
 * get grads; scale_w / bias only with enable_scale_and_shift. */
bool grad_fn_data_norm(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "data_norm_grad");
    grad_set_in(c, op, "X", "X");
    grad_set_og(c, op, false, "Y" GRAD_SUFFIX, "Y");
    grad_set_in(c, op, "BatchSize", "BatchSize");
    grad_set_in(c, op, "BatchSum", "BatchSum");
    grad_set_in(c, op, "BatchSquareSum", "BatchSquareSum");
    grad_set_out_as_in(c, op, "Means", "Means");
    grad_set_out_as_in(c, op, "Scales", "Scales");
    bool shift = ir_op_get_bool(c->fwd, "enable_scale_and_shift", false);
    if (shift) {
        grad_set_in(c, op, "scale_w", "scale_w");
        grad_set_in(c, op, "bias", "bias");
    }
    ir_op_copy_attrs(op, c->fwd);
    bool ok = grad_set_ig(c, op, false, "X" GRAD_SUFFIX, "X", true) &&
              grad_set_ig(c, op, false, "BatchSize" GRAD_SUFFIX, "BatchSize", true) &&
              grad_set_ig(c, op, false, "BatchSum" GRAD_SUFFIX, "BatchSum", true) &&
              grad_set_ig(c, op, false, "BatchSquareSum" GRAD_SUFFIX, "BatchSquareSum", true);
    if (ok && shift)
        ok = grad_set_ig(c, op, false, "scale_w" GRAD_SUFFIX, "scale_w", true) &&
             grad_set_ig(c, op, false, "bias" GRAD_SUFFIX, "bias", true);
    return ok;
}

/* sequence_pool_op.cc: MaxIndex is read only for MAX pooling. */
bool grad_fn_sequence_pool(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "sequence_pool_grad");
    grad_set_in(c, op, "X", "X");
    const char *pt = ir_op_get_string(c->fwd, "pooltype");
    if (pt && strcmp(pt, "MAX") == 0)
        grad_set_out_as_in(c, op, "MaxIndex", "MaxIndex");
    grad_set_og(c, op, false, "Out" GRAD_SUFFIX, "Out");
    ir_op_copy_attrs(op, c->fwd);
    return grad_set_ig(c, op, false, "X" GRAD_SUFFIX, "X", true);
}

/* sequence_conv_op.cc: PaddingData only when paddingTrainable. */
bool grad_fn_sequence_conv(grad_ctx *c)
{
    ir_op *op = grad_new_op(c, "sequence_conv_grad");
    ir_op_copy_attrs(op, c->fwd);
    if (ir_op_get_bool(c->fwd, "paddingTrainable", false) && grad_has_in(c, "PaddingData")) {
        grad_set_in(c, op, "PaddingData", "PaddingData");
        if (!grad_set_ig(c, op, false, "PaddingData" GRAD_SUFFIX, "PaddingData", true))
            return false;
    }
    grad_set_in(c, op, "X", "X");
    grad_set_in(c, op, "Filter", "Filter");
    grad_set_og(c, op, false, "Out" GRAD_SUFFIX, "Out");
    return grad_set_ig(c, op, false, "X" GRAD_SUFFIX, "X", true) &&
           grad_set_ig(c, op, false, "Filter" GRAD_SUFFIX, "Filter", true);
}
