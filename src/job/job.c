/* job.c - the job API (job.h): options, inputs, the pipeline and its
 * outputs, for the transpile command and `verify transpile`. */
#include "job.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../suggest.h"
#include "../io/pdio.h"
#include "../ir/util.h"

enum { MAX_GIVEN = 256 };

struct pdt_job {
    pdt_ctx ctx;
    const char *cmd;
    pdt_list passes;
    bool custom_passes;         /* --passes: no default pipeline, no every trainer */
    const char *startup_path;   /* NULL: an empty startup program */
    /* --role=all's other trainers: copies of an input that cannot be read
     * again (standard input, a pipe), taken before the first run. */
    ir_program *kept_main, *kept_startup;
    const char *given[MAX_GIVEN];   /* interned option names given as flags */
    size_t n_given;
};

pdt_job *pdt_job_new(const char *cmd)
{
    pdt_job *job = xcalloc(1, sizeof *job);
    pdt_ctx_init(&job->ctx);
    job->cmd = cmd;
    return job;
}

void pdt_job_free(pdt_job *job)
{
    if (!job)
        return;
    ir_program_free(job->kept_main);
    ir_program_free(job->kept_startup);
    pdt_list_free(&job->passes);
    pdt_ctx_free(&job->ctx);
    free(job);
}

pdt_ctx *pdt_job_ctx(pdt_job *job)
{
    return &job->ctx;
}

bool pdt_job_given(const pdt_job *job, const char *name)
{
    const char *n = ir_intern(name);
    for (size_t i = 0; i < job->n_given; i++)
        if (job->given[i] == n)
            return true;
    return false;
}

/* Which settings came from flags: they win over --from-env, and the
 * transpile family's validate() refuses some in modes that ignore them. */
static void settle_given(pdt_job *job)
{
    pdt_transpile_opts *t = &job->ctx.transpile;
    t->given.role = pdt_job_given(job, "role");
    t->given.pservers = pdt_job_given(job, "pservers");
    t->given.trainers = pdt_job_given(job, "trainers");
    t->given.trainer_id = pdt_job_given(job, "trainer-id");
    t->given.endpoint = pdt_job_given(job, "endpoint");
    t->given.rpc_send = pdt_job_given(job, "rpc-send-threads");
    t->given.rpc_get = pdt_job_given(job, "rpc-get-threads");
    t->given.rpc_prefetch = pdt_job_given(job, "rpc-prefetch-threads");
    t->given.gpus = pdt_job_given(job, "selected-gpus");
    t->given.fuse = pdt_job_given(job, "fuse-allreduce");
    t->given.loss_scale = pdt_job_given(job, "loss-scale");
    t->given.hierarchical = pdt_job_given(job, "hierarchical-allreduce") ||
                            pdt_job_given(job, "hierarchical-inter-nranks");
    t->given.nccl_flags = t->given.hierarchical || pdt_job_given(job, "nccl-comm-num");
    static const char *const sync_flags[] = {"--sync", "--async", "--half-async"};
    t->given.sync_flag = NULL;
    for (size_t i = 0; i < 3; i++)
        if (pdt_job_given(job, sync_flags[i] + 2))
            t->given.sync_flag = sync_flags[i];
}

void pdt_job_note_given(pdt_job *job, const char *name)
{
    if (!pdt_job_given(job, name) && job->n_given < MAX_GIVEN)
        job->given[job->n_given++] = ir_intern(name);
    settle_given(job);
}

/* The options a job takes: the transpile command's (the transpile and run
 * families, the minimize part's optimizer options and append_backward's
 * but --checkpoints). */
static bool job_takes(const pdt_option_family *f, const pdt_option *o)
{
    if (f == &pdt_family_backward)
        return pdt_option_for_pass(o, "append_backward") && strcmp(o->name, "checkpoints");
    return f == &pdt_family_transpile || f == &pdt_family_optimizer || f == &pdt_family_run;
}

/* The options the job takes, in family order: the next after (*i, *k),
 * or NULL at the end; *fam gets its family.  FAMILY (or NULL) limits them
 * to one family. */
