/* lr_schedule_2x.c - what --lr-schedule / --lr-warmup write for a Paddle
 * 2.x or 3.x target (--paddle-version, ctx->settings.era; issue 30).
 * An op sequence is no era.def row, so the family asks the target version
 * here, as gradient_clip.c does for the global-norm clip.
 *
 * 1.4-1.5: 1.8's sequences with math_op_patch's pre-1.6.0 arithmetic (a
 * fill_constant and an elementwise op for a Python number, lr_decay.c
 * lr_math), and, as for 1.6, the warm-up's arithmetic in block 0
 * (research-2x-3x.md 4y).
 *
 * 2.0-2.4: fluid.layers.learning_rate_scheduler as 1.8 builds it (the
 * same Switch, the same math_op_patch scalar ops: lr_decay.c), except
 * piecewise_decay, which fills the persistable "learning_rate" with
 * tensor.fill_constant(..., out=lr) inside each case instead of assigning
 * a value filled in block 0 (the 2.3/2.4-era copy of the file, commit
 * 2b4e10b1, shows it with the Switch everywhere else).
 *
 * 2.5: the last release with python/paddle/fluid/layers/
 * learning_rate_scheduler.py (PR #55986, August 2023, moved its functions
 * into paddle/optimizer/lr.py for 2.6).  PR #51778 ("[fluid clean] remove
 * Print", approved 2023-04-23) replaced the Switch of polynomial_decay's
 * cycle with paddle.static.nn.cond and linear_lr_warmup's with
 * paddle.static.nn.case + assign (lr_cond.c); piecewise keeps its Switch
 * with a TODO.  The v2.5.0, v2.5.1 and v2.5.2 tags have these forms and
 * natural_exp_decay (v2.5.0-rc0/rc1 still the Switch; research-2x-3x.md
 * 4h), which left the file only with PR #54424, after 2.5.
 *
 * 2.6 and later: no fluid.layers (fluid became paddle.base); the static
 * functions live on, out of __all__, as paddle.optimizer.lr.*_decay, but
 * a practitioner writes paddle.optimizer.X(learning_rate=
 * paddle.optimizer.lr.Y(...)), and Optimizer._create_global_learning_rate
 * (python/paddle/optimizer/optimizer.py) then creates no schedule op:
 * a persistable float32 var unique_name.generate('learning_rate'),
 * shape [1], stop_gradient, whose startup initializer is
 * Constant(float(scheduler())), the rate at epoch 0; the Executor writes
 * the scheduler's rate into it before every run (main_prog.lr_scheduler,
 * host-side Python state no ProgramDesc holds). */
#include <stdint.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "../era/era.h"
#include "lr_schedule.h"

#define LR_SCALE_FROM 106    /* v1.6.0: math_op_patch's scalar scale */
#define LR_CUR_BLOCK_FROM 107 /* v1.7.0 (#21189): the program's current block */
#define LR_NOAM_RATE_FROM 108 /* v1.8.0: noam_decay(..., learning_rate=1.0) */
#define LR_2X_FROM 200
#define LR_COND_FROM 205
#define LR_HOST_FROM 206

lr_writer lr_writer_for(const pdt_ctx *ctx)
{
    int era = ctx->settings.era;
    if (era >= LR_HOST_FROM)
        return LR_WRITE_HOST;
    if (era >= LR_COND_FROM)
        return LR_WRITE_25;
    return era >= LR_2X_FROM ? LR_WRITE_2X : LR_WRITE_18;
}

bool lr_scalar_fill(const pdt_ctx *ctx)
{
    int era = ctx->settings.era;
    return era != PDT_ERA_NATIVE && era < LR_SCALE_FROM;
}

bool lr_var_block(const pdt_ctx *ctx)
{
    int era = ctx->settings.era;
    return era != PDT_ERA_NATIVE && era < LR_CUR_BLOCK_FROM;
}

/* A schedule the target cannot write: an error when --paddle-version named
 * the target, else (the version was read off the input) a warning. */
