/* transpile_manifest.c - the transpile family's manifest (src/job/manifest.h):
 * what was written, where every slice lives, and the flags used, filled
 * into the in-memory struct the job hands out.  The command writes it as
 * manifest.json (src/cli/manifest_json.c); nothing here knows JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/util.h"
#include "builders.h"

const char *tp_file_name(const pdt_ctx *ctx, const char *stem)
{
    return ir_internf("%s%s", stem, ctx->settings.text_output ? ".pbtxt" : ".pb");
}

static const char *dtype_name(int t)
{
    switch (t) {
    case IR_BOOL: return "BOOL";
    case IR_INT16: return "INT16";
    case IR_INT32: return "INT32";
    case IR_INT64: return "INT64";
    case IR_FP16: return "FP16";
    case IR_FP32: return "FP32";
    case IR_FP64: return "FP64";
    case IR_UINT8: return "UINT8";
    case IR_INT8: return "INT8";
    case IR_BF16: return "BF16";
    case IR_COMPLEX64: return "COMPLEX64";
    case IR_COMPLEX128: return "COMPLEX128";
    default: return "OTHER";
    }
}

static const char *sync_name(pdt_sync_mode m)
{
    return m == PDT_SYNC ? "sync" : m == PDT_ASYNC ? "async" : "half_async";
}

static const char *role_name(pdt_role r)
{
    return r == PDT_ROLE_ALL ? "all" : r == PDT_ROLE_TRAINER ? "trainer" : "pserver";
}

static const char *split_name(pdt_split_method m)
{
    return m == PDT_SPLIT_ROUND_ROBIN ? "round-robin" : m == PDT_SPLIT_HASH ? "hash" : "balanced";
}

static const char *collective_name(pdt_collective_mode m)
{
    return m == PDT_COLL_GRAD_ALLREDUCE ? "grad_allreduce"
           : m == PDT_COLL_LOCAL_SGD    ? "local_sgd"
                                        : "single_process_multi_thread";
}

static void flags_nccl2(pdt_manifest *m, const pdt_transpile_opts *o)
{
    pdt_manifest_flag_strs(m, "trainers", o->trainer_endpoints.items, o->trainer_endpoints.n);
    pdt_manifest_flag_int(m, "trainer_id", o->trainer_id);
    if (o->mode == PDT_MODE_COLLECTIVE) {
        if (o->endpoint)    /* no --endpoint: no key (as jansson dropped a NULL) */
            pdt_manifest_flag_str(m, "endpoint", o->endpoint);
        pdt_manifest_flag_str(m, "collective_mode", collective_name(o->collective_mode));
        pdt_manifest_flag_int(m, "nccl_comm_num", o->nccl_comm_num);
        return;
    }
    pdt_manifest_flag_str(m, "endpoint", o->endpoint);
    pdt_manifest_flag_int(m, "nccl_comm_num", o->nccl_comm_num);
    pdt_manifest_flag_bool(m, "use_hierarchical_allreduce", o->hierarchical_allreduce);
    pdt_manifest_flag_int(m, "hierarchical_allreduce_inter_nranks",
                          o->hierarchical_inter_nranks);
}

void tp_manifest_flags(pdt_manifest *m, const pdt_ctx *ctx, bool nccl2)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    if (nccl2) {
        flags_nccl2(m, o);
        return;
    }
    pdt_manifest_flag_strs(m, "pservers", o->pservers.items, o->pservers.n);
    pdt_manifest_flag_int(m, "trainers", o->trainers);
    pdt_manifest_flag_int(m, "trainer_id", o->trainer_id);
    pdt_manifest_flag_str(m, "endpoint", o->endpoint);
    /* GeoSgdTranspiler trains asynchronously whatever the flags said */
    pdt_manifest_flag_str(m, "sync_mode", o->geo_push_nums ? "async" : sync_name(o->sync_mode));
    pdt_manifest_flag_bool(m, "slice_var_up", o->slice_var_up);
    pdt_manifest_flag_int(m, "min_block_size", o->min_block_size);
    pdt_manifest_flag_str(m, "split_method", split_name(o->split_method));
    pdt_manifest_flag_int(m, "random_seed", (long long)o->random_seed);
    pdt_manifest_flag_int(m, "rpc_send_thread_num", o->runtime.rpc_send_threads);
    pdt_manifest_flag_int(m, "rpc_get_thread_num", o->runtime.rpc_get_threads);
    pdt_manifest_flag_int(m, "rpc_prefetch_thread_num", o->runtime.rpc_prefetch_threads);
    if (o->dc_asgd)   /* only when set, so older manifests stay as they were */
        pdt_manifest_flag_bool(m, "dc_asgd", true);
    if (o->lr_ops == PDT_LR_OPS_MOVE)     /* likewise */
        pdt_manifest_flag_str(m, "lr_ops", "move");
    if (o->geo_push_nums)     /* likewise: the communicator's push_nums */
        pdt_manifest_flag_int(m, "geo_push_nums", o->geo_push_nums);
}

static void add_pair(pdt_manifest *m, const pdt_ctx *ctx, const char *role, const char *key,
                     long long id, const char *endpoint, const char *stem)
{
    pdt_manifest_file f = {role, key, id, endpoint, tp_file_name(ctx, stem),
                           tp_file_name(ctx, ir_internf("%s.startup", stem))};
    pdt_manifest_add_file(m, &f);
}

/* This trainer's pair of files (every mode writes it last or alone), or
 * with --role=all every trainer's. */
