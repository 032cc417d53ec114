/* gradient_clip_2x.c - `--clip=global_norm` for a Paddle 2.2 or later
 * target: ClipGradByGlobalNorm._static_clip of 2.x fluid/clip.py and of
 * python/paddle/nn/clip.py (2.5 on; the legacy-IR branch of 3.x).
 *
 * Per gradient, under its own (param, grad) guard, _squared_l2_norm:
 *   - one squared_l2_norm -> squared_l2_norm_N.tmp_0 of the grad's dtype
 *     (PR #34586, 2.2);
 *   - FP16 before 2.5: square -> reduce_sum instead (fluid layers; PR
 *     #33565, merged 2021-09-10: in the v2.2.0 tag, not in v2.1.3); from
 *     2.5 FP16 takes squared_l2_norm too (its FP16 kernel: PR #48315,
 *     2023-01; the v2.5.0 tag's nn/clip.py);
 *   - BF16 (2.5 on): squared_l2_norm of the grad's dtype too (its BF16
 *     kernel: PR #50908, 2023-02).  Before 2.5 refused: clip.py had no
 *     BF16 case.
 * The squared norms go to lists by dtype (FP16, BF16 from 2.5: PR #51285,
 * in release/2.5 by #52816, 2023-04-12; FP32; other; FP16 and BF16
 * together raise NotSupportedError, refused here) and,
 * under the last pair's guard, each list is summed apart: sum op via
 * fluid's layers.sums (sum_N.tmp_0, use_mkldnn false) before 2.5, via
 * paddle.add_n (add_n_N.tmp_0) from 2.5 (fluid API removal, PR #48946
 * Dec 2022: v2.4.2 still has fluid/clip.py, v2.5.0 nn/clip.py).  2.5's
 * add_n passes attrs={'use_mkldnn': False}, 3.x's attrs={}; both end with
 * use_mkldnn false (check_attrs: era.def's sum row), so no attr here.  The FP16 (or BF16) sum is cast to the sum dtype (FP64
 * when an FP64 list exists, else FP32) by Variable.astype: a cast op into
 * create_new_tmp_var's tmp_N; so is the FP32 sum when the sum dtype is
 * FP64.  More than one part: one more sum.  Then sqrt, fill_constant(
 * clip_norm) of the sum dtype, elementwise_max(X=clip, Y=norm),
 * elementwise_div(clip, max): fluid layers before 2.5, paddle.sqrt /
 * full / maximum / divide after, which write the same op types, names
 * (elementwise_max_N: LayerHelper sets kwargs['name']) and attrs.
 * Last, per gradient under its guard: an FP16 grad first casts the scale
 * to FP16 (astype('float16') -> tmp_N), a BF16 grad to BF16
 * (astype('bfloat16')), then elementwise_mul(X=g, Y=scale)
 * -> g in place, a bare block.append_op without attrs. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "gradient_clip.h"

/* nn/clip.py's paddle.add_n / full / maximum / divide (the fluid API's
 * removal from develop after the 2.4 cut, Nov-Dec 2022): the v2.5.0 tag
 * has them, v2.4.2 fluid/clip.py's layers.sums (research-2x-3x.md 4g). */
#define CLIP_PADDLE_API_FROM 205
/* squared_l2_norm for FP16 gradients too: the v2.5.0-v2.5.2 tags'
 * nn/clip.py _squared_l2_norm sends only XPU builds to square -> sum and
 * checks float16/uint16 for squared_l2_norm (research-2x-3x.md 4g); the
 * v2.4.x fluid/clip.py still sends FP16 to square -> reduce_sum. */
#define CLIP_FP16_SQL2_FROM 205
/* The BF16 list and scale cast (PR #51285, cherry-picked to release/2.5 by
 * #52816 "the support of bf16 of grad_clip", 2023-04-12) over
 * squared_l2_norm's BF16 kernel (PR #50908, 2023-02); the v2.5.0 tag's
 * _squared_l2_norm checks 'uint16' and _static_clip has the BF16 list. */
#define CLIP_BF16_FROM 205

typedef struct {
    pdt_ctx *ctx;
    opt_namer *names;
    opt_ops *ops;
    const char *scope;
    size_t *owner;      /* per op pushed: its (param, grad) index */
    size_t n_owner;
} clip2x;

static void push(clip2x *c, ir_op *op, size_t pair)
{
    opt_ops_push(c->ops, op);
    c->owner[c->n_owner++] = pair;
}

static ir_op *new_op(clip2x *c, const char *type, size_t pair)
{
    return opt_op_new(c->ctx->main, type, IR_ROLE_OPTIMIZE, c->scope,
                      c->ctx->bw_params.items[pair], c->ctx->bw_grads.items[pair], NULL);
}

/* X -> Out op with no attrs. */
static ir_op *unary(clip2x *c, const char *type, const char *x, const char *out, size_t pair)
{
    ir_op *op = new_op(c, type, pair);
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    return op;
}

