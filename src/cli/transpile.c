/* transpile.c - `pdtrans [transpile] [OPTIONS] MAIN`, the default command:
 * reads MAIN (and the startup program), runs the pipeline that ends in the
 * transpile pass, and writes every requested role's programs plus
 * manifest.json into the output folder, all or nothing. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../diag.h"
#include "../ir/util.h"
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "../passes/transpile/transpile.h"
#include "cli.h"
#include "transpile_cli.h"

static const char *CMD = TCLI_CMD;

static void help(void)
{
    printf(
        "usage: pdtrans [transpile] [OPTIONS] MAIN\n\n"
        "Splits a training program that already holds backward and optimizer ops\n"
        "into trainer and parameter-server programs, as Paddle's\n"
        "DistributeTranspiler does.  Writes trainer_<I>.pb, trainer_<I>.startup.pb,\n"
        "pserver_<K>.pb, pserver_<K>.startup.pb (K: the endpoint's position in\n"
        "--pservers) and manifest.json into the output folder.\n\n"
        "  -s, --startup=FILE        startup program (default: an empty one)\n"
        "      --pservers=EP[,EP...] parameter-server endpoints, host:port\n"
        "      --trainers=N          number of trainers (nccl2, collective: the trainer\n"
        "                            endpoints)\n"
        "      --trainer-id=I        this trainer (default 0)\n"
        "      --role=ROLE           trainer, pserver or all (default all)\n"
        "      --endpoint=EP         with --role=pserver: the one pserver to write;\n"
        "                            nccl2, collective: this trainer's endpoint\n"
        "      --mode=MODE           pserver (default), nccl2 or collective\n"
        "      --collective-mode=M   collective: grad_allreduce, local_sgd or\n"
        "                            single_process_multi_thread\n"
        "      --nccl-comm-num=N     nccl2: NCCL communicators; collective: rings\n"
        "                            (default 1)\n"
        "      --hierarchical-allreduce   nccl2: hierarchical allreduce; needs\n"
        "      --hierarchical-inter-nranks=N   ranks per node (> 1, divides the trainers)\n"
        "      --sync | --async | --half-async   (default --sync)\n"
        "      --dc-asgd             delay-compensated async SGD on the pservers\n"
        "                            (not with --sync)\n"
        "      --no-slice            one slice per var (slice_var_up = False)\n"
        "      --min-block-size=N    smallest slice, in elements (default 8192)\n"
        "      --split-method=M      round-robin (default), hash or balanced\n"
        "      --random-seed=N       Program.random_seed for --no-slice (default 0)\n"
        "      --rpc-send-threads=N  pservers' listen_and_serv rpc_send_thread_num\n"
        "      --rpc-get-threads=N   ... rpc_get_thread_num (each default 12)\n"
        "      --rpc-prefetch-threads=N   ... rpc_prefetch_thread_num\n"
        "      --selected-gpus=LIST  single_process_multi_thread: the GPUs of one\n"
        "                            trainer, as FLAGS_selected_gpus (default 8 GPUs)\n"
        "      --fuse-allreduce=N    ... one fused allreduce when N > 0 (default 1)\n"
        "      --loss-scale=N        ... scale the loss grad unless 0 (default 1)\n"
        "      --from-env            take what flags leave unset from the variables\n"
        "                            Paddle's launchers export (1.x: PADDLE_TRAINING_ROLE,\n"
        "                            PADDLE_PSERVER_IPS, ...; 2.x fleetrun/launch:\n"
        "                            TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, ...),\n"
        "                            and FLAGS_rpc_*, FLAGS_selected_gpus, ...; the\n"
        "                            environment is read only with this flag\n"
        "      --loss=VAR --optimizer=SPEC   MAIN has no backward/optimizer ops yet:\n"
        "                            run append_backward and the optimizer passes\n"
        "                            first (also --regularization, --clip,\n"
        "                            --lr-schedule, --learning-rate-var, --params,\n"
        "                            --no-grad; see\n"
        "                            'pdtrans minimize --help')\n"
        "      --passes=LIST         run exactly these passes (see 'pdtrans passes')\n"
        "      --no-verify-each      skip the structural check after each pass\n"
        "  -o, --out-dir=DIR         output FOLDER (not a file; '-' is refused),\n"
        "                            created if missing (default .)\n"
        "      --text                write protobuf text form (.pbtxt)\n"
        "  -v, --verbose             print the passes run and the block map\n"
        "  -q, --quiet               print no warnings or notes (errors still)\n"
        "  -h, --help                show this help\n");
}

enum {
    O_PSERVERS = 256, O_TRAINERS, O_TRAINER_ID, O_ROLE, O_ENDPOINT, O_MODE, O_SYNC, O_ASYNC,
    O_HALF_ASYNC, O_NO_SLICE, O_MIN_BLOCK, O_SPLIT, O_SEED, O_FROM_ENV, O_LOSS, O_OPTIMIZER,
    O_REG, O_CLIP, O_LR, O_PARAMS, O_NO_GRAD, O_PASSES, O_NO_VERIFY, O_TEXT,
    O_NCCL_COMM_NUM, O_HIERARCHICAL, O_INTER_NRANKS, O_DC_ASGD, O_COLLECTIVE_MODE,
    O_RPC_SEND, O_RPC_GET, O_RPC_PREFETCH, O_GPUS, O_FUSE, O_LOSS_SCALE, O_LRVAR
};

typedef tcli_opts opts;

static bool parse_choice(const char *flag, const char *v, const char *const *names, int n,
                         int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) {
            *out = i;
            return true;
        }
    pdt_usage_error(CMD, "option '%s' does not accept '%s'", flag, v);
    return false;
}

/* --sync, --async and --half-async choose one mode: two different ones
 * contradict each other. */
