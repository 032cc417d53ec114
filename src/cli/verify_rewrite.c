/* verify_rewrite.c - `pdtrans verify rewrite BEFORE AFTER`: a program and
 * its rewrite (memory-optimize, release-memory, inference) fetch the same
 * values from the same seeded feeds and parameters (src/exec/rewrite_check.c);
 * with --symbolic, the two run symbolically, without kernels, each var a
 * buffer (src/sym/rewrite.c).  --symbolic is asked for, never chosen for
 * the user: the two checks say different things (values to a tolerance;
 * the same terms), and a check that changes kind by itself is a surprise. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../exec/rewrite_check.h"
#include "../io/params.h"
#include "../io/pdio.h"
#include "../passes/verify.h"
#include "../progress.h"
#include "../sym/rewrite.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans verify rewrite [OPTIONS] BEFORE AFTER\n\n"
           "Runs BEFORE and its rewrite AFTER on the same seeded feeds and parameters\n"
           "and compares every fetch target: the inputs of BEFORE's fetch ops, or,\n"
           "without fetch ops, every var of its block 0 that an op writes and no op\n"
           "reads.  Prints one line per target with the worst relative difference\n"
           "|after - before| / max(1, |before|); fails (exit 1) above the tolerance.\n\n"
           "  --params=PATH        BEFORE's parameter files (a folder, or one combined\n"
           "                       file); default: seeded values in [-1, 1)\n"
           "  --after-params=PATH  AFTER's own parameter files (renamed or folded\n"
           "                       parameters); default: the values BEFORE gets\n"
           "  --feed-seed=N        seed of the feeds and parameters (default 1)\n"
           "  --batch=N            replaces -1 dims of the feeds (default 4)\n"
           "  --tolerance=T        largest difference accepted (default 1e-9)\n"
           "  --symbolic           run both symbolically instead (no kernels, any\n"
           "                       program; memory-optimize and release-memory\n"
           "                       rewrites): each op's inputs must be the same terms\n"
           "                       on both sides, and every persistable var after\n"
           "                       each step; the first difference is named\n"
           "  --steps=N            --symbolic: steps run (default 2)\n"
           "  -h, --help           show this help\n");
}

static ir_tensors *read_params(const ir_program *p, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        pdt_error("%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    return S_ISDIR(st.st_mode) ? params_read_dir(p, path) : params_read_combined(p, path);
}

static bool parse_tolerance(const char *s, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = *s ? strtod(s, &end) : NAN;
    if (!*s || isspace((unsigned char)*s) || *end || errno || !(v >= 0) || isinf(v)) {
        pdt_usage_error("verify", "option '--tolerance' needs a number of at least 0, not '%.200s'",
                        s);
        return false;
    }
    *out = v;
    return true;
}

static int report(const char *after_path, const ex_rewrite_result *r, size_t n, double tol)
{
    size_t bad = 0;
    const char *first = NULL;
    for (size_t i = 0; i < n; i++) {
        bool fail = r[i].problem || !(r[i].worst_diff <= tol);
        bad += fail;
        if (fail && !first)
            first = r[i].target;
        if (r[i].problem)
            printf("%s (after: %s): %s FAIL\n", r[i].target, r[i].after_name, r[i].problem);
        else
            printf("%s (after: %s): %zu values, worst difference %.2e at %zu (before %.9g, "
                   "after %.9g)%s\n",
                   r[i].target, r[i].after_name, r[i].numel, r[i].worst_diff, r[i].worst_index,
                   r[i].before, r[i].after, fail ? " FAIL" : "");
    }
    if (!n) {
        pdt_error("%s: BEFORE has no fetch target to compare", after_path);
        return PDT_EBADINPUT;
    }
    if (bad) {
        char more[64] = "";
        if (bad > 1)
            snprintf(more, sizeof more, " (and %zu more)", bad - 1);
        pdt_error("%s: fetch target '%s'%s differs from BEFORE by more than %g", after_path,
                  first, more, tol);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

typedef struct {
    const char *params, *after_params, *paths[2];
    ex_rewrite_opts run;
    double tolerance;
    bool symbolic;
    const char *numeric_flag;   /* the last option only the numeric check takes */
    int steps;
} rw_options;

