/* verify_job.c - `pdtrans verify job DIR MAIN [STARTUP]`: the programs a
 * transpile wrote into DIR against MAIN, symbolically (src/sym).  Only the
 * manifests' "files" lists, "mode", "distributed_mode", flags.trainers,
 * flags.collective_mode, flags.selected_gpus, and a GEO job's vars_info and
 * flags.geo_push_nums
 * are read, and "job" and "sha256", which verify_job_sha256.c checks
 * against the folder first: the rest of a manifest's form may change.  The manifests and
 * the check (cli_sym_*) serve `verify transpile --symbolic` too, which
 * loads the programs from its in-process transpiles instead of DIR. */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "../progress.h"
#include "../sym/sym.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans verify job [OPTIONS] DIR MAIN [STARTUP]\n\n"
           "Checks the programs a transpile wrote into DIR (as its manifests list\n"
           "them) against MAIN without kernels: every op is an uninterpreted function\n"
           "of its type, semantic attrs and input terms; send, recv, the barriers,\n"
           "listen_and_serv's blocks, split_byref and concat are modelled exactly,\n"
           "and sums, scales, slices and concats are normalised.  Sync jobs: after\n"
           "each step every parameter a trainer holds must be single-process\n"
           "training's on the trainers' averaged gradient (nccl2 and collective\n"
           "grad_allreduce and single_process_multi_thread jobs too, over every GPU;\n"
           "local_sgd: each trainer's param the mean of each one's own step, taken\n"
           "from the step's snapshot); async and half-async: each update applies one\n"
           "trainer's gradient (the LR-decay block runs as Paddle's pservers run it: a\n"
           "warning names how far its step counter runs ahead; DC-ASGD corrects the\n"
           "gradient as Paddle does); GEO jobs: the communicator's push and pull\n"
           "from the manifest's vars_info, each trainer training as MAIN.\n"
           "Prints one line per parameter; exit 1 on a\n"
           "difference.  A trainer DIR lacks runs the programs of the first trainer\n"
           "it holds.  First DIR must hold one job as transpile wrote it: the\n"
           "manifests name one job id, and every file their sha256 maps list (every\n"
           "program read among them) has that SHA-256; else exit 1 naming the file.\n\n"
           "  --steps=K            training steps (default 2)\n"
           "  -h, --help           show this help\n");
}

struct cli_sym_job {
    GPtrArray *progs;                   /* to free */
    GArray *trainers, *pservers;        /* sym_role */
    size_t n_trainers;
    int dist_mode;
    const char *mode;
    bool grad_allreduce;                /* flags.collective_mode */
    const char *collective_mode;        /* ... as written, for refusals */
    int coll_mode;                      /* SYM_GRAD_ALLREDUCE, SYM_LOCAL_SGD, SYM_SPMT, -1 */
    size_t devices;                     /* single_process_multi_thread: flags.selected_gpus */
    GPtrArray *manifests;               /* kept: their strings are used */
    cli_sym_geo *geo;                   /* GEO: vars_info, push interval (or NULL) */
    cli_sym_loader loader;              /* of the manifest being read */
    void *loader_ctx;
};
typedef cli_sym_job job_files;

static ir_program *load(job_files *f, const char *dir, const char *name)
{
    (void)dir;
    if (!name)
        return NULL;
    ir_program *prog = f->loader(f->loader_ctx, name);
    if (prog)
        g_ptr_array_add(f->progs, prog);
    return prog;
}

/* One entry of a manifest's "files". */
static bool add_file(job_files *f, const char *dir, const pdt_manifest_file *e)
{
    const char *role = e->role;
    bool tr = role && !strcmp(role, "trainer"), ps = role && !strcmp(role, "pserver");
    long long id = e->id;
    if (!tr && !ps)
        return true;
    GArray *a = tr ? f->trainers : f->pservers;
    if (id < 0 || id > 100000) {
        pdt_error("%s: a manifest lists a %s numbered %lld", dir, role, id);
        return false;
    }
    if ((guint)id >= a->len)
        g_array_set_size(a, (guint)id + 1);
    sym_role *r = &g_array_index(a, sym_role, id);
    if (r->main)
        return true;
    r->label = e->main;
    r->startup_label = e->startup;
    r->endpoint = e->endpoint;
    if (!r->label || !(r->main = load(f, dir, r->label)) ||
        (r->startup_label && !(r->startup = load(f, dir, r->startup_label)))) {
        if (!r->label)
            pdt_error("%s: a manifest's %s entry names no main program", dir, role);
        return false;
    }
    return true;
}