/* A [1] var of DTYPE written by create_variable_for_type_inference. */
static const char *tmp_1(clip2x *c, const char *name, int dtype)
{
    opt_var_like(ir_program_block(c->ctx->main, 0), name, NULL, true, false)->dtype = dtype;
    return name;
}

/* Variable.astype(dtype): create_new_tmp_var (unique_name "tmp", a
 * block.create_var with the dtype only: persistable not written) and a
 * cast with in_dtype / out_dtype; cast's InferShape copies X's dims. */
static const char *astype(clip2x *c, const char *x, int from, int to, size_t pair)
{
    const char *out = opt_namer_gen(c->names, "tmp");
    opt_var_like(ir_program_block(c->ctx->main, 0), out, NULL, false, false)->dtype = to;
    ir_op *op = unary(c, "cast", x, out, pair);
    ir_op_set_int(op, "in_dtype", from);
    ir_op_set_int(op, "out_dtype", to);
    push(c, op, pair);
    return out;
}

/* layers.sums / paddle.add_n over XS (all of DTYPE). */
static const char *sums(clip2x *c, const char **xs, size_t n, int dtype, size_t pair)
{
    bool api = c->ctx->settings.era >= CLIP_PADDLE_API_FROM;
    const char *out = tmp_1(c, opt_namer_layer_tmp(c->names, api ? "add_n" : "sum"), dtype);
    ir_op *op = new_op(c, "sum", pair);
    ir_op_set_input(op, "X", xs, n);
    ir_op_set_output1(op, "Out", out);
    if (!api)
        ir_op_set_bool(op, "use_mkldnn", false);
    push(c, op, pair);
    return out;
}

/* _squared_l2_norm of gradient I. */
static const char *squared_norm(clip2x *c, size_t i, const ir_var *gv)
{
    const char *g = c->ctx->bw_grads.items[i];
    ir_block *b = ir_program_block(c->ctx->main, 0);
    if (gv->dtype == IR_FP16 && c->ctx->settings.era < CLIP_FP16_SQL2_FROM) {
        /* layers.square (shaped like the grad) and layers.reduce_sum
         * (dim None: dim [0], reduce_all; the input's dtype) */
        const char *sq = opt_namer_layer_tmp(c->names, "square");
        opt_var_like(b, sq, gv, true, false);
        push(c, unary(c, "square", g, sq, i), i);
        const char *sum = tmp_1(c, opt_namer_layer_tmp(c->names, "reduce_sum"), gv->dtype);
        ir_op *rs = unary(c, "reduce_sum", sq, sum, i);
        const int32_t dim0 = 0;
        ir_op_set_ints(rs, "dim", &dim0, 1);
        ir_op_set_bool(rs, "keep_dim", false);
        ir_op_set_bool(rs, "reduce_all", true);
        push(c, rs, i);
        return sum;
    }
    const char *out = tmp_1(c, opt_namer_layer_tmp(c->names, "squared_l2_norm"), gv->dtype);
    push(c, unary(c, "squared_l2_norm", g, out, i), i);
    return out;
}

/* Error text for a gradient 2.x's _static_clip cannot take, or NULL. */
static const char *refusal(const pdt_ctx *ctx, const ir_var *gv)
{
    if (gv->type == IR_SELECTED_ROWS)
        return "is SELECTED_ROWS; '--clip=global_norm' does not merge sparse gradients yet";
    if (gv->dtype == IR_BF16 && ctx->settings.era < CLIP_BF16_FROM)
        return "is BF16; Paddle's global-norm clip takes BF16 gradients from 2.5 on "
               "(--paddle-version=2.5 or later)";
    if (gv->dtype != IR_FP16 && gv->dtype != IR_BF16 && gv->dtype != IR_FP32 &&
        gv->dtype != IR_FP64)
        return "is not FP16, BF16, FP32 or FP64, which Paddle's squared_l2_norm takes";
    return NULL;
}

/* _static_clip raises NotSupportedError('FP16 and BF16 are not supported
 * at the same time.') after computing the squared norms. */
static int mixed_half(const pdt_ctx *ctx, ir_block *b)
{
    const char *h16 = NULL, *b16 = NULL;
    for (size_t i = 0; i < ctx->bw_grads.n; i++) {
        int dt = ir_block_find_var(b, ctx->bw_grads.items[i])->dtype;
        if (dt == IR_FP16 && !h16)
            h16 = ctx->bw_grads.items[i];
        if (dt == IR_BF16 && !b16)
            b16 = ctx->bw_grads.items[i];
    }
    if (!h16 || !b16)
        return PDT_OK;
    pdt_error("%s: block 0: gradients '%s' (FP16) and '%s' (BF16): Paddle's global-norm clip "
              "does not take FP16 and BF16 gradients at the same time",
              ctx->main_path, h16, b16);
    return PDT_EBADINPUT;
}

