/* lr_schedule.c - the `lr_schedule` pass: Paddle 1.8's
 * fluid.layers.exponential_decay / piecewise_decay, whose result the
 * optimizer then takes as its learning rate.  Everything is built under
 * _lr_schedule_guard (op_role LRSched = 16).  The user calls these layers
 * after building the net and before minimize, so the ops go at the end of
 * the forward part (before the first backward op), except the step
 * counter's increment, which autoincreased_step_counter prepends to block 0.
 *
 * exponential: increment(@LR_DECAY_COUNTER@), cast -> float, scale(1/steps)
 *              [, floor], fill_constant(rate), elementwise_pow, scale(lr)
 * piecewise:   increment, cast, then Switch: per boundary fill_constant x2,
 *              less_than, logical ops, conditional_block whose sub-block
 *              assigns the value to the persistable var "learning_rate";
 *              a default case assigns the last value. */
#include <stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "optimizer_util.h"

#define COUNTER "@LR_DECAY_COUNTER@"

typedef enum { LR_EXPONENTIAL, LR_PIECEWISE } lr_kind;

typedef struct {
    lr_kind kind;
    double learning_rate, decay_steps, decay_rate;
    bool staircase;
    double *boundaries, *values;
    size_t n_boundaries, n_values;
} lr_cfg;

static void cfg_free(lr_cfg *c)
{
    free(c->boundaries);
    free(c->values);
    c->boundaries = c->values = NULL;
}

static int parse_cfg(const char *cmd, const char *text, const char *optimizer, lr_cfg *c)
{
    memset(c, 0, sizeof *c);
    double base = 0.001;
    if (optimizer && opt_optimizer_check(cmd, optimizer, &base) != PDT_OK)
        return PDT_EUSAGE;
    opt_spec s;
    int rc = opt_spec_parse(cmd, "--lr-schedule", text, &s);
    if (rc != PDT_OK)
        return rc;
    if (strcmp(s.kind, "exponential") == 0) {
        c->kind = LR_EXPONENTIAL;
        rc = opt_spec_double(&s, "learning_rate", "lr", base, &c->learning_rate);
        const char *req[2] = {"decay_steps", "decay_rate"};
        double *dst[2] = {&c->decay_steps, &c->decay_rate};
        for (int i = 0; i < 2 && rc == PDT_OK; i++) {
            bool given = false;
            for (size_t k = 0; k < s.n; k++)
                given |= strcmp(s.keys[k], req[i]) == 0;
            if (!given) {
                pdt_usage_error(cmd, "option '--lr-schedule': key '%s' is required for "
                                "'exponential'", req[i]);
                rc = PDT_EUSAGE;
            } else {
                rc = opt_spec_double(&s, req[i], NULL, 0, dst[i]);
            }
        }
        if (rc == PDT_OK)
            rc = opt_spec_bool(&s, "staircase", false, &c->staircase);
        if (rc == PDT_OK && !(c->decay_steps > 0)) {
            pdt_usage_error(cmd, "option '--lr-schedule': key 'decay_steps' must be more "
                            "than 0, not %g", c->decay_steps);
            rc = PDT_EUSAGE;
        }
        if (rc == PDT_OK && c->decay_rate < 0) {
            pdt_usage_error(cmd, "option '--lr-schedule': key 'decay_rate' must be at least "
                            "0, not %g", c->decay_rate);
            rc = PDT_EUSAGE;
        }
    } else if (strcmp(s.kind, "piecewise") == 0) {
        c->kind = LR_PIECEWISE;
        rc = opt_spec_doubles(&s, "boundaries", &c->boundaries, &c->n_boundaries);
        if (rc == PDT_OK)
            rc = opt_spec_doubles(&s, "values", &c->values, &c->n_values);
        if (rc == PDT_OK && c->n_values != c->n_boundaries + 1) {
            pdt_usage_error(cmd, "option '--lr-schedule': key 'values' needs one more item "
                            "than 'boundaries' (%zu, not %zu)", c->n_boundaries + 1, c->n_values);
            rc = PDT_EUSAGE;
        }
        for (size_t i = 1; rc == PDT_OK && i < c->n_boundaries; i++)
            if (c->boundaries[i] < c->boundaries[i - 1]) {
                pdt_usage_error(cmd, "option '--lr-schedule': key 'boundaries' must not "
                                "decrease (%g after %g)", c->boundaries[i],
                                c->boundaries[i - 1]);
                rc = PDT_EUSAGE;
            }
    } else {
        pdt_usage_error(cmd, "option '--lr-schedule': unknown schedule '%s' (exponential, "
                        "piecewise)", s.kind);
        rc = PDT_EUSAGE;
    }
    if (rc == PDT_OK)
        rc = opt_spec_finish(&s);
    opt_spec_free(&s);
    if (rc != PDT_OK)
        cfg_free(c);
    return rc;
}

