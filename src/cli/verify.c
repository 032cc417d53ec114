/* verify.c - `pdtrans verify grad|transpile`: numeric checks of what
 * pdtrans writes, on the reference executor (src/exec). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../diag.h"
#include "../exec/dist.h"
#include "../exec/gradcheck.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "../passes/verify.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans verify SUBCOMMAND [OPTIONS] ...\n\n"
           "Runs programs on pdtrans's reference executor (float64, CPU, seeded) to\n"
           "show numerically that a rewrite computes what it should.\n\n"
           "subcommands:\n"
           "  grad        a program's gradients against finite differences\n"
           "  transpile   a transpile's trainers and pservers against single-process training\n"
           "  rewrite     a program and its rewrite on the same feeds and parameters\n"
           "  job         a transpile's output folder against its main program, symbolically\n\n"
           "'pdtrans verify SUBCOMMAND --help' shows its options.\n\n"
           "  -h, --help           show this help\n");
}

static void help_grad(void)
{
    printf("usage: pdtrans verify grad [OPTIONS] --loss=VAR PROGRAM\n\n"
           "Every parameter's gradient from the backward ops of PROGRAM (as\n"
           "'pdtrans backward' writes it) against central finite differences of its\n"
           "forward ops, on seeded random feeds.  Prints one line per parameter with\n"
           "the worst relative error; fails (exit 1) above the tolerance.\n\n"
           "  --loss=VAR           the loss var (block 0)\n"
           "  -s, --startup=FILE   run FILE first to initialise parameters (default:\n"
           "                       seeded uniform values in [-1, 1))\n"
           "  --tolerance=T        largest relative error accepted (default 1e-6)\n"
           "  --delta=D            finite-difference step (default 1e-5)\n"
           "  --samples=N          elements checked per parameter, drawn at random\n"
           "                       (default 64; 0 checks every element)\n"
           "  --batch=N            rows (or sequences) per feed (default 4)\n"
           "  --seed=N             seed of feeds, initialisers and dropout (default 1)\n"
           "  -h, --help           show this help\n");
}

static void help_transpile(void)
{
    printf("usage: pdtrans verify transpile [OPTIONS] MAIN STARTUP [TRANSPILE FLAGS]\n\n"
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
           "  --steps=K            training steps (default 2)\n"
           "  --tolerance=T        largest relative difference (default 1e-9)\n"
           "  --batch=N            rows (or sequences) per trainer's batch (default 4)\n"
           "  --seed=N             seed of batches and initialisers (default 1)\n"
           "  -h, --help           show this help\n");
}

static bool parse_double(const char *flag, const char *s, double min, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || isspace((unsigned char)*s) || *end || errno || !(v >= min) || isinf(v)) {
        pdt_usage_error("verify", "option '%s' needs a number of at least %g, not '%.200s'", flag,
                        min, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

typedef struct {
    const char *loss, *startup_path, *path;
    double tol;
    ex_gradcheck_opts o;
} grad_args;

/* verify grad's command line; *done when --help was answered. */
static int parse_grad_args(int argc, char **argv, grad_args *a, bool *done)
{
    static const struct option opts[] = {
        {"loss", required_argument, NULL, 'l'}, {"startup", required_argument, NULL, 's'},
        {"tolerance", required_argument, NULL, 't'}, {"delta", required_argument, NULL, 'd'},
        {"samples", required_argument, NULL, 'n'}, {"batch", required_argument, NULL, 'b'},
        {"seed", required_argument, NULL, 'S'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    *a = (grad_args){.tol = 1e-6, .o = {.seed = 1, .batch = 4, .delta = 1e-5, .max_samples = 64}};
    ex_gradcheck_opts *o = &a->o;
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': a->loss = optarg; break;
        case 's': a->startup_path = optarg; break;
        case 't': if (!parse_double("--tolerance", optarg, 0, &a->tol)) return PDT_EUSAGE; break;
        case 'd':
            if (!parse_double("--delta", optarg, 1e-300, &o->delta))
                return PDT_EUSAGE;
            break;
        case 'n':
            if (!pdt_parse_long("verify", "--samples", optarg, 0, 1L << 30, &v))
                return PDT_EUSAGE;
            o->max_samples = (size_t)v;
            break;
        case 'b':
            if (!pdt_parse_long("verify", "--batch", optarg, 1, 1L << 16, &v))
                return PDT_EUSAGE;
            o->batch = v;
            break;
        case 'S':
            if (!pdt_parse_long("verify", "--seed", optarg, 0, 1L << 62, &v))
                return PDT_EUSAGE;
            o->seed = (uint64_t)v;
            break;
        case 'h': help_grad(); *done = true; return PDT_OK;
        default: return cli_bad_option("verify", c, argv);
        }
    }
    if (!a->loss || !*a->loss) {
        pdt_usage_error("verify", "missing --loss=VAR");
        return PDT_EUSAGE;
    }
    if (argc - optind != 1) {
        pdt_usage_error("verify", "expected one program");
        return PDT_EUSAGE;
    }
    a->path = argv[optind];
    return PDT_OK;
}