static const pdt_option *next_option(const char *family, size_t *i, size_t *k,
                                     const pdt_option_family **fam)
{
    for (; *i < pdt_n_option_families; ++*i, *k = 0) {
        const pdt_option_family *f = pdt_option_families[*i];
        if (family && strcmp(f->name, family))
            continue;
        while (*k < f->n_opts) {
            const pdt_option *o = &f->opts[(*k)++];
            if (job_takes(f, o)) {
                *fam = f;
                return o;
            }
        }
    }
    return NULL;
}

/* NAME's option: named in full, or by a prefix of one option alone (as
 * getopt_long takes them); *fam gets its family. */
static const pdt_option *find_option(const char *family, const char *name,
                                     const pdt_option_family **fam, size_t *n_prefixed)
{
    const pdt_option *o, *prefixed = NULL;
    const pdt_option_family *f, *prefixed_fam = NULL;
    size_t len = strlen(name), i = 0, k = 0;
    *n_prefixed = 0;
    while ((o = next_option(family, &i, &k, &f))) {
        if (strncmp(o->name, name, len))
            continue;
        if (!o->name[len]) {
            *fam = f;
            return o;
        }
        if (!prefixed) {
            prefixed = o;
            prefixed_fam = f;
        }
        ++*n_prefixed;
    }
    if (*n_prefixed != 1)
        return NULL;
    *fam = prefixed_fam;
    return prefixed;
}

/* NAME names no option the job takes: the candidates it is a prefix of,
 * or the nearest name, as cli_parse says it for the command's own flags. */
static void refuse_option(const pdt_job *job, const char *family, const char *name)
{
    GString *may = g_string_new("");
    size_t len = strlen(name), n = 0, i = 0, k = 0;
    const pdt_option *o;
    const pdt_option_family *f;
    pdt_near near;
    pdt_near_init(&near, name);
    while ((o = next_option(family, &i, &k, &f))) {
        pdt_near_offer(&near, o->name);
        if (!strncmp(o->name, name, len))
            g_string_append_printf(may, "%s--%s", n++ ? ", " : "", o->name);
    }
    if (n) {
        pdt_usage_error(job->cmd, "option '--%s' is ambiguous: it may be %s; give more of the "
                        "name", name, may->str);
    } else {
        char *hint = pdt_near_hint(&near, "--");
        pdt_usage_error(job->cmd, "unknown option '--%s'%s", name, hint);
        g_free(hint);
    }
    g_string_free(may, TRUE);
}

/* Options that store into one field (--sync, --async, --half-async)
 * choose one value: two different flags contradict each other (as
 * cli_parse says). */
static bool exclusive(const pdt_job *job, const pdt_option_family *f, const pdt_option *o)
{
    if (o->type != PDT_OPT_ENUM_FLAG)
        return true;
    for (size_t i = 0; i < job->n_given; i++) {
        const pdt_option *g = pdt_option_find(f, job->given[i]);
        if (g && g->type == PDT_OPT_ENUM_FLAG && g->offset == o->offset && g != o) {
            pdt_usage_error(job->cmd, "--%s and --%s contradict each other; give one", g->name,
                            o->name);
            return false;
        }
    }
    return true;
}

int pdt_job_set(pdt_job *job, const char *family, const char *name, const char *value,
                const char *source)
{
    const pdt_option_family *f = NULL;
    size_t n_prefixed = 0;
    const pdt_option *o = find_option(family, name, &f, &n_prefixed);
    if (!o) {
        refuse_option(job, family, name);
        return PDT_EUSAGE;
    }
    bool takes = pdt_option_takes_value(o);
    if (value && !takes) {
        pdt_usage_error(job->cmd, "option '--%s' takes no value", o->name);
        return PDT_EUSAGE;
    }
    if (!value && takes && !o->optional_value) {
        pdt_usage_error(job->cmd, "option '--%s' needs a value", o->name);
        return PDT_EUSAGE;
    }
    if (value && !*value) {
        pdt_usage_error(job->cmd, "option '--%s' needs a value, not an empty one", o->name);
        return PDT_EUSAGE;
    }
    if ((!source && !exclusive(job, f, o)) ||
        !pdt_option_set(pdt_family_base(f, &job->ctx), o, value, job->cmd))
        return PDT_EUSAGE;
    if (!source)
        pdt_job_note_given(job, o->name);
    return PDT_OK;
}

