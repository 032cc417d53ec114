/* transpile.c - `pdtrans [transpile] [OPTIONS] MAIN`, the default command:
 * reads MAIN (and the startup program), runs the pipeline that ends in the
 * transpile pass, and writes every requested role's programs plus
 * manifest.json into the output folder, all or nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../ir/util.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "../passes/transpile/transpile.h"
#include "cli.h"
#include "optparse.h"
#include "transpile_cli.h"

static const char *CMD = TCLI_CMD;

static const char USAGE[] =
    "usage: pdtrans [transpile] [OPTIONS] MAIN\n\n"
    "Splits a training program that already holds backward and optimizer ops\n"
    "into trainer and parameter-server programs, as Paddle's\n"
    "DistributeTranspiler does.  Writes trainer_<I>.pb, trainer_<I>.startup.pb,\n"
    "pserver_<K>.pb, pserver_<K>.startup.pb (K: the endpoint's position in\n"
    "--pservers) and manifest.json into the output folder.  A MAIN with no\n"
    "backward or optimizer ops yet first gets what 'pdtrans minimize' adds,\n"
    "given --loss and --optimizer.\n\n";

#define FIELD(f) offsetof(tcli_opts, f)

/* The command's own options; the rest are the families' and common ones. */
static const pdt_option transpile_cmd_options[] = {
    {.name = "from-env", .type = PDT_OPT_FLAG, .offset = FIELD(from_env),
     .help = "take what flags leave unset from the variables Paddle's launchers export "
             "(1.x: PADDLE_TRAINING_ROLE, PADDLE_PSERVER_IPS, ...; 2.x fleetrun/launch: "
             "TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, ...), and FLAGS_rpc_*, "
             "FLAGS_selected_gpus, ...; the environment is read only with this flag"},
    {.name = "passes", .type = PDT_OPT_STRING, .meta = "LIST", .offset = FIELD(passes),
     .help = "run exactly these passes, NAME or NAME{KEY=VALUE;...} each (see 'pdtrans "
             "passes')"},
};

typedef tcli_opts opts;

/* Which settings came from flags (or --passes): they win over --from-env,
 * and validate() refuses some in modes that ignore them. */
static void note_given(pdt_transpile_opts *t, const cli_spec *s)
{
    t->given.role = cli_given(s, "role");
    t->given.pservers = cli_given(s, "pservers");
    t->given.trainers = cli_given(s, "trainers");
    t->given.trainer_id = cli_given(s, "trainer-id");
    t->given.endpoint = cli_given(s, "endpoint");
    t->given.rpc_send = cli_given(s, "rpc-send-threads");
    t->given.rpc_get = cli_given(s, "rpc-get-threads");
    t->given.rpc_prefetch = cli_given(s, "rpc-prefetch-threads");
    t->given.gpus = cli_given(s, "selected-gpus");
    t->given.fuse = cli_given(s, "fuse-allreduce");
    t->given.loss_scale = cli_given(s, "loss-scale");
    t->given.hierarchical =
        cli_given(s, "hierarchical-allreduce") || cli_given(s, "hierarchical-inter-nranks");
    t->given.nccl_flags = t->given.hierarchical || cli_given(s, "nccl-comm-num");
    static const char *const sync_flags[] = {"--sync", "--async", "--half-async"};
    for (size_t i = 0; i < 3; i++)
        if (cli_given(s, sync_flags[i] + 2))
            t->given.sync_flag = sync_flags[i];
}

