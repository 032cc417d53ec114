/* optimizer_validate.c - the optimizer family's checks before any file is
 * read: every SPEC through the parser its pass uses, and the rules between
 * options.  Kept apart from optimizer_spec.c so that the SPEC parser calls
 * no pass (the passes call it). */
#include "../../diag.h"
#include "optimizer_util.h"

int opt_validate_specs(const char *cmd, const pdt_ctx *ctx)
{
    int rc = PDT_OK;
    if (ctx->optim.optimizer &&
        (rc = opt_optimizer_check(cmd, ctx->optim.optimizer, NULL)) != PDT_OK)
        return rc;
    opt_reg_kind rk;
    double coeff, max, min;
    if (ctx->optim.regularization &&
        (rc = opt_parse_regularization(cmd, ctx->optim.regularization, &rk, &coeff)) != PDT_OK)
        return rc;
    for (size_t i = 0; i < ctx->optim.param_regularizations.n; i++) {
        const char *params;
        rc = opt_parse_param_regularization(cmd, ctx->optim.param_regularizations.items[i], &rk,
                                            &coeff, &params);
        if (rc != PDT_OK)
            return rc;
    }
    opt_clip_kind ck;
    if (ctx->optim.clip && (rc = opt_parse_clip(cmd, ctx->optim.clip, &ck, &max, &min)) != PDT_OK)
        return rc;
    if (ctx->optim.learning_rate_var && (ctx->optim.lr_schedule || ctx->optim.lr_warmup)) {
        pdt_usage_error(cmd, "--learning-rate-var and %s contradict each other; "
                             "give one learning rate",
                        ctx->optim.lr_schedule ? "--lr-schedule" : "--lr-warmup");
        return PDT_EUSAGE;
    }
    if (ctx->optim.learning_rate_var && (!*ctx->optim.learning_rate_var || !ctx->optim.optimizer)) {
        pdt_usage_error(cmd, "option '--learning-rate-var' needs a var name and '--optimizer'");
        return PDT_EUSAGE;
    }
    if (ctx->optim.lr_schedule || ctx->optim.lr_warmup) {
        if (!ctx->optim.optimizer) {
            pdt_usage_error(cmd, "option '%s' needs '--optimizer'",
                            ctx->optim.lr_schedule ? "--lr-schedule" : "--lr-warmup");
            return PDT_EUSAGE;
        }
        rc = opt_lr_warmup_check(cmd, ctx->optim.lr_schedule, ctx->optim.lr_warmup,
                                 ctx->optim.optimizer);
    }
    return rc;
}
