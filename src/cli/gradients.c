/* gradients.c - `pdtrans gradients`: runs the calc_gradient pass and prints
 * each input's gradient. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "../passes/pass.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans gradients (--targets=T,... | --fetch-targets)\n"
           "                         (--inputs=X,... | --all-params)\n"
           "                         [--target-grads=G,...] [--no-grad=V,...]\n"
           "                         [--text] [-f] IN -o OUT\n\n"
           "Appends the gradients of the targets with respect to the inputs to\n"
           "block 0 of IN, as Paddle's paddle.static.gradients(targets, inputs,\n"
           "target_gradients, no_grad_set) does, writes the program to OUT and prints\n"
           "one line per input: 'INPUT GRAD', or 'INPUT' alone when the targets do\n"
           "not depend on it (to stderr when OUT is '-', so the program alone goes\n"
           "to stdout).\n\n"
           "  --targets=T,...       target vars (block 0)\n"
           "  --fetch-targets       the targets are the vars the fetch ops read\n"
           "  --inputs=X,...        input vars (block 0)\n"
           "  --all-params          the inputs are every persistable var of block 0\n"
           "                        that an op reads, other than feed/fetch lists\n"
           "  --target-grads=G,...  given gradients of the targets (default: ones)\n"
           "  --no-grad=V,...       vars whose gradients are not wanted\n"
           "  -o, --output=OUT      output FILE ('-' is stdout)\n"
           "  --text                write text form whatever OUT's extension\n"
           "  -f, --force           write binary output even to a terminal\n"
           "  --no-verify-each      skip the structural check after the pass\n"
           "  -q, --quiet           print no warnings\n"
           "  -h, --help            show this help\n");
}

/* The X of every fetch op of block 0, in op order. */
static pdt_list fetch_targets(const ir_block *b)
{
    pdt_list l = {0, xcalloc(b->n_ops + 1, sizeof(char *))};
    for (size_t i = 0; i < b->n_ops; i++)
        if (b->ops[i]->type == ir_intern("fetch")) {
            const char *x = ir_op_input1(b->ops[i], "X");
            if (x)
                l.items[l.n++] = x;
        }
    return l;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Persistable tensors some op of block 0 reads, by name: the parameters of
 * an inference program, which no longer marks them is_parameter. */
static pdt_list all_params(const ir_block *b)
{
    pdt_list l = {0, xcalloc(b->n_vars + 1, sizeof(char *))};
    ir_defuse *du = ir_defuse_build(b);
    for (size_t i = 0; i < b->n_vars; i++) {
        const ir_var *v = b->vars[i];
        size_t n;
        if (v->removed || !v->persistable || v->type == IR_FEED_MINIBATCH ||
            v->type == IR_FETCH_LIST)
            continue;
        ir_defuse_readers(du, v->name, &n);
        if (n)
            l.items[l.n++] = v->name;
    }
    ir_defuse_free(du);
    qsort(l.items, l.n, sizeof *l.items, cmp_name);
    return l;
}

int cmd_gradients(int argc, char **argv)
{
    static const struct option opts[] = {
        {"targets", required_argument, NULL, 'T'},
        {"fetch-targets", no_argument, NULL, 'F'},
        {"inputs", required_argument, NULL, 'I'},
        {"all-params", no_argument, NULL, 'A'},
        {"target-grads", required_argument, NULL, 'G'},
        {"no-grad", required_argument, NULL, 'n'},
        {"output", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, 't'},
        {"force", no_argument, NULL, 'f'},
        {"no-verify-each", no_argument, NULL, 'V'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *targets = NULL, *inputs = NULL, *tgrads = NULL, *no_grad = NULL, *out = NULL;
    bool fetch = false, params = false, text = false, force = false, no_verify = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value("gradients", argv);
        switch (c) {
        case 'T': targets = optarg; break;
        case 'F': fetch = true; break;
        case 'I': inputs = optarg; break;
        case 'A': params = true; break;
        case 'G': tgrads = optarg; break;
        case 'n': no_grad = optarg; break;
        case 'o': out = optarg; break;
        case 't': text = true; break;
        case 'f': force = true; break;
        case 'V': no_verify = true; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("gradients", c, argv);
        }
    }
    if (!targets == !fetch) {
        pdt_usage_error("gradients", "give exactly one of --targets and --fetch-targets");
        return PDT_EUSAGE;
    }
    if (!inputs == !params) {
        pdt_usage_error("gradients", "give exactly one of --inputs and --all-params");
        return PDT_EUSAGE;
    }
    if (!out) {
        pdt_usage_error("gradients", "missing -o OUT");
        return PDT_EUSAGE;
    }
    if (cli_check_out_path("gradients", "-o/--output", out, false))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error("gradients", "expected one input program");
        return PDT_EUSAGE;
    }
    const char *in = argv[optind];
    pdt_ctx ctx;
    if (!cli_load_main(&ctx, in))
        return PDT_EBADINPUT;
    ir_program *p = ctx.main;
    ctx.targets = fetch ? fetch_targets(p->blocks[0]) : pdt_list_split(targets);
    ctx.inputs = params ? all_params(p->blocks[0]) : pdt_list_split(inputs);
    ctx.target_grads = pdt_list_split(tgrads);
    ctx.no_grad = pdt_list_split(no_grad);
    ctx.no_verify_each = no_verify;
    const char *pass = "calc_gradient";
    int rc = pdt_run_pipeline(&ctx, &pass, 1);
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, out, text || pdio_path_is_text(out), force);
    /* The report must not follow a program written to stdout. */
    FILE *report = cli_report_stream(out);
    if (rc == PDT_OK)
        for (size_t i = 0; i < ctx.bw_params.n; i++) {
            if (ctx.bw_grads.items[i])
                fprintf(report, "%s %s\n", ctx.bw_params.items[i], ctx.bw_grads.items[i]);
            else
                fprintf(report, "%s\n", ctx.bw_params.items[i]);
        }
    pdt_ctx_free(&ctx);
    return rc;
}
