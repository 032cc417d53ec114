/* gradient_clip.c - the `gradient_clip` pass: the optimizer's grad_clip in
 * Paddle 1.8 (GradientClipByValue / ByNorm / ByGlobalNorm._static_clip).
 * Every op goes under the one name scope "/gradient_clip/" with role
 * Optimize; _correct_clip_op_role_var then sets op_role_var to
 * [param, clipped grad].  The clipped grads replace the gradients for the
 * later passes (regularization, optimizer).
 *   value:       clip(X=g, min, max) -> clip_N.tmp_0
 *   norm:        clip_by_norm(X=g, max_norm) -> clip_by_norm_N.tmp_0
 *   global_norm: per grad square -> reduce_sum; then sum, sqrt,
 *                fill_constant(clip_norm), elementwise_max, elementwise_div;
 *                per grad elementwise_mul(g, scale)
 * For a 1.4-1.7 target every op goes under its (param, grad) pair's own
 * scopes, global_norm's fill_constant first (clip_global_norm_1x: the
 * append_gradient_clip_ops of clip.py v1.4.1-v1.7.2).
 * For a Paddle 2.2 or later target (--paddle-version, ctx->settings.era)
 * global_norm is written by gradient_clip_2x.c, as that version's
 * clip.py builds it (one squared_l2_norm per grad, sums per dtype with
 * casts, the scaling in place).  An op sequence, so not an era.def row:
 * the one place a family looks at the target version.  1.8's clip.py has
 * no FP16 case (FP16 gradients are refused before 2.2: half_refusal).
 * Its fill_constant(clip_norm) is float32 whatever the gradients' dtype,
 * so with FP64 gradients elementwise_max(float32, FP64 norm) fails in
 * Paddle at run time; PR #27437 "Fix GradientClipByGlobalNorm dtype bug"
 * (merged 2020-09, so 2.0 (R)) gives it the norm's dtype, and pdtrans does
 * so for every target: for 2.0-2.1 that is what Paddle writes, before 2.0
 * a deliberate difference (README).  BF16 gradients are refused before
 * 2.5 (no BF16 case in clip.py; gradient_clip_2x.c writes 2.5's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "../era/era.h"
#include "gradient_clip.h"

int opt_parse_clip(const char *cmd, const char *text, opt_clip_kind *kind, double *max, double *min)
{
    static const struct {
        const char *name;
        opt_clip_kind kind;
        const char *first_key;
    } kinds[] = {{"value", OPT_CLIP_VALUE, "max"},
                 {"norm", OPT_CLIP_NORM, "clip_norm"},
                 {"global_norm", OPT_CLIP_GLOBAL_NORM, "clip_norm"}};
    const char *colon = text ? strchr(text, ':') : NULL;
    size_t klen = colon ? (size_t)(colon - text) : (text ? strlen(text) : 0);
    int k = -1;
    for (int i = 0; i < 3; i++)
        if (strlen(kinds[i].name) == klen && strncmp(text, kinds[i].name, klen) == 0)
            k = i;
    if (k < 0 || !colon) {
        pdt_usage_error(cmd,
                        "option '--clip' needs value:MAX, norm:MAX or global_norm:MAX, not '%s'",
                        text ? text : "");
        return PDT_EUSAGE;
    }
    *kind = kinds[k].kind;
    /* "value:1.0" is short for "value:max=1.0", also before ",min=...":
     * only the first item decides. */
    char buf[256];
    const char *spec = text;
    size_t first_len = strcspn(colon + 1, ",");
    if (!memchr(colon + 1, '=', first_len)) {
        snprintf(buf, sizeof buf, "%.*s:%s=%s", (int)klen, text, kinds[k].first_key, colon + 1);
        spec = buf;
    }
    opt_spec s;
    int rc = opt_spec_parse(cmd, "--clip", spec, &s);
    bool has_min = false;
    if (rc == PDT_OK) {
        for (size_t i = 0; i < s.n; i++)
            has_min |= strcmp(s.keys[i], "min") == 0;
        rc = opt_spec_double(&s, kinds[k].first_key, NULL, 0.0, max);
    }
    if (rc == PDT_OK && *kind == OPT_CLIP_VALUE)
        rc = opt_spec_double(&s, "min", NULL, -*max, min);
    /* group_name only separates several global-norm clips; there is one. */
    for (size_t i = 0; rc == PDT_OK && *kind == OPT_CLIP_GLOBAL_NORM && i < s.n; i++)
        if (strcmp(s.keys[i], "group_name") == 0)
            s.used[i] = true;
    if (rc == PDT_OK)
        rc = opt_spec_finish(&s);
    if (rc == PDT_OK && *kind == OPT_CLIP_VALUE && !has_min && *max <= 0) {
        pdt_usage_error(cmd, "option '--clip': key 'max' must be > 0 when 'min' is not given");
        rc = PDT_EUSAGE;
    }
    if (rc == PDT_OK && *kind != OPT_CLIP_VALUE && *max <= 0) {
        pdt_usage_error(cmd, "option '--clip': key 'clip_norm' must be > 0");
        rc = PDT_EUSAGE;
    }
    opt_spec_free(&s);
    return rc;
}

