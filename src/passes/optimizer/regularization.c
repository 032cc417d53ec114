/* regularization.c - the `regularization` pass: Paddle 1.8's
 * append_regularization_ops with the optimizer's regularization=L1Decay or
 * L2Decay.  Under name scope "/regularization/", role Optimize and
 * op_role_var [param, grad], each parameter gets
 *   L2: scale(X=param, scale=coeff) -> _generated_var_N
 *   L1: sign(X=param) -> _generated_var_N; scale(in place, scale=coeff)
 * and then sum(X=[grad, decay]) -> grad (in place).  A SELECTED_ROWS
 * gradient is summed into a new dense var grad@NEWGRAD@ instead, which then
 * replaces the gradient for the later passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "../../diag.h"
#include "../../ir/pmap.h"
#include "../../ir/infershape.h"
#include "../../ir/util.h"
#include "optimizer_util.h"

int opt_parse_regularization(const char *cmd, const char *text, opt_reg_kind *kind, double *coeff)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    size_t klen = colon ? (size_t)(colon - text) : (text ? strlen(text) : 0);
    if (klen == 2 && strncmp(text, "l1", 2) == 0) {
        *kind = OPT_REG_L1;
    } else if (klen == 2 && strncmp(text, "l2", 2) == 0) {
        *kind = OPT_REG_L2;
    } else {
        pdt_usage_error(cmd, "option '--regularization' needs l1:COEFF or l2:COEFF, not '%s'",
                        text ? text : "");
        return PDT_EUSAGE;
    }
    /* "l2:0.001" or the keyword form "l2:regularization_coeff=0.001". */
    char buf[256];
    const char *spec = text;
    if (colon && !strchr(colon, '=')) {
        snprintf(buf, sizeof buf, "%.2s:regularization_coeff=%s", text, colon + 1);
        spec = buf;
    }
    opt_spec s;
    int rc = opt_spec_parse(cmd, "--regularization", spec, &s);
    if (rc == PDT_OK)
        rc = opt_spec_double(&s, "regularization_coeff", "coeff", 0.0, coeff);
    if (rc == PDT_OK && *coeff < 0) {
        pdt_usage_error(cmd, "option '--regularization': the coefficient must be at least 0, "
                        "not %g", *coeff);
        rc = PDT_EUSAGE;
    }
    if (rc == PDT_OK)
        rc = opt_spec_finish(&s);
    opt_spec_free(&s);
    return rc;
}

/* "KIND:COEFF@P1,P2": the regularizer before '@', the params after. */
int opt_parse_param_regularization(const char *cmd, const char *text, opt_reg_kind *kind,
                                   double *coeff, const char **params)
{
    const char *at = strchr(text, '@');
    if (!at || !at[1]) {
        pdt_usage_error(cmd, "option '--regularization' needs KIND:COEFF@PARAM[,PARAM...] "
                             "for a per-parameter regularizer, not '%s'", text);
        return PDT_EUSAGE;
    }
    char *spec = xstrndup(text, (size_t)(at - text));
    int rc = opt_parse_regularization(cmd, spec, kind, coeff);
    free(spec);
    *params = at + 1;
    return rc;
}

typedef struct {
    opt_reg_kind kind;
    double coeff;
} reg_rule;

/* param name -> its own reg_rule (ParamAttr regularizer), from every
 * per-parameter spec; a param named twice keeps the last. */
static void param_rules(const pdt_ctx *ctx, reg_rule **store, pmap *h)
{
    size_t n = ctx->optim.param_regularizations.n;
    *store = n ? xmalloc_n(n, sizeof(reg_rule)) : NULL;
    for (size_t i = 0; i < n; i++) {
        const char *params;
        reg_rule *r = &(*store)[i];
        if (opt_parse_param_regularization(NULL, ctx->optim.param_regularizations.items[i],
                                           &r->kind, &r->coeff, &params) != PDT_OK)
            continue;
        pdt_list l = pdt_list_split(params);
        for (size_t k = 0; k < l.n; k++)
            pmap_put(h, l.items[k], r);
        pdt_list_free(&l);
    }
}

static void set_param_lod_level(ir_var *v, const ir_var *param)
{
    v->has_lod_level = true;
    v->lod_level = param->has_lod_level ? param->lod_level : 0;
}

/* A per-parameter regularizer for a name that is no optimized parameter
 * would silently do nothing: the first such name (by strcmp), or NULL. */
static const char *stray_param(const pdt_ctx *ctx, const pmap *own)
{
    pmap optimized = PMAP_INIT;
    for (size_t i = 0; i < ctx->bw_params.n; i++)
        pmap_add(&optimized, ctx->bw_params.items[i]);
    const char *stray = NULL;
    PMAP_FOR(own, slot)
        if (!pmap_has(&optimized, slot->key) && (!stray || strcmp(slot->key, stray) < 0))
            stray = slot->key;
    pmap_free(&optimized);
    return stray;
}

/* What the decay ops of one run share. */
typedef struct {
    pdt_ctx *ctx;
    ir_block *b;
    opt_namer *names;
    const char *scope;
    opt_ops ops;
} reg_run;

