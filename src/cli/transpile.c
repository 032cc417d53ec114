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
#include "../io/pdio.h"
#include "../passes/pass.h"
#include "../passes/transpile.h"
#include "cli.h"

static const char *CMD = "transpile";

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
        "      --from-env            take role, endpoints, trainers and trainer id from\n"
        "                            PADDLE_* variables; flags win over them\n"
        "      --loss=VAR --optimizer=SPEC   MAIN has no backward/optimizer ops yet:\n"
        "                            run append_backward and the optimizer passes\n"
        "                            first (also --regularization, --clip,\n"
        "                            --lr-schedule, --params, --no-grad; see\n"
        "                            'pdtrans minimize --help')\n"
        "      --passes=LIST         run exactly these passes (see 'pdtrans passes')\n"
        "      --no-verify-each      skip the structural check after each pass\n"
        "  -o, --out-dir=DIR         output folder, created if missing (default .)\n"
        "      --text                write protobuf text form (.pbtxt)\n"
        "  -v, --verbose             print the passes run and the block map\n"
        "  -h, --help                show this help\n");
}

enum {
    O_PSERVERS = 256, O_TRAINERS, O_TRAINER_ID, O_ROLE, O_ENDPOINT, O_MODE, O_SYNC, O_ASYNC,
    O_HALF_ASYNC, O_NO_SLICE, O_MIN_BLOCK, O_SPLIT, O_SEED, O_FROM_ENV, O_LOSS, O_OPTIMIZER,
    O_REG, O_CLIP, O_LR, O_PARAMS, O_NO_GRAD, O_PASSES, O_NO_VERIFY, O_TEXT,
    O_NCCL_COMM_NUM, O_HIERARCHICAL, O_INTER_NRANKS, O_DC_ASGD, O_COLLECTIVE_MODE
};

typedef struct {
    pdt_ctx *ctx;
    const char *startup_path, *out_dir, *passes, *trainers_arg;
    bool text, from_env;
    /* Which settings came from flags (they win over --from-env). */
    bool has_role, has_pservers, has_trainers, has_trainer_id, has_endpoint;
    bool has_nccl_flags;    /* any nccl2-only flag */
    bool has_sync_flag;     /* --sync, --async or --half-async */
    bool has_hierarchical;  /* --hierarchical-*: nccl2 only, not collective */
} opts;

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
        {"params", required_argument, NULL, O_PARAMS},
        {"no-grad", required_argument, NULL, O_NO_GRAD},
        {"passes", required_argument, NULL, O_PASSES},
        {"no-verify-each", no_argument, NULL, O_NO_VERIFY},
        {"out-dir", required_argument, NULL, 'o'},
        {"text", no_argument, NULL, O_TEXT},
        {"verbose", no_argument, NULL, 'v'},
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
    while ((c = getopt_long(argc, argv, ":s:o:vh", lopts, NULL)) != -1) {
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
        case O_SYNC: ctx->sync_mode = PDT_SYNC; o->has_sync_flag = true; break;
        case O_DC_ASGD: ctx->dc_asgd = true; break;
        case O_ASYNC: ctx->sync_mode = PDT_ASYNC; o->has_sync_flag = true; break;
        case O_HALF_ASYNC: ctx->sync_mode = PDT_HALF_ASYNC; o->has_sync_flag = true; break;
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
        case O_REG: ctx->regularization = ir_intern(optarg); break;
        case O_CLIP: ctx->clip = ir_intern(optarg); break;
        case O_LR: ctx->lr_schedule = ir_intern(optarg); break;
        case O_PARAMS: pdt_list_free(&ctx->params); ctx->params = pdt_list_split(optarg); break;
        case O_NO_GRAD: pdt_list_free(&ctx->no_grad); ctx->no_grad = pdt_list_split(optarg); break;
        case O_PASSES: o->passes = optarg; break;
        case O_NO_VERIFY: ctx->no_verify_each = true; break;
        case O_TEXT: o->text = true; break;
        default: return cli_bad_option(CMD, c, argv);
        }
    }
    if (argc - optind != 1) {
        pdt_usage_error(CMD, argc - optind ? "expected one MAIN program, got %d arguments"
                                           : "expected a MAIN program%.0d", argc - optind);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* ---- --from-env: the variables Paddle's launch scripts export ---- */

static const char *env_need(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        pdt_usage_error(CMD, "--from-env: environment variable %s is not set", name);
        return NULL;
    }
    return v;
}