/* An output var of a layer helper: persistable=false written, shaped like
 * `like` (the inferred shape), var type of `like` when `keep_type`. */
static const char *layer_out(ir_block *b, const char *name, const ir_var *like, bool keep_type)
{
    ir_var *v = opt_var_like(b, name, like, true, false);
    if (keep_type && like) {
        v->type = like->type;
        v->tensor_slot = like->tensor_slot;
    }
    return name;
}

static ir_op *unary(ir_program *p, const char *type, const char *x, const char *out,
                    const char *scope, const char *param, const char *grad)
{
    ir_op *op = opt_op_new(p, type, IR_ROLE_OPTIMIZE, scope, param, grad, NULL);
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    return op;
}

static ir_op *binary(ir_program *p, const char *type, const char *x, const char *y,
                     const char *out, const char *scope, const char *param, const char *grad)
{
    ir_op *op = unary(p, type, x, out, scope, param, grad);
    ir_op_set_input1(op, "Y", y);
    ir_op_set_int(op, "axis", -1);
    ir_op_set_bool(op, "use_mkldnn", false);
    return op;
}

/* _correct_clip_op_role_var: every clip op names its parameter and the
 * clipped gradient, known only once all of them are named. */
static void correct_role_vars(opt_ops *ops, size_t from, const size_t *owner, const pdt_ctx *ctx,
                              const char **new_grads)
{
    for (size_t k = from; k < ops->n; k++) {
        const char *rv[2] = {ctx->bw_params.items[owner[k - from]], new_grads[owner[k - from]]};
        ir_op_set_strings(ops->ops[k], "op_role_var", rv, 2);
    }
}

/* fluid/clip.py from 2.2 (PR #34586, merged 2021-08; its NPU follow-up
 * #34836 was cherry-picked to the release branch as #35289, 2021-08-31):
 * gradient_clip_2x.c.  era.def's versions. */
#define CLIP_SQUARED_L2_FROM 202
/* clip.py v1.4.1-v1.7.2: append_gradient_clip_ops' per-pair scopes;
 * v1.7.0-v1.7.2: their "_@CLIP" names and the op_role_var fix. */
#define CLIP_PER_PAIR_UNTIL 108
#define CLIP_AT_FLAG_FROM 107

/* One gradient's squared L2 norm into ops; its output var's name. */
static const char *squared_norm(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                                const char *pn, const char *g, const ir_var *gv)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    const char *sq = layer_out(b, opt_namer_layer_tmp(names, "square"), gv, false);
    opt_ops_push(ops, unary(ctx->main, "square", g, sq, scope, pn, g));
    /* reduce_sum's output has its input's dtype (helper.input_dtype()) */
    const char *sum = layer_out(b, opt_namer_layer_tmp(names, "reduce_sum"), NULL, false);
    ir_block_find_var(b, sum)->dtype = gv->dtype;
    ir_op *rs = unary(ctx->main, "reduce_sum", sq, sum, scope, pn, g);
    const int32_t dim0 = 0;
    ir_op_set_ints(rs, "dim", &dim0, 1);
    ir_op_set_bool(rs, "keep_dim", false);
    ir_op_set_bool(rs, "reduce_all", true);
    opt_ops_push(ops, rs);
    return sum;
}

