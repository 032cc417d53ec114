/* table.c - the one registry of gradient makers, grouped by op family.
 *
 * Row forms (see grad.h / grad.c for the spec tokens):
 *   NOGRAD(t)                   Paddle registers EmptyGradOpMaker (or
 *                               REGISTER_OP_WITHOUT_GRADIENT): no gradient
 *   DEF(t)                      DefaultGradOpMaker<OpDesc, true>
 *   SPEC(t, grad, ins, outs, f) a hand-written SingleGradOpMaker
 *   FN(t, fn)                   a maker with attr-dependent slots
 * Sources: ../shared/reference/grad-ops.md section numbers in the comments,
 * and the Paddle operator file named there. */
#include "grad.h"
#include "ir/env.h"
#include "ir/util.h"

#include <string.h>

#define NOGRAD(t) {t, GM_NONE, NULL, NULL, NULL, 0, NULL}
#define DEF(t) {t, GM_DEFAULT, NULL, NULL, NULL, 0, NULL}
#define SPEC(t, g, i, o, f) {t, GM_SPEC, g, i, o, f, NULL}
#define FN(t, fn) {t, GM_FN, NULL, NULL, NULL, 0, fn}

/* Activations (5.3, activation_op.cc ActivationGradOpMaker): the grad reads
 * Out (kDepOut) or X (kDepX); X is added for mkldnn. */
#define ACT_OUT(t) SPEC(t, NULL, "O:Out OG:Out", "IG:X", GF_MKLDNN_X)
#define ACT_X(t) SPEC(t, NULL, "X OG:Out", "IG:X", GF_MKLDNN_X)
/* Ops whose gradient is zero almost everywhere: only Out@GRAD. */
#define ACT_NONE(t) SPEC(t, NULL, "OG:Out", "IG:X", GF_MKLDNN_X)

#define BINARY(t) SPEC(t, NULL, "X Y OG:Out", "IG:X IG:Y", 0)
#define XSHAPE(t) SPEC(t, NULL, "O:XShape OG:Out", "IG:X", 0)

