/* verify_transpile.c - `pdtrans verify transpile`: the transpile of MAIN
 * run in process once per trainer through the job API (src/job/job.h),
 * its outputs set up as a simulated cluster (ex_cluster_from_outputs) and
 * run on the reference executor next to single-process training. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../exec/dist.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "../job/job.h"
#include "../progress.h"
#include "cli.h"

/* Its own flags' words and the transpile flags, as given. */
typedef struct {
    char **flags;
    size_t nf;
    const char *main_path, *startup_path;
    bool collective;            /* --mode=nccl2 or --mode=collective */
} vt_args;

static void help_transpile(void)
{
    printf("usage: pdtrans verify transpile [OPTIONS] MAIN STARTUP [TRANSPILE FLAGS]\n"
           "       pdtrans verify transpile --symbolic [OPTIONS] MAIN [STARTUP] [TRANSPILE FLAGS]\n\n"
           "Transpiles MAIN (with STARTUP) once per trainer with the given transpile\n"
           "flags (each as one flag=value word; verify itself chooses the output\n"
           "folder, roles, trainer ids and endpoints), then runs every trainer and\n"
           "pserver in one process for K steps on seeded batches, send/recv,\n"
           "barriers, prefetch and allreduce moving tensors between them, next to\n"
           "single-process training of MAIN with the gradient averaged over the\n"
           "trainers' batches.  Sync pserver, nccl2 and collective grad_allreduce\n"
           "modes must match it; async and half-async must keep every parameter\n"
           "finite, and match it with one trainer.  GEO (--geo=N: local training,\n"
           "deltas pushed every N steps) must keep every parameter finite, match it\n"
           "with one trainer and no sparse table, and leave each pserver slice at\n"
           "its start plus the deltas pushed.  Prints one line per parameter (and\n"
           "per GEO pserver slice); exit 1 on a mismatch.\n\n"
           "  --symbolic           check without kernels, as `verify job` does: every op\n"
           "                       an uninterpreted function of its inputs (any program);\n"
           "                       same report and exit codes as verify job\n"
           "  --steps=K            training steps (default 2)\n"
           "  --tolerance=T        largest relative difference (default 1e-9)\n"
           "  --batch=N            rows (or sequences) per trainer's batch (default 4)\n"
           "  --seed=N             seed of batches and initialisers (default 1)\n"
           "  -h, --help           show this help\n");
}

static bool flag_taken(const char *a)
{
    static const char *const taken[] = {"-o", "--out-dir", "--role", "--trainer-id", "--endpoint",
                                        "-s", "--startup", "--text", "--from-env", "--stop-after", NULL};
    for (size_t i = 0; taken[i]; i++) {
        size_t n = strlen(taken[i]);
        if (!strncmp(a, taken[i], n) && (a[n] == 0 || a[n] == '='))
            return true;
    }
    return false;
}

static bool minimize_flag(const char *a)
{
    static const char *const mf[] = {"--loss=", "--optimizer=", "--regularization=", "--clip=",
                                      "--lr-schedule=", "--lr-warmup=", "--learning-rate-var=", "--params=",
                                      "--no-grad=", NULL};
    for (size_t i = 0; mf[i]; i++)
        if (!strncmp(a, mf[i], strlen(mf[i])))
            return true;
    return false;
}

/* single_process_multi_thread: each trainer's process runs its program on
 * every selected GPU, each on its own batch, and c_comm_init_multitrainer's
 * ring spans trainers x GPUs (Paddle's CreateNCCLCommMultiTrainer), so
 * every GPU is a simulated device.  Other modes: one device per trainer. */
static size_t devices_per_trainer(const pdt_manifest *m)
{
    const pdt_manifest_flag *cm = pdt_manifest_get_flag(m, "collective_mode");
    const pdt_manifest_flag *gpus = pdt_manifest_get_flag(m, "selected_gpus");
    return cm && cm->kind == PDT_MF_STRING && !strcmp(cm->s, "single_process_multi_thread") &&
                   gpus && gpus->kind == PDT_MF_INT && gpus->i > 0
               ? (size_t)gpus->i
               : 1;
}

