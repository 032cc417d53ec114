/* fold.h - the arithmetic of Paddle's InferenceTranspiler._fuse_param,
 * separate from the program rewrite so tests can check it directly. */
#ifndef PDT_INFERENCE_FOLD_H
#define PDT_INFERENCE_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "../../ir/tensors.h"

/* The inputs of one fold site, all FP32: the conv Filter ([C, ...]), the
 * batch_norm Scale, Bias, Mean and Variance ([C] each) and, for pattern B,
 * the existing bias add's Y ([C]; NULL for pattern A). */
typedef struct {
    const ir_tensor *filter, *scale, *bn_bias, *mean, *variance, *add_bias;
} fold_inputs;

/* Why a site cannot be folded (NULL when it can): a dtype other than FP32,
 * a filter of rank < 1, or a vector whose length is not the filter's
 * output-channel count C.  The text names the offending input. */
const char *fold_check(const fold_inputs *in);

/* Computes the folded filter and bias into `filter_out` (the filter's
 * shape) and `bias_out` ([C], the shape of bn_bias), as numpy computes
 * _fuse_param: std = sqrt(var + float32(1e-5)) and t = scale / std in
 * float32; W' = W * t per output channel in float32; b' = (b - mean) * t
 * + bn_bias in float32 for pattern B, and for pattern A (b = float64
 * zeros) in float64, rounded once to float32. */
void fold_compute(const fold_inputs *in, ir_tensor *filter_out, ir_tensor *bias_out);

#endif