static const grad_maker table[] = {
    /* ---- elementwise binary (5.1) ---- */
    BINARY("elementwise_add"),
    BINARY("elementwise_sub"),
    BINARY("elementwise_mul"),
    SPEC("elementwise_div", NULL, "X Y O:Out OG:Out", "IG:X IG:Y", 0),
    BINARY("elementwise_max"),
    BINARY("elementwise_min"),
    BINARY("elementwise_pow"),
    BINARY("elementwise_mod"),
    BINARY("elementwise_floordiv"),
    NOGRAD("grad_add"),

    /* ---- matrix multiplication (5.2) ---- */
    BINARY("mul"),
    BINARY("matmul"),
    BINARY("matmul_v2"),
    SPEC("bmm", NULL, "X Y OG:Out", "IG:X IG:Y", 0),

    /* ---- activations (5.3) ---- */
    ACT_OUT("relu"),
    ACT_OUT("sigmoid"),
    ACT_OUT("tanh"),
    ACT_OUT("exp"),
    ACT_OUT("sqrt"),
    ACT_OUT("rsqrt"),
    ACT_OUT("reciprocal"),
    ACT_OUT("relu6"),
    ACT_OUT("hard_sigmoid"),
    ACT_X("square"),
    ACT_X("log"),
    ACT_X("log2"),
    ACT_X("log10"),
    ACT_X("log1p"),
    ACT_X("leaky_relu"),
    ACT_X("hard_swish"),
    ACT_X("swish"),
    ACT_X("silu"),
    ACT_X("mish"),
    ACT_X("abs"),
    ACT_X("softplus"),
    ACT_X("softsign"),
    ACT_X("softshrink"),
    ACT_X("hard_shrink"),
    ACT_X("tanh_shrink"),
    ACT_X("logsigmoid"),
    ACT_X("brelu"),
    ACT_X("soft_relu"),
    ACT_X("stanh"),
    ACT_X("thresholded_relu"),
    ACT_X("sin"),
    ACT_X("cos"),
    ACT_X("elu"),
    ACT_X("celu"),
    ACT_NONE("ceil"),
    ACT_NONE("floor"),
    ACT_NONE("round"),
    SPEC("gelu", NULL, "X OG:Out", "IG:X", 0),
    SPEC("pow", NULL, "X ?FactorTensor OG:Out", "IG:X", 0),
    SPEC("clip", NULL, "X ?Min ?Max OG:Out", "IG:X", 0),
    SPEC("prelu", NULL, "X Alpha OG:Out", "IG:X IG:Alpha", 0),

    /* ---- softmax family and losses (5.4) ---- */
    SPEC("softmax", NULL, "O:Out OG:Out", "IG:X", 0),
    SPEC("log_softmax", NULL, "O:Out OG:Out", "IG:X", 0),
    SPEC("cross_entropy", NULL, "X Label OG:Y", "IG:X", 0),
    SPEC("cross_entropy2", "cross_entropy_grad2", "Label O:MatchX O:XShape OG:Y", "IG:X", 0),
    SPEC("softmax_with_cross_entropy", NULL, "Label O:Softmax OG:Loss", "IG:Logits", 0),
    SPEC("sigmoid_cross_entropy_with_logits", NULL, "X Label ?pos_weight OG:Out", "IG:X", 0),
    SPEC("log_loss", NULL, "Predicted Labels OG:Loss", "IG:Predicted", 0),
    SPEC("huber_loss", NULL, "O:Residual OG:Out", "IG:X IG:Y", 0),

    /* ---- reductions, sum, scale, mean (5.5) ---- */
    SPEC("mean", NULL, "X OG:Out", "IG:X", GF_NO_ATTRS),
    SPEC("reduce_sum", NULL, "X OG:Out", "IG:X", 0),
    SPEC("reduce_mean", NULL, "X OG:Out", "IG:X", 0),
    SPEC("reduce_max", NULL, "X O:Out OG:Out", "IG:X", 0),
    SPEC("reduce_min", NULL, "X O:Out OG:Out", "IG:X", 0),
    SPEC("reduce_prod", NULL, "X O:Out OG:Out", "IG:X", 0),
    FN("sum", grad_fn_sum),
    FN("scale", grad_fn_scale),

    /* ---- convolution, pooling, normalization, dropout (5.6) ---- */
    SPEC("conv2d", NULL, "Input Filter ?Bias OG:Output", "IG:Input IG:Filter ?IG:Bias", 0),
    SPEC("depthwise_conv2d", NULL, "Input Filter ?Bias OG:Output",
         "IG:Input IG:Filter ?IG:Bias", 0),
    SPEC("conv3d", NULL, "Input Filter ?ResidualData OG:Output", "IG:Input IG:Filter", 0),
    SPEC("conv2d_transpose", NULL, "Input Filter ?Bias OG:Output",
         "IG:Input IG:Filter ?IG:Bias", 0),
    SPEC("depthwise_conv2d_transpose", NULL, "Input Filter ?Bias OG:Output",
         "IG:Input IG:Filter ?IG:Bias", 0),
    DEF("pool2d"),
    DEF("pool3d"),
    FN("batch_norm", grad_fn_batch_norm),
    FN("sync_batch_norm", grad_fn_batch_norm),
    SPEC("layer_norm", NULL, "X O:Mean O:Variance ?Scale ?Bias OG:Y",
         "IG:X ?IG:Scale ?IG:Bias", 0),
    SPEC("instance_norm", NULL, "X Scale O:SavedMean O:SavedVariance OG:Y",
         "IG:X IG:Scale IG:Bias", 0),
    /* 2.x GroupNormGradMaker and 3.x group_norm_grad(x, scale, bias, y,
     * mean, variance, y_grad); fluid 1.x read neither X nor Mean. */
    SPEC("group_norm", NULL, "X Scale Bias O:Y O:Mean O:Variance OG:Y",
         "IG:X IG:Scale IG:Bias", 0),
    SPEC("dropout", NULL, "O:Mask OG:Out", "IG:X", 0),
    FN("data_norm", grad_fn_data_norm),
    SPEC("affine_channel", NULL, "X Scale OG:Out", "IG:X IG:Scale IG:Bias", 0),

    /* ---- embedding lookups (5.7) ---- */
    SPEC("lookup_table", NULL, "W Ids OG:Out", "IG:W", 0),
    SPEC("lookup_table_v2", NULL, "W Ids OG:Out", "IG:W", 0),
    /* nce_op.cc NCEGradOpMaker: every input, the two sample outputs and
     * Cost@GRAD; Weight@GRAD is SELECTED_ROWS with is_sparse. */
    SPEC("nce", NULL,
         "Input Label Bias Weight O:SampleLogits O:SampleLabels SampleWeight CustomDistProbs "
         "CustomDistAlias CustomDistAliasProbs OG:Cost",
         "IG:Input IG:Bias IG:Weight", 0),

    /* ---- shape ops with XShape (5.8) ---- */
    XSHAPE("reshape2"),
    XSHAPE("transpose2"),
    XSHAPE("flatten_contiguous_range"),
    XSHAPE("flatten2"),
    XSHAPE("squeeze2"),
    XSHAPE("unsqueeze2"),
    /* v1 shape ops: DefaultGradOpMaker or X + Out@GRAD */
    DEF("reshape"),
    SPEC("transpose", NULL, "X OG:Out", "IG:X", 0),
    SPEC("squeeze", NULL, "X OG:Out", "IG:X", 0),
    SPEC("unsqueeze", NULL, "X OG:Out", "IG:X", 0),
    SPEC("flatten", NULL, "X OG:Out", "IG:X", 0),

    /* ---- concat, split, slice, stack, gather (5.9) ---- */
    SPEC("concat", NULL, "X ?AxisTensor OG:Out", "IG*:X", 0),
    FN("split", grad_fn_split),
    SPEC("slice", NULL,
         "Input ?StartsTensor ?EndsTensor ?StartsTensorList ?EndsTensorList OG:Out",
         "IG:Input", 0),
    SPEC("strided_slice", NULL,
         "Input ?StartsTensor ?EndsTensor ?StridesTensor ?StartsTensorList "
         "?EndsTensorList ?StridesTensorList OG:Out",
         "IG:Input", 0),
    SPEC("stack", NULL, "X OG:Y", "IG*:X", 0),
    SPEC("gather", NULL, "X Index ?Axis OG:Out", "IG:X", 0),
    SPEC("gather_nd", NULL, "X Index OG:Out", "IG:X", 0),
    SPEC("expand", NULL, "X ?ExpandTimes ?expand_times_tensor OG:Out", "IG:X", 0),
    SPEC("expand_v2", NULL, "X ?Shape ?expand_shapes_tensor OG:Out", "IG:X", 0),
    SPEC("tile", NULL, "X ?RepeatTimes ?repeat_times_tensor OG:Out", "IG:X", 0),
    SPEC("pad", NULL, "X OG:Out", "IG:X", 0),
    SPEC("pad2d", NULL, "X ?Paddings OG:Out", "IG:X", 0),
    SPEC("pad3d", NULL, "X ?Paddings OG:Out", "IG:X", 0),

    /* ---- ops whose grad is a forward op (5.10) ---- */
    FN("cast", grad_fn_cast),
    FN("assign", grad_fn_assign),
    FN("increment", grad_fn_increment),

    /* ---- sequence (LoD) ops (5.11) and RNNs ---- */
    FN("sequence_pool", grad_fn_sequence_pool),
    FN("sequence_conv", grad_fn_sequence_conv),
    SPEC("sequence_expand", NULL, "X Y OG:Out", "IG:X", 0),
    SPEC("gru", NULL,
         "Input H0 Bias Weight O:BatchGate O:BatchResetHiddenPrev O:BatchHidden O:Hidden "
         "OG:Hidden",
         "IG:H0 IG:Input IG:Weight IG:Bias", 0),
    /* lstm_op.cc LSTMGradOpDescMaker: H0/C0 only when the forward op has
     * the slot (Inputs().count), even empty; all attrs. */
    SPEC("lstm", NULL,
         "Input ?H0 ?C0 Weight Bias O:Cell O:Hidden OG:Hidden O:BatchGate O:BatchCellPreAct",
         "IG:Input ?IG:H0 ?IG:C0 IG:Weight IG:Bias", 0),
    /* im2sequence_op.cc Im2SequenceGradMaker: no Y (the real-size input). */
    SPEC("im2sequence", NULL, "X OG:Out", "IG:X", 0),
    /* warpctc_op.cc WarpCTCGradOpMaker: LogitsLength always set (empty when
     * the forward op has none); no Label. */
    SPEC("warpctc", NULL, "O:WarpCTCGrad Logits OG:Loss LogitsLength", "IG:Logits", 0),

    /* ---- top_k (5.12) ---- */
    SPEC("top_k", NULL, "X O:Indices OG:Out", "IG:X", GF_NO_ATTRS),
    SPEC("top_k_v2", NULL, "X O:Indices OG:Out", "IG:X", 0),

    /* ---- interpolation and quantization ---- */
    SPEC("nearest_interp", NULL, "X ?OutSize ?SizeTensor ?Scale OG:Out", "IG:X", 0),
    SPEC("bilinear_interp", NULL, "X ?OutSize ?SizeTensor ?Scale OG:Out", "IG:X", 0),
    SPEC("nearest_interp_v2", NULL, "X ?OutSize ?SizeTensor ?Scale OG:Out", "IG:X", 0),
    SPEC("bilinear_interp_v2", NULL, "X ?OutSize ?SizeTensor ?Scale OG:Out", "IG:X", 0),
    /* fake_quantize_op.cc FakeQuantDequantGradMaker: straight-through. */
    SPEC("fake_quantize_dequantize_moving_average_abs_max", "fake_quantize_dequantize_grad",
         "OG:Out", "IG:X", 0),
    SPEC("fake_quantize_dequantize_abs_max", "fake_quantize_dequantize_grad", "OG:Out",
         "IG:X", 0),
    SPEC("fake_channel_wise_quantize_dequantize_abs_max", "fake_quantize_dequantize_grad",
         "OG:Out", "IG:X", 0),

    /* ---- control flow (4.5; grad sub-blocks) ---- */
    FN("conditional_block", grad_fn_conditional_block),
    FN("while", grad_fn_while),

    /* ---- ops without gradients (5.13) ---- */
    NOGRAD("fc"),
    NOGRAD("accuracy"),
    NOGRAD("auc"),
    NOGRAD("fill_constant"),
    NOGRAD("fill_constant_batch_size_like"),
    NOGRAD("fill_any_like"),
    NOGRAD("fill_zeros_like"),
    NOGRAD("uniform_random"),
    NOGRAD("gaussian_random"),
    NOGRAD("truncated_gaussian_random"),
    NOGRAD("shape"),
    NOGRAD("feed"),
    NOGRAD("fetch"),
    NOGRAD("less_than"),
    NOGRAD("less_equal"),
    NOGRAD("greater_than"),
    NOGRAD("greater_equal"),
    NOGRAD("equal"),
    NOGRAD("not_equal"),
    NOGRAD("logical_and"),
    NOGRAD("logical_or"),
    NOGRAD("logical_not"),
    NOGRAD("logical_xor"),
    NOGRAD("arg_max"),
    NOGRAD("arg_min"),
    NOGRAD("argsort"),
    NOGRAD("one_hot"),
    NOGRAD("one_hot_v2"),
    NOGRAD("range"),
    NOGRAD("assign_value"),
    NOGRAD("seed"),
    NOGRAD("box_coder"),
    NOGRAD("prior_box"),
    NOGRAD("density_prior_box"),
    NOGRAD("anchor_generator"),
    NOGRAD("multiclass_nms"),
    NOGRAD("multiclass_nms2"),
    NOGRAD("multiclass_nms3"),
    NOGRAD("yolo_box"),
    NOGRAD("crf_decoding"),
    NOGRAD("fake_dequantize_max_abs"),
    NOGRAD("fake_channel_wise_dequantize_max_abs"),
    NOGRAD("fake_quantize_abs_max"),
    NOGRAD("fake_quantize_range_abs_max"),
    NOGRAD("fake_quantize_moving_average_abs_max"),
    NOGRAD("fake_channel_wise_quantize_abs_max"),
    NOGRAD("moving_average_abs_max_scale"),
    NOGRAD("quantize_linear"),
    NOGRAD("dequantize_linear"),
    NOGRAD("is_empty"),
    NOGRAD("isfinite"),
    NOGRAD("isfinite_v2"),
    NOGRAD("isnan_v2"),
    NOGRAD("isinf_v2"),
    NOGRAD("sampling_id"),
    NOGRAD("read"),
    NOGRAD("create_py_reader"),
    NOGRAD("sgd"),
    NOGRAD("momentum"),
    NOGRAD("adam"),
    NOGRAD("adamw"),
    NOGRAD("adamax"),
    NOGRAD("adagrad"),
    NOGRAD("decayed_adagrad"),
    NOGRAD("rmsprop"),
    NOGRAD("ftrl"),
    NOGRAD("lars_momentum"),
    NOGRAD("send"),
    NOGRAD("recv"),
    NOGRAD("send_barrier"),
    NOGRAD("fetch_barrier"),
    NOGRAD("listen_and_serv"),
    NOGRAD("c_allreduce_sum"),
    NOGRAD("c_broadcast"),
    NOGRAD("c_sync_calc_stream"),
    NOGRAD("c_sync_comm_stream"),
    /* Registered with EmptyGradOpMaker (ctc_align_op.cc) or with no grad
     * maker at all (readers, gen_nccl_id, fl_listen_and_serv): never on a
     * gradient path. */
    NOGRAD("ctc_align"),
    NOGRAD("create_double_buffer_reader"),
    NOGRAD("gen_nccl_id"),
    NOGRAD("fl_listen_and_serv"),
};

