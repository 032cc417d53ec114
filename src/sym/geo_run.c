/* geo_run.c - a GEO job's steps (geo.h): the trainers run their whole
 * main programs, each pushing at its main program's `send`; then every
 * trainer pulls.  The reference does the same on views that run all of
 * MAIN; then trainers, views, pservers and the reference's server values
 * are compared. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "geo.h"

static long var_index(const sym_geo *g, const char *name)
{
    for (size_t v = 0; v < g->n; v++)
        if (!strcmp(g->vars[v].name, name))
            return (long)v;
    return -1;
}

/* The value a pserver holds of var s (its initial value if nothing wrote it). */
static sym_term *ps_value(sym_job *j, const char *ep, const char *s, int64_t rows)
{
    sym_proc *ps = sym_pserver_at(j, ep);
    sym_term *t = ps ? pmap_get(&ps->vals, s) : NULL;
    if (!t)
        t = ps ? sym_read(&j->c, ps, ir_program_block(ps->main, 0), s)
               : sym_leaf(j->c.st, ir_internf("unset:%s", s), rows);
    if (t->rows < 0)
        t->rows = rows;
    return t;
}

/* What the pservers hold of var v, reassembled by vars_info. */
static sym_term *pulled(sym_job *j, const sym_geo_var *gv)
{
    sym_term **parts = xcalloc(gv->n_slices + 1, sizeof *parts);
    for (size_t k = 0; k < gv->n_slices; k++)
        parts[k] = ps_value(j, gv->eps[k], gv->slices[k], gv->sections[k]);
    sym_term *t = gv->n_slices == 1 ? parts[0]
                                    : sym_concat(j->c.st, parts, (uint32_t)gv->n_slices);
    free(parts);
    return t;
}

/* The reference's server value of var v: its slices put together. */
static sym_term *server_of(sym_job *j, const sym_geo_var *gv)
{
    sym_term **parts = xcalloc(gv->n_slices + 1, sizeof *parts);
    for (size_t k = 0; k < gv->n_slices; k++)
        parts[k] = pmap_get(&j->geo->server, gv->slices[k]);
    sym_term *t = gv->n_slices == 1 ? parts[0]
                                    : sym_concat(j->c.st, parts, (uint32_t)gv->n_slices);
    free(parts);
    return t;
}

/* Each slice of the reference's server value adds its rows of delta d. */
static void server_add(sym_job *j, const sym_geo_var *gv, sym_term *d)
{
    int64_t off = 0;
    for (size_t k = 0; k < gv->n_slices; k++) {
        sym_term *part = gv->n_slices == 1 ? d : sym_slice(j->c.st, d, off, gv->sections[k]);
        off += gv->sections[k];
        sym_term *x[2] = {pmap_get(&j->geo->server, gv->slices[k]), part};
        pmap_put(&j->geo->server, gv->slices[k], sym_sum(j->c.st, x, 2));
    }
}

static int param_init(sym_job *j, sym_proc *p, ir_program *prog, int block)
{
    sym_geo *g = j->geo;
    ir_block *b = ir_program_block(prog, block);
    for (size_t v = 0; v < g->n; v++)
        pmap_put(&g->old[p->trainer], g->vars[v].name,
                 sym_read(&j->c, p, b, g->vars[v].name));
    g->inited[p->trainer] = true;
    return 1;
}

/* The send's ids into the trainer's sets, by send_varnames. */
static int record_ids(sym_job *j, sym_proc *p, const char *label, int block, size_t i,
                      ir_op *op, const char **vn, size_t nv)
{
    sym_geo *g = j->geo;
    const ir_slot *x = ir_op_input(op, "X");
    ir_block *b = ir_program_block(p->main, block);
    if ((x ? x->n_args : 0) != nv) {
        sym_fail(&j->c, label, block, i, op, "sends %u ids vars but %zu send_varnames",
                 x ? x->n_args : 0, nv);
        return -1;
    }
    for (size_t k = 0; k < nv; k++) {
        long v = var_index(g, vn[k]);
        if (v < 0 || !g->vars[v].sparse) {
            sym_fail(&j->c, label, block, i, op, "sends ids for '%s', which vars_info does not "
                     "list as a sparse param", vn[k]);
            return -1;
        }
        sym_geo_add_ids(g->ids[(size_t)p->trainer * g->n + (size_t)v],
                        sym_read(&j->c, p, b, x->args[k]));
    }
    return 1;
}

