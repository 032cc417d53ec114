/* optimizer.c - the `optimizer` pass: Paddle 1.8's
 * Optimizer._create_optimization_pass.  For the sorted (param, grad) list it
 * creates the accumulators (startup fill_constant each), the global
 * learning rate learning_rate_N (unless an LR schedule made one), then one
 * update op per parameter under name scope "/optimizer[_k]/", role Optimize,
 * op_role_var [param, grad]; Adamax then appends its beta1-power scale ops
 * (_finish_update).  The rows come from optimizer_table.c. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/pmap.h"
#include "../../ir/util.h"
#include "../era/era.h"
#include "optimizer_table.h"
#include "optimizer_util.h"

typedef struct {
    const opt_def *def;
    double v[OPT_MAX_KEYS];     /* key values; bools as 0/1 */
    const char *name;       /* the class's name=: accumulators <p>_<name>_<acc> */
} opt_cfg;

/* Values no training means: a negative rate, epsilon or decay, a beta
 * outside [0, 1) (paddle.optimizer.Adam and Adamax refuse those too).
 * ftrl's lr_power is a negative power by design. */
static int check_ranges(const char *cmd, const opt_cfg *cfg)
{
    for (size_t k = 0; k < OPT_MAX_KEYS && cfg->def->keys[k].key; k++) {
        const opt_key_def *kd = &cfg->def->keys[k];
        if (kd->kind == OPT_KEY_BOOL || !strcmp(kd->key, "lr_power"))
            continue;
        bool beta = !strcmp(kd->key, "beta1") || !strcmp(kd->key, "beta2");
        if (cfg->v[k] < 0 || (beta && cfg->v[k] >= 1)) {
            pdt_usage_error(cmd, "option '--optimizer': key '%s' of '%s' must be %s, not %g",
                            kd->key, cfg->def->kind, beta ? "in [0, 1)" : "at least 0",
                            cfg->v[k]);
            return PDT_EUSAGE;
        }
    }
    return PDT_OK;
}

static int parse_cfg(const char *cmd, const char *text, opt_cfg *cfg)
{
    opt_spec s;
    int rc = opt_spec_parse(cmd, "--optimizer", text, &s);
    if (rc != PDT_OK)
        return rc;
    cfg->def = opt_def_by_kind(s.kind);
    if (!cfg->def) {
        size_t n;
        const opt_def *all = opt_defs(&n);
        GString *kinds = g_string_new(NULL);
        for (size_t i = 0; i < n; i++)
            g_string_append_printf(kinds, "%s%s", i ? ", " : "", all[i].kind);
        pdt_usage_error(cmd, "option '--optimizer': unknown optimizer '%s' (%s)", s.kind,
                        kinds->str);
        g_string_free(kinds, TRUE);
        opt_spec_free(&s);
        return PDT_EUSAGE;
    }
    for (size_t k = 0; k < OPT_MAX_KEYS && cfg->def->keys[k].key && rc == PDT_OK; k++) {
        const opt_key_def *kd = &cfg->def->keys[k];
        if (kd->kind == OPT_KEY_BOOL) {
            bool b = false;
            rc = opt_spec_bool(&s, kd->key, kd->dflt != 0, &b);
            cfg->v[k] = b;
        } else {
            rc = opt_spec_double(&s, kd->key, k == 0 ? "lr" : NULL, kd->dflt, &cfg->v[k]);
        }
    }
    if (rc == PDT_OK)
        rc = check_ranges(cmd, cfg);
    if (rc == PDT_OK)
        rc = opt_spec_string(&s, "name", &cfg->name);
    if (rc == PDT_OK)
        rc = opt_spec_finish(&s);
    opt_spec_free(&s);
    return rc;
}

int opt_optimizer_check(const char *cmd, const char *spec, double *lr)
{
    opt_cfg cfg;
    int rc = parse_cfg(cmd, spec, &cfg);
    if (rc == PDT_OK && lr)
        *lr = cfg.v[0];
    return rc;
}

