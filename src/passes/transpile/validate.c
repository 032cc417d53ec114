/* validate.c - the transpile family's cross-option rules (its validate()),
 * which the command runs on the settings resolved from flags and
 * --from-env before any file is read: every mistake in the command line
 * (or the launcher's environment) is exit 2 with the flag or variable
 * named, and the passes never meet a setting they cannot use.  It also
 * resolves --trainers, a count or an endpoint list per --mode. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "builders.h"

/* Prints a usage error; the expression is PDT_EUSAGE. */
#define USAGE(...) (pdt_usage_error(cmd, __VA_ARGS__), PDT_EUSAGE)

/* How messages name a setting: where it came from, or its flag. */
#define SRC(o, field, flag) ((o)->src.field ? (o)->src.field : (flag))

static const char *mode_name(pdt_dist_mode m)
{
    return m == PDT_MODE_NCCL2 ? "nccl2" : m == PDT_MODE_COLLECTIVE ? "collective" : "pserver";
}

/* A setting refused: exit 2 for a flag, exit 1 for a launcher's variable
 * (bad input, not bad usage).  FROM_ENV: src names a variable. */
static int refuse(const char *cmd, bool from_env, const char *source, char *problem)
{
    if (from_env)
        pdt_error("--from-env: %s: %s", source, problem);
    else
        pdt_usage_error(cmd, "%s: %s", source, problem);
    g_free(problem);
    return from_env ? PDT_EBADINPUT : PDT_EUSAGE;
}

/* One endpoint (endpoints.c's grammar); PDT_OK or the refusal's status. */
static int check_endpoint(const char *cmd, bool from_env, const char *source, const char *ep)
{
    char *problem = tp_endpoint_problem(ep);
    return problem ? refuse(cmd, from_env, source, problem) : PDT_OK;
}

/* TEXT, the list as given: every endpoint HOST:PORT, commas only, none
 * empty, none listed twice. */
static int check_endpoints(const char *cmd, bool from_env, const char *text, const char *source)
{
    char *problem = tp_list_problem(text, false);
    return problem ? refuse(cmd, from_env, source, problem) : PDT_OK;
}

/* --endpoint names one of the endpoints in `eps` (from `list_source`). */
static int check_member(const char *cmd, const pdt_transpile_opts *o, const pdt_list *eps,
                        const char *list_source)
{
    const char *source = SRC(o, endpoint, "--endpoint");
    int rc = check_endpoint(cmd, o->src.endpoint != NULL, source, o->endpoint);
    if (rc)
        return rc;
    for (size_t i = 0; i < eps->n; i++)
        if (eps->items[i] == o->endpoint)
            return PDT_OK;
    return refuse(cmd, o->src.endpoint != NULL, source,
                  g_strdup_printf("endpoint '%s' is not one of %s", o->endpoint, list_source));
}

/* The one wording of a trainer id beyond the trainers. */
static int trainer_id_out_of_range(const char *cmd, const pdt_transpile_opts *o)
{
    return refuse(cmd, o->src.trainer_id || o->src.trainers, SRC(o, trainer_id, "--trainer-id"),
                  g_strdup_printf("trainer id %d is out of range: %d trainers (%s) allow 0 to "
                                  "%d", o->trainer_id, o->trainers,
                                  SRC(o, trainers, "--trainers"), o->trainers - 1));
}

/* The seed asks the local CUDA runtime for the ranks per node when
 * hierarchical_allreduce_inter_nranks <= 1; pdtrans runs off the GPU
 * machine, so the count must be given. */
static int check_hierarchical(const char *cmd, const pdt_transpile_opts *o)
{
    if (!o->hierarchical_allreduce) {
        if (o->hierarchical_inter_nranks)
            return USAGE("--hierarchical-inter-nranks needs --hierarchical-allreduce");
        return PDT_OK;
    }
    int n = o->hierarchical_inter_nranks;
    if (n == 0)
        return USAGE("--hierarchical-allreduce needs --hierarchical-inter-nranks=N "
                     "(the GPUs per node; Paddle would ask the local CUDA runtime)");
    if (o->trainers <= n || o->trainers % n != 0)
        return USAGE("--hierarchical-inter-nranks=%d must be smaller than the %d trainers and "
                     "divide them", n, o->trainers);
    return PDT_OK;
}

/* nccl2 and collective: this trainer's endpoint is the trainer id's entry
 * of the trainer endpoints.  Paddle does not check, but its launchers give
 * each trainer its endpoint's position, and a rank that is not the
 * endpoint's hangs the job (two trainers with one rank, or peers dialling
 * the wrong one). */