/* One line per parameter; the number over the tolerance. */
static size_t print_grad_results(const ex_grad_result *res, size_t n, double tol)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        const ex_grad_result *r = &res[i];
        bool fail = !(r->worst_rel <= tol);
        bad += fail;
        printf("%s %s: %zu checked, worst relative error %.2e at %zu (analytic %.9g, "
               "numeric %.9g)%s\n",
               r->param, r->grad, r->n_checked, r->worst_rel, r->worst_index, r->analytic,
               r->numeric, fail ? " FAIL" : "");
    }
    return bad;
}

static int verify_grad(int argc, char **argv)
{
    grad_args a;
    bool done = false;
    int rc = parse_grad_args(argc, argv, &a, &done);
    if (rc != PDT_OK || done)
        return rc;
    const char *path = a.path;
    ir_program *prog = pdio_read(path), *startup = NULL;
    if (!prog)
        return PDT_EBADINPUT;
    if (a.startup_path && !(startup = pdio_read(a.startup_path))) {
        ir_program_free(prog);
        return PDT_EBADINPUT;
    }
    pdt_verify_note_dims(prog, path, stderr);
    if (startup)
        pdt_verify_note_dims(startup, a.startup_path, stderr);
    ex_grad_result *res = NULL;
    size_t n = 0;
    char err[600];
    if (!ex_grad_check(prog, startup, a.loss, &a.o, &res, &n, err, sizeof err)) {
        pdt_error("%s: %s", path, err);
        rc = PDT_EBADINPUT;
    }
    size_t bad = print_grad_results(res, n, a.tol);
    if (rc == PDT_OK && bad) {
        pdt_error("%s: %zu of %zu parameter gradients differ from finite differences by more "
                  "than %g",
                  path, bad, n, a.tol);
        rc = PDT_EBADINPUT;
    }
    free(res);
    ir_program_free(prog);
    ir_program_free(startup);
    return rc;
}

/* ---- verify transpile ------------------------------------------------- */

typedef struct {
    char dir[64];
    size_t n_runs;
    json_t *manifest;           /* of run 0 */
    ir_program **progs;         /* 2 per trainer, then 2 per pserver */
    size_t n_progs;
} tp_job;