/* Each slice of delta d of var v to its pserver, whose block adds it in. */
static bool deliver(sym_job *j, const sym_geo_var *gv, sym_term *d, const sym_site *site)
{
    int64_t off = 0;
    for (size_t k = 0; k < gv->n_slices; k++) {
        sym_term *part = gv->n_slices == 1 ? d : sym_slice(j->c.st, d, off, gv->sections[k]);
        off += gv->sections[k];
        sym_proc *ps = sym_pserver_at(j, gv->eps[k]);
        const char *w = ir_internf("%s.delta", gv->slices[k]);
        int blk = ps ? sym_geo_delta_block(ps, w) : -1;
        if (blk < 0)        /* a structural difference, reported on the param's line */
            continue;
        sym_write(ps, w, part, site);
        bool ok = sym_run_block(&j->c, ps, ps->main, ps->label, blk);
        sym_store_set_site(j->c.st, NULL);
        if (!ok)
            return false;
    }
    return true;
}

/* The push at trainer p's main `send`: each var's delta from its old copy. */
static int push(sym_job *j, sym_proc *p, int block, size_t i, ir_op *op, const char **vn,
                size_t nv)
{
    sym_geo *g = j->geo;
    size_t t = (size_t)p->trainer;
    if (!g->inited[t]) {
        sym_fail(&j->c, p->label, block, i, op, "pushes, but %s sent no 'param_init' (the GEO "
                 "communicator has no old copy)", p->startup_label ? p->startup_label : "no startup");
        return -1;
    }
    if (record_ids(j, p, p->label, block, i, op, vn, nv) < 0)
        return -1;
    const sym_site *site = sym_site_make(j->c.st, p->label, block, (int)i, op);
    g->push_site[t] = site;
    sym_store_set_site(j->c.st, site);      /* the deltas are the send's */
    ir_block *b = ir_program_block(p->main, 0);
    for (size_t v = 0; v < g->n; v++) {
        const sym_geo_var *gv = &g->vars[v];
        GPtrArray *ids = g->ids[t * g->n + v];
        if (gv->sparse && !ids->len)
            continue;
        sym_term *old = pmap_get(&g->old[t], gv->name);
        sym_term *d = sym_geo_delta(j, sym_read(&j->c, p, b, gv->name), old);
        if (gv->sparse)
            d = sym_geo_rows(j->c.st, d, ids);
        sym_term *o[2] = {old, d};
        pmap_put(&g->old[t], gv->name, sym_sum(j->c.st, o, 2));
        if (!deliver(j, gv, d, site))
            return -1;
        sym_store_set_site(j->c.st, site);
    }
    sym_store_set_site(j->c.st, NULL);
    return 1;
}

int sym_geo_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    sym_job *j = c->job;
    if (strcmp(op->type, "send") || p->trainer < 0)
        return 0;
    ir_arena *a = ir_arena_new();
    size_t nv = 0;
    const char **vn = ir_op_get_names(op, "send_varnames", &nv, a);
    int rc;
    if (nv == 1 && !strcmp(vn[0], "param_init"))
        rc = param_init(j, p, prog, block);
    else if (prog != p->main)
        rc = (sym_fail(c, p->startup_label, block, i, op, "a GEO trainer startup's send of "
                       "something other than 'param_init'"), -1);
    else
        rc = push(j, p, block, i, op, vn, nv);
    ir_arena_free(a);
    return rc;
}

/* The ids of every trainer's round of var v (a sparse pull's rows). */
static GPtrArray *round_ids(sym_job *j, GPtrArray **sets, size_t v)
{
    GPtrArray *all = g_ptr_array_new();
    for (size_t t = 0; t < j->n_tr; t++) {
        GPtrArray *a = sets[t * j->geo->n + v];
        for (guint k = 0; k < a->len; k++)
            sym_geo_add_ids(all, a->pdata[k]);
    }
    return all;
}

/* param += server - old, old = server (a sparse param: on the rows of
 * the round's ids, as a sum so that both stay one term per side). */
