/* verify_geo.c - `verify transpile` of a --geo job: what the GEO
 * communicator is given (manifest.json's vars_info and flags.geo_push_nums,
 * as fleet hands GeoSgdTranspiler._get_vars_info() to it), taken from the
 * job's manifest in memory (the params' slices), into the simulated
 * cluster (src/exec/dist_geo.c). */
#include <stdlib.h>
#include <string.h>

#include "../diag.h"
#include "../exec/dist.h"
#include "../ir/util.h"
#include "cli.h"

static bool one_var(const pdt_manifest *m, const pdt_manifest_param *p, ex_geo_var *gv)
{
    size_t n = p->n_slices;
    gv->name = ir_intern(p->name);
    gv->n_slices = n;
    gv->slices = xcalloc(n + 1, sizeof *gv->slices);
    gv->eps = xcalloc(n + 1, sizeof *gv->eps);
    gv->sections = xcalloc(n + 1, sizeof *gv->sections);
    bool ok = n > 0;
    for (size_t i = 0; ok && i < n; i++) {
        const pdt_manifest_slice *s = &p->slices[i];
        ok = s->pserver < m->n_pservers && s->section > 0;
        if (ok) {
            gv->slices[i] = ir_intern(s->name);
            gv->eps[i] = ir_intern(m->pservers[s->pserver].endpoint);
            gv->sections[i] = s->section;
        }
    }
    gv->sparse = ok && p->sparse;
    return ok;
}

bool cli_verify_geo_info(const pdt_manifest *m, ex_cluster *c)
{
    const pdt_manifest_flag *f = pdt_manifest_get_flag(m, "geo_push_nums");
    long long push = f && f->kind == PDT_MF_INT ? f->i : 0;
    if (!m->vars_info || push < 1 || push > 0x7fffffff) {
        pdt_error("verify: the transpile's manifest has no GEO vars_info or geo_push_nums");
        return false;
    }
    c->geo_push_nums = (int)push;
    c->geo_vars = xcalloc(m->n_params + 1, sizeof *c->geo_vars);
    for (size_t i = 0; i < m->n_params; i++) {
        if (!one_var(m, &m->params[i], &c->geo_vars[c->n_geo_vars++])) {
            pdt_error("verify: the manifest's vars_info of '%s' is not what --geo writes",
                      m->params[i].name);
            return false;
        }
    }
    return true;
}