/* The scaled gradient of G: a new elementwise_mul output. */
static const char *scaled_grad(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                               const char *pn, const char *g, const char *scale)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    const char *out = layer_out(b, opt_namer_gen(names, "elementwise_mul"), ir_block_find_var(b, g),
                                false);
    opt_ops_push(ops, binary(ctx->main, "elementwise_mul", g, scale, out, scope, pn, g));
    return out;
}

/* Error text for a half-precision gradient the pre-2.2 clip cannot take,
 * or NULL.  FP16: the clip.py before PR #33565 (2.2) has no FP16 case, and
 * that PR says why: "sum and reduce_sum etc. do not support fp16"
 * (reduce_sum's FP16 kernel is PR #32966, 2021-05), so the program Paddle
 * writes cannot run and pdtrans has no runnable form of it to write.
 * BF16: no BF16 case before 2.5. */
static const char *half_refusal(const ir_var *gv)
{
    if (gv->dtype == IR_BF16)
        return "is BF16; Paddle's global-norm clip takes BF16 gradients from 2.5 on "
               "(--paddle-version=2.5 or later)";
    if (gv->dtype == IR_FP16)
        return "is FP16; Paddle's global-norm clip takes FP16 gradients from 2.2 on "
               "(before, its reduce_sum has no FP16 kernel): give --paddle-version=2.2 or later";
    return NULL;
}

/* The gradients the pre-2.2 global-norm clip refuses, said with the
 * first one's name: PDT_EBADINPUT; PDT_OK when it takes them all. */
static int refuse_global_norm(const pdt_ctx *ctx)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    const ir_var *g0 = ir_block_find_var(b, ctx->bw_grads.items[0]);
    for (size_t i = 0; i < ctx->bw_params.n; i++) {
        const char *g = ctx->bw_grads.items[i];
        const ir_var *gv = ir_block_find_var(b, g);
        if (gv->type == IR_SELECTED_ROWS) {
            pdt_error("%s: block 0: gradient '%s' is SELECTED_ROWS; '--clip=global_norm' "
                      "does not merge sparse gradients yet", ctx->main_path, g);
            return PDT_EBADINPUT;
        }
        const char *why = half_refusal(gv);
        if (why) {
            pdt_error("%s: block 0: gradient '%s' %s", ctx->main_path, g, why);
            return PDT_EBADINPUT;
        }
        /* layers.sums' helper.input_dtype() raises "Data Type mismatch" */
        if (gv->dtype != g0->dtype) {
            pdt_error("%s: block 0: gradients '%s' and '%s' differ in dtype; Paddle before 2.2 "
                      "sums all squared norms in one sum, which refuses that (--paddle-version)",
                      ctx->main_path, ctx->bw_grads.items[0], g);
            return PDT_EBADINPUT;
        }
    }
    return PDT_OK;
}

/* The clip norm's fill_constant: dtype=global_norm_var.dtype (PR #27437,
 * 2.0); 1.x wrote 'float32', which elementwise_max cannot take with an
 * FP64 norm (README: a listed difference). */
static const char *clip_norm_const(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                                   const char *pn, const char *g, double clip_norm)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    int norm_dtype = ir_block_find_var(b, ctx->bw_grads.items[0])->dtype;
    const char *maxv = layer_out(b, opt_namer_layer_tmp(names, "fill_constant"), NULL, false);
    ir_block_find_var(b, maxv)->dtype = norm_dtype;
    opt_ops_push(ops, opt_fill_constant_op(ctx->main, maxv, norm_dtype, clip_norm, false, true,
                                           IR_ROLE_OPTIMIZE, scope, pn, g));
    return maxv;
}

/* sum, sqrt, elementwise_max, elementwise_div of the squared norms SUMS
 * against MAXV (NULL: 1.8's fill_constant of CLIP_NORM, made after the
 * sqrt) under (scope, pn, g): 4 ops (5); the scale's var name. */
