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
#include "../passes/transpile/placement.h"
#include "../job/job.h"
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
    if (rc == PDT_OK && o->passes) {
        pdt_job_set_passes(o->job, *passes);
        *passes = (pdt_list){0, NULL};
    }
    /* Which settings came from flags (or --passes): they win over
     * --from-env, and validate() refuses some in modes that ignore them. */
    for (size_t i = 0; i < spec.n_given; i++)
        pdt_job_note_given(o->job, spec.given[i]->name);
    o->startup_path = o->common.startup;
    o->out_dir = o->common.out;
    o->text = o->common.text;
    return rc;
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
}

/* After the job wrote its programs through write_output (every trainer's
 * under --role=all): the removal of stale files (--clean), then the
 * manifest. */
static int write_outputs(output_set *out, const char *job, GPtrArray *stale)
{
    opts *o = (opts *)out->o;
    const pdt_manifest *manifest = pdt_job_manifest(o->job);
    int rc = PDT_OK;
    tcli_remove_stale(o, out->batch, stale);
    if (manifest) {
        /* Added last, so it is renamed into place last. */
        char *path = g_strdup_printf("%s/%s", o->out_dir, tcli_manifest_name(o->ctx));
        char *json = cli_manifest_json(manifest, o->ctx->run);
        char *text = tcli_manifest_final(json, job, out->batch);
        g_free(json);
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

/* The job's reader: the inputs' paths and hashes go to the manifest. */
static ir_program *read_recorded(void *run, const char *role, const char *path)
{
    return cli_run_read(run, role, path);
}

int cmd_transpile(int argc, char **argv)
{
    pdt_job *job = pdt_job_new(CMD);
    pdt_ctx *ctx = pdt_job_ctx(job);
    opts o = {.job = job, .ctx = ctx, .out_dir = "."};
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
        rc = pdt_job_validate(job);
    if (!rc)
        rc = pdt_job_read_inputs(job, argv[optind], o.startup_path, read_recorded, &o.run);
    if (rc)
        goto done;
    ctx->settings.text_output = o.text;
    ctx->settings.drop_input_pages = pdio_drop_input_pages;
    if (!o.passes)
        rc = pdt_job_default_passes(job);
    if (!rc && !o.startup_path && ctx->transpile.mode == PDT_MODE_PSERVER &&
        ctx->transpile.role != PDT_ROLE_TRAINER)
        pdt_warning("no startup program given (-s): the pserver startup programs will "
                    "initialise no parameters");
    record_options(&o);
    const pdt_list *pl = pdt_job_passes(job);
    ctx->run = cli_run_info(&o.run, pl->items, pl->n);
    char *job_id = cli_job_id(ctx);
    GPtrArray *stale = NULL;
    if (!rc)
        rc = tcli_check_folder(&o, job_id, &stale);
    pdt_job_pick_trainers(job);
    if (!rc)
        rc = tcli_check_output_size(&o);
    open_outputs(&out, &o);
    if (!rc)
        rc = pdt_job_run(job, write_output, &out);
    if (!rc)
        rc = write_outputs(&out, job_id, stale);
    free(job_id);
    if (stale)
        g_ptr_array_unref(stale);
done:
    pdio_batch_free(out.batch);
    pdt_list_free(&passes);
    pdt_job_free(job);
    cli_run_free(&o.run);
    return rc;
}
