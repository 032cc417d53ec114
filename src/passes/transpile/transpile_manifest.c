/* transpile_manifest.c - manifest.json: the run (pdtrans version, inputs
 * and their SHA-256, the passes and options, the environment values taken),
 * what was written, where every slice lives, and the flags used.  Keys come
 * in a fixed order and nothing in it depends on the clock or the host, so
 * two identical runs write identical manifests. */
#include <glib.h>
#include <jansson.h>
#include <nettle/sha2.h>
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

static json_t *strings(const char *const *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(s[i]));
    return a;
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

static json_t *flags(const pdt_ctx *ctx, bool nccl2)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    json_t *f = json_object();
    if (nccl2 && o->mode == PDT_MODE_COLLECTIVE) {
        json_object_set_new(f, "trainers",
                            strings(o->trainer_endpoints.items, o->trainer_endpoints.n));
        json_object_set_new(f, "trainer_id", json_integer(o->trainer_id));
        json_object_set_new(f, "endpoint", json_string(o->endpoint));
        json_object_set_new(f, "collective_mode",
                            json_string(collective_name(o->collective_mode)));
        json_object_set_new(f, "nccl_comm_num", json_integer(o->nccl_comm_num));
        return f;
    }
    if (nccl2) {
        json_object_set_new(f, "trainers",
                            strings(o->trainer_endpoints.items, o->trainer_endpoints.n));
        json_object_set_new(f, "trainer_id", json_integer(o->trainer_id));
        json_object_set_new(f, "endpoint", o->endpoint ? json_string(o->endpoint) : json_null());
        json_object_set_new(f, "nccl_comm_num", json_integer(o->nccl_comm_num));
        json_object_set_new(f, "use_hierarchical_allreduce",
                            json_boolean(o->hierarchical_allreduce));
        json_object_set_new(f, "hierarchical_allreduce_inter_nranks",
                            json_integer(o->hierarchical_inter_nranks));
        return f;
    }
    json_object_set_new(f, "pservers", strings(o->pservers.items, o->pservers.n));
    json_object_set_new(f, "trainers", json_integer(o->trainers));
    json_object_set_new(f, "trainer_id", json_integer(o->trainer_id));
    json_object_set_new(f, "endpoint", o->endpoint ? json_string(o->endpoint) : json_null());
    /* GeoSgdTranspiler trains asynchronously whatever the flags said */
    json_object_set_new(f, "sync_mode", json_string(o->geo_push_nums ? "async"
                                                    : sync_name(o->sync_mode)));
    json_object_set_new(f, "slice_var_up", json_boolean(o->slice_var_up));
    json_object_set_new(f, "min_block_size", json_integer(o->min_block_size));
    json_object_set_new(f, "split_method", json_string(split_name(o->split_method)));
    json_object_set_new(f, "random_seed", json_integer((json_int_t)o->random_seed));
    json_object_set_new(f, "rpc_send_thread_num", json_integer(o->runtime.rpc_send_threads));
    json_object_set_new(f, "rpc_get_thread_num", json_integer(o->runtime.rpc_get_threads));
    json_object_set_new(f, "rpc_prefetch_thread_num",
                        json_integer(o->runtime.rpc_prefetch_threads));
    if (o->dc_asgd)   /* only when set, so older manifests stay as they were */
        json_object_set_new(f, "dc_asgd", json_true());
    if (o->lr_ops == PDT_LR_OPS_MOVE)     /* likewise */
        json_object_set_new(f, "lr_ops", json_string("move"));
    if (o->geo_push_nums)     /* likewise: the communicator's push_nums */
        json_object_set_new(f, "geo_push_nums", json_integer(o->geo_push_nums));
    return f;
}

static json_t *file_entry(const pdt_ctx *ctx, const char *role, const char *key, json_t *id,
                          const char *endpoint, const char *stem_fmt_main,
                          const char *stem_fmt_startup)
{
    json_t *o = json_object();
    json_object_set_new(o, "role", json_string(role));
    json_object_set_new(o, key, id);
    if (endpoint)
        json_object_set_new(o, "endpoint", json_string(endpoint));
    json_object_set_new(o, "main", json_string(tp_file_name(ctx, stem_fmt_main)));
    json_object_set_new(o, "startup", json_string(tp_file_name(ctx, stem_fmt_startup)));
    return o;
}

static json_t *one_trainer(const pdt_ctx *ctx, int id)
{
    return file_entry(ctx, "trainer", "trainer_id", json_integer(id), NULL,
                      ir_internf("trainer_%d", id), ir_internf("trainer_%d.startup", id));
}