bool cli_sym_add_manifest(cli_sym_job *f, pdt_manifest *m, const char *where,
                          cli_sym_loader loader, void *ctx)
{
    g_ptr_array_add(f->manifests, m);
    f->loader = loader;
    f->loader_ctx = ctx;
    size_t n = pdt_manifest_trainers(m);
    f->n_trainers = n > f->n_trainers ? n : f->n_trainers;
    f->mode = m->mode ? m->mode : f->mode;
    const pdt_manifest_flag *cm = pdt_manifest_get_flag(m, "collective_mode");
    f->collective_mode = cm && cm->kind == PDT_MF_STRING ? cm->s : NULL;
    f->grad_allreduce = f->collective_mode && !strcmp(f->collective_mode, "grad_allreduce");
    const char *cmn = f->collective_mode ? f->collective_mode : "";
    f->coll_mode = f->grad_allreduce ? SYM_GRAD_ALLREDUCE
                 : !strcmp(cmn, "local_sgd") ? SYM_LOCAL_SGD
                 : !strcmp(cmn, "single_process_multi_thread") ? SYM_SPMT : -1;
    const pdt_manifest_flag *gpus = pdt_manifest_get_flag(m, "selected_gpus");
    f->devices = f->coll_mode == SYM_SPMT && gpus && gpus->kind == PDT_MF_INT && gpus->i > 0 &&
                 gpus->i <= 4096 ? (size_t)gpus->i : 1;
    f->dist_mode = m->distributed_mode;
    if (!cli_sym_geo_manifest(&f->geo, where, m))
        return false;
    for (size_t i = 0; i < m->n_files; i++)
        if (!add_file(f, where, &m->files[i]))
            return false;
    return true;
}

/* The parts verify job reads of manifest NAME, into the struct the job
 * API hands out; its job id and sha256 map into SUMS.  NULL after an
 * error message. */
static pdt_manifest *read_manifest(job_files *f, cli_vj_sums *sums, const char *dir,
                                   const char *name)
{
    char *path = g_build_filename(dir, name, NULL);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j)
        pdt_error("%s: line %d: not a manifest: %s", path, je.line, je.text);
    pdt_manifest *m = j && cli_sym_manifest_shape(path, j) && cli_vj_sums_add(sums, name, j)
                    ? cli_manifest_parse(j) : NULL;
    if (m && !cli_sym_geo_json(&f->geo, path, j)) {
        pdt_manifest_free(m);
        m = NULL;
    }
    g_free(path);
    json_decref(j);
    return m;
}

static gint cmp_str(gconstpointer x, gconstpointer y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static bool read_dir(job_files *f, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        pdt_error("%s: cannot read the folder: %s", dir, g_strerror(errno));
        return false;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (!strncmp(e->d_name, "manifest.", 9) && n > 5 && !strcmp(e->d_name + n - 5, ".json"))
            g_ptr_array_add(names, g_strdup(e->d_name));
    }
    closedir(d);
    g_ptr_array_sort(names, cmp_str);
    bool ok = names->len > 0;
    if (!ok)
        pdt_error("%s: no manifest.json (or manifest.ROLE.json): not a job folder that "
                  "transpile wrote", dir);
    /* every manifest first, so that two jobs' manifests are refused before
     * any program is read; then the programs, each hashed before it is
     * parsed (verify_job_sha256.c), and the listed files not read */
    cli_vj_sums *sums = cli_vj_sums_new(dir);
    GPtrArray *ms = g_ptr_array_new_with_free_func((GDestroyNotify)pdt_manifest_free);
    for (guint i = 0; ok && i < names->len; i++) {
        pdt_manifest *m = read_manifest(f, sums, dir, names->pdata[i]);
        ok = m != NULL;
        if (m)
            g_ptr_array_add(ms, m);
    }
    if (ok)
        cli_vj_sums_done(sums);
    for (guint i = 0; ok && i < ms->len; i++) {
        pdt_manifest *m = ms->pdata[i];
        ms->pdata[i] = NULL;            /* cli_sym_add_manifest takes it */
        ok = cli_sym_add_manifest(f, m, dir, cli_vj_load, sums);
    }
    ok = ok && cli_vj_rest(sums);
    g_ptr_array_free(ms, TRUE);
    cli_vj_sums_free(sums);
    g_ptr_array_free(names, TRUE);
    return ok;
}

