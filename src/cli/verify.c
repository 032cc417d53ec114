/* verify.c - `pdtrans verify grad|transpile|rewrite`: numeric checks of
 * what pdtrans writes, on the reference executor (src/exec); `verify grad`
 * here, `verify transpile` in verify_transpile.c, `verify rewrite` in
 * verify_rewrite.c. */
#include <ctype.h>
#include <errno.h>
#include <glib.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../suggest.h"
#include "../exec/gradcheck.h"
#include "../io/pdio.h"
#include "../ir/util.h"
#include "../passes/verify.h"
#include "../progress.h"
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

bool cli_verify_parse_double(const char *flag, const char *s, double min, double *out)
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
        case 't': if (!cli_verify_parse_double("--tolerance", optarg, 0, &a->tol)) return PDT_EUSAGE; break;
        case 'd':
            if (!cli_verify_parse_double("--delta", optarg, 1e-300, &o->delta))
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
    pdt_progress_stop_line();
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

int cmd_verify(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } subs[] = {{"grad", verify_grad},
                {"transpile", cli_verify_transpile},
                {"rewrite", cmd_verify_rewrite},
                {"job", cmd_verify_job}};
    static const char expected[] = "expected 'grad', 'transpile', 'rewrite' or 'job'";
    if (argc < 2) {
        pdt_usage_error("verify", "%s", expected);
        return PDT_EUSAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        help();
        return PDT_OK;
    }
    pdt_near near;
    pdt_near_init(&near, argv[1]);
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        if (!strcmp(argv[1], subs[i].name)) {
            /* a run over two seconds shows a progress line on a terminal's stderr
             * (progress.h); each subcommand ends it before its report */
            pdt_progress_begin();
            pdt_progress_enter(PDT_PHASE_RUN, subs[i].name);
            return subs[i].run(argc - 1, argv + 1);
        }
        pdt_near_offer(&near, subs[i].name);
    }
    char *hint = pdt_near_hint(&near, "");
    pdt_usage_error("verify", "unknown subcommand '%.200s' (%s)%s", argv[1], expected, hint);
    g_free(hint);
    return PDT_EUSAGE;
}