int pdt_job_validate(pdt_job *job)
{
    int rc = pdt_family_transpile.validate(&job->ctx, job->cmd);
    /* The optimizer family's rules, when its passes may run: with
     * --optimizer, or any --passes (the passes then never see a bad spec).
     * Otherwise pdt_job_default_passes says why its other options are
     * refused. */
    if (!rc && (job->ctx.optim.optimizer || job->custom_passes))
        rc = pdt_family_optimizer.validate(&job->ctx, job->cmd);
    return rc;
}

static ir_program *read_one(pdt_job_reader read, void *arg, const char *role, const char *path)
{
    ir_program *p = read ? read(arg, role, path) : pdio_read(path);
    if (p && p->n_blocks == 0) {
        pdt_error("%s: program has no blocks", path);
        ir_program_free(p);
        return NULL;
    }
    return p;
}

int pdt_job_read_inputs(pdt_job *job, const char *main_path, const char *startup_path,
                        pdt_job_reader read, void *arg)
{
    pdt_ctx *ctx = &job->ctx;
    ctx->main_path = main_path;
    job->startup_path = startup_path;
    if (!(ctx->main = read_one(read, arg, "main", main_path)))
        return PDT_EBADINPUT;
    if (!startup_path) {
        ctx->startup = ir_program_new();
        ir_program_add_block(ctx->startup, -1);
        return PDT_OK;
    }
    ctx->startup_path = startup_path;
    return (ctx->startup = read_one(read, arg, "startup", startup_path)) ? PDT_OK
                                                                          : PDT_EBADINPUT;
}

void pdt_job_set_passes(pdt_job *job, pdt_list passes)
{
    pdt_list_free(&job->passes);
    job->passes = passes;
    job->custom_passes = true;
}

const pdt_list *pdt_job_passes(const pdt_job *job)
{
    return &job->passes;
}

static const char NO_PARAMS[] = "%s: no var of block 0 is marked as a parameter "
                                "(is_parameter), as in a saved inference model; name the "
                                "vars to train with --params=P,...";

static bool has_params(const pdt_ctx *ctx)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    if (ctx->backward.params.n || !b)
        return true;
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && b->vars[i]->is_parameter)
            return true;
    return false;
}

int pdt_job_check_params(const char *cmd, const pdt_ctx *ctx)
{
    if (has_params(ctx))
        return PDT_OK;
    pdt_usage_error(cmd, NO_PARAMS, ctx->main_path);
    return PDT_EUSAGE;
}

void pdt_job_warn_no_params(const pdt_ctx *ctx)
{
    if (!has_params(ctx))
        pdt_warning(NO_PARAMS, ctx->main_path);
}

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

/* Options of the minimize part, which runs only before a transpile of a
 * program without optimizer ops; never silently dropped. */
static const char *minimize_option(const pdt_ctx *ctx)
{
    return ctx->optim.optimizer ? "--optimizer"
           : ctx->optim.clip    ? "--clip"
           : ctx->optim.regularization || ctx->optim.param_regularizations.n
               ? "--regularization"
           : ctx->optim.learning_rate_var ? "--learning-rate-var"
           : ctx->optim.lr_schedule       ? "--lr-schedule"
           : ctx->optim.lr_warmup         ? "--lr-warmup"
           : ctx->backward.loss           ? "--loss"
                                          : NULL;
}