static int lacking(const pdt_ctx *ctx, const char *what, const char *instead)
{
    char v[16];
    pdt_era_format(ctx->settings.era, v, sizeof v);
    const char *given = ctx->settings.paddle_version;
    if (given && strcmp(given, "auto")) {
        pdt_error("lr_schedule: %s, so Paddle %s (--paddle-version=%s) cannot write this "
                  "schedule; %s", what, v, given, instead);
        return PDT_EUSAGE;
    }
    pdt_warning("lr_schedule: %s, and the input reads as Paddle %s: written anyway, as the "
                "next version that can (--paddle-version names the target)", what, v);
    return PDT_OK;
}

int lr_era_check(const pdt_ctx *ctx, const lr_cfg *c)
{
    int era = ctx->settings.era;
    if (era == PDT_ERA_NATIVE)
        return PDT_OK;
    /* v1.4.1/v1.5.2 linear_lr_warmup: switch.default() runs
     * tensor.assign(learning_rate, lr), and layers/tensor.py's assign
     * raises "Wrong type for assign input" for a float; v1.6.0 fills it. */
    if (c->warmup && c->kind == LR_NONE && era < LR_SCALE_FROM)
        return lacking(ctx, "--lr-warmup without --lr-schedule warms up a float rate, which "
                       "linear_lr_warmup before 1.6 hands to tensor.assign (ValueError: "
                       "Wrong type for assign input)", "add --lr-schedule, or target 1.6");
    /* noam_decay(d_model, warmup_steps) until v1.7.2. */
    if (c->kind == LR_NOAM && c->learning_rate != 1.0 && era < LR_NOAM_RATE_FROM)
        return lacking(ctx, "noam's learning_rate is an argument of noam_decay only from "
                       "Paddle 1.8", "drop learning_rate, or target 1.8");
    return PDT_OK;
}

/* paddle.optimizer.lr's class for a fluid schedule (cosine_decay's nearest
 * is CosineAnnealingDecay, which anneals per step, not per epoch). */
static const char *scheduler_class(lr_kind kind)
{
    static const char *const names[] = {
        [LR_NONE] = "LinearWarmup",         [LR_EXPONENTIAL] = "ExponentialDecay",
        [LR_NATURAL_EXP] = "NaturalExpDecay", [LR_INVERSE_TIME] = "InverseTimeDecay",
        [LR_POLYNOMIAL] = "PolynomialDecay",  [LR_PIECEWISE] = "PiecewiseDecay",
        [LR_NOAM] = "NoamDecay",              [LR_COSINE] = "CosineAnnealingDecay",
    };
    return names[kind];
}

/* The scheduler's get_lr() at last_epoch 0, which LRScheduler.__init__'s
 * step() leaves as its rate: LinearWarmup gives start_lr, PiecewiseDecay
 * values[0], NoamDecay base_lr * d_model ** -0.5 * min(1, 0) = 0, every
 * other its learning_rate (python/paddle/optimizer/lr.py). */
static double epoch0_rate(const lr_cfg *c)
{
    if (c->warmup)
        return c->wu_start;
    switch (c->kind) {
    case LR_PIECEWISE: return c->values[0];
    case LR_NOAM: return 0.0;
    default: return c->learning_rate;
    }
}

void lr_build_host(pdt_ctx *ctx, const lr_cfg *c)
{
    /* The optimizer pass creates the var (after its accumulators, where
     * Paddle creates it); this names it for the warning by asking the
     * same generator over the same programs. */
    opt_namer *names = opt_namer_new(ctx->main, ctx->startup);
    const char *lr = opt_namer_gen(names, "learning_rate");
    opt_namer_free(names);
    double rate = epoch0_rate(c);
    ctx->optim.lr_host = true;
    ctx->optim.lr_host_rate = rate;
    char version[16];
    pdt_era_format(ctx->settings.era, version, sizeof version);
    /* pdt_warning: once per run, though transpile builds each trainer. */
    pdt_warning("Paddle %s has no fluid.layers learning-rate schedules: as "
                "paddle.optimizer.lr.%s%s does, the program gets no schedule ops, only the "
                "persistable '%s' (startup value %g, the rate at epoch 0), which the "
                "executor must set each step from the host",
                version, c->warmup && c->kind != LR_NONE ? "LinearWarmup around " : "",
                scheduler_class(c->kind), lr, rate);
}
