/* transpile_manifest.c - manifest.json: what was written, where every slice
 * lives, and the flags used.  Keys come in a fixed order and nothing in it
 * depends on the clock, so two identical runs write identical manifests. */
#include <glib.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "transpile.h"

const char *tp_file_name(const char *stem)
{
    return ir_internf("%s%s", stem, tp_text_output ? ".pbtxt" : ".pb");
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

static json_t *shape(const int64_t *dims, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(dims[i]));
    return a;
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

static json_t *flags(const pdt_ctx *ctx, bool nccl2)
{
    json_t *f = json_object();
    if (nccl2) {
        json_object_set_new(f, "trainers", strings(ctx->trainer_endpoints.items,
                                                   ctx->trainer_endpoints.n));
        json_object_set_new(f, "trainer_id", json_integer(ctx->trainer_id));
        json_object_set_new(f, "endpoint", ctx->endpoint ? json_string(ctx->endpoint) : json_null());
        return f;
    }
    json_object_set_new(f, "pservers", strings(ctx->pservers.items, ctx->pservers.n));
    json_object_set_new(f, "trainers", json_integer(ctx->trainers));
    json_object_set_new(f, "trainer_id", json_integer(ctx->trainer_id));
    json_object_set_new(f, "endpoint", ctx->endpoint ? json_string(ctx->endpoint) : json_null());
    json_object_set_new(f, "sync_mode", json_string(sync_name(ctx->sync_mode)));
    json_object_set_new(f, "slice_var_up", json_boolean(ctx->slice_var_up));
    json_object_set_new(f, "min_block_size", json_integer(ctx->min_block_size));
    json_object_set_new(f, "split_method", json_string(split_name(ctx->split_method)));
    json_object_set_new(f, "random_seed", json_integer((json_int_t)ctx->random_seed));
    return f;
}

static json_t *file_entry(const char *role, const char *key, json_t *id, const char *endpoint,
                          const char *stem_fmt_main, const char *stem_fmt_startup)
{
    json_t *o = json_object();
    json_object_set_new(o, "role", json_string(role));
    json_object_set_new(o, key, id);
    if (endpoint)
        json_object_set_new(o, "endpoint", json_string(endpoint));
    json_object_set_new(o, "main", json_string(tp_file_name(stem_fmt_main)));
    json_object_set_new(o, "startup", json_string(tp_file_name(stem_fmt_startup)));
    return o;
}

static json_t *slices(const tp_state *st, const tp_pair *p, bool grad)
{
    const tp_dvar *d = grad ? &p->grad : &p->param;
    json_t *a = json_array();
    for (size_t k = 0; k < d->n_slices; k++) {
        const tp_slice *s = &d->slices[k];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(grad ? s->merged : s->name));
        json_object_set_new(o, "shape", shape(s->dims, s->n_dims));
        json_object_set_new(o, "offset", json_integer(s->offset));
        json_object_set_new(o, "pserver", json_integer(p->ep[k]));
        json_object_set_new(o, "endpoint", json_string(st->eps[p->ep[k]]));
        json_array_append_new(a, o);
    }
    return a;
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
    /* pdt_ctx_free releases the manifest with free(). */
    char *out = strdup(m->out->str);
    g_string_free(m->out, TRUE);
    return out;
}

static void mf_begin(mf *m, const char *mode, const char *role)
{
    m->out = g_string_new("{");
    m->first_key = true;
    mf_key(m, "manifest_version");
    mf_value(m, json_integer(1));
    mf_key(m, "mode");
    mf_value(m, json_string(mode));
    mf_key(m, "role");
    mf_value(m, json_string(role));
}

char *tp_manifest(tp_state *st, const bool *pserver_written, bool trainer_written)
{
    const pdt_ctx *ctx = st->ctx;
    mf m;
    mf_begin(&m, "pserver", role_name(ctx->role));
    mf_key(&m, "distributed_mode");
    mf_value(&m, json_integer(st->dist_mode));
    mf_key(&m, "flags");
    mf_value(&m, flags(ctx, false));

    json_t *files = json_array();
    if (trainer_written)
        json_array_append_new(files, file_entry("trainer", "trainer_id",
                                                json_integer(ctx->trainer_id), NULL,
                                                ir_internf("trainer_%d", ctx->trainer_id),
                                                ir_internf("trainer_%d.startup", ctx->trainer_id)));
    for (size_t e = 0; e < st->n_eps; e++)
        if (pserver_written[e])
            json_array_append_new(files, file_entry("pserver", "pserver",
                                                    json_integer((json_int_t)e), st->eps[e],
                                                    ir_internf("pserver_%zu", e),
                                                    ir_internf("pserver_%zu.startup", e)));
    mf_list(&m, "files", files);

    json_t *eps = json_array();
    for (size_t e = 0; e < st->n_eps; e++) {
        json_t *o = json_object();
        json_object_set_new(o, "pserver", json_integer((json_int_t)e));
        json_object_set_new(o, "endpoint", json_string(st->eps[e]));
        json_object_set_new(o, "slices", json_integer((json_int_t)st->epl[e].n));
        json_object_set_new(o, "param_bytes", json_integer(st->epl[e].bytes));
        json_array_append_new(eps, o);
    }
    mf_list(&m, "pservers", eps);

    json_t *params = json_array();
    for (size_t i = 0; i < st->n_pairs; i++) {
        const tp_pair *p = &st->pairs[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(p->param.name));
        json_object_set_new(o, "dtype", json_string(dtype_name(p->param.var->dtype)));
        json_object_set_new(o, "shape", shape(p->param.var->dims, p->param.var->n_dims));
        json_object_set_new(o, "slices", slices(st, p, false));
        json_object_set_new(o, "grad", json_string(p->grad.name));
        /* A trainer sends grad slice NAME as NAME.trainer_<id> when true. */
        json_object_set_new(o, "grad_trainer_suffix", json_boolean(st->trainer_suffix));
        json_object_set_new(o, "grad_slices", slices(st, p, true));
        json_array_append_new(params, o);
    }
    mf_list(&m, "params", params);
    return mf_end(&m);
}

char *tp_manifest_nccl2(pdt_ctx *ctx)
{
    mf m;
    mf_begin(&m, "nccl2", "trainer");
    mf_key(&m, "flags");
    mf_value(&m, flags(ctx, true));
    json_t *files = json_array();
    json_array_append_new(files, file_entry("trainer", "trainer_id", json_integer(ctx->trainer_id),
                                            NULL, ir_internf("trainer_%d", ctx->trainer_id),
                                            ir_internf("trainer_%d.startup", ctx->trainer_id)));
    mf_list(&m, "files", files);
    return mf_end(&m);
}