static bool set_sync(opts *o, int c)
{
    const char *flag = c == O_SYNC ? "--sync" : c == O_ASYNC ? "--async" : "--half-async";
    if (o->sync_flag && strcmp(o->sync_flag, flag) != 0) {
        pdt_usage_error(CMD, "%s and %s contradict each other; give one", o->sync_flag, flag);
        return false;
    }
    o->sync_flag = flag;
    o->ctx->sync_mode = c == O_SYNC ? PDT_SYNC : c == O_ASYNC ? PDT_ASYNC : PDT_HALF_ASYNC;
    return true;
}

/* The settings Paddle takes from FLAGS_* and PADDLE_* variables. */
static bool set_runtime(opts *o, int c, const char *v)
{
    pdt_runtime *rt = &o->ctx->runtime;
    const struct { int c; const char *flag; int *slot; bool *given; } map[] = {
        {O_RPC_SEND, "--rpc-send-threads", &rt->rpc_send_threads, &o->has_rpc_send},
        {O_RPC_GET, "--rpc-get-threads", &rt->rpc_get_threads, &o->has_rpc_get},
        {O_RPC_PREFETCH, "--rpc-prefetch-threads", &rt->rpc_prefetch_threads,
         &o->has_rpc_prefetch},
        {O_FUSE, "--fuse-allreduce", &rt->fuse_allreduce, &o->has_fuse},
        {O_LOSS_SCALE, "--loss-scale", &rt->loss_scale, &o->has_loss_scale}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
        long n;
        if (map[i].c != c)
            continue;
        if (!cli_parse_long(CMD, map[i].flag, v, 0, 0x7fffffff, &n))
            return false;
        *map[i].slot = (int)n;
        *map[i].given = true;
    }
    return true;
}

