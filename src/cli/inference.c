/* inference.c - `pdtrans inference`: Paddle's InferenceTranspiler on a
 * saved inference model and its parameter files; writes the model and its
 * parameters as save_inference_model lays them out. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../diag.h"
#include "../io/params.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"

static void help(void)
{
    printf("usage: pdtrans inference --params=PATH [--model-filename=NAME]\n"
           "                         [--params-filename=NAME] [--text] MODEL -o DIR\n\n"
           "Runs Paddle's InferenceTranspiler (fluid 1.5, without its MKLDNN-only\n"
           "rewrites) on the inference program MODEL: folds batch_norm into the\n"
           "preceding conv2d (passes fuse_batch_norm, then is_test) and writes the\n"
           "program and its parameters into DIR, as save_inference_model would.\n\n"
           "  --params=PATH          MODEL's parameters: a folder with one file per\n"
           "                         persistable var, or one combined file\n"
           "                         (__params__, .pdiparams), told apart by PATH\n"
           "  -o, --out-dir=DIR      output folder (created if missing)\n"
           "  --model-filename=NAME  the program's file name in DIR (default __model__)\n"
           "  --params-filename=NAME write the parameters as one combined file DIR/NAME\n"
           "                         (default: one file per var in DIR)\n"
           "  --text                 write the program in text form\n"
           "  --no-verify-each       skip the structural check after each pass\n"
           "  -v, --verbose          say how many sites were folded\n"
           "  -q, --quiet            print no warnings or notes (errors still)\n"
           "  -h, --help             show this help\n");
}

typedef struct {
    const char *params, *out_dir, *model_name, *params_name, *model;
    bool text, no_verify;
} opts;

static int parse(int argc, char **argv, opts *o)
{
    static const struct option long_opts[] = {
        {"params", required_argument, NULL, 'p'},
        {"out-dir", required_argument, NULL, 'o'},
        {"model-filename", required_argument, NULL, 'm'},
        {"params-filename", required_argument, NULL, 'P'},
        {"text", no_argument, NULL, 't'},
        {"no-verify-each", no_argument, NULL, 'V'},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:vqh", long_opts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value("inference", argv);
        switch (c) {
        case 'p': o->params = optarg; break;
        case 'o': o->out_dir = optarg; break;
        case 'm': o->model_name = optarg; break;
        case 'P': o->params_name = optarg; break;
        case 't': o->text = true; break;
        case 'V': o->no_verify = true; break;
        case 'v': pdt_verbosity++; break;
        case 'q': pdt_quiet_warnings = true; break;
        case 'h': help(); return -1;
        default: return cli_bad_option("inference", c, argv);
        }
    }
    const char *missing = !o->params ? "--params=PATH" : !o->out_dir ? "-o DIR" : NULL;
    if (missing) {
        pdt_usage_error("inference", "missing %s", missing);
        return PDT_EUSAGE;
    }
    if (pdt_quiet_warnings && pdt_verbosity) {
        pdt_usage_error("inference", "options '-q' and '-v' contradict each other");
        return PDT_EUSAGE;
    }
    int rc = cli_check_out_path("inference", "-o/--out-dir", o->out_dir, true);
    if (rc != PDT_OK)
        return rc;
    const char *names[] = {o->model_name, o->params_name};
    for (size_t i = 0; i < 2; i++)
        if (names[i] && (!*names[i] || strchr(names[i], '/') || !strcmp(names[i], ".") ||
                         !strcmp(names[i], ".."))) {
            pdt_usage_error("inference", "option '--%s' needs a file name without '/', "
                            "not '%s'", i ? "params-filename" : "model-filename", names[i]);
            return PDT_EUSAGE;
        }
    if (o->params_name && strcmp(o->params_name, o->model_name ? o->model_name : "__model__") == 0) {
        pdt_usage_error("inference", "--params-filename and --model-filename name the same "
                        "file '%s'", o->params_name);
        return PDT_EUSAGE;
    }
    if (argc - optind != 1) {
        pdt_usage_error("inference", "expected one MODEL program");
        return PDT_EUSAGE;
    }
    o->model = argv[optind];
    if (!o->model_name)
        o->model_name = "__model__";
    return PDT_OK;
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

static bool saves_var(const ir_program *p, const char *name)
{
    ir_var **vars;
    size_t n = params_list_vars(p, &vars);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++)
        found = strcmp(vars[i]->name, name) == 0;
    g_free(vars);
    return found;
}

/* The folder is made by the commit, once everything else is ready, and
 * removed again if it was new and writing failed: no partial output. */
static int write_outputs(const pdt_ctx *ctx, const opts *o)
{
    pdio_batch *b = pdio_batch_new(true);
    pdio_batch_create_folder(b, o->out_dir);
    char *model = g_build_filename(o->out_dir, o->model_name, NULL);
    int rc = pdio_batch_add_program(b, model, ctx->main, o->text);
    if (rc == PDT_OK && o->params_name) {
        char *path = g_build_filename(o->out_dir, o->params_name, NULL);
        rc = params_add_combined(b, ctx->main, ctx->param_values, path);
        g_free(path);
    } else if (rc == PDT_OK && saves_var(ctx->main, o->model_name)) {
        pdt_error("%s: var '%s' would overwrite the program file (use --model-filename or "
                  "--params-filename)", o->out_dir, o->model_name);
        rc = PDT_EBADINPUT;
    } else if (rc == PDT_OK) {
        rc = params_add_dir(b, ctx->main, ctx->param_values, o->out_dir);
    }
    if (rc == PDT_OK)
        rc = pdio_batch_commit(b);
    pdio_batch_free(b);
    g_free(model);
    return rc;
}

int cmd_inference(int argc, char **argv)
{
    opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc != PDT_OK)
        return rc < 0 ? PDT_OK : rc;
    pdt_ctx ctx;
    if (!cli_load_main(&ctx, o.model))
        return PDT_EBADINPUT;
    ctx.no_verify_each = o.no_verify;
    ctx.param_values = read_params(ctx.main, o.params);
    rc = ctx.param_values ? PDT_OK : PDT_EBADINPUT;
    const char *pipeline[] = {"fuse_batch_norm", "is_test"};
    if (rc == PDT_OK)
        rc = pdt_run_pipeline(&ctx, pipeline, 2);
    if (rc == PDT_OK)
        rc = write_outputs(&ctx, &o);
    pdt_ctx_free(&ctx);
    return rc;
}