static bool env_int(const char *name, const char *v, long min, long *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (*end || errno || n < min || n > (1L << 30)) {
        pdt_usage_error(CMD, "--from-env: environment variable %s must be an integer >= %ld, "
                        "not '%s'", name, min, v);
        return false;
    }
    *out = n;
    return true;
}

static bool valid_port(const char *name, const char *v)
{
    long port;
    if (!env_int(name, v, 1, &port))
        return false;
    if (port > 65535) {
        pdt_usage_error(CMD, "--from-env: environment variable %s is not a port: '%s'", name, v);
        return false;
    }
    return true;
}

/* nccl2 and collective jobs have trainers only; Paddle's launcher
 * (paddle.distributed.launch) exports the endpoint list, this trainer's
 * endpoint and its id. */
static int from_env_collective(opts *o)
{
    pdt_ctx *ctx = o->ctx;
    long n;
    if (!o->has_trainers && !(o->trainers_arg = env_need("PADDLE_TRAINER_ENDPOINTS")))
        return PDT_EUSAGE;
    if (!o->has_endpoint) {
        const char *ep = env_need("PADDLE_CURRENT_ENDPOINT");
        if (!ep)
            return PDT_EUSAGE;
        ctx->endpoint = ir_intern(ep);
    }
    if (!o->has_trainer_id) {
        const char *t = env_need("PADDLE_TRAINER_ID");
        if (!t || !env_int("PADDLE_TRAINER_ID", t, 0, &n))
            return PDT_EUSAGE;
        ctx->trainer_id = (int)n;
    }
    return PDT_OK;
}

static int from_env(opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (ctx->mode != PDT_MODE_PSERVER)
        return from_env_collective(o);
    const char *role = NULL;
    if (!o->has_role) {
        if (!(role = env_need("PADDLE_TRAINING_ROLE")))
            return PDT_EUSAGE;
        if (!strcmp(role, "TRAINER"))
            ctx->role = PDT_ROLE_TRAINER;
        else if (!strcmp(role, "PSERVER"))
            ctx->role = PDT_ROLE_PSERVER;
        else {
            pdt_usage_error(CMD, "--from-env: environment variable PADDLE_TRAINING_ROLE must be "
                            "TRAINER or PSERVER, not '%s'", role);
            return PDT_EUSAGE;
        }
    }
    const char *port = getenv("PADDLE_PSERVER_PORT");
    if (!o->has_pservers) {
        const char *eps = getenv("PADDLE_PSERVER_ENDPOINTS");
        if (eps && *eps) {
            ctx->pservers = pdt_list_split(eps);
        } else {
            const char *ips = env_need("PADDLE_PSERVER_IPS");
            if (!ips || !(port = env_need("PADDLE_PSERVER_PORT")) ||
                !valid_port("PADDLE_PSERVER_PORT", port))
                return PDT_EUSAGE;
            pdt_list l = pdt_list_split(ips);
            ctx->pservers.items = calloc(l.n + 1, sizeof *ctx->pservers.items);
            for (size_t i = 0; i < l.n; i++)
                ctx->pservers.items[i] = ir_internf("%s:%s", l.items[i], port);
            ctx->pservers.n = l.n;
            pdt_list_free(&l);
        }
        if (ctx->pservers.n == 0) {
            pdt_usage_error(CMD, "--from-env: no pserver endpoints in the environment");
            return PDT_EUSAGE;
        }
    }
    long n;
    if (!o->has_trainers) {
        const char *t = env_need("PADDLE_TRAINERS");
        if (!t || !env_int("PADDLE_TRAINERS", t, 1, &n))
            return PDT_EUSAGE;
        ctx->trainers = (int)n;
    }
    if (ctx->role == PDT_ROLE_TRAINER && !o->has_trainer_id) {
        const char *t = env_need("PADDLE_TRAINER_ID");
        if (!t || !env_int("PADDLE_TRAINER_ID", t, 0, &n))
            return PDT_EUSAGE;
        ctx->trainer_id = (int)n;
    }
    if (ctx->role == PDT_ROLE_PSERVER && !o->has_endpoint) {
        const char *cur = getenv("PADDLE_CURRENT_ENDPOINT");
        if (cur && *cur) {
            ctx->endpoint = ir_intern(cur);
        } else {
            const char *ip = env_need("PADDLE_CURRENT_IP");
            if (!ip || !(port = env_need("PADDLE_PSERVER_PORT")) ||
                !valid_port("PADDLE_PSERVER_PORT", port))
                return PDT_EUSAGE;
            ctx->endpoint = ir_internf("%s:%s", ip, port);
        }
    }
    return PDT_OK;
}

