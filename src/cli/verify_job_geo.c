/* verify_job_geo.c - what `verify job` and `verify transpile --symbolic`
 * hand src/sym/geo.c for a GEO job: the communicator's vars_info (per
 * param its split vars, their sections and endpoints, is_sparse) and
 * flags.geo_push_nums.  `verify job` reads them from manifest.json's
 * "vars_info" (the form GeoSgdTranspiler._get_vars_info() has, strings
 * throughout), `--symbolic` from the in-memory manifest's params table,
 * which is what transpile writes vars_info from. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../ckd.h"
#include "../diag.h"
#include "../ir/util.h"
#include "../sym/sym.h"
#include "cli.h"

struct cli_sym_geo {
    GArray *vars;                       /* sym_geo_var; strings interned */
    GPtrArray *mem;                     /* the slices', eps' and sections' arrays */
    long push_nums;
};

static cli_sym_geo *geo_new(void)
{
    cli_sym_geo *g = xcalloc(1, sizeof *g);
    g->vars = g_array_new(FALSE, TRUE, sizeof(sym_geo_var));
    g->mem = g_ptr_array_new_with_free_func(free);
    return g;
}

void cli_sym_geo_free(cli_sym_geo *g)
{
    if (!g)
        return;
    g_array_free(g->vars, TRUE);
    g_ptr_array_free(g->mem, TRUE);
    free(g);
}

static sym_geo_var *add_var(cli_sym_geo *g, const char *name, size_t n)
{
    sym_geo_var v = {.name = ir_intern(name), .n_slices = n};
    v.slices = xcalloc(n + 1, sizeof *v.slices);
    v.eps = xcalloc(n + 1, sizeof *v.eps);
    int64_t *sec = xcalloc(n + 1, sizeof *sec);
    v.sections = sec;
    g_ptr_array_add(g->mem, v.slices);
    g_ptr_array_add(g->mem, v.eps);
    g_ptr_array_add(g->mem, sec);
    g_array_append_val(g->vars, v);
    return &g_array_index(g->vars, sym_geo_var, g->vars->len - 1);
}

static const char *nth_str(json_t *o, const char *key, size_t k)
{
    return json_string_value(json_array_get(json_object_get(o, key), k));
}

/* One param of vars_info: four lists of strings, as Paddle writes them. */
static bool json_var(cli_sym_geo *g, const char *where, const char *name, json_t *o)
{
    size_t n = json_array_size(json_object_get(o, "var_names"));
    bool ok = n > 0 && json_array_size(json_object_get(o, "sections")) == n &&
              json_array_size(json_object_get(o, "epmap")) == n;
    const char *sp = nth_str(o, "is_sparse", 0);
    ok = ok && sp && (!strcmp(sp, "True") || !strcmp(sp, "False"));
    sym_geo_var *v = ok ? add_var(g, name, n) : NULL;
    int64_t sum = 0;
    for (size_t k = 0; ok && k < n; k++) {
        const char *s = nth_str(o, "var_names", k), *e = nth_str(o, "epmap", k);
        const char *sec = nth_str(o, "sections", k);
        char *end = NULL;
        errno = 0;
        long long rows = sec ? strtoll(sec, &end, 10) : -1;
        ok = s && e && sec && *sec && !*end && rows > 0;
        /* strtoll clamps to LLONG_MAX, and geo.c sums and slices by these
         * rows in int64: a section or a total past int64 is refused here */
        if (ok && (errno == ERANGE || ckd_add_i64(&sum, sum, rows))) {
            pdt_error("%s: vars_info of '%s': section %zu ('%s', %s) %s", where, name, k, s, sec,
                      errno == ERANGE ? "is not a row count int64 holds"
                                      : "makes the sections add up past int64");
            return false;
        }
        if (ok) {
            ((const char **)v->slices)[k] = ir_intern(s);
            ((const char **)v->eps)[k] = ir_intern(e);
            ((int64_t *)v->sections)[k] = rows;
        }
    }
    if (v)
        v->sparse = !strcmp(sp, "True");
    if (!ok)
        pdt_error("%s: the manifest's vars_info of '%s' is not what GeoSgdTranspiler writes "
                  "(var_names, sections, epmap of one length; is_sparse [\"True\"] or "
                  "[\"False\"])", where, name);
    return ok;
}

bool cli_sym_geo_json(cli_sym_geo **gp, const char *where, json_t *manifest)
{
    json_t *info = json_object_get(manifest, "vars_info");
    if (!info)
        return true;
    if (!*gp)
        *gp = geo_new();
    if (!json_is_object(info)) {
        pdt_error("%s: the manifest's vars_info is not an object", where);
        return false;
    }
    /* the same params again (manifest.ROLE.json of one job): keep the first */
    if ((*gp)->vars->len)
        return true;
    const char *key;
    json_t *v;
    json_object_foreach(info, key, v)
        if (!json_var(*gp, where, key, v))
            return false;
    return true;
}

bool cli_sym_geo_manifest(cli_sym_geo **gp, const char *where, const pdt_manifest *m)
{
    const pdt_manifest_flag *f = pdt_manifest_get_flag(m, "geo_push_nums");
    if (f && f->kind == PDT_MF_INT) {
        if (!*gp)
            *gp = geo_new();
        (*gp)->push_nums = (long)f->i;
    }
    if (!m->vars_info || (*gp && (*gp)->vars->len))
        return true;
    if (!*gp)
        *gp = geo_new();
    for (size_t i = 0; i < m->n_params; i++) {
        const pdt_manifest_param *p = &m->params[i];
        sym_geo_var *v = add_var(*gp, p->name, p->n_slices);
        v->sparse = p->sparse;
        for (size_t k = 0; k < p->n_slices; k++) {
            const pdt_manifest_slice *s = &p->slices[k];
            if (s->pserver >= m->n_pservers) {
                pdt_error("%s: the manifest places '%s' on pserver %zu of %zu", where, s->name,
                          s->pserver, m->n_pservers);
                return false;
            }
            ((const char **)v->slices)[k] = ir_intern(s->name);
            ((const char **)v->eps)[k] = ir_intern(m->pservers[s->pserver].endpoint);
            ((int64_t *)v->sections)[k] = s->section;
        }
    }
    return true;
}

void cli_sym_geo_fill(const cli_sym_geo *g, const sym_geo_var **vars, size_t *n, long *push)
{
    if (!g)
        return;
    *vars = (const sym_geo_var *)g->vars->data;
    *n = g->vars->len;
    *push = g->push_nums;
}