static int check_rank(const char *cmd, const pdt_transpile_opts *o)
{
    const pdt_list *eps = &o->trainer_endpoints;
    size_t at = 0;
    while (at < eps->n && eps->items[at] != o->endpoint)
        at++;
    if (at == (size_t)o->trainer_id)
        return PDT_OK;
    bool from_env = o->src.endpoint || o->src.trainer_id;
    char *problem = g_strdup_printf(
        "endpoint '%s' is at position %zu of %s, but the trainer id is %d (%s), whose "
        "endpoint is '%s'; in --mode=%s the current endpoint must be the trainer id's entry",
        o->endpoint, at, SRC(o, trainers, "--trainers"), o->trainer_id,
        SRC(o, trainer_id, "--trainer-id"), eps->items[o->trainer_id], mode_name(o->mode));
    return refuse(cmd, from_env, SRC(o, endpoint, "--endpoint"), problem);
}

/* nccl2 and collective: --trainers is the endpoint list, --endpoint one
 * of them, --trainer-id a rank. */
static int check_trainer_endpoints(const char *cmd, pdt_transpile_opts *o, size_t min)
{
    const char *mode = mode_name(o->mode);
    const char *source = SRC(o, trainers, "--trainers");
    if (!o->trainers_arg)
        return USAGE("--mode=%s needs --trainers=EP,EP[,...]", mode);
    pdt_list_free(&o->trainer_endpoints);
    o->trainer_endpoints = pdt_list_split(o->trainers_arg);
    o->trainers = (int)o->trainer_endpoints.n;
    const pdt_list *eps = &o->trainer_endpoints;
    int rc = check_endpoints(cmd, o->src.trainers != NULL, o->trainers_arg, source);
    if (rc)
        return rc;
    if (eps->n < min)
        return USAGE("--mode=collective needs at least two endpoints in %s (one with "
                     "single_process_multi_thread), got %zu", source, eps->n);
    if (o->role == PDT_ROLE_PSERVER)
        return USAGE("%s asks for a pserver, but --mode=%s has no pserver role",
                     SRC(o, role, "--role"), mode);
    if (!o->endpoint)
        return USAGE("--mode=%s needs --endpoint (this trainer's endpoint)", mode);
    rc = check_member(cmd, o, eps, source);
    if (rc)
        return rc;
    if (o->trainer_id >= o->trainers)
        return trainer_id_out_of_range(cmd, o);
    return check_rank(cmd, o);
}

/* The seed's _transpile_collective and Collective.transpile raise on these. */
static int check_collective(const char *cmd, pdt_transpile_opts *o)
{
    if (o->collective_mode == PDT_COLL_NONE)
        return USAGE("--mode=collective needs --collective-mode=grad_allreduce|local_sgd|"
                     "single_process_multi_thread");
    bool spmt = o->collective_mode == PDT_COLL_SPMT;
    if (spmt && o->nccl_comm_num != 1)    /* SingleProcessMultiThread builds one ring */
        return USAGE("--nccl-comm-num does not apply to "
                     "--collective-mode=single_process_multi_thread (one ring)");
    if (o->given.hierarchical)
        return USAGE("--hierarchical-allreduce and --hierarchical-inter-nranks need "
                     "--mode=nccl2");
    return check_trainer_endpoints(cmd, o, spmt ? 1 : 2);
}

/* --trainers as a count (pserver mode). */
static int resolve_trainer_count(const char *cmd, pdt_transpile_opts *o)
{
    if (!o->trainers_arg)
        return PDT_OK;
    long n;
    if (!pdt_parse_long(cmd, SRC(o, trainers, "--trainers"), o->trainers_arg, 1, 1L << 30, &n))
        return PDT_EUSAGE;
    o->trainers = (int)n;
    return PDT_OK;
}

/* GeoSgdTranspiler forces sync_mode False and never reads slice_var_up. */
static int check_geo(const char *cmd, const pdt_transpile_opts *o)
{
    const char *geo = o->given.geo_flag ? o->given.geo_flag : "--geo";
    if (o->mode != PDT_MODE_PSERVER)
        return USAGE("%s needs --mode=pserver (GEO-SGD is a parameter-server mode)", geo);
    if (o->given.sync_flag && strcmp(o->given.sync_flag, "--async") != 0)
        return USAGE("%s trains asynchronously (GeoSgdTranspiler sets sync_mode False): "
                     "drop %s", geo, o->given.sync_flag);
    if (o->dc_asgd)
        return USAGE("--dc-asgd does not apply to %s (its pservers only add deltas)", geo);
    if (!o->slice_var_up)
        pdt_warning("--no-slice is ignored with %s: GeoSgdTranspiler always slices the params",
                    geo);
    return PDT_OK;
}

