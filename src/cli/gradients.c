/* gradients.c - `pdtrans gradients`: runs the calc_gradient pass and prints
 * each input's gradient. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static const char USAGE[] =
    "usage: pdtrans gradients (--targets=T,... | --fetch-targets)\n"
    "                         (--inputs=X,... | --all-params)\n"
    "                         [--target-grads=G,...] [--no-grad=V,...]\n"
    "                         [--text] [-f] IN -o OUT\n\n"
    "Appends the gradients of the targets with respect to the inputs to\n"
    "block 0 of IN, as Paddle's paddle.static.gradients(targets, inputs,\n"
    "target_gradients, no_grad_set) does, writes the program to OUT and prints\n"
    "one line per input: 'INPUT GRAD', or 'INPUT' alone when the targets do\n"
    "not depend on it (to stderr when OUT is '-', so the program alone goes\n"
    "to stdout).\n\n";

typedef struct {
    bool fetch_targets, all_params;
} grad_opts;

/* The command's own options: other ways to give calc_gradient's lists. */
static const pdt_option gradients_cmd_options[] = {
    {.name = "fetch-targets", .type = PDT_OPT_FLAG, .offset = offsetof(grad_opts, fetch_targets),
     .help = "the targets are the vars the fetch ops read"},
    {.name = "all-params", .type = PDT_OPT_FLAG, .offset = offsetof(grad_opts, all_params),
     .help = "the inputs are every persistable var of block 0 that an op reads, other than "
             "feed/fetch lists"},
};

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

static int parse(int argc, char **argv, pdt_ctx *ctx, grad_opts *g, cli_common *common)
{
    cli_spec spec = {.cmd = "gradients", .usage = USAGE};
    const pdt_option_family *bw = &pdt_family_backward;
    void *base = pdt_family_base(bw, ctx);
    cli_add(&spec, (cli_group){bw->opts, bw->n_opts, base, NULL, "targets", NULL});
    cli_add(&spec, (cli_group){gradients_cmd_options, 1, g, NULL, NULL, NULL});
    cli_add(&spec, (cli_group){bw->opts, bw->n_opts, base, NULL, "inputs", NULL});
    cli_add(&spec, (cli_group){gradients_cmd_options + 1, 1, g, NULL, NULL, NULL});
    cli_add(&spec, (cli_group){bw->opts, bw->n_opts, base, "calc_gradient", NULL,
                               "targets inputs"});
    cli_common_group(&spec, common, "output text force");
    cli_family(&spec, &pdt_family_run, ctx, NULL, NULL);
    cli_common_group(&spec, common, "quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc != PDT_OK)
        return rc;
    if (cli_given(&spec, "targets") == g->fetch_targets) {
        pdt_usage_error("gradients", "give exactly one of --targets and --fetch-targets");
        return PDT_EUSAGE;
    }
    if (cli_given(&spec, "inputs") == g->all_params) {
        pdt_usage_error("gradients", "give exactly one of --inputs and --all-params");
        return PDT_EUSAGE;
    }
    return cli_check_operands("gradients", argc, common, "expected one input program");
}

int cmd_gradients(int argc, char **argv)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    cli_common common = {0};
    grad_opts g = {false, false};
    int rc = parse(argc, argv, &ctx, &g, &common);
    if (rc == PDT_OK && !cli_read_main(&ctx, argv[optind]))
        rc = PDT_EBADINPUT;
    if (rc == PDT_OK) {
        const ir_block *b0 = ctx.main->blocks[0];
        if (g.fetch_targets)
            ctx.backward.targets = fetch_targets(b0);
        if (g.all_params)
            ctx.backward.inputs = all_params(b0);
        const char *pass = "calc_gradient";
        rc = pdt_run_pipeline(&ctx, &pass, 1);
    }
    const char *out = common.out;
    if (rc == PDT_OK)
        rc = pdio_write(ctx.main, out, common.text || pdio_path_is_text(out), common.force);
    /* The report must not follow a program written to stdout. */
    FILE *report = cli_report_stream(out ? out : "-");
    if (rc == PDT_OK)
        for (size_t i = 0; i < ctx.bw_params.n; i++) {
            if (ctx.bw_grads.items[i])
                fprintf(report, "%s %s\n", ctx.bw_params.items[i], ctx.bw_grads.items[i]);
            else
                fprintf(report, "%s\n", ctx.bw_params.items[i]);
        }
    pdt_ctx_free(&ctx);
    return rc == CLI_HELP ? PDT_OK : rc;
}
