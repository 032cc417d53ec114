/* verify_geo.c - `verify transpile` of a --geo job: what the GEO
 * communicator is given (manifest.json's vars_info and flags.geo_push_nums,
 * as fleet hands GeoSgdTranspiler._get_vars_info() to it) into the
 * simulated cluster (src/exec/dist_geo.c). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../exec/dist.h"
#include "../ir/util.h"
#include "cli.h"

static bool strings_of(json_t *v, const char *key, size_t n, const char **out)
{
    json_t *a = json_object_get(v, key);
    if (!json_is_array(a) || json_array_size(a) != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (!s)
            return false;
        out[i] = ir_intern(s);
    }
    return true;
}

static bool one_var(const char *name, json_t *v, ex_geo_var *gv)
{
    json_t *names = json_object_get(v, "var_names");
    size_t n = json_is_array(names) ? json_array_size(names) : 0;
    gv->name = ir_intern(name);
    gv->n_slices = n;
    gv->slices = xcalloc(n + 1, sizeof *gv->slices);
    gv->eps = xcalloc(n + 1, sizeof *gv->eps);
    gv->sections = xcalloc(n + 1, sizeof *gv->sections);
    const char **secs = xcalloc(n + 1, sizeof *secs), *sparse[1] = {NULL};
    bool ok = n && strings_of(v, "var_names", n, gv->slices) && strings_of(v, "epmap", n, gv->eps) &&
              strings_of(v, "sections", n, secs) && strings_of(v, "is_sparse", 1, sparse);
    for (size_t i = 0; ok && i < n; i++) {
        char *end = NULL;
        gv->sections[i] = strtoll(secs[i], &end, 10);
        ok = end && !*end && gv->sections[i] > 0;
    }
    free(secs);
    gv->sparse = ok && !strcmp(sparse[0], "True");
    return ok;
}

bool cli_verify_geo_info(json_t *m, ex_cluster *c)
{
    json_t *info = json_object_get(m, "vars_info");
    json_int_t push = json_integer_value(json_object_get(json_object_get(m, "flags"),
                                                         "geo_push_nums"));
    if (!json_is_object(info) || push < 1 || push > 0x7fffffff) {
        pdt_error("verify: the transpile's manifest.json has no GEO vars_info or geo_push_nums");
        return false;
    }
    c->geo_push_nums = (int)push;
    c->geo_vars = xcalloc(json_object_size(info) + 1, sizeof *c->geo_vars);
    const char *name;
    json_t *v;
    json_object_foreach(info, name, v) {
        if (!one_var(name, v, &c->geo_vars[c->n_geo_vars++])) {
            pdt_error("verify: manifest.json: vars_info of '%s' is not what --geo writes", name);
            return false;
        }
    }
    return true;
}
