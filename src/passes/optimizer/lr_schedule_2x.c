/* lr_schedule_2x.c - what --lr-schedule / --lr-warmup write for a Paddle
 * 2.x or 3.x target (--paddle-version, ctx->settings.era; issue 30).
 * An op sequence is no era.def row, so the family asks the target version
 * here, as gradient_clip.c does for the global-norm clip.
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

#include "../../diag.h"
#include "../../ir/util.h"
#include "../era/era.h"
#include "lr_schedule.h"

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