static void pull_one(sym_job *j, sym_proc *p, pmap *old, GPtrArray **sets, size_t v,
                     sym_term *server, const sym_site *site)
{
    sym_store *st = j->c.st;
    const sym_geo_var *gv = &j->geo->vars[v];
    ir_block *b = ir_program_block(p->main, 0);
    sym_term *o = pmap_get(old, gv->name), *mine = sym_read(&j->c, p, b, gv->name);
    if (!gv->sparse) {
        sym_write(p, gv->name, sym_geo_plus_minus(st, mine, server, o), site);
        pmap_put(old, gv->name, server);
        return;
    }
    GPtrArray *ids = round_ids(j, sets, v);
    if (ids->len) {
        sym_term *m[2] = {server, sym_scale(st, o, -1, 0, true)};
        sym_term *u = sym_geo_rows(st, sym_sum(st, m, 2), ids);
        sym_term *x[2] = {mine, u}, *y[2] = {o, u};
        sym_write(p, gv->name, sym_sum(st, x, 2), site);
        pmap_put(old, gv->name, sym_sum(st, y, 2));
    }
    g_ptr_array_free(ids, TRUE);
}

static void clear_ids(sym_job *j, GPtrArray **sets)
{
    for (size_t i = 0; i < j->n_tr * j->geo->n; i++)
        g_ptr_array_set_size(sets[i], 0);
}

static bool job_step(sym_job *j, int step)
{
    sym_geo *g = j->geo;
    for (size_t t = 0; t < j->n_tr; t++) {
        sym_proc *p = &j->tr[t];
        p->feed_tag = ir_internf("t%zu.s%d", t, step);
        ir_block *b = ir_program_block(p->main, 0);
        for (p->pc = 0; b && p->pc < b->n_ops;)
            if (!sym_run_op(&j->c, p, p->main, p->label, 0, p->pc++))
                return false;
    }
    for (size_t t = 0; t < j->n_tr; t++) {
        sym_proc *p = &j->tr[t];
        const sym_site *site = sym_site_make(
            j->c.st, ir_internf("the GEO communicator's pull into %s", p->label), 0, -1, NULL);
        for (size_t v = 0; g->push_site[t] && v < g->n; v++)
            pull_one(j, p, &g->old[t], g->ids, v, pulled(j, &g->vars[v]), site);
    }
    clear_ids(j, g->ids);
    return true;
}

/* The ids MAIN's sparse lookups of each table read, in view t. */
static void ref_ids(sym_job *j, size_t t)
{
    sym_geo *g = j->geo;
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        const ir_slot *ids = ir_op_input(op, "Ids"), *w = ir_op_input(op, "W");
        if (!ir_op_attr(op, "is_sparse") || !ids || !w || ids->n_args != 1 || w->n_args != 1)
            continue;
        long v = var_index(g, w->args[0]);
        if (v >= 0 && g->vars[v].sparse)
            sym_geo_add_ids(g->rids[t * g->n + (size_t)v],
                            sym_read(&j->c, &j->view[t], b, ids->args[0]));
    }
}

/* The reference's server values start as the pservers' initial values,
 * its old copies as the views' params (MAIN's startup, the dense ones as
 * the trainers received them). */
static void ref_init(sym_job *j)
{
    sym_geo *g = j->geo;
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t v = 0; v < g->n; v++) {
        const sym_geo_var *gv = &g->vars[v];
        for (size_t k = 0; k < gv->n_slices; k++)
            pmap_put(&g->server, gv->slices[k],
                     ps_value(j, gv->eps[k], gv->slices[k], gv->sections[k]));
        for (size_t t = 0; t < j->n_tr; t++)
            pmap_put(&g->rold[t], g->vars[v].name,
                     sym_read(&j->c, &j->view[t], b, g->vars[v].name));
    }
}

