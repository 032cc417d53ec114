/* fold.c - _fuse_param's arithmetic with numpy's dtypes (see fold.h and
 * the note's §3 and §11: float32 everywhere except pattern A's bias). */
#include <math.h>

#include "../../ir/ir.h"
#include "fold.h"

const char *fold_check(const fold_inputs *in)
{
    const ir_tensor *vecs[] = {in->scale, in->bn_bias, in->mean, in->variance,
                               in->add_bias};
    static const char *const names[] = {"batch_norm Scale", "batch_norm Bias",
                                  "batch_norm Mean", "batch_norm Variance",
                                  "elementwise_add Y"};
    if (in->filter->dtype != IR_FP32)
        return "the conv Filter is not FP32";
    if (in->filter->n_dims < 1 || in->filter->dims[0] < 1)
        return "the conv Filter has no output channels";
    int64_t c = in->filter->dims[0];
    for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++) {
        if (!vecs[i])
            continue;
        if (vecs[i]->dtype != IR_FP32)
            return names[i];
        if (ir_tensor_numel(vecs[i]) != c)
            return names[i];
    }
    return NULL;
}

/* Each statement is one numpy operation, rounded to its dtype: the
 * compiler must neither fuse (-ffp-contract is off under -std=c11) nor
 * keep excess precision (SSE on x86-64). */
void fold_compute(const fold_inputs *in, ir_tensor *filter_out, ir_tensor *bias_out)
{
    size_t c = (size_t)in->filter->dims[0];
    size_t k = (size_t)ir_tensor_numel(in->filter) / c;
    ir_tensor_alloc(filter_out, IR_FP32, in->filter->dims, in->filter->n_dims);
    ir_tensor_alloc(bias_out, IR_FP32, in->bn_bias->dims, in->bn_bias->n_dims);
    const float eps = (float)1e-5;
    for (size_t ch = 0; ch < c; ch++) {
        float var_eps = ir_tensor_get_f32(in->variance, ch) + eps;
        float std = sqrtf(var_eps);
        float t = ir_tensor_get_f32(in->scale, ch) / std;
        float mean = ir_tensor_get_f32(in->mean, ch);
        float bn_bias = ir_tensor_get_f32(in->bn_bias, ch);
        float b;
        if (in->add_bias) {
            float centered = ir_tensor_get_f32(in->add_bias, ch) - mean;
            float scaled = centered * t;
            b = scaled + bn_bias;
        } else {
            double centered = 0.0 - (double)mean;
            double scaled = centered * (double)t;
            double sum = scaled + (double)bn_bias;
            b = (float)sum;
        }
        ir_tensor_set_f32(bias_out, ch, b);
        for (size_t j = 0; j < k; j++) {
            float w = ir_tensor_get_f32(in->filter, ch * k + j) * t;
            ir_tensor_set_f32(filter_out, ch * k + j, w);
        }
    }
}