static int parse_args(int argc, char **argv, opts *o)
{
    static const struct option lopts[] = {
        {"startup", required_argument, NULL, 's'},
        {"pservers", required_argument, NULL, O_PSERVERS},
        {"trainers", required_argument, NULL, O_TRAINERS},
        {"trainer-id", required_argument, NULL, O_TRAINER_ID},
        {"role", required_argument, NULL, O_ROLE},
        {"endpoint", required_argument, NULL, O_ENDPOINT},
        {"mode", required_argument, NULL, O_MODE},
        {"nccl-comm-num", required_argument, NULL, O_NCCL_COMM_NUM},
        {"collective-mode", required_argument, NULL, O_COLLECTIVE_MODE},
        {"hierarchical-allreduce", no_argument, NULL, O_HIERARCHICAL},
        {"hierarchical-inter-nranks", required_argument, NULL, O_INTER_NRANKS},
        {"sync", no_argument, NULL, O_SYNC},
        {"dc-asgd", no_argument, NULL, O_DC_ASGD},
        {"async", no_argument, NULL, O_ASYNC},
        {"half-async", no_argument, NULL, O_HALF_ASYNC},
        {"no-slice", no_argument, NULL, O_NO_SLICE},
        {"min-block-size", required_argument, NULL, O_MIN_BLOCK},
        {"split-method", required_argument, NULL, O_SPLIT},
        {"random-seed", required_argument, NULL, O_SEED},
        {"from-env", no_argument, NULL, O_FROM_ENV},
        {"loss", required_argument, NULL, O_LOSS},
        {"optimizer", required_argument, NULL, O_OPTIMIZER},
        {"regularization", required_argument, NULL, O_REG},
        {"clip", required_argument, NULL, O_CLIP},
        {"lr-schedule", required_argument, NULL, O_LR},
        {"learning-rate-var", required_argument, NULL, O_LRVAR},
        {"params", required_argument, NULL, O_PARAMS},
        {"no-grad", required_argument, NULL, O_NO_GRAD},
        {"passes", required_argument, NULL, O_PASSES},
        {"no-verify-each", no_argument, NULL, O_NO_VERIFY},
        {"out-dir", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, O_TEXT},
        {"rpc-send-threads", required_argument, NULL, O_RPC_SEND},
        {"rpc-get-threads", required_argument, NULL, O_RPC_GET},
        {"rpc-prefetch-threads", required_argument, NULL, O_RPC_PREFETCH},
        {"selected-gpus", required_argument, NULL, O_GPUS},
        {"fuse-allreduce", required_argument, NULL, O_FUSE},
        {"loss-scale", required_argument, NULL, O_LOSS_SCALE},
        {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static const char *const roles[] = {"all", "trainer", "pserver"};
    static const char *const modes[] = {"pserver", "nccl2", "collective"};
    static const char *const splits[] = {"round-robin", "hash", "balanced"};
    static const char *const coll_modes[] = {"grad_allreduce", "local_sgd",
                                             "single_process_multi_thread"};
    pdt_ctx *ctx = o->ctx;
    int c, v;
    long n;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:o:vqh", lopts, NULL)) != -1) {
        if (optarg && !*optarg && c != ':' && c != '?')
            return cli_empty_value(CMD, argv);
        switch (c) {
        case 's': o->startup_path = optarg; break;
        case 'o': o->out_dir = optarg; break;
        case 'v': pdt_verbosity++; break;
        case 'h': help(); return -1;
        case O_PSERVERS:
            pdt_list_free(&ctx->pservers);
            ctx->pservers = pdt_list_split(optarg);
            o->has_pservers = true;
            break;
        case O_TRAINERS: o->trainers_arg = optarg; o->has_trainers = true; break;
        case O_TRAINER_ID:
            if (!cli_parse_long(CMD, "--trainer-id", optarg, 0, 1L << 30, &n))
                return PDT_EUSAGE;
            ctx->trainer_id = (int)n;
            o->has_trainer_id = true;
            break;
        case O_ROLE:
            if (!parse_choice("--role", optarg, roles, 3, &v))
                return PDT_EUSAGE;
            ctx->role = (pdt_role)v;
            o->has_role = true;
            break;
        case O_ENDPOINT: ctx->endpoint = ir_intern(optarg); o->has_endpoint = true; break;
        case O_MODE:
            if (!parse_choice("--mode", optarg, modes, 3, &v))
                return PDT_EUSAGE;
            ctx->mode = (pdt_dist_mode)v;
            break;
        case O_NCCL_COMM_NUM:
            if (!cli_parse_long(CMD, "--nccl-comm-num", optarg, 1, 1024, &n))
                return PDT_EUSAGE;
            ctx->nccl_comm_num = (int)n;
            o->has_nccl_flags = true;
            break;
        case O_COLLECTIVE_MODE:
            if (!parse_choice("--collective-mode", optarg, coll_modes, 3, &v))
                return PDT_EUSAGE;
            ctx->collective_mode = (pdt_collective_mode)(v + 1);
            break;
        case O_HIERARCHICAL:
            ctx->hierarchical_allreduce = true;
            o->has_nccl_flags = o->has_hierarchical = true;
            break;
        case O_INTER_NRANKS:
            if (!cli_parse_long(CMD, "--hierarchical-inter-nranks", optarg, 2, 1L << 20, &n))
                return PDT_EUSAGE;
            ctx->hierarchical_inter_nranks = (int)n;
            o->has_nccl_flags = o->has_hierarchical = true;
            break;
        case O_SYNC:
        case O_ASYNC:
        case O_HALF_ASYNC:
            if (!set_sync(o, c))
                return PDT_EUSAGE;
            break;
        case O_DC_ASGD: ctx->dc_asgd = true; break;
        case O_RPC_SEND:
        case O_RPC_GET:
        case O_RPC_PREFETCH:
        case O_FUSE:
        case O_LOSS_SCALE:
            if (!set_runtime(o, c, optarg))
                return PDT_EUSAGE;
            break;
        case O_GPUS:
            ctx->runtime.selected_gpus = tcli_count_gpus(optarg);
            o->has_gpus = true;
            break;
        case 'q': pdt_quiet_warnings = true; break;
        case O_NO_SLICE: ctx->slice_var_up = false; break;
        case O_MIN_BLOCK:
            /* DistributeTranspiler asserts min_block_size >= 8192. */
            if (!cli_parse_long(CMD, "--min-block-size", optarg, 8192, 1L << 40, &n))
                return PDT_EUSAGE;
            ctx->min_block_size = n;
            break;
        case O_SPLIT:
            if (!parse_choice("--split-method", optarg, splits, 3, &v))
                return PDT_EUSAGE;
            ctx->split_method = (pdt_split_method)v;
            break;
        case O_SEED:
            if (!cli_parse_long(CMD, "--random-seed", optarg, 0, 4294967295L, &n))
                return PDT_EUSAGE;
            ctx->random_seed = (unsigned long)n;
            break;
        case O_FROM_ENV: o->from_env = true; break;
        case O_LOSS: ctx->loss = ir_intern(optarg); break;
        case O_OPTIMIZER: ctx->optimizer = ir_intern(optarg); break;
        case O_REG:
            if (!cli_add_regularization(CMD, ctx, optarg))
                return PDT_EUSAGE;
            break;
        case O_CLIP: ctx->clip = ir_intern(optarg); break;
        case O_LR: ctx->lr_schedule = ir_intern(optarg); break;
        case O_LRVAR: ctx->learning_rate_var = ir_intern(optarg); break;
        case O_PARAMS: pdt_list_free(&ctx->params); ctx->params = pdt_list_split(optarg); break;
        case O_NO_GRAD: pdt_list_free(&ctx->no_grad); ctx->no_grad = pdt_list_split(optarg); break;
        case O_PASSES: o->passes = optarg; break;
        case O_NO_VERIFY: ctx->no_verify_each = true; break;
        case O_TEXT: o->text = true; break;
        default: return cli_bad_option(CMD, c, argv);
        }
    }
    if (cli_check_out_path(CMD, "-o/--out-dir", o->out_dir, true) ||
        cli_check_quiet_verbose(CMD))
        return PDT_EUSAGE;
    if (argc - optind != 1) {
        pdt_usage_error(CMD, argc - optind ? "expected one MAIN program, got %d arguments"
                                           : "expected a MAIN program%.0d", argc - optind);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* ---- the pipeline ---- */

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

/* The default pipeline: the transpile pass alone, or, for a MAIN that has
 * no optimizer ops yet and --optimizer, what `pdtrans minimize` runs. */
static int pick_passes(pdt_ctx *ctx, const char *list, pdt_list *out)
{
    if (list) {
        *out = pdt_list_split(list);
        if (out->n == 0) {
            pdt_usage_error(CMD, "--passes needs at least one pass name");
            return PDT_EUSAGE;
        }
        return PDT_OK;
    }
    static const char *const minimize[] = {"append_backward", "lr_schedule", "gradient_clip",
                                           "regularization", "optimizer"};
    const char *names[8];
    size_t n = 0;
    bool optimized = has_role_bit(ctx->main, IR_ROLE_OPTIMIZE);
    /* Options of the minimize part, which runs only before a transpile of
     * a program without optimizer ops; never silently dropped. */
    const char *extra = ctx->optimizer ? "--optimizer" : ctx->clip ? "--clip"
                        : ctx->regularization || ctx->param_regularizations.n
                            ? "--regularization"
                        : ctx->learning_rate_var ? "--learning-rate-var"
                        : ctx->lr_schedule ? "--lr-schedule" : ctx->loss ? "--loss" : NULL;
    if (optimized && extra) {
        pdt_usage_error(CMD, "%s already has optimizer ops (op_role Optimize), so %s would "
                        "have no effect; drop it, or give the program before minimize",
                        ctx->main_path, extra);
        return PDT_EUSAGE;
    }
    if (!optimized && extra && !ctx->optimizer) {
        pdt_usage_error(CMD, "%s needs --optimizer", extra);
        return PDT_EUSAGE;
    }
    if (!optimized && ctx->optimizer) {
        bool backward = has_role_bit(ctx->main, IR_ROLE_BACKWARD);
        if (!backward && !ctx->loss) {
            pdt_usage_error(CMD, "%s has no backward ops: --optimizer needs --loss too",
                            ctx->main_path);
            return PDT_EUSAGE;
        }
        if (!backward && cli_check_has_params(CMD, ctx))
            return PDT_EUSAGE;
        for (size_t i = backward ? 1 : 0; i < sizeof minimize / sizeof *minimize; i++)
            names[n++] = minimize[i];
    }
    names[n++] = "transpile";
    out->items = xcalloc(n, sizeof *out->items);
    for (size_t i = 0; i < n; i++)
        out->items[i] = ir_intern(names[i]);
    out->n = n;
    return PDT_OK;
}

static int write_outputs(const opts *o)
{
    const pdt_ctx *ctx = o->ctx;
    int rc = PDT_OK;
    pdio_batch *b = pdio_batch_new(false);
    /* Made at commit, once every file is built in memory; removed again if
     * the set fails. */
    pdio_batch_create_folder(b, o->out_dir);
    for (size_t i = 0; i < ctx->n_outputs && rc == PDT_OK; i++) {
        char *path = g_strdup_printf("%s/%s", o->out_dir, tp_file_name(ctx->outputs[i].stem));
        if (pdio_batch_add_program(b, path, ctx->outputs[i].program, o->text) != 0)
            rc = PDT_EBADINPUT;
        g_free(path);
    }
    if (rc == PDT_OK && ctx->manifest_json) {
        /* Added last, so it is renamed into place last. */
        char *path = g_strdup_printf("%s/manifest.json", o->out_dir);
        pdio_batch_add_bytes(b, path, ctx->manifest_json, strlen(ctx->manifest_json), false);
        g_free(path);
    }
    if (rc == PDT_OK)
        rc = pdio_batch_commit(b);
    pdio_batch_free(b);
    return rc;
}

/* The options that shaped the pipeline, in a fixed order, for the
 * manifest (the transpile flags have their own section there). */
static void record_options(opts *o)
{
    const pdt_ctx *ctx = o->ctx;
    const char *names[] = {"loss", "optimizer", "regularization", "clip", "lr_schedule",
                           "learning_rate_var"};
    const char *values[] = {ctx->loss, ctx->optimizer, ctx->regularization, ctx->clip,
                            ctx->lr_schedule, ctx->learning_rate_var};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        cli_run_option(&o->run, names[i], values[i]);
    /* Per-parameter regularizers hold commas of their own: ';' joins them. */
    const pdt_list *lists[] = {&ctx->params, &ctx->no_grad, &ctx->param_regularizations};
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

static int read_inputs(opts *o, const char *main_path)
{
    pdt_ctx *ctx = o->ctx;
    ctx->main_path = main_path;
    ctx->main = cli_run_read(&o->run, "main", main_path);
    if (!ctx->main)
        return PDT_EBADINPUT;
    if (ctx->main->n_blocks == 0) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        return PDT_EBADINPUT;
    }
    if (!o->startup_path) {
        ctx->startup = ir_program_new();
        ir_program_add_block(ctx->startup, -1);
        return PDT_OK;
    }
    ctx->startup = cli_run_read(&o->run, "startup", o->startup_path);
    ctx->startup_path = o->startup_path;
    if (!ctx->startup)
        return PDT_EBADINPUT;
    if (ctx->startup->n_blocks == 0) {
        pdt_error("%s: program has no blocks", o->startup_path);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

int cmd_transpile(int argc, char **argv)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    opts o = {.ctx = &ctx, .out_dir = ".", .src_role = "--role", .src_pservers = "--pservers",
              .src_trainers = "--trainers", .src_trainer_id = "--trainer-id",
              .src_endpoint = "--endpoint"};
    cli_run_init(&o.run);
    pdt_list passes = {0, NULL};
    int rc = parse_args(argc, argv, &o);
    if (rc == -1) {
        rc = PDT_OK;
        goto done;
    }
    if (!rc && o.from_env)
        rc = tcli_from_env(&o);
    if (!rc)
        rc = tcli_check_usage(&o);
    if (!rc)
        rc = read_inputs(&o, argv[optind]);
    if (rc)
        goto done;
    tp_text_output = o.text;
    rc = pick_passes(&ctx, o.passes, &passes);
    if (!rc && !o.startup_path && ctx.mode == PDT_MODE_PSERVER && ctx.role != PDT_ROLE_TRAINER)
        pdt_warning("no startup program given (-s): the pserver startup programs will "
                    "initialise no parameters");
    record_options(&o);
    ctx.run = cli_run_info(&o.run, passes.items, passes.n);
    if (!rc)
        rc = pdt_run_pipeline(&ctx, passes.items, passes.n);
    if (!rc && ctx.n_outputs == 0) {
        pdt_error("the pipeline produced no programs (does --passes include 'transpile'?)");
        rc = PDT_EBADINPUT;
    }
    if (!rc)
        rc = write_outputs(&o);
done:
    pdt_list_free(&passes);
    pdt_ctx_free(&ctx);
    cli_run_free(&o.run);
    return rc;
}