static int check_pserver_mode(const char *cmd, pdt_transpile_opts *o)
{
    if (o->geo_push_nums && check_geo(cmd, o))
        return PDT_EUSAGE;
    if (o->given.hierarchical)
        return USAGE("--hierarchical-* need --mode=nccl2");
    if (o->given.nccl_flags)
        return USAGE("--nccl-comm-num needs --mode=nccl2 or --mode=collective");
    if (o->dc_asgd && o->sync_mode == PDT_SYNC)    /* the seed asserts not sync_mode */
        return USAGE("--dc-asgd needs --async or --half-async");
    if (resolve_trainer_count(cmd, o))
        return PDT_EUSAGE;
    if (o->pservers.n == 0)
        return USAGE("no pserver endpoints: give --pservers=EP[,EP...] (or --from-env)");
    const char *pservers = SRC(o, pservers, "--pservers");
    /* The list alone when a caller set it without the text (tests). */
    char *joined = NULL;
    if (!o->pservers_arg) {
        GString *g = g_string_new("");
        for (size_t i = 0; i < o->pservers.n; i++)
            g_string_append_printf(g, "%s%s", i ? "," : "", o->pservers.items[i]);
        joined = g_string_free(g, FALSE);
    }
    int rc = check_endpoints(cmd, o->src.pservers != NULL,
                             joined ? joined : o->pservers_arg, pservers);
    g_free(joined);
    if (rc)
        return rc;
    if (o->trainer_id >= o->trainers)
        return trainer_id_out_of_range(cmd, o);
    return o->endpoint ? check_member(cmd, o, &o->pservers, pservers) : PDT_OK;
}

/* Options that only one mode reads are refused elsewhere, not ignored. */
static int check_mode_options(const char *cmd, const pdt_transpile_opts *o)
{
    if (o->geo_push_nums && o->mode != PDT_MODE_PSERVER)
        return USAGE("%s needs --mode=pserver (GEO-SGD is a parameter-server mode)",
                     o->given.geo_flag ? o->given.geo_flag : "--geo");
    if (o->collective_mode != PDT_COLL_NONE && o->mode != PDT_MODE_COLLECTIVE)
        return USAGE("--collective-mode needs --mode=collective");
    if (o->dc_asgd && o->mode != PDT_MODE_PSERVER)
        return USAGE("--dc-asgd needs --mode=pserver");
    /* nccl2 and collective have no pservers: every trainer runs the LR ops */
    if (o->lr_ops == PDT_LR_OPS_MOVE && o->mode != PDT_MODE_PSERVER)
        return USAGE("--lr-ops=move needs --mode=pserver (with --mode=%s every trainer "
                     "computes the learning rate itself)", mode_name(o->mode));
    if (o->lr_ops == PDT_LR_OPS_MOVE && o->geo_push_nums)
        return USAGE("--lr-ops=move does not apply to %s (its trainers keep the optimizer)",
                     o->given.geo_flag ? o->given.geo_flag : "--geo");
    if (o->mode != PDT_MODE_PSERVER &&
        (o->given.rpc_send || o->given.rpc_get || o->given.rpc_prefetch))
        return USAGE("--rpc-*-threads set the pservers' listen_and_serv: they need "
                     "--mode=pserver");
    if (o->collective_mode != PDT_COLL_SPMT &&
        (o->given.gpus || o->given.fuse || o->given.loss_scale))
        return USAGE("--selected-gpus, --fuse-allreduce and --loss-scale need "
                     "--collective-mode=single_process_multi_thread");
    /* The seed ignores these outside pserver mode; say so rather than
     * let a launcher believe they took effect. */
    if (o->mode != PDT_MODE_PSERVER && o->given.pservers)
        pdt_warning("--pservers is ignored with --mode=%s", mode_name(o->mode));
    if (o->mode != PDT_MODE_PSERVER && o->given.sync_flag)
        pdt_warning("--sync, --async and --half-async are ignored with --mode=%s",
                    mode_name(o->mode));
    return PDT_OK;
}

int tp_validate(pdt_ctx *ctx, const char *cmd)
{
    pdt_transpile_opts *o = &ctx->transpile;
    if (o->endpoint)    /* compared with the lists' items by pointer */
        o->endpoint = ir_intern(o->endpoint);
    if (check_mode_options(cmd, o))
        return PDT_EUSAGE;
    if (o->mode == PDT_MODE_COLLECTIVE)
        return check_collective(cmd, o);
    if (o->mode == PDT_MODE_NCCL2)
    {
        int rc = check_trainer_endpoints(cmd, o, 1);
        return rc ? rc : check_hierarchical(cmd, o);
    }
    return check_pserver_mode(cmd, o);
}
