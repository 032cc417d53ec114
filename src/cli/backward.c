/* backward.c - `pdtrans backward`: runs the append_backward pass and prints
 * the (param, grad) pairs. */
#include <getopt.h>
#include <stdio.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans backward --loss=VAR [--params=P,...] [--no-grad=V,...]\n"
           "                        [--checkpoints=V,...] [--text] [-f] IN -o OUT\n\n"
           "Appends the backward part for the loss VAR to block 0 of IN, as Paddle's\n"
           "append_backward(loss, parameter_list, no_grad_set) does, writes the\n"
           "program to OUT and prints one 'PARAM GRAD' line per parameter that got a\n"
           "gradient (to stderr when OUT is '-', so the program alone goes to stdout).\n\n"
           "  --loss=VAR           the loss var (block 0)\n"
           "  --params=P,...       parameter_list (default: every parameter of block 0\n"
           "                       that is not stop_gradient, by name)\n"
           "  --no-grad=V,...      no_grad_set: vars whose gradients are not wanted\n"
           "  --checkpoints=V,...  recompute checkpoints (forward recomputation)\n"
           "  -o, --output=OUT     output FILE ('-' is stdout)\n"
           "  --text               write text form whatever OUT's extension\n"
           "  -f, --force          write binary output even to a terminal\n"
           "  --no-verify-each     skip the structural check after the pass\n"
           "  -q, --quiet          print no warnings\n"
           "  -h, --help           show this help\n");
}

int cmd_backward(int argc, char **argv)
{
    static const struct option opts[] = {
        {"loss", required_argument, NULL, 'l'},
        {"params", required_argument, NULL, 'p'},
        {"no-grad", required_argument, NULL, 'n'},
        {"checkpoints", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        {"no-verify-each", no_argument, NULL, 'V'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *loss = NULL, *params = NULL, *no_grad = NULL, *ckpt = NULL, *out = NULL;
    bool text = false, force = false, no_verify = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value("backward", argv);
        switch (c) {
        case 'l': loss = optarg; break;
        case 'p': params = optarg; break;
        case 'n': no_grad = optarg; break;
        case 'c': ckpt = optarg; break;
        case 'o': out = optarg; break;
        case 't': text = true; break;
        case 'f': force = true; break;
        case 'V': no_verify = true; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("backward", c, argv);
        }
    }
    if (!loss || !*loss) {
        pdt_usage_error("backward", "missing --loss=VAR");
        return PDT_EUSAGE;
    }
    if (!out) {
        pdt_usage_error("backward", "missing -o OUT");
        return PDT_EUSAGE;
    }
    if (cli_check_out_path("backward", "-o/--output", out, false))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error("backward", "expected one input program");
        return PDT_EUSAGE;
    }
    const char *in = argv[optind];
    pdt_ctx ctx;
    if (!cli_load_main(&ctx, in))
        return PDT_EBADINPUT;
    ctx.loss = loss;
    ctx.params = pdt_list_split(params);
    ctx.no_grad = pdt_list_split(no_grad);
    ctx.checkpoints = pdt_list_split(ckpt);
    ctx.no_verify_each = no_verify;
    cli_warn_no_params(&ctx);
    const char *pass = "append_backward";
    int rc = pdt_run_pipeline(&ctx, &pass, 1);
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, out, text || pdio_path_is_text(out), force);
    /* The report must not follow a program written to stdout. */
    FILE *report = cli_report_stream(out);
    if (rc == PDT_OK)
        for (size_t i = 0; i < ctx.bw_params.n; i++)
            fprintf(report, "%s %s\n", ctx.bw_params.items[i], ctx.bw_grads.items[i]);
    pdt_ctx_free(&ctx);
    return rc;
}