int opt_lr_schedule_check(const char *cmd, const char *spec, const char *optimizer)
{
    lr_cfg c;
    int rc = parse_cfg(cmd, spec, optimizer, &c);
    if (rc == PDT_OK)
        cfg_free(&c);
    return rc;
}

/* State of one schedule being built. */
typedef struct {
    pdt_ctx *ctx;
    ir_block *b;
    opt_namer *names;
    opt_ops ops;            /* go before the backward part */
    opt_inits inits;
} lr_build;

static ir_op *lr_op(lr_build *s, const char *type)
{
    ir_op *op = opt_op_new(s->ctx->main, type, IR_ROLE_LRSCHED, "/", NULL, NULL, NULL);
    opt_ops_push(&s->ops, op);
    return op;
}

/* math_op_patch's create_new_tmp_var: "tmp_N", only name and dtype set. */
static const char *tmp_var(lr_build *s, int dtype)
{
    const char *name = opt_namer_gen(s->names, "tmp");
    opt_var_1(s->b, name, dtype, false);
    return name;
}

/* create_variable_for_type_inference: "TYPE_N.tmp_0", persistable=false. */
static const char *layer_var(lr_build *s, const char *type, int dtype)
{
    const char *name = opt_namer_layer_tmp(s->names, type);
    opt_var_1(s->b, name, dtype, true);
    return name;
}