static void set_key_attrs(ir_op *op, const opt_cfg *cfg)
{
    for (size_t k = 0; k < OPT_MAX_KEYS && cfg->def->keys[k].key; k++) {
        const opt_key_def *kd = &cfg->def->keys[k];
        if (!kd->attr)
            continue;
        if (kd->kind == OPT_KEY_BOOL)
            ir_op_set_bool(op, kd->attr, cfg->v[k] != 0);
        else
            ir_op_set_float(op, kd->attr, (float)cfg->v[k]);
    }
}

/* _update_param_device_map: a parameter's device is the op_device of the
 * first op of the block that reads it; its accumulators are initialised
 * and its update op runs under that device_guard.  NULL when no op reads
 * it or the op has no op_device, which device_guard(None) leaves as "". */
static void param_devices(const ir_block *b, const pdt_ctx *ctx, pmap *dev)
{
    pmap params = PMAP_INIT;
    for (size_t i = 0; i < ctx->bw_params.n; i++)
        pmap_add(&params, ctx->bw_params.items[i]);
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        const char *d = ir_op_get_string(op, "op_device");
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++) {
                const char *arg = ir_op_ins(op)[s].args[a];
                if (pmap_has(&params, arg) && !pmap_has(dev, arg))
                    pmap_put(dev, arg, (void *)(d && *d ? d : NULL));
            }
    }
    pmap_free(&params);
}

/* _create_global_learning_rate: --learning-rate-var (Optimizer(learning_rate=
 * Variable): used as it is, no learning_rate_N var and no startup init), else
 * the var a schedule wrote, else NULL (the caller creates learning_rate_N). */