static int report_transpile(const char *path, ex_param_result *r, size_t n, bool exact, double tol)
{
    size_t bad = 0, n_sums = 0, bad_sums = 0;
    pdt_progress_stop_line();   /* the report starts on a line of its own */
    for (size_t i = 0; i < n; i++) {
        bool fail = !r[i].finite || ((exact || r[i].pserver_sum) && !(r[i].worst_rel <= tol));
        bad += fail && !r[i].pserver_sum;
        n_sums += r[i].pserver_sum;
        bad_sums += fail && r[i].pserver_sum;
        printf("%s: %s, largest relative difference from %s %.2e%s\n", r[i].param,
               r[i].finite ? "finite" : "NOT FINITE",
               r[i].pserver_sum ? "its start plus the deltas pushed" : "single-process training",
               r[i].worst_rel, fail ? " FAIL" : "");
    }
    if (bad_sums)   /* GEO (dist_geo.c) */
        pdt_error("%s: %zu of %zu pserver slices differ from their start plus the deltas the "
                  "trainers pushed", path, bad_sums, n_sums);
    if (bad) {
        /* without optimizer ops the grads were compared, not parameters */
        bool grads = n && r[0].is_grad;
        pdt_error("%s: %zu of %zu %s %s", path, bad, n - n_sums, grads ? "grads" : "parameters",
                  !exact ? "are not finite"
                  : grads ? "differ from the mean of single-process grads over the trainers' batches"
                          : "differ from single-process training");
    }
    return bad || bad_sums ? PDT_EBADINPUT : PDT_OK;
}

/* One flag word of the user's, "--NAME[=VALUE]", "-v" or "-q", into JOB. */
static int set_flag(pdt_job *job, const char *word)
{
    if (!strcmp(word, "-v") || !strcmp(word, "--verbose")) {
        pdt_verbosity++;
        return PDT_OK;
    }
    if (!strcmp(word, "-q") || !strcmp(word, "--quiet")) {
        pdt_quiet_warnings = true;
        return PDT_OK;
    }
    if (strncmp(word, "--", 2) || !word[2]) {
        pdt_usage_error("transpile", "unknown option '%s'", word);
        return PDT_EUSAGE;
    }
    const char *eq = strchr(word, '=');
    char *name = eq ? g_strndup(word + 2, (size_t)(eq - word - 2)) : g_strdup(word + 2);
    int rc = pdt_job_set(job, NULL, name, eq ? eq + 1 : NULL, NULL);
    g_free(name);
    return rc;
}

/* Collective modes: trainer TID's endpoint, the TID-th of --trainers when
 * that is a list of endpoints (NULL otherwise; g_free it). */
static char *nth_endpoint(const pdt_ctx *ctx, size_t tid)
{
    const char *tr = ctx->transpile.trainers_arg;
    if (!tr || !strchr(tr, ':'))
        return NULL;
    char **eps = g_strsplit(tr, ",", -1);
    char *r = tid < g_strv_length(eps) ? g_strdup(eps[tid]) : NULL;
    g_strfreev(eps);
    return r;
}

/* The transpile job of trainer TID with the user's flags (and
 * --stop-after=STOP_AFTER unless NULL), run in process: what `pdtrans
 * transpile --trainer-id=TID` (with --role=trainer after trainer 0 outside
 * the collective modes, and the trainer's --endpoint in them) would write,
 * kept in memory.  NULL after an error message. */
static pdt_job *run_job(const vt_args *a, size_t tid, const char *stop_after, int *rc)
{
    pdt_job *job = pdt_job_new("transpile");
    pdt_ctx *ctx = pdt_job_ctx(job);
    char id[32];
    snprintf(id, sizeof id, "%zu", tid);
    int r = PDT_OK;
    for (size_t i = 0; i < a->nf && r == PDT_OK; i++)
        r = set_flag(job, a->flags[i]);
    if (r == PDT_OK && stop_after)
        r = pdt_job_set(job, "run", "stop-after", stop_after, NULL);
    if (r == PDT_OK)
        r = pdt_job_set(job, "transpile", "trainer-id", id, NULL);
    if (r == PDT_OK && tid > 0 && !a->collective)
        r = pdt_job_set(job, "transpile", "role", "trainer", NULL);
    char *ep = r == PDT_OK && a->collective ? nth_endpoint(ctx, tid) : NULL;
    if (ep)
        r = pdt_job_set(job, "transpile", "endpoint", ep, NULL);
    g_free(ep);
    if (r == PDT_OK && pdt_quiet_warnings && pdt_verbosity > 0) {
        pdt_usage_error("transpile", "-q/--quiet and -v/--verbose contradict each other; "
                        "give one");
        r = PDT_EUSAGE;
    }
    if (r == PDT_OK)
        r = pdt_job_validate(job);
    if (r == PDT_OK)
        r = pdt_job_read_inputs(job, a->main_path, a->startup_path, NULL, NULL);
    if (r == PDT_OK)
        r = pdt_job_default_passes(job);
    if (r == PDT_OK)
        r = pdt_job_run(job, NULL, NULL);
    *rc = r;
    if (r == PDT_OK)
        return job;
    pdt_job_free(job);
    return NULL;
}

