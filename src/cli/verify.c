/* verify.c - `pdtrans verify grad|transpile`: numeric checks of what
 * pdtrans writes, on the reference executor (src/exec). */
#include <errno.h>
#include <glib.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../exec/gradcheck.h"
#include "../io/pdio.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans verify grad [OPTIONS] --loss=VAR PROGRAM\n"
           "       pdtrans verify transpile [OPTIONS] MAIN STARTUP [TRANSPILE FLAGS]\n\n"
           "Runs programs on pdtrans's reference executor (float64, CPU, seeded) to\n"
           "show numerically that a rewrite computes what it should.\n\n"
           "grad: every parameter's gradient from the backward ops of PROGRAM (as\n"
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

static bool parse_double(const char *flag, const char *s, double min, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || errno || !(v >= min) || isinf(v)) {
        pdt_usage_error("verify", "option '%s' needs a number of at least %g, not '%s'", flag,
                        min, s ? s : "");
        return false;
    }
    *out = v;
    return true;
}

static int verify_grad(int argc, char **argv)
{
    static const struct option opts[] = {
        {"loss", required_argument, NULL, 'l'}, {"startup", required_argument, NULL, 's'},
        {"tolerance", required_argument, NULL, 't'}, {"delta", required_argument, NULL, 'd'},
        {"samples", required_argument, NULL, 'n'}, {"batch", required_argument, NULL, 'b'},
        {"seed", required_argument, NULL, 'S'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *loss = NULL, *startup_path = NULL;
    double tol = 1e-6;
    ex_gradcheck_opts o = {.seed = 1, .batch = 4, .delta = 1e-5, .max_samples = 64};
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'l': loss = optarg; break;
        case 's': startup_path = optarg; break;
        case 't': if (!parse_double("--tolerance", optarg, 0, &tol)) return PDT_EUSAGE; break;
        case 'd':
            if (!parse_double("--delta", optarg, 1e-300, &o.delta))
                return PDT_EUSAGE;
            break;
        case 'n':
            if (!cli_parse_long("verify", "--samples", optarg, 0, 1L << 30, &v))
                return PDT_EUSAGE;
            o.max_samples = (size_t)v;
            break;
        case 'b':
            if (!cli_parse_long("verify", "--batch", optarg, 1, 1L << 16, &v))
                return PDT_EUSAGE;
            o.batch = v;
            break;
        case 'S':
            if (!cli_parse_long("verify", "--seed", optarg, 0, 1L << 62, &v))
                return PDT_EUSAGE;
            o.seed = (uint64_t)v;
            break;
        case 'h': help(); return PDT_OK;
        default: return cli_bad_option("verify", c, argv);
        }
    }
    if (!loss || !*loss) {
        pdt_usage_error("verify", "missing --loss=VAR");
        return PDT_EUSAGE;
    }
    if (argc - optind != 1) {
        pdt_usage_error("verify", "expected one program");
        return PDT_EUSAGE;
    }
    const char *path = argv[optind];
    ir_program *prog = pdio_read(path), *startup = NULL;
    if (!prog)
        return PDT_EBADINPUT;
    if (startup_path && !(startup = pdio_read(startup_path))) {
        ir_program_free(prog);
        return PDT_EBADINPUT;
    }
    ex_grad_result *res = NULL;
    size_t n = 0;
    char err[600];
    int rc = PDT_OK;
    if (!ex_grad_check(prog, startup, loss, &o, &res, &n, err, sizeof err)) {
        pdt_error("%s: %s", path, err);
        rc = PDT_EBADINPUT;
    }
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
    if (rc == PDT_OK && bad) {
        pdt_error("%s: %zu of %zu parameter gradients differ from finite differences by more "
                  "than %g",
                  path, bad, n, tol);
        rc = PDT_EBADINPUT;
    }
    g_free(res);
    ir_program_free(prog);
    ir_program_free(startup);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    if (argc < 2) {
        pdt_usage_error("verify", "expected 'grad' or 'transpile'");
        return PDT_EUSAGE;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        help();
        return PDT_OK;
    }
    if (!strcmp(argv[1], "grad"))
        return verify_grad(argc - 1, argv + 1);
    pdt_usage_error("verify", "unknown subcommand '%s' (expected 'grad' or 'transpile')",
                    argv[1]);
    return PDT_EUSAGE;
}