static int resolve_lr(const pdt_ctx *ctx, const ir_block *b, const char **lr)
{
    bool scheduled = ctx->optim.lr_schedule || ctx->optim.lr_warmup;
    *lr = scheduled ? opt_scheduled_lr(b) : NULL;
    if (ctx->optim.learning_rate_var) {
        const ir_var *v = ir_block_find_var(b, ir_intern(ctx->optim.learning_rate_var));
        if (!v) {
            char *hint = pdt_var_hint(b, ctx->optim.learning_rate_var);
            pdt_error("%s: block 0 has no var '%s' (--learning-rate-var)%s", ctx->main_path,
                      ctx->optim.learning_rate_var, hint);
            g_free(hint);
            return PDT_EBADINPUT;
        }
        *lr = v->name;
    }
    if (scheduled && !*lr && !ctx->optim.lr_host) {
        pdt_error("%s: '%s' is set but block 0 has no learning-rate schedule op",
                  ctx->main_path, ctx->optim.lr_schedule ? "--lr-schedule" : "--lr-warmup");
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

/* One run of the pass over the sorted (param, grad) list. */
typedef struct {
    pdt_ctx *ctx;
    ir_block *b;
    const opt_cfg *cfg;
    opt_namer *names;
    opt_inits inits;
    pmap devices;           /* param -> op_device or NULL (see param_devices) */
    size_t na, np;          /* accumulators per param, params */
    const char **acc;       /* acc[i * na + a]: accumulator a of param i */
    opt_ops ops;            /* the new update ops, spliced at the end */
} opt_run;

/* _create_accumulators: every parameter, accumulators in class order. */
static void create_accumulators(opt_run *r)
{
    const opt_def *d = r->cfg->def;
    const int64_t one = 1;
    for (size_t i = 0; i < r->np; i++) {
        const ir_var *param = ir_block_find_var(r->b, r->ctx->bw_params.items[i]);
        const char *pdev = pmap_get(&r->devices, param->name);
        for (size_t a = 0; a < r->na; a++) {
            const opt_acc_def *ad = &d->accs[a];
            const char *key = r->cfg->name
                                  ? ir_internf("%s_%s_%s", param->name, r->cfg->name, ad->name)
                                  : ir_internf("%s_%s", param->name, ad->name);
            const char *name = opt_namer_gen(r->names, key);
            double fill = ad->fill_key >= 0 ? r->cfg->v[ad->fill_key] : 0.0;
            ir_var *v = opt_global_var(r->ctx, &r->inits, name, param->dtype,
                                       ad->scalar ? &one : param->dims,
                                       ad->scalar ? 1 : param->n_dims, fill, false,
                                       ad->device ? ad->device : pdev);
            if (!ad->scalar) {
                /* _add_accumulator: type=param.type, in both programs. */
                ir_var *sv = ir_block_find_var(ir_program_block(r->ctx->startup, 0), name);
                v->type = sv->type = param->type;
                v->tensor_slot = sv->tensor_slot = param->tensor_slot;
            }
            r->acc[i * r->na + a] = name;
        }
    }
}

/* Adam before 1.7 (--paddle-version, ctx->settings.era): adam_op.cc of
 * the v1.4.1-v1.6.3 tags declares no Beta1PowOut/Beta2PowOut (they come
 * in v1.7.0), and fluid's Adam._finish_update scales both powers after
 * all updates.  An op sequence, not an era.def row, so the family asks
 * the target version, as gradient_clip.c does. */
#define ADAM_POW_OUT_FROM 107

static bool adam_scales_powers(const opt_run *r)
{
    int era = r->ctx->settings.era;
    return r->cfg->def->adam_extras && era != PDT_ERA_NATIVE && era < ADAM_POW_OUT_FROM;
}

/* LarsMomentumOptimizer._append_optimize_op of v2.2.1 and v2.2.2 (two of
 * 2.2's three tags; not v2.2.0, v2.1.3 or v2.3.x) appends
 * `type=self.type if _lars_weight_decay != 0.0 else 'momentum'` with its
 * own inputs, outputs and attrs dict.  So a 2.2 lars_momentum without
 * weight decay is a momentum op: the family writes lars's keys on it and
 * use_nesterov (check_attrs' default), and era.def drops the keys
 * momentum's proto lacks, as Operator.__init__ does (hash_order.c tells
 * this caller's op by them).  An op type, not an era.def row, so the
 * family asks the target version, as for adam below. */
#define LARS_AS_MOMENTUM_FROM 202
#define LARS_AS_MOMENTUM_UNTIL 203

static bool lars_as_momentum(const opt_run *r)
{
    int era = r->ctx->settings.era;
    const opt_def *d = r->cfg->def;
    if (strcmp(d->op, "lars_momentum") || era < LARS_AS_MOMENTUM_FROM ||
        era >= LARS_AS_MOMENTUM_UNTIL)
        return false;
    for (size_t k = 0; k < OPT_MAX_KEYS && d->keys[k].key; k++)
        if (!strcmp(d->keys[k].key, "lars_weight_decay"))
            return r->cfg->v[k] == 0;
    return false;
}

/* _append_optimize_op: one update op per parameter. */
static void append_updates(opt_run *r, const char *lr)
{
    const opt_def *d = r->cfg->def;
    bool no_pow_out = adam_scales_powers(r), as_momentum = lars_as_momentum(r);
    for (size_t i = 0; i < r->np; i++) {
        const char *p = r->ctx->bw_params.items[i], *g = r->ctx->bw_grads.items[i];
        const char *scope = opt_namer_scope(r->names, "optimizer");
        ir_op *op = opt_op_new(r->ctx->main, as_momentum ? "momentum" : d->op, IR_ROLE_OPTIMIZE,
                               scope, p, g, pmap_get(&r->devices, p));
        ir_op_set_input1(op, "Param", p);
        ir_op_set_input1(op, "Grad", g);
        ir_op_set_input1(op, "LearningRate", lr);
        ir_op_set_output1(op, "ParamOut", p);
        for (size_t a = 0; a < r->na; a++) {
            ir_op_set_input1(op, d->accs[a].in, r->acc[i * r->na + a]);
            if (d->accs[a].out && !(no_pow_out && d->accs[a].scalar))
                ir_op_set_output1(op, d->accs[a].out, r->acc[i * r->na + a]);
        }
        for (size_t e = 0; e < 2 && d->empty_in[e]; e++)
            ir_op_set_input(op, d->empty_in[e], NULL, 0);
        set_key_attrs(op, r->cfg);
        if (as_momentum)
            ir_op_set_bool(op, "use_nesterov", false);
        if (d->adam_extras)
            ir_op_set_long(op, "min_row_size_to_use_multithread", 1000);
        opt_ops_push(&r->ops, op);
    }
}

/* Adamax._finish_update: beta1_pow_acc *= beta1, per parameter. */
static void finish_adamax(opt_run *r)
{
    for (size_t i = 0; i < r->np; i++) {
        const char *pow = r->acc[i * r->na + 2];
        const char *scope = opt_namer_scope(r->names, "adamx");
        ir_op *op = opt_scale_op(r->ctx->main, pow, pow, r->cfg->v[1], IR_ROLE_OPTIMIZE, scope,
                                 r->ctx->bw_params.items[i], r->ctx->bw_grads.items[i]);
        opt_ops_push(&r->ops, op);
    }
}

/* Adam._finish_update of v1.4.1-v1.6.3: per parameter, in one
 * name_scope("optimizer") under _optimized_guard([param, grad]),
 * beta1_pow_acc *= beta1 and beta2_pow_acc *= beta2 (append_op with
 * attrs {scale}; check_attrs adds bias and bias_after_scale). */
static void finish_adam(opt_run *r)
{
    for (size_t i = 0; i < r->np; i++) {
        const char *scope = opt_namer_scope(r->names, "optimizer");
        for (size_t k = 0; k < 2; k++) {
            const char *pow = r->acc[i * r->na + 2 + k];
            ir_op *op = opt_scale_op(r->ctx->main, pow, pow, r->cfg->v[1 + k], IR_ROLE_OPTIMIZE,
                                     scope, r->ctx->bw_params.items[i],
                                     r->ctx->bw_grads.items[i]);
            opt_ops_push(&r->ops, op);
        }
    }
}

int pass_optimizer(pdt_ctx *ctx)
{
    if (!ctx->optim.optimizer)
        return PDT_OK;
    opt_cfg cfg;
    int rc = opt_spec_reparsed(parse_cfg(NULL, ctx->optim.optimizer, &cfg), "optimizer",
                               "--optimizer");
    if (rc == PDT_OK)
        rc = opt_refuse_optimized(ctx, "optimizer");
    if (rc == PDT_OK)
        rc = opt_prepare_pairs(ctx);
    ir_block *b = ir_program_block(ctx->main, 0);
    const char *lr = NULL;
    if (rc == PDT_OK)
        rc = resolve_lr(ctx, b, &lr);
    if (rc != PDT_OK)
        return rc;

    opt_run r = {.ctx = ctx, .b = b, .cfg = &cfg, .np = ctx->bw_params.n,
                 .na = opt_def_n_accs(cfg.def)};
    r.names = opt_namer_new(ctx->main, ctx->startup);
    opt_inits_begin(&r.inits, ctx->startup, ctx->settings.era);
    r.acc = r.np && r.na ? xcalloc(r.np * r.na, sizeof *r.acc) : NULL;
    param_devices(b, ctx, &r.devices);

    create_accumulators(&r);
    if (!lr) {
        const int64_t one = 1;
        lr = opt_namer_gen(r.names, "learning_rate");
        if (ctx->optim.lr_host)
            opt_global_var(ctx, &r.inits, lr, IR_FP32, &one, 1, ctx->optim.lr_host_rate, false, NULL);
        else
            opt_global_var(ctx, &r.inits, lr, opt_loss_dtype(ctx), &one, 1, cfg.v[0], false, NULL);
    }
    append_updates(&r, lr);
    if (cfg.def->adamax_finish)
        finish_adamax(&r);
    if (adam_scales_powers(&r))
        finish_adam(&r);

    opt_ops_splice(&r.ops, b, b->n_ops, false);
    opt_ops_free(&r.ops);
    opt_inits_flush(&r.inits);
    free(r.acc);
    pmap_free(&r.devices);
    opt_namer_free(r.names);
    return PDT_OK;
}