/* This trainer's pair of files (every mode writes it last or alone), or
 * with --role=all every trainer's. */
static void add_trainers(json_t *files, const pdt_ctx *ctx)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    if (!o->every_trainer) {
        json_array_append_new(files, one_trainer(ctx, o->trainer_id));
        return;
    }
    for (int id = 0; id < o->trainers; id++)
        json_array_append_new(files, one_trainer(ctx, id));
}

/* JSON string text, escaped as jansson would.  The params list can hold
 * tens of thousands of slices; building a jansson object per slice costs
 * more than the rest of the transpile, so those lines are written here. */
void tp_json_string(GString *g, const char *s)
{
    g_string_append_c(g, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            g_string_append_c(g, '\\'), g_string_append_c(g, (char)*c);
        else if (*c < 0x20)
            g_string_append_printf(g, "\\u%04x", *c);
        else
            g_string_append_c(g, (char)*c);
    }
    g_string_append_c(g, '"');
}

static void shape_text(GString *g, const int64_t *dims, size_t n)
{
    g_string_append_c(g, '[');
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(g, "%s%lld", i ? ", " : "", (long long)dims[i]);
    g_string_append_c(g, ']');
}

/* A param's row of the "params" table (README.md, "The manifest"):
 * [name, dtype, shape, grad, grad_shape, grad_trainer_suffix, slices,
 * grad_sliced, flags].  A slice is [rows, pserver]; its name, shape,
 * offset and endpoint follow from the row (split_vars.c's make_slices
 * names and cuts them so), which keeps 10000 params to about 1 MB where
 * an object per slice took 4. */
static void param_row(GString *g, const tp_plan *st, const tp_pair *p)
{
    const ir_var *pv = p->param.var, *gv = p->grad.var;
    g_string_append_c(g, '[');
    tp_json_string(g, p->param.name);
    g_string_append_printf(g, ", \"%s\", ", dtype_name(pv->dtype));
    shape_text(g, pv->dims, pv->n_dims);
    g_string_append(g, ", ");
    tp_json_string(g, p->grad.name);
    g_string_append(g, ", ");
    /* grad_shape: null when it is the param's (always, in real programs) */
    if (gv && (gv->n_dims != pv->n_dims ||
               (pv->n_dims && memcmp(gv->dims, pv->dims, pv->n_dims * sizeof *pv->dims))))
        shape_text(g, gv->dims, gv->n_dims);
    else
        g_string_append(g, "null");
    /* A trainer sends grad slice NAME as NAME.trainer_<id> when true. */
    g_string_append(g, st->pl->trainer_suffix && !p->update_var ? ", true, [" : ", false, [");
    for (size_t k = 0; k < p->param.n_slices; k++) {
        const tp_slice *s = &p->param.slices[k];
        g_string_append_printf(g, "%s[%lld, %d]", k ? ", " : "",
                               (long long)(s->n_dims ? s->dims[0] : s->numel), p->ep[k]);
    }
    /* grad_sliced: GEO's grads stay on the trainer, uncut */
    g_string_append(g, p->grad.n_slices ? "], true, [" : "], false, [");
    /* flags: distribute_update_var, a param updated by backward ops (its
     * own grad); remote_prefetch, the seed's vars_overview vtype
     * "RemotePrefetch" (the trainer sends the grad, never receives the
     * param) */
    if (p->update_var)
        g_string_append(g, "\"distribute_update_var\"");
    if (p->remote)
        g_string_append(g, p->update_var ? ", \"remote_prefetch\"" : "\"remote_prefetch\"");
    g_string_append(g, "]]");
}

/* A small fixed-layout writer: top-level keys one per line, each list item
 * (file, pserver, param) one jansson-encoded line.  A launcher reads it as
 * JSON; a person reads it line by line; 10000 params stay a few MB. */
typedef struct {
    GString *out;
    bool first_key;
} mf;

static void mf_key(mf *m, const char *key)
{
    g_string_append_printf(m->out, "%s\n  \"%s\": ", m->first_key ? "" : ",", key);
    m->first_key = false;
}