/* The decay term of pair i (L2: scale; L1: sign, then scale in place);
 * returns its var. */
static const char *append_decay_term(reg_run *rr, size_t i, const reg_rule *rule)
{
    const char *p = rr->ctx->bw_params.items[i], *g = rr->ctx->bw_grads.items[i];
    const ir_var *param = ir_block_find_var(rr->b, p);
    /* block.create_var(dtype, shape, lod_level=param.lod_level):
     * persistable unset; lod_level written even when 0, since
     * param.lod_level reads the desc's value (0 when never set) and
     * Variable passes any non-None lod_level to set_lod_level. */
    const char *decay = opt_namer_gen(rr->names, "_generated_var");
    ir_var *dv = opt_var_like(rr->b, decay, param, false, false);
    set_param_lod_level(dv, param);
    ir_program *m = rr->ctx->main;
    if (rule->kind == OPT_REG_L1) {
        ir_op *sign = opt_op_new(m, "sign", IR_ROLE_OPTIMIZE, rr->scope, p, g, NULL);
        ir_op_set_input1(sign, "X", p);
        ir_op_set_output1(sign, "Out", decay);
        opt_ops_push(&rr->ops, sign);
        opt_ops_push(&rr->ops, opt_scale_op(m, decay, decay, rule->coeff, IR_ROLE_OPTIMIZE,
                                            rr->scope, p, g));
    } else {
        opt_ops_push(&rr->ops,
                     opt_scale_op(m, p, decay, rule->coeff, IR_ROLE_OPTIMIZE, rr->scope, p, g));
    }
    return decay;
}

/* sum(X=[grad, decay]) into the grad (or a new dense grad@NEWGRAD@ for a
 * SELECTED_ROWS grad, which then replaces it in ctx->bw_grads). */
static void append_decay_sum(reg_run *rr, size_t i, const char *decay)
{
    const char *p = rr->ctx->bw_params.items[i], *g = rr->ctx->bw_grads.items[i];
    const ir_var *param = ir_block_find_var(rr->b, p);
    const ir_var *grad = ir_block_find_var(rr->b, g);
    const char *new_grad = g;
    if (grad->type == IR_SELECTED_ROWS) {
        new_grad = ir_internf("%s@NEWGRAD@", g);
        ir_var *nv = opt_var_like(rr->b, new_grad, param, false, false);
        set_param_lod_level(nv, param);
    }
    ir_op *sum = opt_op_new(rr->ctx->main, "sum", IR_ROLE_OPTIMIZE, rr->scope, p, g, NULL);
    const char *xs[2] = {g, decay};
    ir_op_set_input(sum, "X", xs, 2);
    ir_op_set_output1(sum, "Out", new_grad);
    ir_op_set_bool(sum, "use_mkldnn", false);
    /* sum_op.cc InferShape: ShareLoD(X[0] -> Out), so the gradient gets a
     * lod_level field (0 when the grad had none) (ir/infershape.c) */
    ir_infer_apply(rr->b, sum);
    opt_ops_push(&rr->ops, sum);
    rr->ctx->bw_grads.items[i] = new_grad;
}

int pass_regularization(pdt_ctx *ctx)
{
    if (!ctx->optim.regularization && !ctx->optim.param_regularizations.n)
        return PDT_OK;
    reg_rule global = {OPT_REG_L2, 0.0};
    int rc = ctx->optim.regularization
                 ? opt_spec_reparsed(opt_parse_regularization(NULL, ctx->optim.regularization,
                                                              &global.kind, &global.coeff),
                                     "regularization", "--regularization")
                 : PDT_OK;
    if (rc == PDT_OK)
        rc = opt_refuse_optimized(ctx, "regularization");
    if (rc == PDT_OK)
        rc = opt_prepare_pairs(ctx);
    if (rc != PDT_OK)
        return rc;

    reg_run rr = {.ctx = ctx, .b = ir_program_block(ctx->main, 0)};
    rr.names = opt_namer_new(ctx->main, ctx->startup);
    rr.scope = opt_namer_scope(rr.names, "regularization");
    reg_rule *store;
    pmap own = PMAP_INIT;       /* param -> its own reg_rule */
    param_rules(ctx, &store, &own);
    const char *stray = stray_param(ctx, &own);
    if (stray) {
        pdt_error("%s: '--regularization' names '%s', which is not a parameter being optimized",
                  ctx->main_path, stray);
        rc = PDT_EBADINPUT;
    }
    for (size_t i = 0; i < ctx->bw_params.n && rc == PDT_OK; i++) {
        /* append_regularization_ops: param.regularizer, else the
         * optimizer's, else nothing for this param. */
        const reg_rule *rule = pmap_get(&own, ctx->bw_params.items[i]);
        if (!rule && !ctx->optim.regularization)
            continue;
        append_decay_sum(&rr, i, append_decay_term(&rr, i, rule ? rule : &global));
    }
    if (rc == PDT_OK)
        opt_ops_splice(&rr.ops, rr.b, rr.b->n_ops, false);
    opt_ops_free(&rr.ops);
    opt_namer_free(rr.names);
    pmap_free(&own);
    free(store);
    return rc;
}