static int parse_args(int argc, char **argv, opts *o, pdt_list *passes)
{
    pdt_ctx *ctx = o->ctx;
    cli_spec spec = {.cmd = CMD, .usage = USAGE};
    cli_common_group(&spec, &o->common, "startup");
    cli_family(&spec, &pdt_family_transpile, ctx, NULL, NULL);
    cli_add(&spec, (cli_group){transpile_cmd_options, 1, o, NULL, NULL, NULL});
    cli_minimize_options(&spec, ctx);
    cli_add(&spec, (cli_group){transpile_cmd_options + 1, 1, o, NULL, NULL, NULL});
    cli_add(&spec, (cli_group){tcli_job_options, tcli_n_job_options, o, NULL, NULL, NULL});
    cli_family(&spec, &pdt_family_run, ctx, NULL, NULL);
    cli_common_group(&spec, &o->common, "out-dir text verbose quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc != PDT_OK)
        return rc;
    if (cli_check_out_path(CMD, "-o/--out-dir", o->common.out, true) ||
        cli_check_quiet_verbose(CMD))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error(CMD, argc - optind ? "expected one MAIN program, got %d arguments"
                                           : "expected a MAIN program%.0d", argc - optind);
        return PDT_EUSAGE;
    }
    if (o->passes) {
        rc = cli_parse_pipeline(&spec, ctx, o->passes, passes);
        if (rc == PDT_OK && passes->n == 0) {
            pdt_usage_error(CMD, "--passes needs at least one pass name");
            rc = PDT_EUSAGE;
        }
    }
    note_given(&ctx->transpile, &spec);
    o->startup_path = o->common.startup;
    o->out_dir = o->common.out;
    o->text = o->common.text;
    return rc;
}

/* ---- the pipeline ---- */

static bool has_role_bit(const ir_program *p, int bit)
{
    const ir_block *b = p->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        int r = ir_op_role(b->ops[k]);
        if (r > 0 && (r & bit))
            return true;
    }
    return false;
}

/* The default pipeline: the transpile pass alone, or, for a MAIN that has
 * no optimizer ops yet and --optimizer, what `pdtrans minimize` runs. */
static int pick_passes(pdt_ctx *ctx, pdt_list *out)
{
    static const char *const minimize[] = {"append_backward", "lr_schedule", "gradient_clip",
                                           "regularization", "optimizer"};
    const char *names[8];
    size_t n = 0;
    bool optimized = has_role_bit(ctx->main, IR_ROLE_OPTIMIZE);
    /* Options of the minimize part, which runs only before a transpile of
     * a program without optimizer ops; never silently dropped. */
    const char *extra = ctx->optim.optimizer ? "--optimizer"
                        : ctx->optim.clip    ? "--clip"
                        : ctx->optim.regularization || ctx->optim.param_regularizations.n
                            ? "--regularization"
                        : ctx->optim.learning_rate_var ? "--learning-rate-var"
                        : ctx->optim.lr_schedule       ? "--lr-schedule"
                        : ctx->optim.lr_warmup         ? "--lr-warmup"
                        : ctx->backward.loss           ? "--loss"
                                                       : NULL;
    if ((ctx->backward.params.n || ctx->backward.no_grad.n) && !ctx->backward.loss) {
        pdt_usage_error(CMD, "%s applies to the backward part, which transpile runs only with "
                        "--loss (and --optimizer); give --loss or drop it",
                        ctx->backward.params.n ? "--params" : "--no-grad");
        return PDT_EUSAGE;
    }
    if (optimized && extra) {
        pdt_usage_error(CMD, "%s already has optimizer ops (op_role Optimize), so %s would "
                        "have no effect; drop it, or give the program before minimize",
                        ctx->main_path, extra);
        return PDT_EUSAGE;
    }
    if (!optimized && extra && !ctx->optim.optimizer) {
        pdt_usage_error(CMD, "%s needs --optimizer", extra);
        return PDT_EUSAGE;
    }
    if (!optimized && ctx->optim.optimizer) {
        bool backward = has_role_bit(ctx->main, IR_ROLE_BACKWARD);
        if (!backward && !ctx->backward.loss) {
            pdt_usage_error(CMD, "%s has no backward ops: --optimizer needs --loss too",
                            ctx->main_path);
            return PDT_EUSAGE;
        }
        if (!backward && cli_check_has_params(CMD, ctx))
            return PDT_EUSAGE;
        for (size_t i = backward ? 1 : 0; i < sizeof minimize / sizeof *minimize; i++)
            names[n++] = minimize[i];
    }
    names[n++] = "transpile";
    out->items = xcalloc(n, sizeof *out->items);
    for (size_t i = 0; i < n; i++)
        out->items[i] = ir_intern(names[i]);
    out->n = n;
    return PDT_OK;
}