/* Output STEM of JOB as the file `pdtrans transpile` writes would read
 * back: encoded and decoded, so that the executor runs the bytes a user
 * gets.  NULL after an error message. */
static ir_program *output_as_written(pdt_job *job, const char *stem)
{
    ir_program *p = pdt_job_take_output(job, stem);
    if (!p) {
        pdt_error("verify: the transpile made no program '%s'", stem);
        return NULL;
    }
    size_t len = 0;
    uint8_t *bytes = pdio_serialize(p, false, &len);
    ir_program_free(p);
    ir_program *back = bytes ? pdio_parse(stem, bytes, len) : NULL;
    free(bytes);
    return back;
}

/* With --optimizer (and the other minimize options) among the flags the
 * transpile runs the optimizer passes (and append_backward for a program
 * without backward ops) before its own; the single-process reference is
 * what that pipeline makes of MAIN with the same flags, stopped after the
 * optimizer pass, so both sides read the options alike. */
static int reference_programs(const vt_args *a, ir_program **main, ir_program **startup)
{
    bool needed = false;
    for (size_t i = 0; i < a->nf; i++)
        needed |= minimize_flag(a->flags[i]);
    if (!needed) {
        /* no STARTUP (--symbolic only): the reference starts from the
         * persistable vars' initial values, as verify job's does */
        *main = pdio_read(a->main_path);
        *startup = *main && a->startup_path ? pdio_read(a->startup_path) : NULL;
        return *main && (*startup || !a->startup_path) ? PDT_OK : PDT_EBADINPUT;
    }
    int rc = PDT_OK;
    pdt_job *job = run_job(a, 0, "optimizer", &rc);
    if (job) {
        *main = output_as_written(job, "main");
        *startup = *main ? output_as_written(job, "startup") : NULL;
        rc = *startup ? PDT_OK : PDT_EBADINPUT;
    }
    pdt_job_free(job);
    return rc;
}

/* The programs of all runs, as the transpiles' outputs, and the pservers'
 * endpoints from run 0's manifest. */
typedef struct {
    ex_output *outs;
    size_t n_outs;
    const char **endpoints;
    size_t n_endpoints;
} vt_outputs;

static bool take_output(vt_outputs *v, pdt_job *job, const char *file, const char *stem)
{
    /* the manifest names the files: STEM.pb */
    size_t n = file ? strlen(file) : 0;
    if (n < 4 || strcmp(file + n - 3, ".pb") || strncmp(file, stem, n - 3)) {
        pdt_error("verify: the transpile's manifest names '%s' for '%s'", file ? file : "",
                  stem);
        return false;
    }
    ir_program *p = output_as_written(job, stem);
    if (p) {
        v->outs = xrealloc_n(v->outs, v->n_outs + 1, sizeof *v->outs);
        v->outs[v->n_outs++] = (ex_output){ir_intern(stem), p};
    }
    return p != NULL;
}

/* Takes trainer `t`'s programs (and, from run 0, the pservers', whose
 * endpoints go to v->endpoints) as the manifest M lists them. */
static bool take_run(vt_outputs *v, pdt_job *job, size_t t, const pdt_manifest *m)
{
    char stem[64], startup[80];
    for (size_t i = 0; i < m->n_files; i++) {
        const pdt_manifest_file *f = &m->files[i];
        if (!strcmp(f->role, "trainer") && f->id >= 0 && (size_t)f->id == t) {
            snprintf(stem, sizeof stem, "trainer_%zu", t);
        } else if (!strcmp(f->role, "pserver") && t == 0) {
            snprintf(stem, sizeof stem, "pserver_%zu", v->n_endpoints);
            v->endpoints = xrealloc_n(v->endpoints, v->n_endpoints + 1, sizeof *v->endpoints);
            v->endpoints[v->n_endpoints++] = ir_intern(f->endpoint ? f->endpoint : "");
        } else {
            continue;
        }
        snprintf(startup, sizeof startup, "%s.startup", stem);
        if (!take_output(v, job, f->main, stem) || !take_output(v, job, f->startup, startup))
            return false;
    }
    return true;
}