static void add_trainers(pdt_manifest *m, const pdt_ctx *ctx)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    int from = o->every_trainer ? 0 : o->trainer_id;
    int to = o->every_trainer ? o->trainers : o->trainer_id + 1;
    for (int id = from; id < to; id++)
        add_pair(m, ctx, "trainer", "trainer_id", id, NULL, ir_internf("trainer_%d", id));
}

/* A param's row of the params table (README.md, "The manifest").  A
 * slice's name, shape, offset and endpoint follow from the row
 * (split_vars.c's make_slices names and cuts them so). */
static void param_row(pdt_manifest *m, pdt_manifest_param *r, const tp_plan *st,
                      const tp_pair *p)
{
    const ir_var *pv = p->param.var, *gv = p->grad.var;
    r->name = pdt_manifest_str(m, p->param.name);
    r->dtype = dtype_name(pv->dtype);
    r->shape = pdt_manifest_dims(m, pv->dims, pv->n_dims);
    r->n_shape = pv->n_dims;
    r->grad = pdt_manifest_str(m, p->grad.name);
    /* grad_shape: null when it is the param's (always, in real programs) */
    if (gv && (gv->n_dims != pv->n_dims ||
               (pv->n_dims && memcmp(gv->dims, pv->dims, pv->n_dims * sizeof *pv->dims)))) {
        r->grad_shape = pdt_manifest_dims(m, gv->dims, gv->n_dims);
        r->n_grad_shape = gv->n_dims;
    }
    r->grad_trainer_suffix = st->pl->trainer_suffix && !p->update_var;
    pdt_manifest_slice *s = pdt_manifest_alloc(m, p->param.n_slices * sizeof *s);
    for (size_t k = 0; k < p->param.n_slices; k++) {
        const tp_slice *ts = &p->param.slices[k];
        s[k].name = pdt_manifest_str(m, ts->name);
        s[k].rows = ts->n_dims ? ts->dims[0] : ts->numel;
        s[k].section = ts->n_dims ? ts->dims[0] : 0;
        s[k].pserver = (size_t)p->ep[k];
    }
    r->slices = s;
    r->n_slices = p->param.n_slices;
    /* grad_sliced: GEO's grads stay on the trainer, uncut */
    r->grad_sliced = p->grad.n_slices != 0;
    /* distribute_update_var: a param updated by backward ops (its own
     * grad); remote_prefetch: the seed's vars_overview vtype
     * "RemotePrefetch" (the trainer sends the grad, never receives the
     * param) */
    r->distribute_update_var = p->update_var;
    r->remote_prefetch = p->remote;
    r->sparse = p->sparse_grad;
}

static void placement(pdt_manifest *m, const tp_plan *st, const bool *pserver_written)
{
    const tp_placement *pl = st->pl;
    for (size_t e = 0; e < pl->n_eps; e++)
        if (pserver_written[e])
            add_pair(m, st->ctx, "pserver", "pserver", (long long)e, pl->eps[e],
                     ir_internf("pserver_%zu", e));
    m->pservers = pdt_manifest_alloc(m, pl->n_eps * sizeof *m->pservers);
    m->n_pservers = pl->n_eps;
    for (size_t e = 0; e < pl->n_eps; e++) {
        m->pservers[e].endpoint = pdt_manifest_str(m, pl->eps[e]);
        m->pservers[e].slices = (long long)pl->epl[e].n;
        m->pservers[e].param_bytes = pl->epl[e].bytes;
    }
    m->params = pdt_manifest_alloc(m, pl->n_pairs * sizeof *m->params);
    m->n_params = pl->n_pairs;
    for (size_t i = 0; i < pl->n_pairs; i++)
        param_row(m, &m->params[i], st, &pl->pairs[i]);
}

pdt_manifest *tp_manifest(tp_plan *st, const bool *pserver_written, bool trainer_written)
{
    const pdt_ctx *ctx = st->ctx;
    pdt_manifest *m = pdt_manifest_new("pserver", role_name(ctx->transpile.role));
    m->placement = true;
    m->distributed_mode = st->pl->dist_mode;
    tp_manifest_flags(m, ctx, false);
    if (trainer_written)
        add_trainers(m, ctx);
    placement(m, st, pserver_written);
    if (st->pl->table)
        m->table = tp_table_manifest(st, m);
    /* --geo: GeoSgdTranspiler._get_vars_info(), what fleet hands the GEO
     * communicator, follows from the params' slices */
    m->vars_info = st->pl->geo && st->pl->stage >= TP_PLAN_SPLIT;
    return m;
}

static void set_manifest(pdt_ctx *ctx, pdt_manifest *m)
{
    pdt_manifest_free(ctx->manifest);
    ctx->manifest = m;
}

void tp_manifest_nccl2(pdt_ctx *ctx)
{
    pdt_manifest *m = pdt_manifest_new("nccl2", "trainer");
    tp_manifest_flags(m, ctx, true);
    add_trainers(m, ctx);
    set_manifest(ctx, m);
}

/* single_process_multi_thread's settings are recorded, so that a run can
 * be repeated with options alone. */
void tp_manifest_collective(pdt_ctx *ctx, const tp_spmt_env *spmt)
{
    pdt_manifest *m = pdt_manifest_new("collective", "trainer");
    tp_manifest_flags(m, ctx, true);
    if (spmt) {
        pdt_manifest_flag_int(m, "selected_gpus", spmt->gpus);
        pdt_manifest_flag_int(m, "fuse_allreduce", spmt->fuse_allreduce);
        pdt_manifest_flag_int(m, "loss_scale", spmt->loss_scale);
    }
    add_trainers(m, ctx);
    set_manifest(ctx, m);
}