/* The output set: a streaming batch, so that each program is encoded and
 * written to its temporary as soon as it is complete (the pipeline hands
 * the pservers' over before the trainer is built, and frees them) and all
 * land together at the commit. */
typedef struct {
    const opts *o;
    pdio_batch *batch;
} output_set;

static int write_output(void *arg, const char *stem, const ir_program *p)
{
    const output_set *out = arg;
    const opts *o = out->o;
    char *path = g_strdup_printf("%s/%s", o->out_dir, tp_file_name(o->ctx, stem));
    int rc = pdio_batch_add_program(out->batch, path, p, o->text);
    g_free(path);
    return rc;
}

static void open_outputs(output_set *out, const opts *o)
{
    out->o = o;
    out->batch = pdio_batch_new(false);
    pdio_batch_stream(out->batch);
    /* Made when the first file is written; removed again if the set fails. */
    pdio_batch_create_folder(out->batch, o->out_dir);
    o->ctx->settings.write_output = write_output;
    o->ctx->settings.write_output_arg = out;
}

/* What the pipeline handed over at its end, the other trainers' programs
 * (--role=all), the removal of stale files (--clean), then the manifest. */
static int write_outputs(output_set *out, const pdt_list *passes, const char *job,
                         GPtrArray *stale)
{
    opts *o = (opts *)out->o;
    pdt_ctx *ctx = o->ctx;
    int rc = PDT_OK;
    for (size_t i = 0; i < ctx->n_outputs && rc == PDT_OK; i++) {
        rc = write_output(out, ctx->outputs[i].stem, ctx->outputs[i].program);
        ir_program_free(ctx->outputs[i].program);
        ctx->outputs[i].program = NULL;
    }
    ctx->n_outputs = 0;
    if (rc == PDT_OK)
        rc = tcli_other_trainers(o, (const char *const *)passes->items, passes->n);
    if (rc == PDT_OK)
        tcli_remove_stale(o, out->batch, stale);
    if (rc == PDT_OK && ctx->manifest_json) {
        /* Added last, so it is renamed into place last. */
        char *path = g_strdup_printf("%s/%s", o->out_dir, tcli_manifest_name(ctx));
        char *text = tcli_manifest_final(ctx->manifest_json, job, out->batch);
        pdio_batch_add_bytes(out->batch, path, text, strlen(text), false);
        g_free(text);
        g_free(path);
    }
    if (rc == PDT_OK)
        rc = pdio_batch_commit(out->batch);
    if (rc == PDT_OK && o->print_files)
        rc = tcli_print_files(out->batch);
    return rc;
}

/* --role=all writes every trainer (pserver mode, the default pipeline,
 * no trainer id given by flag or variable, no --stop-after). */
static void pick_trainers(opts *o)
{
    pdt_transpile_opts *t = &o->ctx->transpile;
    t->every_trainer = t->role == PDT_ROLE_ALL && t->mode == PDT_MODE_PSERVER && !o->passes &&
                       !t->given.trainer_id && !t->src.trainer_id && t->trainers > 1 &&
                       !o->ctx->settings.stop_after;
}

/* The options that shaped the pipeline, in a fixed order, for the
 * manifest (the transpile flags have their own section there). */
static void record_options(opts *o)
{
    const pdt_ctx *ctx = o->ctx;
    const char *names[] = {"loss", "optimizer", "regularization", "clip", "lr_schedule",
                           "lr_warmup", "learning_rate_var"};
    const char *values[] = {ctx->backward.loss,        ctx->optim.optimizer,
                            ctx->optim.regularization, ctx->optim.clip,
                            ctx->optim.lr_schedule,    ctx->optim.lr_warmup,
                            ctx->optim.learning_rate_var};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cli_run_option(&o->run, names[i], values[i]);
    /* Per-parameter regularizers hold commas of their own: ';' joins them. */
    const pdt_list *lists[] = {&ctx->backward.params, &ctx->backward.no_grad,
                               &ctx->optim.param_regularizations};
    const char *list_names[] = {"params", "no_grad", "param_regularization"};
    const char *seps[] = {",", ",", ";"};
    for (size_t i = 0; i < 3; i++) {
        if (!lists[i]->n)
            continue;
        GString *joined = g_string_new(lists[i]->items[0]);
        for (size_t k = 1; k < lists[i]->n; k++)
            g_string_append_printf(joined, "%s%s", seps[i], lists[i]->items[k]);
        cli_run_option(&o->run, list_names[i], joined->str);
        g_string_free(joined, TRUE);
    }
}