/* ---- checks that are usage errors, before anything is read ---- */

/* The seed asks the local CUDA runtime for the ranks per node when
 * hierarchical_allreduce_inter_nranks <= 1; pdtrans runs off the GPU
 * machine, so the count must be given. */
static int check_hierarchical(const pdt_ctx *ctx)
{
    if (!ctx->hierarchical_allreduce) {
        if (ctx->hierarchical_inter_nranks) {
            pdt_usage_error(CMD, "--hierarchical-inter-nranks needs --hierarchical-allreduce");
            return PDT_EUSAGE;
        }
        return PDT_OK;
    }
    int n = ctx->hierarchical_inter_nranks, trainers = ctx->trainers;
    if (n == 0) {
        pdt_usage_error(CMD, "--hierarchical-allreduce needs --hierarchical-inter-nranks=N "
                             "(the GPUs per node; Paddle would ask the local CUDA runtime)");
        return PDT_EUSAGE;
    }
    if (trainers <= n || trainers % n != 0) {
        pdt_usage_error(CMD, "--hierarchical-inter-nranks=%d must be smaller than the %d trainers "
                             "and divide them", n, trainers);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* The seed's _transpile_collective and Collective.transpile raise on these;
 * here they are usage errors, found before anything is read. */
static int check_collective(opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (ctx->collective_mode == PDT_COLL_NONE) {
        pdt_usage_error(CMD, "--mode=collective needs --collective-mode=grad_allreduce|local_sgd|"
                             "single_process_multi_thread");
        return PDT_EUSAGE;
    }
    bool spmt = ctx->collective_mode == PDT_COLL_SPMT;
    if (spmt && ctx->nccl_comm_num != 1) {
        /* SingleProcessMultiThread always builds one ring. */
        pdt_usage_error(CMD, "--nccl-comm-num does not apply to "
                             "--collective-mode=single_process_multi_thread (one ring)");
        return PDT_EUSAGE;
    }
    if (o->has_hierarchical) {
        pdt_usage_error(CMD, "--hierarchical-allreduce and --hierarchical-inter-nranks need "
                             "--mode=nccl2");
        return PDT_EUSAGE;
    }
    if (!o->trainers_arg) {
        pdt_usage_error(CMD, "--mode=collective needs --trainers=EP,EP[,...]");
        return PDT_EUSAGE;
    }
    ctx->trainer_endpoints = pdt_list_split(o->trainers_arg);
    ctx->trainers = (int)ctx->trainer_endpoints.n;
    const pdt_list *eps = &ctx->trainer_endpoints;
    if (eps->n < (spmt ? 1u : 2u)) {
        pdt_usage_error(CMD, "--mode=collective needs at least two endpoints in --trainers "
                             "(one with single_process_multi_thread), got %zu", eps->n);
        return PDT_EUSAGE;
    }
    for (size_t i = 0; i < eps->n; i++)
        for (size_t j = 0; j < i; j++)
            if (eps->items[i] == eps->items[j]) {
                pdt_usage_error(CMD, "endpoint '%s' is listed twice in --trainers", eps->items[i]);
                return PDT_EUSAGE;
            }
    if (ctx->role == PDT_ROLE_PSERVER) {
        pdt_usage_error(CMD, "--mode=collective has no pserver role");
        return PDT_EUSAGE;
    }
    if (!ctx->endpoint) {
        pdt_usage_error(CMD, "--mode=collective needs --endpoint (this trainer's endpoint)");
        return PDT_EUSAGE;
    }
    bool found = false;
    for (size_t i = 0; i < eps->n; i++)
        found |= eps->items[i] == ctx->endpoint;
    if (!found) {
        pdt_usage_error(CMD, "endpoint '%s' is not one of --trainers", ctx->endpoint);
        return PDT_EUSAGE;
    }
    if ((size_t)ctx->trainer_id >= eps->n) {
        pdt_usage_error(CMD, "trainer id %d is out of range (%zu trainers)", ctx->trainer_id,
                        eps->n);
        return PDT_EUSAGE;
    }
    /* Paddle does not check this, but its launchers give each trainer the
     * position of its endpoint, and two trainers with one rank hang. */
    for (size_t i = 0; i < eps->n; i++)
        if (eps->items[i] == ctx->endpoint && i != (size_t)ctx->trainer_id)
            pdt_warning("--trainer-id=%d, but endpoint '%s' is at position %zu of --trainers; "
                        "each trainer needs its own rank", ctx->trainer_id, ctx->endpoint, i);
    return PDT_OK;
}

static int check_usage(opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (ctx->collective_mode != PDT_COLL_NONE && ctx->mode != PDT_MODE_COLLECTIVE) {
        pdt_usage_error(CMD, "--collective-mode needs --mode=collective");
        return PDT_EUSAGE;
    }
    if (ctx->dc_asgd && ctx->mode != PDT_MODE_PSERVER) {
        pdt_usage_error(CMD, "--dc-asgd needs --mode=pserver");
        return PDT_EUSAGE;
    }
    /* The seed ignores these outside pserver mode; say so rather than
     * let a launcher believe they took effect. */
    if (ctx->mode != PDT_MODE_PSERVER && o->has_pservers)
        pdt_warning("--pservers is ignored with --mode=%s",
                    ctx->mode == PDT_MODE_NCCL2 ? "nccl2" : "collective");
    if (ctx->mode != PDT_MODE_PSERVER && o->has_sync_flag)
        pdt_warning("--sync, --async and --half-async are ignored with --mode=%s",
                    ctx->mode == PDT_MODE_NCCL2 ? "nccl2" : "collective");
    if (ctx->mode == PDT_MODE_COLLECTIVE)
        return check_collective(o);
    if (ctx->mode == PDT_MODE_NCCL2) {
        if (!o->trainers_arg) {
            pdt_usage_error(CMD, "--mode=nccl2 needs --trainers=EP[,EP...]");
            return PDT_EUSAGE;
        }
        ctx->trainer_endpoints = pdt_list_split(o->trainers_arg);
        ctx->trainers = (int)ctx->trainer_endpoints.n;
        if (ctx->role == PDT_ROLE_PSERVER) {
            pdt_usage_error(CMD, "--mode=nccl2 has no pserver role");
            return PDT_EUSAGE;
        }
        if (!ctx->endpoint) {
            pdt_usage_error(CMD, "--mode=nccl2 needs --endpoint (this trainer's endpoint)");
            return PDT_EUSAGE;
        }
        bool found = false;
        for (size_t i = 0; i < ctx->trainer_endpoints.n; i++)
            found |= ctx->trainer_endpoints.items[i] == ctx->endpoint;
        if (!found) {
            pdt_usage_error(CMD, "endpoint '%s' is not one of --trainers", ctx->endpoint);
            return PDT_EUSAGE;
        }
        if ((size_t)ctx->trainer_id >= ctx->trainer_endpoints.n) {
            pdt_usage_error(CMD, "trainer id %d is out of range (%zu trainers)", ctx->trainer_id,
                            ctx->trainer_endpoints.n);
            return PDT_EUSAGE;
        }
        return check_hierarchical(ctx);
    }
    if (o->has_hierarchical) {
        pdt_usage_error(CMD, "--hierarchical-* need --mode=nccl2");
        return PDT_EUSAGE;
    }
    if (o->has_nccl_flags) {
        pdt_usage_error(CMD, "--nccl-comm-num needs --mode=nccl2 or --mode=collective");
        return PDT_EUSAGE;
    }
    if (ctx->dc_asgd && ctx->sync_mode == PDT_SYNC) {
        /* The seed asserts sync_mode is False. */
        pdt_usage_error(CMD, "--dc-asgd needs --async or --half-async");
        return PDT_EUSAGE;
    }
    if (o->trainers_arg) {
        long n;
        if (!cli_parse_long(CMD, "--trainers", o->trainers_arg, 1, 1L << 30, &n))
            return PDT_EUSAGE;
        ctx->trainers = (int)n;
    }
    if (ctx->pservers.n == 0) {
        pdt_usage_error(CMD, "no pserver endpoints: give --pservers=EP[,EP...] (or --from-env)");
        return PDT_EUSAGE;
    }
    for (size_t i = 0; i < ctx->pservers.n; i++)
        for (size_t j = 0; j < i; j++)
            if (ctx->pservers.items[i] == ctx->pservers.items[j]) {
                pdt_usage_error(CMD, "endpoint '%s' is listed twice in --pservers",
                                ctx->pservers.items[i]);
                return PDT_EUSAGE;
            }
    if (ctx->trainer_id >= ctx->trainers) {
        pdt_usage_error(CMD, "trainer id %d is out of range: --trainers=%d allows 0 to %d",
                        ctx->trainer_id, ctx->trainers, ctx->trainers - 1);
        return PDT_EUSAGE;
    }
    if (ctx->endpoint) {
        bool found = false;
        for (size_t i = 0; i < ctx->pservers.n; i++)
            found |= ctx->pservers.items[i] == ctx->endpoint;
        if (!found) {
            pdt_usage_error(CMD, "endpoint '%s' is not one of --pservers", ctx->endpoint);
            return PDT_EUSAGE;
        }
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
    bool optimized = ctx->main->n_blocks && has_role_bit(ctx->main, IR_ROLE_OPTIMIZE);
    if (!optimized && ctx->optimizer) {
        bool backward = ctx->main->n_blocks && has_role_bit(ctx->main, IR_ROLE_BACKWARD);
        if (!backward && !ctx->loss) {
            pdt_usage_error(CMD, "%s has no backward ops: --optimizer needs --loss too",
                            ctx->main_path);
            return PDT_EUSAGE;
        }
        for (size_t i = backward ? 1 : 0; i < sizeof minimize / sizeof *minimize; i++) {
            if (!pdt_pass_find(minimize[i])) {
                pdt_error("pass '%s' is not built yet, so --loss/--optimizer cannot be used; "
                          "run 'pdtrans minimize' first", minimize[i]);
                return PDT_EBADINPUT;
            }
            names[n++] = minimize[i];
        }
    } else if (!optimized && ctx->loss) {
        pdt_usage_error(CMD, "--loss needs --optimizer");
        return PDT_EUSAGE;
    }
    names[n++] = "transpile";
    out->items = calloc(n, sizeof *out->items);
    for (size_t i = 0; i < n; i++)
        out->items[i] = ir_intern(names[i]);
    out->n = n;
    return PDT_OK;
}

static int make_dirs(const char *dir)
{
    char *path = strdup(dir);
    int rc = PDT_OK;
    for (char *c = path + 1;; c++) {
        if (*c != '/' && *c != '\0')
            continue;
        char saved = *c;
        *c = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) {
            pdt_error("cannot create folder '%s': %s", path, strerror(errno));
            rc = PDT_EBADINPUT;
            break;
        }
        *c = saved;
        if (saved == '\0')
            break;
    }
    free(path);
    struct stat sbuf;
    if (rc == PDT_OK && (stat(dir, &sbuf) != 0 || !S_ISDIR(sbuf.st_mode))) {
        pdt_error("'%s' is not a folder", dir);
        rc = PDT_EBADINPUT;
    }
    return rc;
}

static int write_outputs(const opts *o)
{
    const pdt_ctx *ctx = o->ctx;
    int rc = make_dirs(o->out_dir);
    if (rc)
        return rc;
    pdio_batch *b = pdio_batch_new(false);
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
    if (rc == PDT_OK && pdio_batch_commit(b) != 0)
        rc = PDT_EBADINPUT;
    pdio_batch_free(b);
    return rc;
}

int cmd_transpile(int argc, char **argv)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    opts o;
    memset(&o, 0, sizeof o);
    o.ctx = &ctx;
    o.out_dir = ".";
    pdt_list passes = {0, NULL};
    int rc = parse_args(argc, argv, &o);
    if (rc == -1) {
        rc = PDT_OK;
        goto done;
    }
    if (!rc && o.from_env)
        rc = from_env(&o);
    if (!rc)
        rc = check_usage(&o);
    if (rc)
        goto done;
    ctx.main_path = argv[optind];
    tp_text_output = o.text;
    ctx.main = pdio_read(argv[optind]);
    if (!ctx.main) {
        rc = PDT_EBADINPUT;
        goto done;
    }
    if (ctx.main->n_blocks == 0) {
        pdt_error("%s: program has no blocks", ctx.main_path);
        rc = PDT_EBADINPUT;
        goto done;
    }
    if (o.startup_path) {
        ctx.startup = pdio_read(o.startup_path);
        if (!ctx.startup) {
            rc = PDT_EBADINPUT;
            goto done;
        }
    } else {
        ctx.startup = ir_program_new();
        ir_program_add_block(ctx.startup, -1);
    }
    if (ctx.startup->n_blocks == 0) {
        pdt_error("%s: program has no blocks", o.startup_path);
        rc = PDT_EBADINPUT;
        goto done;
    }
    rc = pick_passes(&ctx, o.passes, &passes);
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
    return rc;
}