static int parse_args(int argc, char **argv, rw_options *o)
{
    static const struct option opts[] = {
        {"params", required_argument, NULL, 'p'}, {"after-params", required_argument, NULL, 'a'},
        {"feed-seed", required_argument, NULL, 'S'}, {"batch", required_argument, NULL, 'b'},
        {"tolerance", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
        {"symbolic", no_argument, NULL, 'Y'}, {"steps", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0}};
    static const char *const numeric[] = {['p'] = "--params", ['a'] = "--after-params",
                                          ['S'] = "--feed-seed", ['b'] = "--batch",
                                          ['t'] = "--tolerance"};
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c != 'h' && c != '?' && c != ':' && optarg && !*optarg)
            return cli_empty_value("verify", argv);
        if (c > 0 && (size_t)c < sizeof numeric / sizeof *numeric && numeric[c])
            o->numeric_flag = numeric[c];
        switch (c) {
        case 'p': o->params = optarg; break;
        case 'a': o->after_params = optarg; break;
        case 'S':
            if (!pdt_parse_long("verify", "--feed-seed", optarg, 0, 1L << 62, &v))
                return PDT_EUSAGE;
            o->run.seed = (uint64_t)v;
            break;
        case 'b':
            if (!pdt_parse_long("verify", "--batch", optarg, 1, 1L << 16, &v))
                return PDT_EUSAGE;
            o->run.batch = v;
            break;
        case 't': if (!parse_tolerance(optarg, &o->tolerance)) return PDT_EUSAGE; break;
        case 'Y': o->symbolic = true; break;
        case 'n':
            if (!pdt_parse_long("verify", "--steps", optarg, 1, 1000, &v))
                return PDT_EUSAGE;
            o->steps = (int)v;
            break;
        case 'h': help(); return -1;
        default: return cli_bad_option("verify", c, argv);
        }
    }
    if (argc - optind != 2) {
        pdt_usage_error("verify", "rewrite: expected BEFORE and AFTER (%s)",
                        argc - optind < 2 ? "too few programs" : "too many programs");
        return PDT_EUSAGE;
    }
    if (o->symbolic && o->numeric_flag) {
        pdt_usage_error("verify", "rewrite: option '%s' is the numeric check's; --symbolic "
                        "runs no values", o->numeric_flag);
        return PDT_EUSAGE;
    }
    if (!o->symbolic && o->steps) {
        pdt_usage_error("verify", "rewrite: option '--steps' needs --symbolic (the numeric "
                        "check runs block 0 once)");
        return PDT_EUSAGE;
    }
    o->paths[0] = argv[optind];
    o->paths[1] = argv[optind + 1];
    return PDT_OK;
}

/* ex_rewrite_check's messages start with the program they are about. */
static void numeric_error(const rw_options *o, const char *err)
{
    if (!strncmp(err, "BEFORE: ", 8))
        pdt_error("%s: %s", o->paths[0], err + 8);
    else if (!strncmp(err, "AFTER: ", 7))
        pdt_error("%s: %s", o->paths[1], err + 7);
    else
        pdt_error("%s: %s", o->paths[1], err);
}

static int numeric(rw_options *o, ir_program *before, ir_program *after)
{
    ir_tensors *bp = NULL, *ap = NULL;
    int rc = PDT_OK;
    if (o->params && !(bp = read_params(before, o->params)))
        rc = PDT_EBADINPUT;
    if (rc == PDT_OK && o->after_params && !(ap = read_params(after, o->after_params)))
        rc = PDT_EBADINPUT;
    ex_rewrite_result *res = NULL;
    size_t n = 0;
    char err[600];
    o->run.before_params = bp;
    o->run.after_params = ap;
    pdt_progress_enter(PDT_PHASE_RUN, "running BEFORE and AFTER on the reference executor");
    if (rc == PDT_OK && !ex_rewrite_check(before, after, &o->run, &res, &n, err, sizeof err)) {
        numeric_error(o, err);
        rc = PDT_EBADINPUT;
    }
    pdt_progress_stop_line();
    if (rc == PDT_OK)
        rc = report(o->paths[1], res, n, o->tolerance);
    free(res);
    ir_tensors_free(bp);
    ir_tensors_free(ap);
    return rc;
}

static void on_step(int step)
{
    static const char *const names[] = {"symbolic step 1", "symbolic step 2", "symbolic step 3"};
    pdt_progress_enter(PDT_PHASE_RUN, step < 3 ? names[step] : "symbolic step 4 or later");
}

static int symbolic(const rw_options *o, ir_program *before, ir_program *after)
{
    sym_rewrite_in in = {.labels = {o->paths[0], o->paths[1]}, .progs = {before, after},
                         .steps = o->steps ? o->steps : 2, .on_step = on_step};
    char err[1024];
    /* the report goes to stdout after the run: the progress line ends first */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int r = sym_verify_rewrite(&in, mem ? mem : stdout, err, sizeof err);
    if (mem)
        fclose(mem);
    pdt_progress_stop_line();
    if (r == 0 && buf)
        fwrite(buf, 1, len, stdout);
    else
        pdt_error("%s", err);
    free(buf);
    return r == 0 ? PDT_OK : PDT_EBADINPUT;
}

int cmd_verify_rewrite(int argc, char **argv)
{
    rw_options o = {.run = {.seed = 1, .batch = 4}, .tolerance = 1e-9};
    int rc = parse_args(argc, argv, &o);
    if (rc != PDT_OK)
        return rc < 0 ? PDT_OK : rc;
    pdt_progress_begin();
    ir_program *before = pdio_read(o.paths[0]);
    ir_program *after = before ? pdio_read(o.paths[1]) : NULL;
    rc = after ? PDT_OK : PDT_EBADINPUT;
    for (size_t k = 0; rc == PDT_OK && !o.symbolic && k < 2; k++)
        pdt_verify_note_dims(k ? after : before, o.paths[k], stderr);
    if (rc == PDT_OK)
        rc = o.symbolic ? symbolic(&o, before, after) : numeric(&o, before, after);
    ir_program_free(before);
    ir_program_free(after);
    return rc;
}
