/* inference.c - `pdtrans inference`: Paddle's InferenceTranspiler on a
 * saved inference model and its parameter files; writes the model and its
 * parameters as save_inference_model lays them out. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../diag.h"
#include "../io/params.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "cli.h"
#include "optparse.h"

static const char USAGE[] =
    "usage: pdtrans inference --params=PATH [--model-filename=NAME]\n"
    "                         [--params-filename=NAME] [--text] MODEL -o DIR\n\n"
    "Runs Paddle's InferenceTranspiler (fluid 1.5, without its MKLDNN-only\n"
    "rewrites) on the inference program MODEL: folds batch_norm into the\n"
    "preceding conv2d (passes fuse_batch_norm, then is_test) and writes the\n"
    "program and its parameters into DIR, as save_inference_model would.\n\n";

typedef struct {
    const char *params, *out_dir, *model_name, *params_name, *model;
    bool text;
} opts;

#define FIELD(f) offsetof(opts, f)

/* The command's own options (the inference passes take none). */
static const pdt_option inference_cmd_options[] = {
    {.name = "params", .type = PDT_OPT_STRING, .meta = "PATH", .offset = FIELD(params),
     .help = "MODEL's parameters: a folder with one file per persistable var, or one "
             "combined file (__params__, .pdiparams), told apart by PATH"},
    {.name = "model-filename", .type = PDT_OPT_STRING, .meta = "NAME",
     .offset = FIELD(model_name),
     .help = "the program's file name in DIR (default __model__)"},
    {.name = "params-filename", .type = PDT_OPT_STRING, .meta = "NAME",
     .offset = FIELD(params_name),
     .help = "write the parameters as one combined file DIR/NAME (default: one file per var "
             "in DIR)"},
};

static int parse(int argc, char **argv, opts *o, pdt_ctx *ctx)
{
    cli_common common = {0};
    cli_spec spec = {.cmd = "inference", .usage = USAGE};
    cli_add(&spec, (cli_group){inference_cmd_options, 1, o, NULL, NULL, NULL});
    cli_common_group(&spec, &common, "out-dir");
    cli_add(&spec, (cli_group){inference_cmd_options + 1, 2, o, NULL, NULL, NULL});
    cli_common_group(&spec, &common, "text");
    cli_family(&spec, &pdt_family_run, ctx, NULL, NULL);
    cli_common_group(&spec, &common, "verbose quiet help");
    int rc = cli_parse(&spec, argc, argv);
    if (rc != PDT_OK)
        return rc;
    /* -o has no default here: the model is written next to nothing else. */
    o->out_dir = cli_given(&spec, "out-dir") ? common.out : NULL;
    o->text = common.text;
    const char *missing = !o->params ? "--params=PATH" : !o->out_dir ? "-o DIR" : NULL;
    if (missing) {
        pdt_usage_error("inference", "missing %s", missing);
        return PDT_EUSAGE;
    }
    if (pdt_quiet_warnings && pdt_verbosity) {
        pdt_usage_error("inference", "-q/--quiet and -v/--verbose contradict each other; give one");
        return PDT_EUSAGE;
    }
    rc = cli_check_out_path("inference", "-o/--out-dir", o->out_dir, true);
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
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    int rc = parse(argc, argv, &o, &ctx);
    if (rc == PDT_OK && !cli_read_main(&ctx, o.model))
        rc = PDT_EBADINPUT;
    if (rc == PDT_OK) {
        ctx.param_values = read_params(ctx.main, o.params);
        rc = ctx.param_values ? PDT_OK : PDT_EBADINPUT;
    }
    const char *pipeline[] = {"fuse_batch_norm", "is_test"};
    ctx.settings.saved_inference = true; /* save_inference_model's attr order */
    if (rc == PDT_OK)
        rc = pdt_run_pipeline(&ctx, pipeline, 2);
    if (rc == PDT_OK)
        rc = write_outputs(&ctx, &o);
    pdt_ctx_free(&ctx);
    return rc == CLI_HELP ? PDT_OK : rc;
}
