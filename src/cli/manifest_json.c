/* manifest_json.c - manifest.json: the job's manifest (src/job/manifest.h)
 * as JSON, with the command's description of the run (pdtrans version,
 * inputs and their SHA-256, the passes and options, the environment values
 * taken); the job id; and the reading back of what `verify job` needs.
 * Keys come in a fixed order and nothing in it depends on the clock or the
 * host, so two identical runs write identical manifests. */
#include <glib.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "../passes/transpile/placement.h"
#include "cli.h"

static json_t *strings(const char *const *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(s[i]));
    return a;
}

static json_t *flag_value(const pdt_manifest_flag *f)
{
    switch (f->kind) {
    case PDT_MF_BOOL: return json_boolean(f->i);
    case PDT_MF_INT: return json_integer((json_int_t)f->i);
    case PDT_MF_STRING: return json_string(f->s);
    case PDT_MF_STRINGS: return strings(f->list, f->n);
    case PDT_MF_NULL: break;
    }
    return json_null();
}

static json_t *flags(const pdt_manifest *m)
{
    json_t *o = json_object();
    for (size_t i = 0; i < m->n_flags; i++)
        json_object_set_new(o, m->flags[i].key, flag_value(&m->flags[i]));
    return o;
}

/* JSON string text, escaped as jansson would.  The params list can hold
 * tens of thousands of slices; building a jansson object per slice costs
 * more than the rest of the transpile, so those lines are written here. */
void cli_json_string(GString *g, const char *s)
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
 * grad_sliced, flags].  A slice is [rows, pserver], which keeps 10000
 * params to about 1 MB where an object per slice took 4. */