static bool ref_step(sym_job *j, int step)
{
    sym_geo *g = j->geo;
    sym_store *st = j->c.st;
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t t = 0; t < j->n_tr; t++) {
        j->view[t].feed_tag = ir_internf("t%zu.s%d", t, step);
        for (size_t i = 0; b && i < b->n_ops; i++)
            if (!sym_run_op(&j->c, &j->view[t], j->in->main, j->in->main_label, 0, i))
                return false;
        ref_ids(j, t);
    }
    for (size_t v = 0; v < g->n; v++) {
        const sym_geo_var *gv = &g->vars[v];
        for (size_t t = 0; t < j->n_tr; t++) {
            GPtrArray *ids = g->rids[t * g->n + v];
            if (gv->sparse && !ids->len)
                continue;
            sym_term *old = pmap_get(&g->rold[t], gv->name);
            sym_term *d = sym_geo_delta(j, sym_read(&j->c, &j->view[t], b, gv->name), old);
            if (gv->sparse)
                d = sym_geo_rows(st, d, ids);
            sym_term *o[2] = {old, d};
            pmap_put(&g->rold[t], gv->name, sym_sum(st, o, 2));
            server_add(j, gv, d);
        }
    }
    const sym_site *site = sym_site_make(st, "the reference's GEO pull", 0, -1, NULL);
    for (size_t t = 0; t < j->n_tr; t++)
        for (size_t v = 0; v < g->n; v++)
            pull_one(j, &j->view[t], &g->rold[t], g->rids, v, server_of(j, &g->vars[v]), site);
    clear_ids(j, g->rids);
    return true;
}

/* The pservers' slices of var v against the reference's. */
static void compare_server(sym_job *j, size_t v, int step, GString **diff, const char *name)
{
    const sym_geo_var *gv = &j->geo->vars[v];
    for (size_t k = 0; k < gv->n_slices; k++) {
        sym_proc *ps = sym_pserver_at(j, gv->eps[k]);
        sym_term *w = pmap_get(&j->geo->server, gv->slices[k]);
        if (!ps || ps_value(j, gv->eps[k], gv->slices[k], gv->sections[k]) == w)
            continue;
        const sym_site *last = pmap_get(&ps->sites, gv->slices[k]);
        *diff = g_string_new(NULL);
        g_string_append_printf(*diff, "%s: differs at step %d on %s (%s), slice '%s': ", name,
                               step, ps->label, gv->eps[k], gv->slices[k]);
        if (last && last->op)
            g_string_append_printf(*diff, "last written by %s block %d op %d '%s'; ", last->prog,
                                   last->block, last->index, last->op->type);
        sym_explain(j, *diff, ps, gv->slices[k], w);
        return;
    }
}

bool sym_geo_steps(sym_job *j, int step, GString **diff)
{
    sym_geo *g = j->geo;
    if (step == 1)      /* before the first push */
        ref_init(j);
    if (!job_step(j, step) || !ref_step(j, step))
        return false;
    ir_block *b = ir_program_block(j->in->main, 0);
    for (guint k = 0; k < j->params->len; k++) {
        const char *p = j->params->pdata[k];
        long v = var_index(g, p);
        if (diff[k])
            continue;
        if (v < 0 || g->bad[v]) {
            diff[k] = g_string_new(NULL);
            g_string_append_printf(diff[k], "%s: differs: %s", p, v < 0 ? "vars_info does not "
                                   "list it: no trainer pushes or pulls it" : g->bad[v]->str);
            continue;
        }
        /* the pservers first: a wrong push shows there at its block's op */
        compare_server(j, (size_t)v, step, &diff[k], p);
        for (size_t t = 0; !diff[k] && t < j->n_tr; t++) {
            sym_term *w = sym_read(&j->c, &j->view[t], b, p);
            if (pmap_get(&j->tr[t].vals, p) == w)
                continue;
            diff[k] = g_string_new(NULL);
            g_string_append_printf(diff[k], "%s: differs at step %d on trainer %zu: ", p, step, t);
            sym_explain(j, diff[k], &j->tr[t], p, w);
        }
    }
    return true;
}

void sym_geo_note(sym_job *j, GString *g)
{
    if (!j->geo)
        return;
    if (g->len)
        g_string_append(g, "; ");
    g_string_append_printf(g, "GEO: each step ends in a push and pull (as if geo_push_nums, %ld, "
                           "were 1: the local steps between pushes are MAIN's own terms)",
                           j->in->geo_push_nums);
    if (j->geo->sparse_init)
        g_string_append(g, "; a sparse table's rows start on each pserver as its own startup "
                        "initialises them, not as the trainers' (Paddle's GEO never sends them)");
}