int pdt_job_default_passes(pdt_job *job)
{
    static const char *const minimize[] = {"append_backward", "lr_schedule", "gradient_clip",
                                           "regularization", "optimizer"};
    const pdt_ctx *ctx = &job->ctx;
    const char *cmd = job->cmd, *names[8], *extra = minimize_option(ctx);
    size_t n = 0;
    bool optimized = has_role_bit(ctx->main, IR_ROLE_OPTIMIZE);
    if ((ctx->backward.params.n || ctx->backward.no_grad.n) && !ctx->backward.loss) {
        pdt_usage_error(cmd, "%s applies to the backward part, which transpile runs only with "
                        "--loss (and --optimizer); give --loss or drop it",
                        ctx->backward.params.n ? "--params" : "--no-grad");
        return PDT_EUSAGE;
    }
    if (optimized && extra) {
        pdt_usage_error(cmd, "%s already has optimizer ops (op_role Optimize), so %s would "
                        "have no effect; drop it, or give the program before minimize",
                        ctx->main_path, extra);
        return PDT_EUSAGE;
    }
    if (!optimized && extra && !ctx->optim.optimizer) {
        pdt_usage_error(cmd, "%s needs --optimizer", extra);
        return PDT_EUSAGE;
    }
    if (!optimized && ctx->optim.optimizer) {
        bool backward = has_role_bit(ctx->main, IR_ROLE_BACKWARD);
        if (!backward && !ctx->backward.loss) {
            pdt_usage_error(cmd, "%s has no backward ops: --optimizer needs --loss too",
                            ctx->main_path);
            return PDT_EUSAGE;
        }
        if (!backward && pdt_job_check_params(cmd, ctx))
            return PDT_EUSAGE;
        for (size_t i = backward ? 1 : 0; i < sizeof minimize / sizeof *minimize; i++)
            names[n++] = minimize[i];
    }
    names[n++] = "transpile";
    pdt_list_free(&job->passes);
    job->passes.items = xcalloc(n, sizeof *job->passes.items);
    for (size_t i = 0; i < n; i++)
        job->passes.items[i] = ir_intern(names[i]);
    job->passes.n = n;
    return PDT_OK;
}

/* --role=all writes every trainer: pserver mode, the default pipeline, no
 * trainer id given by flag or variable, no --stop-after. */
void pdt_job_pick_trainers(pdt_job *job)
{
    pdt_transpile_opts *t = &job->ctx.transpile;
    t->every_trainer = t->role == PDT_ROLE_ALL && t->mode == PDT_MODE_PSERVER &&
                       !job->custom_passes && !t->given.trainer_id && !t->src.trainer_id &&
                       t->trainers > 1 && !job->ctx.settings.stop_after;
}

