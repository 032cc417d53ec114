/* optimizer.c - the `optimizer` pass: Paddle 1.8's
 * Optimizer._create_optimization_pass.  For the sorted (param, grad) list it
 * creates the accumulators (startup fill_constant each), the global
 * learning rate learning_rate_N (unless an LR schedule made one), then one
 * update op per parameter under name scope "/optimizer[_k]/", role Optimize,
 * op_role_var [param, grad]; Adamax then appends its beta1-power scale ops
 * (_finish_update).  One table row per optimizer class. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "optimizer_util.h"

enum { MAX_KEYS = 6, MAX_ACCS = 4 };

typedef enum { K_FLOAT, K_BOOL } key_kind;

typedef struct {
    const char *key;        /* Python argument name */
    key_kind kind;
    double dflt;
    const char *attr;       /* op attr it sets, NULL: none */
} key_def;

typedef struct {
    const char *name;       /* _add_accumulator name: <param>_<name>_N */
    const char *in, *out;   /* update-op slots; out NULL: read only */
    bool scalar;            /* shape [1] (beta powers), else the param's */
    int fill_key;           /* index of the key holding the init value, -1: 0.0 */
    const char *device;     /* device_guard of the initialiser */
} acc_def;

typedef struct {
    const char *kind;       /* --optimizer KIND */
    const char *op;         /* update op type */
    key_def keys[MAX_KEYS]; /* keys[0] is always learning_rate */
    acc_def accs[MAX_ACCS];
    const char *empty_in[2];/* dispensable inputs Python leaves empty */
    bool adam_extras;       /* min_row_size_to_use_multithread */
    bool adamax_finish;     /* beta1_pow_acc *= beta1 after all updates */
} opt_def;

#define LR {"learning_rate", K_FLOAT, 0.001, NULL}

/* Defaults are those of Paddle's classes; where fluid requires an argument
 * (learning_rate, momentum) the paddle.optimizer default is used. */
static const opt_def OPTS[] = {
    {"sgd", "sgd", {LR}, {{0}}, {0}, false, false},
    {"momentum", "momentum",
     {LR, {"momentum", K_FLOAT, 0.9, "mu"}, {"use_nesterov", K_BOOL, 0, "use_nesterov"}},
     {{"velocity", "Velocity", "VelocityOut", false, -1, NULL}}, {0}, false, false},
    {"lars_momentum", "lars_momentum",
     {LR, {"momentum", K_FLOAT, 0.9, "mu"}, {"lars_coeff", K_FLOAT, 0.001, "lars_coeff"},
      {"lars_weight_decay", K_FLOAT, 0.0005, "lars_weight_decay"}},
     {{"velocity", "Velocity", "VelocityOut", false, -1, NULL}}, {0}, false, false},
    {"adagrad", "adagrad",
     {LR, {"epsilon", K_FLOAT, 1e-6, "epsilon"},
      {"initial_accumulator_value", K_FLOAT, 0.0, NULL}},
     {{"moment", "Moment", "MomentOut", false, 2, NULL}}, {0}, false, false},
    {"adam", "adam",
     {LR, {"beta1", K_FLOAT, 0.9, "beta1"}, {"beta2", K_FLOAT, 0.999, "beta2"},
      {"epsilon", K_FLOAT, 1e-8, "epsilon"}, {"lazy_mode", K_BOOL, 0, "lazy_mode"}},
     {{"moment1", "Moment1", "Moment1Out", false, -1, NULL},
      {"moment2", "Moment2", "Moment2Out", false, -1, NULL},
      {"beta1_pow_acc", "Beta1Pow", "Beta1PowOut", true, 1, "cpu"},
      {"beta2_pow_acc", "Beta2Pow", "Beta2PowOut", true, 2, "cpu"}},
     {"Beta1Tensor", "Beta2Tensor"}, true, false},
    {"adamax", "adamax",
     {LR, {"beta1", K_FLOAT, 0.9, "beta1"}, {"beta2", K_FLOAT, 0.999, "beta2"},
      {"epsilon", K_FLOAT, 1e-8, "epsilon"}},
     {{"moment", "Moment", "MomentOut", false, -1, NULL},
      {"inf_norm", "InfNorm", "InfNormOut", false, -1, NULL},
      {"beta1_pow_acc", "Beta1Pow", NULL, true, 1, NULL}},
     {0}, false, true},
    {"decayed_adagrad", "decayed_adagrad",
     {LR, {"decay", K_FLOAT, 0.95, "decay"}, {"epsilon", K_FLOAT, 1e-6, "epsilon"}},
     {{"moment", "Moment", "MomentOut", false, -1, NULL}}, {0}, false, false},
    {"rmsprop", "rmsprop",
     {LR, {"rho", K_FLOAT, 0.95, "decay"}, {"epsilon", K_FLOAT, 1e-6, "epsilon"},
      {"momentum", K_FLOAT, 0.0, "momentum"}, {"centered", K_BOOL, 0, "centered"}},
     {{"momentum", "Moment", "MomentOut", false, -1, NULL},
      {"mean_square", "MeanSquare", "MeanSquareOut", false, -1, NULL},
      {"mean_grad", "MeanGrad", "MeanGradOut", false, -1, NULL}},
     {0}, false, false},
    /* Paddle 1.8 passes l1 as the l2 attr (a typo); pdtrans passes l2. */
    {"ftrl", "ftrl",
     {LR, {"l1", K_FLOAT, 0.0, "l1"}, {"l2", K_FLOAT, 0.0, "l2"},
      {"lr_power", K_FLOAT, -0.5, "lr_power"}},
     {{"squared", "SquaredAccumulator", "SquaredAccumOut", false, -1, NULL},
      {"linear", "LinearAccumulator", "LinearAccumOut", false, -1, NULL}},
     {0}, false, false},
};