static int read_inputs(opts *o, const char *main_path)
{
    pdt_ctx *ctx = o->ctx;
    ctx->main_path = main_path;
    ctx->main = cli_run_read(&o->run, "main", main_path);
    if (!ctx->main)
        return PDT_EBADINPUT;
    if (ctx->main->n_blocks == 0) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        return PDT_EBADINPUT;
    }
    if (!o->startup_path) {
        ctx->startup = ir_program_new();
        ir_program_add_block(ctx->startup, -1);
        return PDT_OK;
    }
    ctx->startup = cli_run_read(&o->run, "startup", o->startup_path);
    ctx->startup_path = o->startup_path;
    if (!ctx->startup)
        return PDT_EBADINPUT;
    if (ctx->startup->n_blocks == 0) {
        pdt_error("%s: program has no blocks", o->startup_path);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

int cmd_transpile(int argc, char **argv)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    opts o = {.ctx = &ctx, .out_dir = "."};
    cli_run_init(&o.run);
    output_set out = {NULL, NULL};
    pdt_list passes = {0, NULL};
    int rc = parse_args(argc, argv, &o, &passes);
    if (rc == CLI_HELP) {
        rc = PDT_OK;
        goto done;
    }
    if (!rc && o.from_env)
        rc = tcli_from_env(&o);
    if (!rc)
        rc = pdt_family_transpile.validate(&ctx, CMD);
    /* The optimizer family's rules, when its passes may run: with
     * --optimizer, or any --passes (the passes then never see a bad spec).
     * Otherwise pick_passes says why the family's other options are
     * refused. */
    if (!rc && (ctx.optim.optimizer || o.passes))
        rc = pdt_family_optimizer.validate(&ctx, CMD);
    if (!rc)
        rc = read_inputs(&o, argv[optind]);
    if (rc)
        goto done;
    ctx.settings.text_output = o.text;
    if (!o.passes)
        rc = pick_passes(&ctx, &passes);
    if (!rc && !o.startup_path && ctx.transpile.mode == PDT_MODE_PSERVER &&
        ctx.transpile.role != PDT_ROLE_TRAINER)
        pdt_warning("no startup program given (-s): the pserver startup programs will "
                    "initialise no parameters");
    record_options(&o);
    ctx.run = cli_run_info(&o.run, passes.items, passes.n);
    char *job = tp_job_id(&ctx);
    GPtrArray *stale = NULL;
    if (!rc)
        rc = tcli_check_folder(&o, job, &stale);
    pick_trainers(&o);
    if (!rc)
        rc = tcli_check_output_size(&o);
    if (!rc)
        tcli_keep_inputs(&o);
    open_outputs(&out, &o);
    if (!rc)
        rc = pdt_run_pipeline(&ctx, passes.items, passes.n);
    /* --stop-after before any output or plan exists: what exists is the
     * main and startup programs as the passes left them. */
    if (!rc && ctx.stopped && ctx.n_outputs == 0 && !ctx.manifest_json) {
        pdt_ctx_add_output(&ctx, "main", ctx.main);
        pdt_ctx_add_output(&ctx, "startup", ctx.startup);
        ctx.main = ctx.startup = NULL;
    }
    if (!rc && ctx.n_outputs == 0 && !ctx.manifest_json) {
        pdt_error("the pipeline produced no programs (does --passes include 'transpile'?)");
        rc = PDT_EBADINPUT;
    }
    if (!rc)
        rc = write_outputs(&out, &passes, job, stale);
    free(job);
    if (stale)
        g_ptr_array_unref(stale);
done:
    ir_program_free(o.kept_main);
    ir_program_free(o.kept_startup);
    pdio_batch_free(out.batch);
    pdt_list_free(&passes);
    pdt_ctx_free(&ctx);
    cli_run_free(&o.run);
    return rc;
}