static const char *global_scale(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                                const char *pn, const char *g, const char **sums,
                                const char *maxv, double clip_norm)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    ir_program *p = ctx->main;
    const char *total = layer_out(b, opt_namer_layer_tmp(names, "sum"), NULL, false);
    ir_op *sum = opt_op_new(p, "sum", IR_ROLE_OPTIMIZE, scope, pn, g, NULL);
    ir_op_set_input(sum, "X", sums, ctx->bw_params.n);
    ir_op_set_output1(sum, "Out", total);
    ir_op_set_bool(sum, "use_mkldnn", false);
    opt_ops_push(ops, sum);
    const char *norm = layer_out(b, opt_namer_layer_tmp(names, "sqrt"), NULL, false);
    opt_ops_push(ops, unary(p, "sqrt", total, norm, scope, pn, g));
    if (!maxv)
        maxv = clip_norm_const(ctx, names, ops, scope, pn, g, clip_norm);
    const char *bigger = layer_out(b, opt_namer_gen(names, "elementwise_max"), NULL, false);
    opt_ops_push(ops, binary(p, "elementwise_max", maxv, norm, bigger, scope, pn, g));
    const char *scale = layer_out(b, opt_namer_gen(names, "elementwise_div"), NULL, false);
    opt_ops_push(ops, binary(p, "elementwise_div", maxv, bigger, scale, scope, pn, g));
    return scale;
}
/* ClipGradByGlobalNorm._static_clip of 1.8 (and 2.0-2.1): one scope;
 * the squared norms under each pair's guard, the scale under the last
 * pair's; _correct_clip_op_role_var then names the clipped grads. */
static void clip_global_norm(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, const char *scope,
                             double clip_norm, const char **new_grads)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    size_t n = ctx->bw_params.n, from = ops->n, k = 0;
    size_t *owner = xcalloc(3 * n + 5, sizeof *owner);
    const char **sums = xcalloc(n, sizeof *sums);
    for (size_t i = 0; i < n; i++) {
        const char *g = ctx->bw_grads.items[i];
        sums[i] = squared_norm(ctx, names, ops, scope, ctx->bw_params.items[i], g,
                               ir_block_find_var(b, g));
        owner[k++] = i;
        owner[k++] = i;
    }
    const char *lp = ctx->bw_params.items[n - 1], *lg = ctx->bw_grads.items[n - 1];
    const char *scale = global_scale(ctx, names, ops, scope, lp, lg, sums, NULL, clip_norm);
    for (int j = 0; j < 5; j++)
        owner[k++] = n - 1;
    for (size_t i = 0; i < n; i++) {
        new_grads[i] = scaled_grad(ctx, names, ops, scope, ctx->bw_params.items[i],
                                   ctx->bw_grads.items[i], scale);
        owner[k++] = i;
    }
    correct_role_vars(ops, from, owner, ctx, new_grads);
    free(sums);
    free(owner);
}

/* append_gradient_clip_ops before 1.8 (clip.py v1.4.1-v1.7.2): for each
 * pair, under its guard ([param, grad]) and its own name scope
 * (append_clip, append_clip_1, ...), GradientClipByGlobalNorm's
 * _process_context: the clip norm's fill_constant (the first pair only),
 * square, reduce_sum; then for each pair under append_graident_clip[_K]
 * (sic) _create_operators: the first pair's sum, sqrt, elementwise_max,
 * elementwise_div, then its elementwise_mul.  1.7 adds "_@CLIP" to both
 * scope names and then sets every such op's op_role_var to [param,
 * clipped grad]; 1.4-1.6 leave [param, grad]. */
