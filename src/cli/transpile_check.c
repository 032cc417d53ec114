/* transpile_check.c - the transpile command's usage checks: run on the
 * settings resolved from flags and --from-env, before anything is read, so
 * that every mistake in the command line (or the launcher's environment)
 * is exit 2 with the flag or variable named. */
#include <stdio.h>
#include <string.h>

#include "../diag.h"
#include "transpile_cli.h"

/* Prints a usage error; the expression is PDT_EUSAGE. */
#define USAGE(...) (pdt_usage_error(TCLI_CMD, __VA_ARGS__), PDT_EUSAGE)

static const char *mode_name(pdt_dist_mode m)
{
    return m == PDT_MODE_NCCL2 ? "nccl2" : m == PDT_MODE_COLLECTIVE ? "collective" : "pserver";
}

/* Every endpoint is HOST:PORT and none is listed twice. */
static int check_endpoints(const pdt_list *eps, const char *source)
{
    for (size_t i = 0; i < eps->n; i++) {
        if (!cli_check_endpoint(TCLI_CMD, source, eps->items[i]))
            return PDT_EUSAGE;
        for (size_t j = 0; j < i; j++)
            if (eps->items[i] == eps->items[j])
                return USAGE("%s: endpoint '%s' is listed twice", source, eps->items[i]);
    }
    return PDT_OK;
}

/* --endpoint names one of the endpoints in `eps` (from `list_source`). */
static int check_member(tcli_opts *o, const pdt_list *eps, const char *list_source)
{
    pdt_ctx *ctx = o->ctx;
    if (!cli_check_endpoint(TCLI_CMD, o->src_endpoint, ctx->transpile.endpoint))
        return PDT_EUSAGE;
    for (size_t i = 0; i < eps->n; i++)
        if (eps->items[i] == ctx->transpile.endpoint)
            return PDT_OK;
    pdt_usage_error(TCLI_CMD, "endpoint '%s' (%s) is not one of %s", ctx->transpile.endpoint,
                    o->src_endpoint, list_source);
    return PDT_EUSAGE;
}

/* The seed asks the local CUDA runtime for the ranks per node when
 * hierarchical_allreduce_inter_nranks <= 1; pdtrans runs off the GPU
 * machine, so the count must be given. */