/* PDT_OK when the target's _static_clip takes every gradient. */
static int check_grads(const pdt_ctx *ctx, ir_block *b)
{
    /* Paddle raises on the mix whichever FP16 path it takes; before 2.5
     * the BF16 refusal below says more */
    if (ctx->settings.era >= CLIP_BF16_FROM && mixed_half(ctx, b) != PDT_OK)
        return PDT_EBADINPUT;
    for (size_t i = 0; i < ctx->bw_grads.n; i++) {
        const ir_var *gv = ir_block_find_var(b, ctx->bw_grads.items[i]);
        const char *why = refusal(ctx, gv);
        if (why) {
            pdt_error("%s: block 0: gradient '%s' %s", ctx->main_path, ctx->bw_grads.items[i],
                      why);
            return PDT_EBADINPUT;
        }
    }
    return PDT_OK;
}

int clip_global_norm_2x(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                        double clip_norm, const char **new_grads)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    size_t n = ctx->bw_params.n, from = ops->n;
    if (check_grads(ctx, b) != PDT_OK)
        return PDT_EBADINPUT;
    /* at most: 2 ops per grad, 4 sums, 3 casts, 1 more sum, 4 shared ops,
     * and per grad a cast and the mul */
    clip2x c = {ctx, names, ops, scope, xcalloc(4 * n + 12, sizeof(size_t)), 0};
    const char **lists[4];      /* FP16, BF16, FP32, other */
    size_t len[4] = {0, 0, 0, 0};
    const int list_dtype[4] = {IR_FP16, IR_BF16, IR_FP32, IR_FP64};
    for (int k = 0; k < 4; k++)
        lists[k] = xcalloc(n, sizeof *lists[k]);
    for (size_t i = 0; i < n; i++) {
        const ir_var *gv = ir_block_find_var(b, ctx->bw_grads.items[i]);
        int k = gv->dtype == IR_FP16 ? 0 : gv->dtype == IR_BF16 ? 1 : gv->dtype == IR_FP32 ? 2 : 3;
        lists[k][len[k]++] = squared_norm(&c, i, gv);
    }
    size_t last = n - 1;
    int sum_dtype = len[3] ? IR_FP64 : IR_FP32;
    const char *parts[4];
    size_t n_parts = 0;
    for (int k = 0; k < 4; k++) {
        if (!len[k])
            continue;
        const char *s = sums(&c, lists[k], len[k], list_dtype[k], last);
        if (k < 3 && list_dtype[k] != sum_dtype)
            s = astype(&c, s, list_dtype[k], sum_dtype, last);
        parts[n_parts++] = s;
    }
    const char *total = n_parts > 1 ? sums(&c, parts, n_parts, sum_dtype, last) : parts[0];
    const char *norm = tmp_1(&c, opt_namer_layer_tmp(names, "sqrt"), sum_dtype);
    push(&c, unary(&c, "sqrt", total, norm, last), last);
    const char *maxv = tmp_1(&c, opt_namer_layer_tmp(names, "fill_constant"), sum_dtype);
    push(&c, opt_fill_constant_op(ctx->main, maxv, sum_dtype, clip_norm, false, true,
                                  IR_ROLE_OPTIMIZE, scope, ctx->bw_params.items[last],
                                  ctx->bw_grads.items[last]),
         last);
    const char *bigger = tmp_1(&c, opt_namer_gen(names, "elementwise_max"), sum_dtype);
    const char *scale = tmp_1(&c, opt_namer_gen(names, "elementwise_div"), sum_dtype);
    const char *xy[2][2] = {{maxv, norm}, {maxv, bigger}};
    const char *outs[2] = {bigger, scale}, *types[2] = {"elementwise_max", "elementwise_div"};
    for (int j = 0; j < 2; j++) {
        ir_op *op = unary(&c, types[j], xy[j][0], outs[j], last);
        ir_op_set_input1(op, "Y", xy[j][1]);
        ir_op_set_int(op, "axis", -1);
        ir_op_set_bool(op, "use_mkldnn", false);
        push(&c, op, last);
    }
    for (size_t i = 0; i < n; i++) {
        const char *g = ctx->bw_grads.items[i];
        const char *y = scale;
        int gd = ir_block_find_var(b, g)->dtype;
        if (gd == IR_FP16 || gd == IR_BF16)
            y = astype(&c, scale, sum_dtype, gd, i);
        ir_op *op = new_op(&c, "elementwise_mul", i);
        ir_op_set_input1(op, "X", g);
        ir_op_set_input1(op, "Y", y);
        ir_op_set_output1(op, "Out", g);
        push(&c, op, i);
        new_grads[i] = g;
    }
    /* _correct_clip_op_role_var: [param, clipped grad], the grad itself */
    for (size_t k = from; k < ops->n; k++) {
        size_t i = c.owner[k - from];
        const char *rv[2] = {ctx->bw_params.items[i], new_grads[i]};
        ir_op_set_strings(ops->ops[k], "op_role_var", rv, 2);
    }
    for (int k = 0; k < 4; k++)
        free(lists[k]);
    free(c.owner);
    return PDT_OK;
}
