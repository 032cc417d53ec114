/* family.h - the optimizer family's options in pdt_ctx (families.def). */
#ifndef PDT_OPTIMIZER_FAMILY_H
#define PDT_OPTIMIZER_FAMILY_H

#include <stdbool.h>
#include "../list.h"

/* The optimizer family's options (optimizer/options.c): what
 * Optimizer.minimize takes. */
typedef struct {
    const char *optimizer;      /* SPEC, e.g. "sgd:learning_rate=0.1" */
    const char *regularization; /* "l2:COEFF" */
    /* Per-parameter regularizers, "KIND:COEFF@P1,P2,..." each (fluid's
     * ParamAttr(regularizer=...)); they win over `regularization`. */
    pdt_list param_regularizations;
    const char *clip;           /* "global_norm:MAX" */
    const char *lr_schedule;
    const char *lr_warmup;      /* --lr-warmup: linear_lr_warmup's keys */
    /* --learning-rate-var: an existing block-0 var used as the learning
     * rate (fluid's Optimizer(learning_rate=Variable)), for schedules the
     * user built as forward ops. */
    const char *learning_rate_var;
    /* Not an option: set by the LR schedule pass for a 2.5+ target
     * (lr_schedule_2x.c), whose paddle.optimizer.lr rate is a host-side
     * learning_rate_N the optimizer creates where it creates a constant
     * rate's (after the accumulators, as _create_optimization_pass does),
     * float32, with this startup value. */
    bool lr_host;
    double lr_host_rate;
} pdt_optim_opts;

/* No results of its own: the passes rewrite ctx->bw_grads. */
#define PDT_OPTIMIZER_RESULTS
#define pdt_optim_init(ctx) ((void)(ctx))
#define pdt_optim_release(ctx) pdt_list_free(&(ctx)->optim.param_regularizations)

#endif