static ir_op *unary(lr_build *s, const char *type, const char *x, const char *out)
{
    ir_op *op = lr_op(s, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    return op;
}

static ir_op *binary(lr_build *s, const char *type, const char *x, const char *y, const char *out)
{
    ir_op *op = unary(s, type, x, out);
    ir_op_set_input1(op, "Y", y);
    return op;
}

/* _decay_step_counter: the int64 step counter (begin 0, so initialised to
 * -1 on the CPU), its prepended increment, and its float cast. */
static const char *step_counter(lr_build *s, ir_op **increment)
{
    *increment = NULL;
    if (!ir_block_find_var(s->b, ir_intern(COUNTER))) {
        const int64_t one = 1;
        opt_global_var(s->ctx, &s->inits, COUNTER, IR_INT64, &one, 1, -1.0, true, NULL);
        ir_op *inc = opt_op_new(s->ctx->main, "increment", IR_ROLE_LRSCHED, "/", NULL, NULL, NULL);
        ir_op_set_input1(inc, "X", COUNTER);
        ir_op_set_output1(inc, "Out", COUNTER);
        ir_op_set_float(inc, "step", 1.0f);
        *increment = inc;
    }
    const char *step = layer_var(s, "cast", IR_FP32);
    ir_op *cast = unary(s, "cast", COUNTER, step);
    ir_op_set_int(cast, "in_dtype", IR_INT64);
    ir_op_set_int(cast, "out_dtype", IR_FP32);
    return step;
}

/* var * scalar and var / scalar lower to scale (math_op_patch). */
static const char *scalar_scale(lr_build *s, const char *x, double scale)
{
    const char *out = tmp_var(s, IR_FP32);
    ir_op *op = opt_scale_op(s->ctx->main, x, out, scale, IR_ROLE_LRSCHED, "/", NULL, NULL);
    opt_ops_push(&s->ops, op);
    return out;
}

static void build_exponential(lr_build *s, const lr_cfg *c, const char *step)
{
    const char *div = scalar_scale(s, step, 1.0 / c->decay_steps);
    if (c->staircase) {
        const char *fl = layer_var(s, "floor", IR_FP32);
        unary(s, "floor", div, fl);
        div = fl;
    }
    /* decay_rate ** div: a float on the left becomes a fill_constant. */
    const char *rate = tmp_var(s, IR_FP32);
    opt_ops_push(&s->ops, opt_fill_constant_op(s->ctx->main, rate, IR_FP32, c->decay_rate, false,
                                               false, IR_ROLE_LRSCHED, "/", NULL, NULL));
    const char *pw = tmp_var(s, IR_FP32);
    ir_op_set_int(binary(s, "elementwise_pow", rate, div, pw), "axis", -1);
    scalar_scale(s, pw, c->learning_rate);
}

static const char *layer_fill(lr_build *s, double value, bool force_cpu)
{
    const char *out = layer_var(s, "fill_constant", IR_FP32);
    opt_ops_push(&s->ops, opt_fill_constant_op(s->ctx->main, out, IR_FP32, value, force_cpu, true,
                                               IR_ROLE_LRSCHED, "/", NULL, NULL));
    return out;
}

/* ConditionalBlock.complete: a sub-block assigning `value` to lr, and the
 * conditional_block op with its STEP_SCOPES var. */
static void cond_assign(lr_build *s, const char *cond, const char *value, const char *lr)
{
    ir_program *p = s->ctx->main;
    ir_block *sub = ir_program_add_block(p, 0);
    ir_op *as = opt_op_new(p, "assign", IR_ROLE_LRSCHED, "/", NULL, NULL, NULL);
    ir_op_set_input1(as, "X", value);
    ir_op_set_output1(as, "Out", lr);
    ir_block_splice(sub, 0, 0, &as, 1);
    const char *scope = opt_namer_gen(s->names, "_generated_var");
    ir_var *sv = ir_block_var(s->b, scope);
    sv->type = IR_STEP_SCOPES;
    sv->tensor_slot = IR_TD_NONE;
    sv->has_persistable = false;
    ir_op *op = lr_op(s, "conditional_block");
    ir_op_set_input1(op, "Cond", cond);
    ir_op_set_input1(op, "Input", value);
    ir_op_set_output1(op, "Out", lr);
    ir_op_set_output1(op, "Scope", scope);
    ir_op_set_block(op, "sub_block", sub->idx);
    ir_op_set_bool(op, "is_scalar_condition", true);
    /* The proto default check_attrs adds (Paddle 1.8's ConditionalBlockOp). */
    ir_op_set_strings(op, "skip_eager_deletion_vars", NULL, 0);
}

static void build_piecewise(lr_build *s, const lr_cfg *c, const char *step)
{
    const char *lr = ir_intern("learning_rate");
    const int64_t one = 1;
    opt_global_var(s->ctx, &s->inits, lr, IR_FP32, &one, 1, 0.0, false, NULL);
    const char *pre_not = NULL;
    for (size_t i = 0; i < c->n_boundaries; i++) {
        const char *bound = layer_fill(s, c->boundaries[i], true);
        const char *value = layer_fill(s, c->values[i], false);
        const char *less = tmp_var(s, IR_BOOL);
        ir_op *lt = binary(s, "less_than", step, bound, less);
        ir_op_set_int(lt, "axis", -1);
        /* check_attrs adds the proto default; 1.8's less_than passes none. */
        ir_op_set_bool(lt, "force_cpu", false);
        const char *cond = less;
        const char *not_less = layer_var(s, "logical_not", IR_BOOL);
        unary(s, "logical_not", less, not_less);
        if (pre_not) {
            const char *new_not = layer_var(s, "logical_and", IR_BOOL);
            binary(s, "logical_and", pre_not, not_less, new_not);
            cond = layer_var(s, "logical_and", IR_BOOL);
            binary(s, "logical_and", pre_not, less, cond);
            pre_not = new_not;
        } else {
            pre_not = not_less;
        }
        cond_assign(s, cond, value, lr);
    }
    const char *last = layer_fill(s, c->values[c->n_values - 1], false);
    cond_assign(s, pre_not, last, lr);
}

/* Where the user's LR layers would sit: after the forward ops. */
static size_t forward_end(const ir_block *b)
{
    for (size_t k = 0; k < b->n_ops; k++) {
        int role = ir_op_role(b->ops[k]);
        if (role > 0 && (role & (IR_ROLE_BACKWARD | IR_ROLE_OPTIMIZE)))
            return k;
    }
    return b->n_ops;
}

int pass_lr_schedule(pdt_ctx *ctx)
{
    if (!ctx->optim.lr_schedule)
        return PDT_OK;
    lr_cfg c;
    int rc = parse_cfg(NULL, ctx->optim.lr_schedule, ctx->optim.optimizer, &c);
    if (rc != PDT_OK)
        return opt_spec_reparsed(rc, "lr_schedule", "--lr-schedule");
    ir_block *b = ir_program_block(ctx->main, 0);
    if (!b) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        rc = PDT_EBADINPUT;
    } else if (c.kind == LR_PIECEWISE && ir_block_find_var(b, ir_intern("learning_rate"))) {
        pdt_error("%s: block 0 already has a var 'learning_rate', which piecewise decay creates",
                  ctx->main_path);
        rc = PDT_EBADINPUT;
    }
    if (rc == PDT_OK)
        rc = opt_refuse_optimized(ctx, "lr_schedule");
    if (rc != PDT_OK) {
        cfg_free(&c);
        return rc;
    }
    lr_build s = {ctx, b, opt_namer_new(ctx->main, ctx->startup), {0}, {0}};
    opt_inits_begin(&s.inits, ctx->startup);
    ir_op *increment;
    const char *step = step_counter(&s, &increment);
    if (c.kind == LR_EXPONENTIAL)
        build_exponential(&s, &c, step);
    else
        build_piecewise(&s, &c, step);
    opt_ops_splice(&s.ops, b, forward_end(b), false);
    if (increment)
        ir_block_splice(b, 0, 0, &increment, 1);
    opt_inits_flush(&s.inits);
    opt_ops_free(&s.ops);
    opt_namer_free(s.names);
    cfg_free(&c);
    return PDT_OK;
}
