/* optimizer/options.c - the options of the optimizer family (lr_schedule,
 * gradient_clip, regularization, optimizer: what Optimizer.minimize takes);
 * each option is declared here and nowhere else. */
#include <string.h>

#include "../../diag.h"
#include "optimizer_util.h"
#include "../options.h"
#include "../pass.h"

#define FIELD(f) offsetof(pdt_optim_opts, f)

/* The optimizer's regularizer (given once) or, with "@PARAMS", a
 * per-parameter one (repeatable). */
static bool set_regularization(void *base, const pdt_option *opt, const char *spec,
                               const char *cmd)
{
    pdt_optim_opts *o = base;
    (void)opt;
    if (strchr(spec, '@')) {
        pdt_list_append(&o->param_regularizations, spec);
        return true;
    }
    if (o->regularization) {
        pdt_usage_error(cmd, "option '--regularization' gives the optimizer's regularizer twice; "
                             "per-parameter ones take @PARAMS");
        return false;
    }
    o->regularization = ir_intern(spec);
    return true;
}

static const pdt_option optimizer_options[] = {
    {.name = "optimizer", .type = PDT_OPT_STRING, .meta = "SPEC", .passes = "optimizer",
     .help = "KIND[:KEY=VALUE,...], KIND one of sgd, momentum, lars_momentum, adagrad, adam, "
             "adamax, decayed_adagrad, rmsprop, ftrl; keys are the Python argument names "
             "(lr = learning_rate)",
     .offset = FIELD(optimizer)},
    {.name = "regularization", .type = PDT_OPT_CUSTOM, .meta = "SPEC",
     .passes = "regularization", .set = set_regularization,
     .help = "l1:COEFF or l2:COEFF; KIND:COEFF@P1,P2,... gives those params their own "
             "(repeatable; they win over the optimizer's, as ParamAttr does)"},
    {.name = "clip", .type = PDT_OPT_STRING, .meta = "SPEC", .passes = "gradient_clip",
     .help = "value:MAX[,min=MIN], norm:MAX or global_norm:MAX", .offset = FIELD(clip)},
    {.name = "lr-schedule", .type = PDT_OPT_STRING, .meta = "SPEC",
     .passes = "lr_schedule optimizer",
     .help = "KIND:KEY=VALUE,..., fluid.layers' KIND_decay with its Python argument names: "
             "exponential, natural_exp, inverse_time (decay_steps, decay_rate[, staircase]), "
             "polynomial (decay_steps[, end_learning_rate, power, cycle]), piecewise "
             "(boundaries=B1,...,values=V0,...), noam (d_model, warmup_steps), cosine "
             "(step_each_epoch, epochs); learning_rate defaults to the optimizer's",
     .offset = FIELD(lr_schedule)},
    {.name = "lr-warmup", .type = PDT_OPT_STRING, .meta = "SPEC",
     .passes = "lr_schedule optimizer",
     .help = "warmup_steps=N,start_lr=A,end_lr=B: fluid.layers.linear_lr_warmup around the "
             "--lr-schedule or the optimizer's constant rate",
     .offset = FIELD(lr_warmup)},
    {.name = "learning-rate-var", .type = PDT_OPT_STRING, .meta = "VAR", .passes = "optimizer",
     .help = "use block 0's VAR as the learning rate (a schedule built as forward ops) "
             "instead of creating learning_rate_0",
     .offset = FIELD(learning_rate_var)},
};

static int validate_optimizer(pdt_ctx *ctx, const char *cmd)
{
    return opt_validate_specs(cmd, ctx);
}

const pdt_option_family pdt_family_optimizer = {
    "optimizer", optimizer_options, sizeof optimizer_options / sizeof *optimizer_options,
    offsetof(pdt_ctx, optim), validate_optimizer};