static int check_job(job_files *f, const char *dir)
{
    if (f->mode && strcmp(f->mode, "pserver") && strcmp(f->mode, "nccl2") &&
        (strcmp(f->mode, "collective") || f->coll_mode < 0)) {
        bool coll = !strcmp(f->mode, "collective");
        pdt_error("%s: %s%s%s jobs are not modelled by verify job yet (pserver, nccl2 and "
                  "collective grad_allreduce, local_sgd and single_process_multi_thread only)",
                  dir, f->mode, coll ? " " : "",
                  coll ? (f->collective_mode ? f->collective_mode : "(no collective_mode)") : "");
        return PDT_EBADINPUT;
    }
    guint have = 0;
    while (have < f->trainers->len && !g_array_index(f->trainers, sym_role, have).main)
        have++;
    if (have == f->trainers->len) {
        pdt_error("%s: the manifests list no trainer (a folder of one role: verify job needs "
                  "the whole job)", dir);
        return PDT_EBADINPUT;
    }
    if (f->trainers->len > f->n_trainers) {
        pdt_error("%s: the manifests list trainer %u of a job of %zu trainers", dir,
                  f->trainers->len - 1, f->n_trainers);
        return PDT_EBADINPUT;
    }
    if ((!f->mode || !strcmp(f->mode, "pserver")) && !f->pservers->len) {
        pdt_error("%s: the manifests list no pserver (a folder of one role: verify job needs "
                  "the whole job)", dir);
        return PDT_EBADINPUT;
    }
    g_array_set_size(f->trainers, (guint)f->n_trainers);
    for (guint k = 0; k < f->pservers->len; k++)
        if (!g_array_index(f->pservers, sym_role, k).main) {
            pdt_error("%s: the manifests list no pserver_%u (verify job needs every pserver)",
                      dir, k);
            return PDT_EBADINPUT;
        }
    return PDT_OK;
}

cli_sym_job *cli_sym_job_new(void)
{
    cli_sym_job *f = xcalloc(1, sizeof *f);
    f->progs = g_ptr_array_new_with_free_func((GDestroyNotify)ir_program_free);
    f->trainers = g_array_new(FALSE, TRUE, sizeof(sym_role));
    f->pservers = g_array_new(FALSE, TRUE, sizeof(sym_role));
    f->manifests = g_ptr_array_new_with_free_func((GDestroyNotify)pdt_manifest_free);
    return f;
}

void cli_sym_job_free(cli_sym_job *f)
{
    if (!f)
        return;
    g_ptr_array_free(f->progs, TRUE);
    g_array_free(f->trainers, TRUE);
    g_array_free(f->pservers, TRUE);
    g_ptr_array_free(f->manifests, TRUE);
    cli_sym_geo_free(f->geo);
    free(f);
}

/* single_process_multi_thread: each endpoint's process runs its programs
 * on every selected GPU, each a trainer of its own (device d of endpoint
 * e at e * devices + d, as src/exec/cluster.c numbers them). */