static void param_row(GString *g, const pdt_manifest_param *p)
{
    g_string_append_c(g, '[');
    cli_json_string(g, p->name);
    g_string_append_printf(g, ", \"%s\", ", p->dtype);
    shape_text(g, p->shape, p->n_shape);
    g_string_append(g, ", ");
    cli_json_string(g, p->grad);
    g_string_append(g, ", ");
    if (p->grad_shape)
        shape_text(g, p->grad_shape, p->n_grad_shape);
    else
        g_string_append(g, "null");
    g_string_append(g, p->grad_trainer_suffix ? ", true, [" : ", false, [");
    for (size_t k = 0; k < p->n_slices; k++)
        g_string_append_printf(g, "%s[%lld, %zu]", k ? ", " : "",
                               (long long)p->slices[k].rows, p->slices[k].pserver);
    g_string_append(g, p->grad_sliced ? "], true, [" : "], false, [");
    if (p->distribute_update_var)
        g_string_append(g, "\"distribute_update_var\"");
    if (p->remote_prefetch)
        g_string_append(g, p->distribute_update_var ? ", \"remote_prefetch\""
                                                    : "\"remote_prefetch\"");
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

static json_t *files(const pdt_manifest *m)
{
    json_t *a = json_array();
    for (size_t i = 0; i < m->n_files; i++) {
        const pdt_manifest_file *f = &m->files[i];
        json_t *o = json_object();
        json_object_set_new(o, "role", json_string(f->role));
        json_object_set_new(o, f->id_key, json_integer((json_int_t)f->id));
        if (f->endpoint)
            json_object_set_new(o, "endpoint", json_string(f->endpoint));
        json_object_set_new(o, "main", json_string(f->main));
        json_object_set_new(o, "startup", json_string(f->startup));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *dims_json(const int64_t *d, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer(d[i]));
    return a;
}

static json_t *table(const pdt_manifest_table *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "shape", dims_json(t->shape, t->n_shape));
    json_object_set_new(o, "pserver_shape", dims_json(t->pserver_shape, t->n_shape));
    json_object_set_new(o, "grad", json_string(t->grad));
    json_object_set_new(o, "trainer_grads", strings(t->trainer_grads, t->n_trainer_grads));
    return o;
}

/* --geo: GeoSgdTranspiler._get_vars_info(), what fleet hands the GEO
 * communicator: per param, in param order, its slices' names, their
 * dim-0 sizes and endpoints, and whether it is sparse, all as strings
 * the way Paddle writes them. */
static json_t *geo_vars_info(const pdt_manifest *m)
{
    json_t *info = json_object();
    for (size_t i = 0; i < m->n_params; i++) {
        const pdt_manifest_param *p = &m->params[i];
        json_t *names = json_array(), *sections = json_array(), *epmap = json_array();
        for (size_t k = 0; k < p->n_slices; k++) {
            const pdt_manifest_slice *s = &p->slices[k];
            json_array_append_new(names, json_string(s->name));
            json_array_append_new(sections,
                                  json_string(ir_internf("%lld", (long long)s->section)));
            json_array_append_new(epmap, json_string(m->pservers[s->pserver].endpoint));
        }
        json_t *v = json_object();
        json_object_set_new(v, "var_names", names);
        json_object_set_new(v, "sections", sections);
        json_object_set_new(v, "epmap", epmap);
        json_t *sparse = json_array();
        json_array_append_new(sparse, json_string(p->sparse ? "True" : "False"));
        json_object_set_new(v, "is_sparse", sparse);
        json_object_set_new(info, p->name, v);
    }
    return info;
}

/* Where every slice lives: --mode=pserver's pservers, params and table. */
static void mf_placement(mf *w, const pdt_manifest *m)
{
    json_t *eps = json_array();
    for (size_t e = 0; e < m->n_pservers; e++) {
        json_t *o = json_object();
        json_object_set_new(o, "pserver", json_integer((json_int_t)e));
        json_object_set_new(o, "endpoint", json_string(m->pservers[e].endpoint));
        json_object_set_new(o, "slices", json_integer(m->pservers[e].slices));
        json_object_set_new(o, "param_bytes", json_integer(m->pservers[e].param_bytes));
        json_array_append_new(eps, o);
    }
    mf_list(w, "pservers", eps);
    mf_key(w, "params_columns");
    g_string_append(w->out, "[\"name\", \"dtype\", \"shape\", \"grad\", \"grad_shape\", "
                    "\"grad_trainer_suffix\", \"slices\", \"grad_sliced\", \"flags\"]");
    mf_key(w, "params");
    g_string_append(w->out, m->n_params ? "[" : "[]");
    for (size_t i = 0; i < m->n_params; i++) {
        g_string_append(w->out, i ? ",\n    " : "\n    ");
        param_row(w->out, &m->params[i]);
    }
    if (m->n_params)
        g_string_append(w->out, "\n  ]");
    if (m->table) {
        mf_key(w, "distributed_table");
        mf_value(w, table(m->table));
    }
    if (m->vars_info) {
        mf_key(w, "vars_info");
        mf_value(w, geo_vars_info(m));
    }
}

char *cli_manifest_json(const pdt_manifest *m, const pdt_run_info *run)
{
    mf w = {g_string_new("{"), true};
    /* 2: params as a table, one row per param (1: an object per slice) */
    mf_key(&w, "manifest_version");
    mf_value(&w, json_integer(2));
    if (run) {
        mf_key(&w, "pdtrans_version");
        mf_value(&w, json_string(run->version));
    }
    mf_key(&w, "mode");
    mf_value(&w, json_string(m->mode));
    mf_key(&w, "role");
    mf_value(&w, json_string(m->role));
    if (run)
        mf_run(&w, run);
    if (m->placement) {
        mf_key(&w, "distributed_mode");
        mf_value(&w, json_integer(m->distributed_mode));
    }
    mf_key(&w, "flags");
    mf_value(&w, flags(m));
    mf_list(&w, "files", files(m));
    if (m->placement)
        mf_placement(&w, m);
    g_string_append(w.out, "\n}\n");
    return g_string_free(w.out, FALSE);
}

/* The job a set of outputs belongs to: what makes its programs what they
 * are, and nothing that tells one role or process of the job from another
 * (role, trainer id, this process's endpoint, input paths, environment).
 * Keys sorted, compact, SHA-256 of it in hex. */
char *cli_job_id(const pdt_ctx *ctx)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    pdt_manifest *m = pdt_manifest_new(NULL, NULL);
    tp_manifest_flags(m, ctx, o->mode != PDT_MODE_PSERVER);
    pdt_manifest_drop_flag(m, "trainer_id");
    pdt_manifest_drop_flag(m, "endpoint");
    json_t *job = json_object();
    json_object_set_new(job, "flags", flags(m));
    pdt_manifest_free(m);
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

/* ---- reading manifest.json back (verify job) ---- */

static void parse_flag(pdt_manifest *m, const char *key, json_t *v)
{
    if (json_is_boolean(v)) {
        pdt_manifest_flag_bool(m, key, json_is_true(v));
    } else if (json_is_integer(v)) {
        pdt_manifest_flag_int(m, key, (long long)json_integer_value(v));
    } else if (json_is_string(v)) {
        pdt_manifest_flag_str(m, key, json_string_value(v));
    } else if (json_is_array(v)) {
        size_t n = json_array_size(v);
        const char **s = xcalloc(n + 1, sizeof *s);
        for (size_t i = 0; i < n; i++)
            s[i] = json_string_value(json_array_get(v, i)) ? json_string_value(
                       json_array_get(v, i)) : "";
        pdt_manifest_flag_strs(m, key, s, n);
        free(s);
    } else {
        pdt_manifest_flag_str(m, key, NULL);
    }
}

static const char *jstr(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* One entry of "files": its id is under "trainer_id" or "pserver". */
static void parse_file(pdt_manifest *m, json_t *e)
{
    const char *role = jstr(e, "role");
    bool tr = role && !strcmp(role, "trainer");
    const char *key = tr ? "trainer_id" : "pserver";
    json_t *id = json_object_get(e, key);
    pdt_manifest_file f = {role, key, (long long)json_integer_value(id),
                           jstr(e, "endpoint"), jstr(e, "main"), jstr(e, "startup")};
    pdt_manifest_add_file(m, &f);
}

pdt_manifest *cli_manifest_parse(json_t *j)
{
    pdt_manifest *m = pdt_manifest_new(jstr(j, "mode"), jstr(j, "role"));
    json_t *dm = json_object_get(j, "distributed_mode");
    m->placement = json_is_integer(dm);
    m->distributed_mode = (int)json_integer_value(dm);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(j, "flags"), key, v)
        parse_flag(m, key, v);
    size_t i;
    json_array_foreach(json_object_get(j, "files"), i, v)
        parse_file(m, v);
    return m;
}
