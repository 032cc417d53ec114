/* minimize.c - `pdtrans minimize`: what Paddle's Optimizer.minimize leaves
 * in the main and startup programs (append_backward, then the lr_schedule,
 * gradient_clip, regularization and optimizer passes). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/optimizer/optimizer_util.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static const char USAGE[] =
    "usage: pdtrans minimize --loss=VAR --optimizer=SPEC [OPTIONS] MAIN -o DIR\n\n"
    "Adds what fluid's Optimizer.minimize(loss) adds: the backward pass,\n"
    "gradient clipping, regularization and one optimizer op per parameter,\n"
    "with the learning rate and accumulators initialised in the startup\n"
    "program.  Writes DIR/main.pb and DIR/startup.pb (.pbtxt with --text).\n"
    "A MAIN that already has backward ops gets only the optimizer part\n"
    "(apply_gradients); one that has optimizer ops is refused.\n\n";

/* First op (any block) with the Optimize bit in its op_role. */
static bool find_optimize_op(const ir_program *p, size_t *blk, size_t *pos)
{
    for (size_t b = 0; b < p->n_blocks; b++)
        for (size_t k = 0; k < p->blocks[b]->n_ops; k++) {
            int role = ir_op_role(p->blocks[b]->ops[k]);
            if (role > 0 && (role & IR_ROLE_OPTIMIZE)) {
                *blk = b;
                *pos = k;
                return true;
            }
        }
    return false;
}

static bool has_backward(const ir_block *b)
{
    for (size_t k = 0; k < b->n_ops; k++) {
        int role = ir_op_role(b->ops[k]);
        if (role > 0 && (role & IR_ROLE_BACKWARD))
            return true;
    }
    return false;
}

static int check_input(pdt_ctx *ctx, const char **names, size_t *n)
{
    size_t blk, pos;
    if (find_optimize_op(ctx->main, &blk, &pos)) {
        pdt_error("%s: block %zu, op %zu '%s': the program already has optimizer ops "
                  "(op_role Optimize); minimize adds them only once",
                  ctx->main_path, blk, pos, ctx->main->blocks[blk]->ops[pos]->type);
        return PDT_EBADINPUT;
    }
    const ir_block *b = ir_program_block(ctx->main, 0);
    if (!b || !ir_block_find_var(b, ir_intern(ctx->backward.loss))) {
        char *hint = pdt_loss_hint(b, ctx->backward.loss);
        pdt_error("%s: block 0 has no var '%s' (--loss)%s", ctx->main_path, ctx->backward.loss,
                  hint);
        g_free(hint);
        return PDT_EBADINPUT;
    }
    *n = 0;
    if (!has_backward(b)) {
        if (!pdt_pass_find("append_backward")) {
            pdt_error("%s: the program has no backward ops, and pass 'append_backward' is not "
                      "built yet; give a program that already has them", ctx->main_path);
            return PDT_EBADINPUT;
        }
        if (cli_check_has_params("minimize", ctx))
            return PDT_EUSAGE;
        names[(*n)++] = "append_backward";
    }
    static const char *const mine[] = {"lr_schedule", "gradient_clip", "regularization",
                                       "optimizer"};
    for (size_t i = 0; i < 4; i++)
        names[(*n)++] = mine[i];
    return PDT_OK;
}

static int write_outputs(const pdt_ctx *ctx, const char *dir, bool text)
{
    const char *ext = text ? "pbtxt" : "pb";
    char main_path[4096], startup_path[4096];
    snprintf(main_path, sizeof main_path, "%s/main.%s", dir, ext);
    snprintf(startup_path, sizeof startup_path, "%s/startup.%s", dir, ext);
    pdio_batch *batch = pdio_batch_new(true);
    pdio_batch_create_folder(batch, dir);   /* removed again if the set fails */
    int rc = pdio_batch_add_program(batch, main_path, ctx->main, text);
    if (rc == PDT_OK)
        rc = pdio_batch_add_program(batch, startup_path, ctx->startup, text);
    if (rc == PDT_OK)
        rc = pdio_batch_commit(batch);
    pdio_batch_free(batch);
    return rc;
}

/* The minimize options: the optimizer family's and what append_backward
 * reads (not --checkpoints: Optimizer.minimize takes none). */
void cli_minimize_options(cli_spec *s, pdt_ctx *ctx)
{
    const pdt_option_family *bw = &pdt_family_backward;
    void *base = pdt_family_base(bw, ctx);
    cli_add(s, (cli_group){bw->opts, bw->n_opts, base, "append_backward", "loss", NULL});
    cli_family(s, &pdt_family_optimizer, ctx, NULL, NULL);
    cli_add(s, (cli_group){bw->opts, bw->n_opts, base, "append_backward", NULL,
                           "loss checkpoints"});
}

static int parse(int argc, char **argv, pdt_ctx *ctx, cli_common *common)
{
    cli_spec spec = {.cmd = "minimize", .usage = USAGE};
    cli_minimize_options(&spec, ctx);
    cli_common_group(&spec, common, "startup out-dir text");
    cli_family(&spec, &pdt_family_run, ctx, NULL, NULL);
    cli_common_group(&spec, common, "quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc != PDT_OK)
        return rc;
    if (cli_check_out_path("minimize", "-o/--out-dir", common->out, true))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error("minimize", "expected one MAIN program");
        return PDT_EUSAGE;
    }
    if (!ctx->backward.loss || !ctx->optim.optimizer) {
        pdt_usage_error("minimize", "'--loss' and '--optimizer' are required");
        return PDT_EUSAGE;
    }
    return pdt_family_optimizer.validate(ctx, "minimize");
}

int cmd_minimize(int argc, char **argv)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_common common = {0};
    int rc = parse(argc, argv, &ctx, &common);
    if (rc != PDT_OK) {
        pdt_ctx_free(&ctx);
        return rc == CLI_HELP ? PDT_OK : rc;
    }
    ctx.main_path = argv[optind];
    ctx.main = pdio_read(argv[optind]);
    if (ctx.main && common.startup) {
        ctx.startup = pdio_read(common.startup);
        ctx.startup_path = common.startup;
    }
    if (!ctx.main || (common.startup && !ctx.startup)) {
        pdt_ctx_free(&ctx);
        return PDT_EBADINPUT;
    }
    if (!ctx.startup) {
        ctx.startup = ir_program_new();
        ir_program_add_block(ctx.startup, -1);
    }
    const char *names[8];
    size_t n = 0;
    rc = check_input(&ctx, names, &n);
    if (rc == PDT_OK)
        rc = pdt_run_pipeline(&ctx, names, n);
    if (rc == PDT_OK)
        rc = write_outputs(&ctx, common.out, common.text);
    pdt_ctx_free(&ctx);
    return rc;
}