/* A path that gives the same bytes when read again: a regular file. */
static bool rereadable(const char *path)
{
    struct stat st;
    return path && strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void keep_inputs(pdt_job *job)
{
    pdt_ctx *ctx = &job->ctx;
    if (!ctx->transpile.every_trainer)
        return;
    if (!rereadable(ctx->main_path))
        job->kept_main = ir_program_clone(ctx->main);
    if (job->startup_path && !rereadable(job->startup_path))
        job->kept_startup = ir_program_clone(ctx->startup);
}

/* Fresh inputs for another trainer's run: the pipeline took the last
 * ones over.  An input read from standard input or a pipe is copied from
 * what keep_inputs kept. */
static int reread_inputs(pdt_job *job)
{
    pdt_ctx *ctx = &job->ctx;
    ctx->main = job->kept_main ? ir_program_clone(job->kept_main) : pdio_read(ctx->main_path);
    if (!ctx->main)
        return PDT_EBADINPUT;
    if (job->kept_startup)
        ctx->startup = ir_program_clone(job->kept_startup);
    else if (job->startup_path)
        ctx->startup = pdio_read(job->startup_path);
    else {
        ctx->startup = ir_program_new();
        ir_program_add_block(ctx->startup, -1);
    }
    return ctx->startup ? PDT_OK : PDT_EBADINPUT;
}

/* The outputs the pipeline handed over, to the sink (then freed). */
static int flush_outputs(pdt_ctx *ctx)
{
    int rc = PDT_OK;
    pdt_output_sink sink = ctx->settings.write_output;
    if (!sink)
        return PDT_OK;
    for (size_t i = 0; i < ctx->n_outputs && rc == PDT_OK; i++) {
        rc = sink(ctx->settings.write_output_arg, ctx->outputs[i].stem, ctx->outputs[i].program);
        ir_program_free(ctx->outputs[i].program);
        ctx->outputs[i].program = NULL;
    }
    ctx->n_outputs = 0;
    return rc;
}

/* --role=all: trainers 1 .. N-1, each a --role=trainer run on fresh
 * inputs, printing nothing --print-after asked for again.  The manifest
 * is the first run's, which lists them all. */
static int other_trainers(pdt_job *job)
{
    pdt_ctx *ctx = &job->ctx;
    pdt_transpile_opts *t = &ctx->transpile;
    pdt_manifest *manifest = ctx->manifest;
    ctx->manifest = NULL;
    ctx->settings.print_after = NULL;
    ctx->settings.print_after_all = false;
    t->role = PDT_ROLE_TRAINER;
    int rc = PDT_OK;
    /* without a sink the outputs pile up in ctx->outputs, run after run */
    for (int id = 1; id < t->trainers && rc == PDT_OK; id++) {
        t->trainer_id = id;
        ir_program_free(ctx->main);
        ir_program_free(ctx->startup);
        ctx->main = ctx->startup = NULL;
        pdt_list_free(&ctx->bw_params);
        pdt_list_free(&ctx->bw_grads);
        rc = reread_inputs(job);
        if (rc == PDT_OK)
            rc = pdt_run_pipeline(ctx, job->passes.items, job->passes.n);
        if (rc == PDT_OK)
            rc = flush_outputs(ctx);
        pdt_manifest_free(ctx->manifest);
        ctx->manifest = NULL;
    }
    t->role = PDT_ROLE_ALL;
    t->trainer_id = 0;
    ctx->manifest = manifest;
    ir_program_free(job->kept_main);
    ir_program_free(job->kept_startup);
    job->kept_main = job->kept_startup = NULL;
    return rc;
}

int pdt_job_run(pdt_job *job, pdt_output_sink sink, void *arg)
{
    pdt_ctx *ctx = &job->ctx;
    ctx->settings.write_output = sink;
    ctx->settings.write_output_arg = arg;
    pdt_job_pick_trainers(job);
    keep_inputs(job);
    int rc = pdt_run_pipeline(ctx, job->passes.items, job->passes.n);
    /* --stop-after before any output or plan exists: what exists is the
     * main and startup programs as the passes left them. */
    if (!rc && ctx->stopped && ctx->n_outputs == 0 && !ctx->manifest) {
        pdt_ctx_add_output(ctx, "main", ctx->main);
        pdt_ctx_add_output(ctx, "startup", ctx->startup);
        ctx->main = ctx->startup = NULL;
    }
    if (!rc && ctx->n_outputs == 0 && !ctx->manifest) {
        pdt_error("the pipeline produced no programs (does --passes include 'transpile'?)");
        rc = PDT_EBADINPUT;
    }
    if (!rc)
        rc = flush_outputs(ctx);
    if (!rc && ctx->transpile.every_trainer)
        rc = other_trainers(job);
    return rc;
}

const pdt_output *pdt_job_outputs(const pdt_job *job, size_t *n)
{
    *n = job->ctx.n_outputs;
    return job->ctx.outputs;
}

ir_program *pdt_job_take_output(pdt_job *job, const char *stem)
{
    const char *s = ir_intern(stem);
    for (size_t i = 0; i < job->ctx.n_outputs; i++)
        if (job->ctx.outputs[i].stem == s) {
            ir_program *p = job->ctx.outputs[i].program;
            job->ctx.outputs[i].program = NULL;
            return p;
        }
    return NULL;
}

const pdt_manifest *pdt_job_manifest(const pdt_job *job)
{
    return job->ctx.manifest;
}

pdt_manifest *pdt_job_take_manifest(pdt_job *job)
{
    pdt_manifest *m = job->ctx.manifest;
    job->ctx.manifest = NULL;
    return m;
}
