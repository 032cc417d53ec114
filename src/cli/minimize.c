/* minimize.c - `pdtrans minimize`: what Paddle's Optimizer.minimize leaves
 * in the main and startup programs (append_backward, then the lr_schedule,
 * gradient_clip, regularization and optimizer passes). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/optimizer/optimizer_util.h"
#include "../passes/pass.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans minimize --loss=VAR --optimizer=SPEC [OPTIONS] MAIN -o DIR\n\n"
           "Adds what fluid's Optimizer.minimize(loss) adds: the backward pass,\n"
           "gradient clipping, regularization and one optimizer op per parameter,\n"
           "with the learning rate and accumulators initialised in the startup\n"
           "program.  Writes DIR/main.pb and DIR/startup.pb (.pbtxt with --text).\n"
           "A MAIN that already has backward ops gets only the optimizer part\n"
           "(apply_gradients); one that has optimizer ops is refused.\n\n"
           "  --loss=VAR              the loss var (block 0)\n"
           "  --optimizer=SPEC        KIND[:KEY=VALUE,...], KIND one of sgd, momentum,\n"
           "                          lars_momentum, adagrad, adam, adamax,\n"
           "                          decayed_adagrad, rmsprop, ftrl; keys are the\n"
           "                          Python argument names (lr = learning_rate)\n"
           "  --regularization=SPEC   l1:COEFF or l2:COEFF; KIND:COEFF@P1,P2,... gives\n"
           "                          those params their own (repeatable; they win\n"
           "                          over the optimizer's, as ParamAttr does)\n"
           "  --clip=SPEC             value:MAX[,min=MIN], norm:MAX or global_norm:MAX\n"
           "  --lr-schedule=SPEC      exponential:decay_steps=N,decay_rate=R\n"
           "                          [,staircase=true][,learning_rate=LR] or\n"
           "                          piecewise:boundaries=B1,B2,...,values=V0,V1,...\n"
           "  --learning-rate-var=VAR use block 0's VAR as the learning rate (a\n"
           "                          schedule built as forward ops) instead of\n"
           "                          creating learning_rate_0\n"
           "  --params=P1,P2,...      parameters to optimize (append_backward)\n"
           "  --no-grad=V1,V2,...     vars that get no gradient (append_backward)\n"
           "  -s, --startup=FILE      startup program (default: an empty one)\n"
           "  -o, --out-dir=DIR       output FOLDER, not a file (default .)\n"
           "  --text                  write the text form\n"
           "  --no-verify-each        skip the structural check after each pass\n"
           "  -q, --quiet             print no warnings\n"
           "  -h, --help              show this help\n");
}

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
    if (!b || !ir_block_find_var(b, ir_intern(ctx->loss))) {
        pdt_error("%s: block 0 has no var '%s' (--loss)", ctx->main_path, ctx->loss);
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

int cmd_minimize(int argc, char **argv)
{
    enum { O_LOSS = 256, O_OPT, O_REG, O_CLIP, O_LR, O_LRVAR, O_PARAMS, O_NOGRAD, O_TEXT,
           O_NOVERIFY };
    static const struct option opts[] = {
        {"loss", required_argument, NULL, O_LOSS},
        {"optimizer", required_argument, NULL, O_OPT},
        {"regularization", required_argument, NULL, O_REG},
        {"clip", required_argument, NULL, O_CLIP},
        {"lr-schedule", required_argument, NULL, O_LR},
        {"learning-rate-var", required_argument, NULL, O_LRVAR},
        {"params", required_argument, NULL, O_PARAMS},
        {"no-grad", required_argument, NULL, O_NOGRAD},
        {"startup", required_argument, NULL, 's'},
        {"out-dir", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, O_TEXT},
        {"no-verify-each", no_argument, NULL, O_NOVERIFY},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    const char *startup = NULL, *dir = ".";
    bool text = false;
    int c, rc = PDT_OK;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:o:qh", opts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?') {
            pdt_ctx_free(&ctx);
            return cli_empty_value("minimize", argv);
        }
        switch (c) {
        case O_LOSS: ctx.loss = optarg; break;
        case O_OPT: ctx.optimizer = optarg; break;
        case O_REG:
            if (!cli_add_regularization("minimize", &ctx, optarg)) {
                pdt_ctx_free(&ctx);
                return PDT_EUSAGE;
            }
            break;
        case O_CLIP: ctx.clip = optarg; break;
        case O_LR: ctx.lr_schedule = optarg; break;
        case O_LRVAR: ctx.learning_rate_var = optarg; break;
        case O_PARAMS: pdt_list_free(&ctx.params); ctx.params = pdt_list_split(optarg); break;
        case O_NOGRAD: pdt_list_free(&ctx.no_grad); ctx.no_grad = pdt_list_split(optarg); break;
        case 's': startup = optarg; break;
        case 'o': dir = optarg; break;
        case O_TEXT: text = true; break;
        case O_NOVERIFY: ctx.no_verify_each = true; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); pdt_ctx_free(&ctx); return PDT_OK;
        default: pdt_ctx_free(&ctx); return cli_bad_option("minimize", c, argv);
        }
    }
    if (cli_check_out_path("minimize", "-o/--out-dir", dir, true)) {
        rc = PDT_EUSAGE;
    } else if (argc - optind != 1) {
        pdt_usage_error("minimize", "expected one MAIN program");
        rc = PDT_EUSAGE;
    } else if (!ctx.loss || !ctx.optimizer) {
        pdt_usage_error("minimize", "'--loss' and '--optimizer' are required");
        rc = PDT_EUSAGE;
    } else {
        rc = opt_validate_specs("minimize", &ctx);
    }
    if (rc != PDT_OK) {
        pdt_ctx_free(&ctx);
        return rc;
    }
    ctx.main_path = argv[optind];
    ctx.main = pdio_read(argv[optind]);
    if (ctx.main && startup) {
        ctx.startup = pdio_read(startup);
        ctx.startup_path = startup;
    }
    if (!ctx.main || (startup && !ctx.startup)) {
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
        rc = write_outputs(&ctx, dir, text);
    pdt_ctx_free(&ctx);
    return rc;
}