typedef struct {
    const opt_def *def;
    double v[MAX_KEYS];     /* key values; bools as 0/1 */
    const char *name;       /* the class's name=: accumulators <p>_<name>_<acc> */
} opt_cfg;

static int parse_cfg(const char *cmd, const char *text, opt_cfg *cfg)
{
    opt_spec s;
    int rc = opt_spec_parse(cmd, "--optimizer", text, &s);
    if (rc != PDT_OK)
        return rc;
    cfg->def = NULL;
    for (size_t i = 0; i < sizeof OPTS / sizeof *OPTS; i++)
        if (strcmp(OPTS[i].kind, s.kind) == 0)
            cfg->def = &OPTS[i];
    if (!cfg->def) {
        pdt_usage_error(cmd,
                        "option '--optimizer': unknown optimizer '%s' (sgd, momentum, "
                        "lars_momentum, adagrad, adam, adamax, decayed_adagrad, rmsprop, ftrl)",
                        s.kind);
        opt_spec_free(&s);
        return PDT_EUSAGE;
    }
    for (size_t k = 0; k < MAX_KEYS && cfg->def->keys[k].key && rc == PDT_OK; k++) {
        const key_def *kd = &cfg->def->keys[k];
        if (kd->kind == K_BOOL) {
            bool b = false;
            rc = opt_spec_bool(&s, kd->key, kd->dflt != 0, &b);
            cfg->v[k] = b;
        } else {
            rc = opt_spec_double(&s, kd->key, k == 0 ? "lr" : NULL, kd->dflt, &cfg->v[k]);
        }
    }
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
    for (size_t k = 0; k < MAX_KEYS && cfg->def->keys[k].key; k++) {
        const key_def *kd = &cfg->def->keys[k];
        if (!kd->attr)
            continue;
        if (kd->kind == K_BOOL)
            ir_op_set_bool(op, kd->attr, cfg->v[k] != 0);
        else
            ir_op_set_float(op, kd->attr, (float)cfg->v[k]);
    }
}

/* _update_param_device_map: a parameter's device is the op_device of the
 * first op of the block that reads it; its accumulators are initialised
 * and its update op runs under that device_guard.  NULL when no op reads
 * it or the op has no op_device, which device_guard(None) leaves as "". */
static GHashTable *param_devices(const ir_block *b, const pdt_ctx *ctx)
{
    GHashTable *params = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < ctx->bw_params.n; i++)
        g_hash_table_add(params, (gpointer)ctx->bw_params.items[i]);
    GHashTable *dev = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        const char *d = ir_op_get_string(op, "op_device");
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < op->inputs[s].n_args; a++) {
                const char *arg = op->inputs[s].args[a];
                if (g_hash_table_contains(params, arg) && !g_hash_table_contains(dev, arg))
                    g_hash_table_insert(dev, (gpointer)arg, (gpointer)(d && *d ? d : NULL));
            }
    }
    g_hash_table_destroy(params);
    return dev;
}

static size_t n_accs(const opt_def *d)
{
    size_t n = 0;
    while (n < MAX_ACCS && d->accs[n].name)
        n++;
    return n;
}