/* Run 0's manifest: the cluster's shape (and GEO's vars_info into c). */
static bool read_shape(const pdt_manifest *m, ex_cluster *c, ex_cluster_shape *shape)
{
    shape->n_trainers = pdt_manifest_trainers(m);
    const char *mode = m->mode;
    shape->mode = mode && !strcmp(mode, "nccl2") ? EX_CL_NCCL2
                  : mode && !strcmp(mode, "collective") ? EX_CL_COLLECTIVE : EX_CL_PSERVER;
    shape->dist_mode = m->distributed_mode;
    shape->devices = devices_per_trainer(m);
    return shape->dist_mode != 3 || cli_verify_geo_info(m, c);
}

/* Trainer t's transpile in process and its manifest, the job's (*m, NULL
 * on failure, with *rc set). */
static pdt_job *run_manifest(const vt_args *a, size_t t, const pdt_manifest **m, int *rc)
{
    pdt_job *job = run_job(a, t, NULL, rc);
    *m = job ? pdt_job_manifest(job) : NULL;
    if (job && !*m) {
        pdt_error("verify: the transpile made no manifest");
        *rc = PDT_EBADINPUT;
    }
    return job;
}

/* Every trainer's transpile, in process; the cluster set up from their
 * outputs. */
static int build_cluster(const vt_args *a, ex_cluster *c, vt_outputs *v)
{
    ex_cluster_shape shape = {.n_trainers = 1, .devices = 1};
    int rc = PDT_OK;
    for (size_t t = 0; rc == PDT_OK && t < shape.n_trainers; t++) {
        const pdt_manifest *m = NULL;
        pdt_job *job = run_manifest(a, t, &m, &rc);
        if (rc == PDT_OK && t == 0 && !read_shape(m, c, &shape))
            rc = PDT_EBADINPUT;
        if (rc == PDT_OK && !take_run(v, job, t, m))
            rc = PDT_EBADINPUT;
        pdt_job_free(job);
    }
    shape.n_pservers = v->n_endpoints;
    shape.endpoints = v->endpoints;
    if (rc == PDT_OK && !ex_cluster_from_outputs(c, &shape, v->outs, v->n_outs)) {
        pdt_error("verify: %s", c->err);
        rc = PDT_EBADINPUT;
    }
    return rc;
}

static int transpile_job(const vt_args *a, const ex_transpile_opts *o)
{
    ex_cluster c = {0};
    vt_outputs v = {0};
    ir_program *main = NULL, *startup = NULL;
    int rc = reference_programs(a, &main, &startup);
    if (rc == PDT_OK)
        rc = build_cluster(a, &c, &v);
    ex_param_result *res = NULL;
    size_t n = 0;
    if (rc == PDT_OK)
        pdt_alloc_doing("running the transpiled programs of '%s'", a->main_path);
    if (rc == PDT_OK && !ex_transpile_check(&c, main, startup, o, &res, &n)) {
        pdt_error("%s: %s", a->main_path, c.err);
        rc = PDT_EBADINPUT;
    }
    bool exact = c.dist_mode == 0 || (c.n_trainers == 1 && (c.dist_mode != 3 || ex_geo_exact(&c)));
    if (rc == PDT_OK)
        rc = report_transpile(a->main_path, res, n, exact, o->tolerance);
    free(res);
    ex_cluster_release(&c);
    for (size_t i = 0; i < v.n_outs; i++)
        ir_program_free(v.outs[i].program);
    free(v.outs);
    free(v.endpoints);
    ir_program_free(main);
    ir_program_free(startup);
    return rc;
}

/* --symbolic's loader: FILE (STEM.pb, as the manifest names it) of the
 * job CTX, as written and read back. */
static ir_program *load_output(void *ctx, const char *file)
{
    size_t n = strlen(file);
    if (n < 4 || strcmp(file + n - 3, ".pb")) {
        pdt_error("verify: the transpile's manifest names '%s', not a .pb file", file);
        return NULL;
    }
    char *stem = g_strndup(file, n - 3);
    ir_program *p = output_as_written((pdt_job *)ctx, stem);
    g_free(stem);
    return p;
}

/* --symbolic: every trainer's transpile in process, as build_cluster
 * runs them, and their outputs checked against the reference by src/sym
 * (cli_sym_check, as `verify job` does on a folder): no kernels. */