#undef NOGRAD
#undef DEF
#undef SPEC
#undef FN


const grad_maker *grad_maker_find(const char *type)
{
    /* The table is static and small; the index is keyed by interned names,
     * so it lives in the env, which ends with them (ir_intern_shutdown). */
    pmap *index_by_type = pdt_env_get(PDT_ENV_GRAD_INDEX);
    if (!index_by_type) {
        index_by_type = pdt_env_put(PDT_ENV_GRAD_INDEX, xcalloc(1, sizeof *index_by_type),
                                    pdt_env_free_pmap);
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
            pmap_put(index_by_type, ir_intern(table[i].type), (void *)&table[i]);
    }
    return pmap_get(index_by_type, ir_intern(type));
}

/* Grad ops whose InferShape sets dims without ShareLoD (Paddle's
 * *_op.cc GradOp::InferShape): mul_op.cc MulGradOp, clip_op.cc,
 * softmax_op.cc SoftmaxOpGrad, data_norm_op.cc, lstm_op.cc LSTMGradOp,
 * im2sequence_op.cc Im2SequenceGradOp.  sum_op.cc SumOp shares X[0]'s. */
static const char *const no_share_lod[] = {
    "mul_grad", "clip_grad", "softmax_grad", "data_norm_grad", "lstm_grad",
    "im2sequence_grad",
    /* Confirmed on the real training programs (tests/regen): Paddle wrote
     * no lod_level on what these grad ops create. */
    "batch_norm_grad", "conv2d_grad", "depthwise_conv2d_grad", "conv2d_transpose_grad",
    "pool2d_grad", "nearest_interp_grad", "slice_grad", "softmax_with_cross_entropy_grad",
    "log_loss_grad",
    /* The loss grad: fill_constant has no input to share from. */
    "fill_constant",
};

/* Forward ops that serve as grad ops: their InferShape shares the LoD of
 * their own input X (sum_op.cc, scale_op.cc, cast_op.cc, assign_op.cc). */
static const char *const share_first_input[] = {"sum", "scale", "cast", "assign",
                                                 "fill_any_like"};

grad_lod grad_lod_rule(const char *grad_type)
{
    for (size_t i = 0; i < sizeof share_first_input / sizeof *share_first_input; i++)
        if (!strcmp(grad_type, share_first_input[i]))
            return GRAD_LOD_FIRST_INPUT;
    for (size_t i = 0; i < sizeof no_share_lod / sizeof *no_share_lod; i++)
        if (!strcmp(grad_type, no_share_lod[i]))
            return GRAD_LOD_NONE;
    return GRAD_LOD_FORWARD;
}

const grad_maker *grad_makers(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}