static void spread_devices(cli_sym_job *f)
{
    if (f->devices <= 1)
        return;
    GArray *a = g_array_new(FALSE, TRUE, sizeof(sym_role));
    g_array_set_size(a, f->trainers->len * (guint)f->devices);
    for (guint e = 0; e < f->trainers->len; e++)
        for (size_t d = 0; d < f->devices; d++) {
            sym_role r = g_array_index(f->trainers, sym_role, e);
            if (d && r.main)
                r.label = ir_internf("%s (device %zu)", r.label, d);
            g_array_index(a, sym_role, e * (guint)f->devices + (guint)d) = r;
        }
    g_array_free(f->trainers, TRUE);
    f->trainers = a;
}

int cli_sym_check(cli_sym_job *f, const char *where, const char *main_label, ir_program *main,
                  ir_program *startup, int steps)
{
    int rc = check_job(f, where);
    if (rc != PDT_OK)
        return rc;
    spread_devices(f);
    sym_job_in in = {.main_label = main_label, .main = main, .startup = startup,
                     .trainers = (sym_role *)f->trainers->data,
                     .n_trainers = f->trainers->len,
                     .pservers = (sym_role *)f->pservers->data,
                     .n_pservers = f->pservers->len, .dist_mode = f->dist_mode,
                     .mode = !f->mode || !strcmp(f->mode, "pserver") ? SYM_PSERVER
                           : !strcmp(f->mode, "nccl2") ? SYM_NCCL2 : SYM_COLLECTIVE,
                     .coll_mode = f->coll_mode,
                     .steps = steps};
    cli_sym_geo_fill(f->geo, &in.geo, &in.n_geo, &in.geo_push_nums);
    char err[1200], note[1024] = "";
    in.note = note;
    in.note_len = sizeof note;
    /* the report is held until the run ends, so that the progress line
     * (a terminal's stderr, progress.h) ends before it */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    long bad = sym_verify_job(&in, mem ? mem : stdout, err, sizeof err);
    if (mem)
        fclose(mem);
    pdt_progress_stop_line();
    if (buf)
        fwrite(buf, 1, len, stdout);
    free(buf);
    if (bad >= 0 && note[0])
        pdt_warning("%s: %s", where, note);
    if (bad < 0)
        pdt_error("%s: %s", where, err);
    else if (bad)
        pdt_error("%s: %ld %s from single-process training of %s", where, bad,
                  bad == 1 ? "parameter differs" : "parameters differ", main_label);
    return bad ? PDT_EBADINPUT : PDT_OK;
}

static int run(const char *dir, const char *main_path, const char *startup_path, int steps)
{
    job_files *f = cli_sym_job_new();
    ir_program *main = pdio_read(main_path), *startup = NULL;
    int rc = main ? PDT_OK : PDT_EBADINPUT;
    if (rc == PDT_OK && startup_path && !(startup = pdio_read(startup_path)))
        rc = PDT_EBADINPUT;
    if (rc == PDT_OK)
        rc = read_dir(f, dir) ? cli_sym_check(f, dir, main_path, main, startup, steps)
                              : PDT_EBADINPUT;
    cli_sym_job_free(f);
    ir_program_free(main);
    ir_program_free(startup);
    return rc;
}

int cmd_verify_job(int argc, char **argv)
{
    const char *pos[3] = {NULL, NULL, NULL};
    size_t npos = 0;
    long steps = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            return PDT_OK;
        } else if (!strncmp(a, "--steps=", 8)) {
            if (!pdt_parse_long("verify", "--steps", a + 8, 1, 100, &steps))
                return PDT_EUSAGE;
        } else if (a[0] == '-' && a[1]) {
            pdt_usage_error("verify", "job: unknown option '%s'", a);
            return PDT_EUSAGE;
        } else if (npos < 3) {
            pos[npos++] = a;
        } else {
            pdt_usage_error("verify", "job: expected DIR MAIN [STARTUP], not a fourth '%s'", a);
            return PDT_EUSAGE;
        }
    }
    if (npos < 2) {
        pdt_usage_error("verify", "job: expected DIR MAIN [STARTUP]");
        return PDT_EUSAGE;
    }
    return run(pos[0], pos[1], pos[2], (int)steps);
}