static void mf_value(mf *m, json_t *v)
{
    char *s = json_dumps(v, JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    g_string_append(m->out, s);
    free(s);
    json_decref(v);
}

static void mf_list(mf *m, const char *key, json_t *items)
{
    mf_key(m, key);
    size_t n = json_array_size(items);
    g_string_append(m->out, n ? "[" : "[]");
    for (size_t i = 0; i < n; i++) {
        g_string_append(m->out, i ? ",\n    " : "\n    ");
        mf_value(m, json_incref(json_array_get(items, i)));
    }
    if (n)
        g_string_append(m->out, "\n  ]");
    json_decref(items);
}

static char *mf_end(mf *m)
{
    g_string_append(m->out, "\n}\n");
    /* The text itself, not a copy (4.7 MB at 100k ops, made while the
     * trainer is alive): whoever replaces or frees ctx->manifest_json
     * uses g_free. */
    return g_string_free(m->out, FALSE);
}

/* {names[i]: values[i], ...} in list order. */
static json_t *pairs_object(const pdt_list *names, const pdt_list *values)
{
    json_t *o = json_object();
    for (size_t i = 0; i < names->n && i < values->n; i++)
        json_object_set_new(o, names->items[i], json_string(values->items[i]));
    return o;
}

/* The command's description of the run: what went in, what ran on it. */
static void mf_run(mf *m, const pdt_run_info *run)
{
    json_t *inputs = json_array();
    for (size_t i = 0; i < run->input_paths.n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "role", json_string(run->input_roles.items[i]));
        json_object_set_new(o, "path", json_string(run->input_paths.items[i]));
        json_object_set_new(o, "sha256", json_string(run->input_sha256.items[i]));
        json_array_append_new(inputs, o);
    }
    mf_list(m, "inputs", inputs);
    json_t *pipeline = json_object();
    json_object_set_new(pipeline, "passes", strings(run->passes.items, run->passes.n));
    json_object_set_new(pipeline, "options", pairs_object(&run->option_names,
                                                          &run->option_values));
    mf_key(m, "pipeline");
    mf_value(m, pipeline);
    mf_key(m, "environment");
    mf_value(m, pairs_object(&run->env_names, &run->env_values));
}

static void mf_begin(mf *m, const pdt_ctx *ctx, const char *mode, const char *role)
{
    m->out = g_string_new("{");
    m->first_key = true;
    /* 2: params as a table, one row per param (1: an object per slice) */
    mf_key(m, "manifest_version");
    mf_value(m, json_integer(2));
    if (ctx->run) {
        mf_key(m, "pdtrans_version");
        mf_value(m, json_string(ctx->run->version));
    }
    mf_key(m, "mode");
    mf_value(m, json_string(mode));
    mf_key(m, "role");
    mf_value(m, json_string(role));
    if (ctx->run)
        mf_run(m, ctx->run);
}

/* --geo: GeoSgdTranspiler._get_vars_info(), what fleet hands the GEO
 * communicator: per param, in param order, its slices' names, their
 * dim-0 sizes and endpoints, and whether it is sparse, all as strings
 * the way Paddle writes them. */
static json_t *geo_vars_info(const tp_plan *st)
{
    json_t *info = json_object();
    for (size_t i = 0; i < st->pl->n_pairs; i++) {
        const tp_pair *p = &st->pl->pairs[i];
        json_t *names = json_array(), *sections = json_array(), *epmap = json_array();
        for (size_t k = 0; k < p->param.n_slices; k++) {
            const tp_slice *s = &p->param.slices[k];
            json_array_append_new(names, json_string(s->name));
            json_array_append_new(sections, json_string(ir_internf(
                "%lld", (long long)(s->n_dims ? s->dims[0] : 0))));
            json_array_append_new(epmap, json_string(st->pl->eps[p->ep[k]]));
        }
        json_t *v = json_object();
        json_object_set_new(v, "var_names", names);
        json_object_set_new(v, "sections", sections);
        json_object_set_new(v, "epmap", epmap);
        json_t *sparse = json_array();
        json_array_append_new(sparse, json_string(p->sparse_grad ? "True" : "False"));
        json_object_set_new(v, "is_sparse", sparse);
        json_object_set_new(info, p->param.name, v);
    }
    return info;
}