int pass_optimizer(pdt_ctx *ctx)
{
    if (!ctx->optimizer)
        return PDT_OK;
    opt_cfg cfg;
    int rc = parse_cfg(NULL, ctx->optimizer, &cfg);
    if (rc == PDT_OK)
        rc = opt_refuse_optimized(ctx, "optimizer");
    if (rc == PDT_OK)
        rc = opt_prepare_pairs(ctx);
    if (rc != PDT_OK)
        return rc;

    ir_block *b = ir_program_block(ctx->main, 0);
    /* _create_global_learning_rate reuses a schedule's LR var. */
    const char *lr = ctx->lr_schedule ? opt_scheduled_lr(b) : NULL;
    if (ctx->learning_rate_var) {
        /* Optimizer(learning_rate=Variable): used as it is, no
         * learning_rate_N var and no startup init. */
        const ir_var *v = ir_block_find_var(b, ir_intern(ctx->learning_rate_var));
        if (!v) {
            pdt_error("%s: block 0 has no var '%s' (--learning-rate-var)", ctx->main_path,
                      ctx->learning_rate_var);
            return PDT_EBADINPUT;
        }
        lr = v->name;
    }
    if (ctx->lr_schedule && !lr) {
        pdt_error("%s: '--lr-schedule' is set but block 0 has no learning-rate schedule op",
                  ctx->main_path);
        return PDT_EBADINPUT;
    }
    opt_namer *names = opt_namer_new(ctx->main, ctx->startup);
    opt_inits inits;
    opt_inits_begin(&inits, ctx->startup);
    const opt_def *d = cfg.def;
    size_t na = n_accs(d), np = ctx->bw_params.n;
    opt_ops ops = {0};
    const char **acc = np && na ? xcalloc(np * na, sizeof *acc) : NULL;
    GHashTable *devices = param_devices(b, ctx);

    /* _create_accumulators: every parameter, accumulators in class order. */
    for (size_t i = 0; i < np; i++) {
        const ir_var *param = ir_block_find_var(b, ctx->bw_params.items[i]);
        const char *pdev = g_hash_table_lookup(devices, param->name);
        for (size_t a = 0; a < na; a++) {
            const acc_def *ad = &d->accs[a];
            const char *key = cfg.name ? ir_internf("%s_%s_%s", param->name, cfg.name, ad->name)
                                       : ir_internf("%s_%s", param->name, ad->name);
            const char *name = opt_namer_gen(names, key);
            const int64_t one = 1;
            double fill = ad->fill_key >= 0 ? cfg.v[ad->fill_key] : 0.0;
            ir_var *v = opt_global_var(ctx, &inits, name, param->dtype,
                                       ad->scalar ? &one : param->dims,
                                       ad->scalar ? 1 : param->n_dims, fill, false,
                                       ad->device ? ad->device : pdev);
            if (!ad->scalar) {
                /* _add_accumulator: type=param.type, in both programs. */
                ir_var *sv = ir_block_find_var(ir_program_block(ctx->startup, 0), name);
                v->type = sv->type = param->type;
                v->tensor_slot = sv->tensor_slot = param->tensor_slot;
            }
            acc[i * na + a] = name;
        }
    }

    if (!lr) {
        const int64_t one = 1;
        lr = opt_namer_gen(names, "learning_rate");
        opt_global_var(ctx, &inits, lr, opt_loss_dtype(ctx), &one, 1, cfg.v[0], false, NULL);
    }

    for (size_t i = 0; i < np; i++) {
        const char *p = ctx->bw_params.items[i], *g = ctx->bw_grads.items[i];
        const char *scope = opt_namer_scope(names, "optimizer");
        ir_op *op = opt_op_new(ctx->main, d->op, IR_ROLE_OPTIMIZE, scope, p, g,
                               g_hash_table_lookup(devices, p));
        ir_op_set_input1(op, "Param", p);
        ir_op_set_input1(op, "Grad", g);
        ir_op_set_input1(op, "LearningRate", lr);
        ir_op_set_output1(op, "ParamOut", p);
        for (size_t a = 0; a < na; a++) {
            ir_op_set_input1(op, d->accs[a].in, acc[i * na + a]);
            if (d->accs[a].out)
                ir_op_set_output1(op, d->accs[a].out, acc[i * na + a]);
        }
        for (size_t e = 0; e < 2 && d->empty_in[e]; e++)
            ir_op_set_input(op, d->empty_in[e], NULL, 0);
        set_key_attrs(op, &cfg);
        if (d->adam_extras)
            ir_op_set_long(op, "min_row_size_to_use_multithread", 1000);
        opt_ops_push(&ops, op);
    }

    if (d->adamax_finish)
        for (size_t i = 0; i < np; i++) {
            const char *pow = acc[i * na + 2];
            const char *scope = opt_namer_scope(names, "adamx");
            ir_op *op = opt_scale_op(ctx->main, pow, pow, cfg.v[1], IR_ROLE_OPTIMIZE, scope,
                                     ctx->bw_params.items[i], ctx->bw_grads.items[i]);
            opt_ops_push(&ops, op);
        }

    opt_ops_splice(&ops, b, b->n_ops, false);
    opt_ops_free(&ops);
    opt_inits_flush(&inits);
    free(acc);
    g_hash_table_destroy(devices);
    opt_namer_free(names);
    return rc;
}