/* Removes `dir` with its files and, `depth` levels down, its folders'.
 * Allocates nothing counted, so that it can run when memory has run out
 * (pdt_alloc_add_cleanup); the depth is the scratch folder's own layout
 * (dir/run/file), not the input's. */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];
    while (d && (e = readdir(d))) {
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        if (depth > 0 && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path, depth - 1);
        else
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static void remove_scratch(void *dir)
{
    remove_tree(dir, 2);
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

/* The i-th endpoint of a --trainers=EP,EP list, or NULL. */
static char *nth_endpoint(char **flags, size_t n, size_t i)
{
    for (size_t k = 0; k < n; k++)
        if (!strncmp(flags[k], "--trainers=", 11) && strchr(flags[k], ':')) {
            char **eps = g_strsplit(flags[k] + 11, ",", -1);
            char *r = i < g_strv_length(eps) ? g_strdup(eps[i]) : NULL;
            g_strfreev(eps);
            return r;
        }
    return NULL;
}

/* `pdtrans transpile` with the user's flags, as trainer `tid`, into `out`;
 * `extra` (or NULL) is one more flag. */
static int run_transpile(char **flags, size_t nf, const char *main_path, const char *startup,
                         const char *out, size_t tid, bool collective, const char *extra)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(a, g_strdup("transpile"));
    for (size_t i = 0; i < nf; i++)
        g_ptr_array_add(a, g_strdup(flags[i]));
    if (extra)
        g_ptr_array_add(a, g_strdup(extra));
    g_ptr_array_add(a, g_strdup_printf("--startup=%s", startup));
    g_ptr_array_add(a, g_strdup_printf("--trainer-id=%zu", tid));
    if (tid > 0 && !collective)
        g_ptr_array_add(a, g_strdup("--role=trainer"));
    char *ep = collective ? nth_endpoint(flags, nf, tid) : NULL;
    if (ep)
        g_ptr_array_add(a, g_strdup_printf("--endpoint=%s", ep));
    g_free(ep);
    g_ptr_array_add(a, g_strdup_printf("--out-dir=%s", out));
    g_ptr_array_add(a, g_strdup(main_path));
    char **argv = xcalloc(a->len + 1, sizeof(char *));
    for (size_t i = 0; i < a->len; i++)
        argv[i] = g_ptr_array_index(a, i);
    int rc = cmd_transpile((int)a->len, argv);
    free(argv);
    g_ptr_array_free(a, TRUE);
    return rc;
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

/* With --optimizer (and the other minimize options) among the flags the
 * transpile runs the optimizer passes (and append_backward for a program
 * without backward ops) before its own; the single-process reference is
 * what that pipeline makes of MAIN with the same flags, stopped after the
 * optimizer pass, so both sides read the options alike. */
static int reference_programs(char **flags, size_t nf, const char *main_path,
                              const char *startup_path, const char *dir, bool collective,
                              ir_program **main, ir_program **startup)
{
    bool needed = false;
    for (size_t i = 0; i < nf; i++)
        needed |= minimize_flag(flags[i]);
    char *out = g_build_filename(dir, "reference", NULL);
    int rc = needed ? run_transpile(flags, nf, main_path, startup_path, out, 0, collective,
                                    "--stop-after=optimizer")
                    : PDT_OK;
    char *m = needed ? g_build_filename(out, "main.pb", NULL) : g_strdup(main_path);
    char *st = needed ? g_build_filename(out, "startup.pb", NULL) : g_strdup(startup_path);
    if (rc == PDT_OK) {
        *main = pdio_read(m);
        *startup = *main ? pdio_read(st) : NULL;
        rc = *startup ? PDT_OK : PDT_EBADINPUT;
    }
    g_free(m);
    g_free(st);
    g_free(out);
    return rc;
}

static ir_program *load_file(tp_job *j, const char *dir, const char *name)
{
    char *p = g_build_filename(dir, name ? name : "", NULL);
    ir_program *prog = name ? pdio_read(p) : NULL;
    g_free(p);
    if (prog) {
        j->progs = xrealloc_n(j->progs, j->n_progs + 1, sizeof(ir_program *));
        j->progs[j->n_progs++] = prog;
    }
    return prog;
}

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Loads trainer `t`'s programs (and, from run 0, the pservers') into its
 * `devices` simulated devices, t * devices onwards. */
static bool load_run(tp_job *j, ex_cluster *c, size_t t, size_t devices, json_t *m,
                     const char *dir)
{
    size_t i;
    json_t *f;
    ex_proc *first = &c->trainers[t * devices];
    json_array_foreach(json_object_get(m, "files"), i, f) {
        const char *role = jstr(f, "role");
        if (role && !strcmp(role, "trainer") && (size_t)json_integer_value(json_object_get(f, "trainer_id")) == t) {
            if (!(first->main = load_file(j, dir, jstr(f, "main"))) ||
                !(first->startup = load_file(j, dir, jstr(f, "startup"))))
                return false;
            for (size_t d = 1; d < devices; d++) {
                first[d].main = first->main;
                first[d].startup = first->startup;
            }
        } else if (role && !strcmp(role, "pserver") && t == 0) {
            c->pservers = xrealloc_n(c->pservers, c->n_pservers + 1, sizeof(ex_proc));
            ex_proc *p = memset(&c->pservers[c->n_pservers++], 0, sizeof(ex_proc));
            p->endpoint = ir_intern(jstr(f, "endpoint") ? jstr(f, "endpoint") : "");
            if (!(p->main = load_file(j, dir, jstr(f, "main"))) ||
                !(p->startup = load_file(j, dir, jstr(f, "startup"))))
                return false;
        }
    }
    if (!first->main) {
        pdt_error("verify: the transpile wrote no program for trainer %zu", t);
        return false;
    }
    return true;
}

static size_t trainer_count(json_t *m)
{
    json_t *t = json_object_get(json_object_get(m, "flags"), "trainers");
    if (json_is_array(t))
        return json_array_size(t);
    return json_is_integer(t) && json_integer_value(t) > 0 ? (size_t)json_integer_value(t) : 1;
}

/* single_process_multi_thread: each trainer's process runs its program on
 * every selected GPU, each on its own batch, and c_comm_init_multitrainer's
 * ring spans trainers x GPUs (Paddle's CreateNCCLCommMultiTrainer), so
 * every GPU is a simulated device.  Other modes: one device per trainer. */
static size_t devices_per_trainer(json_t *m)
{
    json_t *f = json_object_get(m, "flags");
    const char *cm = jstr(f, "collective_mode");
    json_int_t gpus = json_integer_value(json_object_get(f, "selected_gpus"));
    return cm && !strcmp(cm, "single_process_multi_thread") && gpus > 0 ? (size_t)gpus : 1;
}

static int report_transpile(const char *path, ex_param_result *r, size_t n, bool exact, double tol)
{
    size_t bad = 0, n_sums = 0, bad_sums = 0;
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

static int transpile_job(char **flags, size_t nf, const char *main_path, const char *startup_path,
                         const ex_transpile_opts *o, bool collective)
{
    tp_job j = {0};
    /* the pid tells whose a folder is (tests/alloc_fail.sh looks for it) */
    g_snprintf(j.dir, sizeof j.dir, "/tmp/pdtrans-verify-%ld-XXXXXX", (long)getpid());
    if (!mkdtemp(j.dir)) {
        pdt_error("verify: cannot make a scratch folder in /tmp: %s", strerror(errno));
        return PDT_EBADINPUT;
    }
    /* its own hook: the transpiles' output batches set and clear theirs */
    if (!pdt_alloc_add_cleanup(remove_scratch, j.dir)) {
        pdt_error("BUG: verify: no room for the scratch folder's cleanup hook");
        remove_scratch(j.dir);
        return PDT_EINTERNAL;
    }
    ex_cluster c = {0};
    int rc = PDT_OK;
    ir_program *main = NULL, *startup = NULL;
    rc = reference_programs(flags, nf, main_path, startup_path, j.dir, collective, &main,
                            &startup);
    size_t n_tr = 1, devices = 1;
    for (size_t t = 0; rc == PDT_OK && t < n_tr; t++) {
        char *out = g_strdup_printf("%s/%zu", j.dir, t);
        rc = run_transpile(flags, nf, main_path, startup_path, out, t, collective, NULL);
        json_t *m = NULL;
        if (rc == PDT_OK) {
            /* run_transpile's trainers after the first are --role=trainer
             * calls: their manifest is the role's own */
            char *mname = t > 0 && !collective ? g_strdup_printf("manifest.trainer_%zu.json", t)
                                               : g_strdup("manifest.json");
            char *mp = g_build_filename(out, mname, NULL);
            g_free(mname);
            m = json_load_file(mp, 0, NULL);
            g_free(mp);
            rc = m ? PDT_OK : PDT_EBADINPUT;
        }
        if (rc == PDT_OK && t == 0) {
            n_tr = trainer_count(m);
            const char *mode = jstr(m, "mode");
            c.mode = mode && !strcmp(mode, "nccl2") ? EX_CL_NCCL2
                   : mode && !strcmp(mode, "collective") ? EX_CL_COLLECTIVE : EX_CL_PSERVER;
            c.dist_mode = (int)json_integer_value(json_object_get(m, "distributed_mode"));
            if (c.dist_mode == 3 && !cli_verify_geo_info(m, &c))
                rc = PDT_EBADINPUT;
            devices = devices_per_trainer(m);
            c.n_trainers = n_tr * devices;
            c.trainers = xcalloc(c.n_trainers, sizeof(ex_proc));
        }
        if (rc == PDT_OK && !load_run(&j, &c, t, devices, m, out))
            rc = PDT_EBADINPUT;
        json_decref(m);
        g_free(out);
    }
    ex_param_result *res = NULL;
    size_t n = 0;
    if (rc == PDT_OK)
        pdt_alloc_doing("running the transpiled programs of '%s'", main_path);
    if (rc == PDT_OK && !ex_transpile_check(&c, main, startup, o, &res, &n)) {
        pdt_error("%s: %s", main_path, c.err);
        rc = PDT_EBADINPUT;
    }
    bool exact = c.dist_mode == 0 || (c.n_trainers == 1 && (c.dist_mode != 3 || ex_geo_exact(&c)));
    if (rc == PDT_OK)
        rc = report_transpile(main_path, res, n, exact, o->tolerance);
    free(res);
    ex_cluster_free(&c);
    free(c.trainers);
    free(c.pservers);
    for (size_t i = 0; i < j.n_progs; i++)
        ir_program_free(j.progs[i]);
    free(j.progs);
    ir_program_free(main);
    ir_program_free(startup);
    pdt_alloc_remove_cleanup(remove_scratch, j.dir);
    remove_scratch(j.dir);
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

static int verify_transpile(int argc, char **argv)
{
    ex_transpile_opts o = {.seed = 1, .batch = 4, .steps = 2, .tolerance = 1e-9};
    const char *pos[2] = {NULL, NULL}, *v;
    size_t npos = 0, nf = 0;
    char **flags = xcalloc((size_t)argc + 1, sizeof(char *));
    bool collective = false;
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
        } else if (own_flag(a, "--batch", &v)) {
            rc = pdt_parse_long("verify", "--batch", v, 1, 1L << 16, &n) ? PDT_OK : PDT_EUSAGE;
            o.batch = n;
        } else if (own_flag(a, "--seed", &v)) {
            rc = pdt_parse_long("verify", "--seed", v, 0, 1L << 62, &n) ? PDT_OK : PDT_EUSAGE;
            o.seed = (uint64_t)n;
        } else if (own_flag(a, "--tolerance", &v)) {
            rc = parse_double("--tolerance", v, 0, &o.tolerance) ? PDT_OK : PDT_EUSAGE;
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
    if (rc == PDT_OK && npos != 2) {
        pdt_usage_error("verify", "transpile: expected MAIN and STARTUP");
        rc = PDT_EUSAGE;
    }
    if (rc == PDT_OK)
        rc = transpile_job(flags, nf, pos[0], pos[1], &o, collective);
    free(flags);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    if (argc < 2) {
        pdt_usage_error("verify", "expected 'grad', 'transpile' or 'rewrite'");
        return PDT_EUSAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        help();
        return PDT_OK;
    }
    if (!strcmp(argv[1], "grad"))
        return verify_grad(argc - 1, argv + 1);
    if (!strcmp(argv[1], "transpile"))
        return verify_transpile(argc - 1, argv + 1);
    if (!strcmp(argv[1], "rewrite"))
        return cmd_verify_rewrite(argc - 1, argv + 1);
    if (!strcmp(argv[1], "job"))
        return cmd_verify_job(argc - 1, argv + 1);
    pdt_usage_error("verify", "unknown subcommand '%s' (expected 'grad', 'transpile' or 'rewrite')",
                    argv[1]);
    return PDT_EUSAGE;
}