char *tp_manifest(tp_plan *st, const bool *pserver_written, bool trainer_written)
{
    const pdt_ctx *ctx = st->ctx;
    mf m;
    mf_begin(&m, ctx, "pserver", role_name(ctx->transpile.role));
    mf_key(&m, "distributed_mode");
    mf_value(&m, json_integer(st->pl->dist_mode));
    mf_key(&m, "flags");
    mf_value(&m, flags(ctx, false));

    json_t *files = json_array();
    if (trainer_written)
        add_trainers(files, ctx);
    for (size_t e = 0; e < st->pl->n_eps; e++)
        if (pserver_written[e])
            json_array_append_new(files, file_entry(ctx, "pserver", "pserver",
                                                    json_integer((json_int_t)e), st->pl->eps[e],
                                                    ir_internf("pserver_%zu", e),
                                                    ir_internf("pserver_%zu.startup", e)));
    mf_list(&m, "files", files);

    json_t *eps = json_array();
    for (size_t e = 0; e < st->pl->n_eps; e++) {
        json_t *o = json_object();
        json_object_set_new(o, "pserver", json_integer((json_int_t)e));
        json_object_set_new(o, "endpoint", json_string(st->pl->eps[e]));
        json_object_set_new(o, "slices", json_integer((json_int_t)st->pl->epl[e].n));
        json_object_set_new(o, "param_bytes", json_integer(st->pl->epl[e].bytes));
        json_array_append_new(eps, o);
    }
    mf_list(&m, "pservers", eps);

    mf_key(&m, "params_columns");
    g_string_append(m.out, "[\"name\", \"dtype\", \"shape\", \"grad\", \"grad_shape\", "
                    "\"grad_trainer_suffix\", \"slices\", \"grad_sliced\", \"flags\"]");
    mf_key(&m, "params");
    g_string_append(m.out, st->pl->n_pairs ? "[" : "[]");
    for (size_t i = 0; i < st->pl->n_pairs; i++) {
        g_string_append(m.out, i ? ",\n    " : "\n    ");
        param_row(m.out, st, &st->pl->pairs[i]);
    }
    if (st->pl->n_pairs)
        g_string_append(m.out, "\n  ]");
    if (st->pl->table) {
        mf_key(&m, "distributed_table");
        mf_value(&m, tp_table_json(st));
    }
    if (st->pl->geo && st->pl->stage >= TP_PLAN_SPLIT) {
        mf_key(&m, "vars_info");
        mf_value(&m, geo_vars_info(st));
    }
    return mf_end(&m);
}

char *tp_manifest_nccl2(pdt_ctx *ctx)
{
    mf m;
    mf_begin(&m, ctx, "nccl2", "trainer");
    mf_key(&m, "flags");
    mf_value(&m, flags(ctx, true));
    json_t *files = json_array();
    add_trainers(files, ctx);
    mf_list(&m, "files", files);
    return mf_end(&m);
}

/* single_process_multi_thread's settings are recorded, so that a run can
 * be repeated with options alone. */
char *tp_manifest_collective(pdt_ctx *ctx, const tp_spmt_env *spmt)
{
    mf m;
    mf_begin(&m, ctx, "collective", "trainer");
    mf_key(&m, "flags");
    json_t *f = flags(ctx, true);
    if (spmt) {
        json_object_set_new(f, "selected_gpus", json_integer(spmt->gpus));
        json_object_set_new(f, "fuse_allreduce", json_integer(spmt->fuse_allreduce));
        json_object_set_new(f, "loss_scale", json_integer(spmt->loss_scale));
    }
    mf_value(&m, f);
    json_t *files = json_array();
    add_trainers(files, ctx);
    mf_list(&m, "files", files);
    return mf_end(&m);
}

/* The job a set of outputs belongs to: what makes its programs what they
 * are, and nothing that tells one role or process of the job from another
 * (role, trainer id, this process's endpoint, input paths, environment).
 * Keys sorted, compact, SHA-256 of it in hex. */
char *tp_job_id(const pdt_ctx *ctx)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    json_t *job = json_object();
    json_t *f = flags(ctx, o->mode != PDT_MODE_PSERVER);
    json_object_del(f, "trainer_id");
    json_object_del(f, "endpoint");
    json_object_set_new(job, "flags", f);
    json_object_set_new(job, "mode", json_string(o->mode == PDT_MODE_PSERVER ? "pserver"
                                                 : o->mode == PDT_MODE_NCCL2 ? "nccl2"
                                                                             : "collective"));
    json_object_set_new(job, "format", json_string(ctx->settings.text_output ? "pbtxt" : "pb"));
    const pdt_run_info *run = ctx->run;
    if (run) {
        json_t *inputs = json_object();
        for (size_t i = 0; i < run->input_roles.n && i < run->input_sha256.n; i++)
            json_object_set_new(inputs, run->input_roles.items[i],
                                json_string(run->input_sha256.items[i]));
        json_object_set_new(job, "inputs", inputs);
        json_object_set_new(job, "passes", strings(run->passes.items, run->passes.n));
        json_object_set_new(job, "options", pairs_object(&run->option_names,
                                                         &run->option_values));
    }
    char *text = json_dumps(job, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(job);
    struct sha256_ctx c;
    uint8_t md[SHA256_DIGEST_SIZE];
    sha256_init(&c);
    sha256_update(&c, strlen(text), (const uint8_t *)text);
    sha256_digest(&c, sizeof md, md);
    free(text);
    char *hex = xmalloc(2 * sizeof md + 1);
    for (size_t i = 0; i < sizeof md; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return hex;
}
