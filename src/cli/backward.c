/* backward.c - `pdtrans backward`: runs the append_backward pass and prints
 * the (param, grad) pairs. */
#include <stdio.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static const char USAGE[] =
    "usage: pdtrans backward --loss=VAR [--params=P,...] [--no-grad=V,...]\n"
    "                        [--checkpoints=V,...] [--text] [-f] IN -o OUT\n\n"
    "Appends the backward part for the loss VAR to block 0 of IN, as Paddle's\n"
    "append_backward(loss, parameter_list, no_grad_set) does, writes the\n"
    "program to OUT and prints one 'PARAM GRAD' line per parameter that got a\n"
    "gradient (to stderr when OUT is '-', so the program alone goes to stdout).\n\n";

static int parse(int argc, char **argv, pdt_ctx *ctx, cli_common *common)
{
    cli_spec spec = {.cmd = "backward", .usage = USAGE};
    cli_family(&spec, &pdt_family_backward, ctx, "append_backward", NULL);
    cli_common_group(&spec, common, "output text force");
    cli_family(&spec, &pdt_family_run, ctx, NULL, NULL);
    cli_common_group(&spec, common, "quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc != PDT_OK)
        return rc;
    if (!ctx->backward.loss) {
        pdt_usage_error("backward", "missing --loss=VAR");
        return PDT_EUSAGE;
    }
    return cli_check_operands("backward", argc, common, "expected one input program");
}

int cmd_backward(int argc, char **argv)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_common common = {0};
    int rc = parse(argc, argv, &ctx, &common);
    if (rc == PDT_OK && !cli_read_main(&ctx, argv[optind]))
        rc = PDT_EBADINPUT;
    if (rc == PDT_OK) {
        cli_warn_no_params(&ctx);
        ctx.settings.drop_input_pages = pdio_drop_input_pages;
        const char *pass = "append_backward";
        rc = pdt_run_pipeline(&ctx, &pass, 1);
    }
    const char *out = common.out;
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, out, common.text || pdio_path_is_text(out), common.force);
    /* The report must not follow a program written to stdout. */
    if (rc == PDT_OK) {
        FILE *report = cli_report_stream(out);
        for (size_t i = 0; i < ctx.bw_params.n; i++)
            fprintf(report, "%s %s\n", ctx.bw_params.items[i], ctx.bw_grads.items[i]);
    }
    pdt_ctx_free(&ctx);
    return rc == CLI_HELP ? PDT_OK : rc;
}