static int check_hierarchical(const pdt_ctx *ctx)
{
    if (!ctx->transpile.hierarchical_allreduce) {
        if (ctx->transpile.hierarchical_inter_nranks)
            return USAGE("--hierarchical-inter-nranks needs --hierarchical-allreduce");
        return PDT_OK;
    }
    int n = ctx->transpile.hierarchical_inter_nranks, trainers = ctx->transpile.trainers;
    if (n == 0)
        return USAGE("--hierarchical-allreduce needs --hierarchical-inter-nranks=N "
                     "(the GPUs per node; Paddle would ask the local CUDA runtime)");
    if (trainers <= n || trainers % n != 0) {
        pdt_usage_error(TCLI_CMD, "--hierarchical-inter-nranks=%d must be smaller than the %d "
                        "trainers and divide them", n, trainers);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* nccl2 and collective: --trainers is the endpoint list, --endpoint one
 * of them, --trainer-id a rank. */
static int check_trainer_endpoints(tcli_opts *o, size_t min)
{
    pdt_ctx *ctx = o->ctx;
    const char *mode = mode_name(ctx->transpile.mode);
    if (!o->trainers_arg)
        return USAGE("--mode=%s needs --trainers=EP,EP[,...]", mode);
    pdt_list_free(&ctx->transpile.trainer_endpoints);
    ctx->transpile.trainer_endpoints = pdt_list_split(o->trainers_arg);
    ctx->transpile.trainers = (int)ctx->transpile.trainer_endpoints.n;
    const pdt_list *eps = &ctx->transpile.trainer_endpoints;
    if (check_endpoints(eps, o->src_trainers))
        return PDT_EUSAGE;
    if (eps->n < min) {
        pdt_usage_error(TCLI_CMD, "--mode=collective needs at least two endpoints in %s (one "
                        "with single_process_multi_thread), got %zu", o->src_trainers, eps->n);
        return PDT_EUSAGE;
    }
    if (ctx->transpile.role == PDT_ROLE_PSERVER)
        return USAGE("%s asks for a pserver, but --mode=%s has no pserver role", o->src_role, mode);
    if (!ctx->transpile.endpoint)
        return USAGE("--mode=%s needs --endpoint (this trainer's endpoint)", mode);
    if (check_member(o, eps, o->src_trainers))
        return PDT_EUSAGE;
    if ((size_t)ctx->transpile.trainer_id >= eps->n) {
        pdt_usage_error(TCLI_CMD, "%s: trainer id %d is out of range (%zu trainers)",
                        o->src_trainer_id, ctx->transpile.trainer_id, eps->n);
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

/* The seed's _transpile_collective and Collective.transpile raise on these. */
static int check_collective(tcli_opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (ctx->transpile.collective_mode == PDT_COLL_NONE)
        return USAGE("--mode=collective needs --collective-mode=grad_allreduce|local_sgd|"
                     "single_process_multi_thread");
    bool spmt = ctx->transpile.collective_mode == PDT_COLL_SPMT;
    if (spmt && ctx->transpile.nccl_comm_num != 1)    /* SingleProcessMultiThread builds one ring */
        return USAGE("--nccl-comm-num does not apply to "
                     "--collective-mode=single_process_multi_thread (one ring)");
    if (o->has_hierarchical)
        return USAGE("--hierarchical-allreduce and --hierarchical-inter-nranks need "
                     "--mode=nccl2");
    if (check_trainer_endpoints(o, spmt ? 1 : 2))
        return PDT_EUSAGE;
    /* Paddle does not check this, but its launchers give each trainer the
     * position of its endpoint, and two trainers with one rank hang. */
    const pdt_list *eps = &ctx->transpile.trainer_endpoints;
    for (size_t i = 0; i < eps->n; i++)
        if (eps->items[i] == ctx->transpile.endpoint && i != (size_t)ctx->transpile.trainer_id)
            pdt_warning("--trainer-id=%d, but endpoint '%s' is at position %zu of --trainers; "
                        "each trainer needs its own rank", ctx->transpile.trainer_id, ctx->transpile.endpoint, i);
    return PDT_OK;
}

static int check_pserver_mode(tcli_opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (o->has_hierarchical)
        return USAGE("--hierarchical-* need --mode=nccl2");
    if (o->has_nccl_flags)
        return USAGE("--nccl-comm-num needs --mode=nccl2 or --mode=collective");
    if (ctx->transpile.dc_asgd && ctx->transpile.sync_mode == PDT_SYNC)    /* the seed asserts not sync_mode */
        return USAGE("--dc-asgd needs --async or --half-async");
    if (o->trainers_arg) {
        long n;
        if (!cli_parse_long(TCLI_CMD, o->src_trainers, o->trainers_arg, 1, 1L << 30, &n))
            return PDT_EUSAGE;
        ctx->transpile.trainers = (int)n;
    }
    if (ctx->transpile.pservers.n == 0)
        return USAGE("no pserver endpoints: give --pservers=EP[,EP...] (or --from-env)");
    if (check_endpoints(&ctx->transpile.pservers, o->src_pservers))
        return PDT_EUSAGE;
    if (ctx->transpile.trainer_id >= ctx->transpile.trainers) {
        pdt_usage_error(TCLI_CMD, "%s: trainer id %d is out of range: %d trainers (%s) allow 0 "
                        "to %d", o->src_trainer_id, ctx->transpile.trainer_id, ctx->transpile.trainers,
                        o->src_trainers, ctx->transpile.trainers - 1);
        return PDT_EUSAGE;
    }
    if (ctx->transpile.endpoint && check_member(o, &ctx->transpile.pservers, o->src_pservers))
        return PDT_EUSAGE;
    return PDT_OK;
}

/* Options that only one mode reads are refused elsewhere, not ignored. */
static int check_mode_options(tcli_opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (ctx->transpile.collective_mode != PDT_COLL_NONE && ctx->transpile.mode != PDT_MODE_COLLECTIVE)
        return USAGE("--collective-mode needs --mode=collective");
    if (ctx->transpile.dc_asgd && ctx->transpile.mode != PDT_MODE_PSERVER)
        return USAGE("--dc-asgd needs --mode=pserver");
    if (ctx->transpile.mode != PDT_MODE_PSERVER && (o->has_rpc_send || o->has_rpc_get ||
                                          o->has_rpc_prefetch))
        return USAGE("--rpc-*-threads set the pservers' listen_and_serv: they need "
                     "--mode=pserver");
    if (ctx->transpile.collective_mode != PDT_COLL_SPMT && (o->has_gpus || o->has_fuse ||
                                                  o->has_loss_scale))
        return USAGE("--selected-gpus, --fuse-allreduce and --loss-scale need "
                     "--collective-mode=single_process_multi_thread");
    /* The seed ignores these outside pserver mode; say so rather than
     * let a launcher believe they took effect. */
    if (ctx->transpile.mode != PDT_MODE_PSERVER && o->has_pservers)
        pdt_warning("--pservers is ignored with --mode=%s", mode_name(ctx->transpile.mode));
    if (ctx->transpile.mode != PDT_MODE_PSERVER && o->sync_flag)
        pdt_warning("--sync, --async and --half-async are ignored with --mode=%s",
                    mode_name(ctx->transpile.mode));
    return PDT_OK;
}

int tcli_check_usage(tcli_opts *o)
{
    pdt_ctx *ctx = o->ctx;
    if (check_mode_options(o))
        return PDT_EUSAGE;
    if (ctx->transpile.mode == PDT_MODE_COLLECTIVE)
        return check_collective(o);
    if (ctx->transpile.mode == PDT_MODE_NCCL2)
        return check_trainer_endpoints(o, 1) || check_hierarchical(ctx) ? PDT_EUSAGE : PDT_OK;
    return check_pserver_mode(o);
}