static int symbolic_job(const vt_args *a, int steps)
{
    ir_program *main = NULL, *startup = NULL;
    int rc = reference_programs(a, &main, &startup);
    cli_sym_job *f = cli_sym_job_new();
    size_t n_trainers = 1;
    for (size_t t = 0; rc == PDT_OK && t < n_trainers; t++) {
        const pdt_manifest *m = NULL;
        pdt_job *job = run_manifest(a, t, &m, &rc);
        if (m && t == 0)
            n_trainers = pdt_manifest_trainers(m);
        /* the trainer's files only: the pservers come from run 0 */
        if (m && !cli_sym_add_manifest(f, pdt_job_take_manifest(job), a->main_path, load_output,
                                       job))
            rc = PDT_EBADINPUT;
        pdt_job_free(job);
    }
    if (rc == PDT_OK)
        rc = cli_sym_check(f, a->main_path, a->main_path, main, startup, steps);
    cli_sym_job_free(f);
    ir_program_free(main);
    ir_program_free(startup);
    return rc;
}

static bool own_flag(const char *a, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(a, name, n) || a[n] != '=')
        return false;
    *val = a + n + 1;
    return true;
}

int cli_verify_transpile(int argc, char **argv)
{
    ex_transpile_opts o = {.seed = 1, .batch = 4, .steps = 2, .tolerance = 1e-9};
    const char *pos[2] = {NULL, NULL}, *v;
    size_t npos = 0, nf = 0;
    char **flags = xcalloc((size_t)argc + 1, sizeof(char *));
    bool collective = false, symbolic = false;
    const char *numeric_only = NULL;    /* a flag --symbolic has no use for */
    long n;
    int rc = PDT_OK;
    for (int i = 1; rc == PDT_OK && i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help_transpile();
            free(flags);
            return PDT_OK;
        } else if (own_flag(a, "--steps", &v)) {
            rc = pdt_parse_long("verify", "--steps", v, 1, 1000, &n) ? PDT_OK : PDT_EUSAGE;
            o.steps = (int)n;
        } else if (!strcmp(a, "--symbolic")) {
            symbolic = true;
        } else if (own_flag(a, "--batch", &v)) {
            numeric_only = "--batch";
            rc = pdt_parse_long("verify", "--batch", v, 1, 1L << 16, &n) ? PDT_OK : PDT_EUSAGE;
            o.batch = n;
        } else if (own_flag(a, "--seed", &v)) {
            numeric_only = "--seed";
            rc = pdt_parse_long("verify", "--seed", v, 0, 1L << 62, &n) ? PDT_OK : PDT_EUSAGE;
            o.seed = (uint64_t)n;
        } else if (own_flag(a, "--tolerance", &v)) {
            numeric_only = "--tolerance";
            rc = cli_verify_parse_double("--tolerance", v, 0, &o.tolerance) ? PDT_OK : PDT_EUSAGE;
        } else if (a[0] != '-' && npos < 2) {
            pos[npos++] = a;
        } else if (a[0] != '-' || flag_taken(a)) {
            pdt_usage_error("verify", "transpile: '%s' is not allowed here (verify picks the "
                            "roles, trainer ids and outputs itself; give flags as --flag=value)", a);
            rc = PDT_EUSAGE;
        } else {
            collective |= !strcmp(a, "--mode=nccl2") || !strcmp(a, "--mode=collective");
            flags[nf++] = argv[i];
        }
    }
    if (rc == PDT_OK && npos != 2 && !(symbolic && npos == 1)) {
        pdt_usage_error("verify", "transpile: expected MAIN and STARTUP%s",
                        symbolic ? " (or MAIN alone)" : "");
        rc = PDT_EUSAGE;
    }
    if (rc == PDT_OK && symbolic && numeric_only) {
        pdt_usage_error("verify", "transpile: %s is for the numeric check; --symbolic runs no "
                        "batches", numeric_only);
        rc = PDT_EUSAGE;
    }
    if (rc == PDT_OK && symbolic && o.steps > 100) {
        pdt_usage_error("verify", "transpile: --steps=%d: --symbolic runs at most 100 steps",
                        o.steps);
        rc = PDT_EUSAGE;
    }
    vt_args args = {flags, nf, pos[0], pos[1], collective};
    if (rc == PDT_OK)
        rc = symbolic ? symbolic_job(&args, o.steps) : transpile_job(&args, &o);
    free(flags);
    return rc;
}