static void clip_global_norm_1x(pdt_ctx *ctx, opt_namer *names, opt_ops *ops, double clip_norm,
                                const char **new_grads)
{
    ir_block *b = ir_program_block(ctx->main, 0);
    bool at_clip = ctx->settings.era >= CLIP_AT_FLAG_FROM;
    size_t n = ctx->bw_params.n, from = ops->n, k = 0;
    size_t *owner = xcalloc(3 * n + 5, sizeof *owner);
    const char **sums = xcalloc(n, sizeof *sums), *maxv = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *pn = ctx->bw_params.items[i], *g = ctx->bw_grads.items[i];
        const char *scope = opt_namer_scope(names, at_clip ? "append_clip_@CLIP" : "append_clip");
        if (i == 0) {
            maxv = clip_norm_const(ctx, names, ops, scope, pn, g, clip_norm);
            owner[k++] = 0;
        }
        sums[i] = squared_norm(ctx, names, ops, scope, pn, g, ir_block_find_var(b, g));
        owner[k++] = i;
        owner[k++] = i;
    }
    const char *scale = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *pn = ctx->bw_params.items[i], *g = ctx->bw_grads.items[i];
        const char *scope = opt_namer_scope(names, at_clip ? "append_graident_clip_@CLIP"
                                                            : "append_graident_clip");
        if (i == 0) {
            scale = global_scale(ctx, names, ops, scope, pn, g, sums, maxv, clip_norm);
            for (int j = 0; j < 4; j++)
                owner[k++] = 0;
        }
        new_grads[i] = scaled_grad(ctx, names, ops, scope, pn, g, scale);
        owner[k++] = i;
    }
    if (at_clip)
        correct_role_vars(ops, from, owner, ctx, new_grads);
    free(sums);
    free(owner);
}
int pass_gradient_clip(pdt_ctx *ctx)
{
    if (!ctx->optim.clip)
        return PDT_OK;
    opt_clip_kind kind;
    double max, min;
    int rc = opt_spec_reparsed(opt_parse_clip(NULL, ctx->optim.clip, &kind, &max, &min),
                               "gradient_clip", "--clip");
    if (rc == PDT_OK)
        rc = opt_refuse_optimized(ctx, "gradient_clip");
    if (rc == PDT_OK)
        rc = opt_prepare_pairs(ctx);
    if (rc != PDT_OK)
        return rc;

    ir_block *b = ir_program_block(ctx->main, 0);
    opt_namer *names = opt_namer_new(ctx->main, ctx->startup);
    int era = ctx->settings.era;
    bool per_pair = era != PDT_ERA_NATIVE && era < CLIP_PER_PAIR_UNTIL;
    const char *scope = per_pair ? NULL : opt_namer_scope(names, "gradient_clip");
    size_t n = ctx->bw_params.n;
    const char **new_grads = xcalloc(n, sizeof *new_grads);
    opt_ops ops = {0};
    for (size_t i = 0; i < n && kind != OPT_CLIP_GLOBAL_NORM; i++) {
        const char *p = ctx->bw_params.items[i], *g = ctx->bw_grads.items[i];
        const ir_var *gv = ir_block_find_var(b, g);
        const char *type = kind == OPT_CLIP_VALUE ? "clip" : "clip_by_norm";
        new_grads[i] = layer_out(b, opt_namer_layer_tmp(names, type), gv, true);
        /* before 1.8: _create_operators under the pair's own scope, and
         * op_role_var [param, grad] until 1.7's fix names the clipped one */
        if (per_pair)
            scope = opt_namer_scope(names, era >= CLIP_AT_FLAG_FROM ? "append_graident_clip_@CLIP"
                                                                    : "append_graident_clip");
        ir_op *op = unary(ctx->main, type, g, new_grads[i], scope, p,
                          per_pair && era < CLIP_AT_FLAG_FROM ? g : new_grads[i]);
        if (kind == OPT_CLIP_VALUE) {
            ir_op_set_float(op, "min", (float)min);
            ir_op_set_float(op, "max", (float)max);
        } else {
            ir_op_set_float(op, "max_norm", (float)max);
        }
        opt_ops_push(&ops, op);
    }
    if (kind == OPT_CLIP_GLOBAL_NORM && era >= CLIP_SQUARED_L2_FROM)
        rc = clip_global_norm_2x(ctx, names, &ops, scope, max, new_grads);
    else if (kind == OPT_CLIP_GLOBAL_NORM && (rc = refuse_global_norm(ctx)) == PDT_OK) {
        if (per_pair)
            clip_global_norm_1x(ctx, names, &ops, max, new_grads);
        else
            clip_global_norm(ctx, names, &ops, scope, max, new_grads);
    }
    if (rc == PDT_OK) {
        opt_ops_splice(&ops, b, b->n_ops, false);
        for (size_t i = 0; i < n; i++)
            ctx->bw_grads.items[i] = new_grads[i];
    }
    opt_ops_free(&ops);
    free(new_grads);
    opt_namer_free(names);
    return rc;
}
