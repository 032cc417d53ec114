/* geo.c - GEO-SGD jobs (distributed_mode 3, transpile --geo) in `verify
 * job`: what Paddle 1.7-1.8's GeoSgdCommunicator does around the
 * programs, which only mark its two entry points with `send` (README.md
 * in this folder, "GEO-SGD"; research-modes.md section 5):
 * - the trainer startup's send of `param_init`: each trainer keeps an
 *   "old" copy of every vars_info param;
 * - the main program's send of the sparse ids (its last op): taken to be
 *   a push (the push_nums-th send; the earlier ones only record ids):
 *   delta = float(1/n) * (param - old), old += delta, each slice of the
 *   delta (rows of the ids sent, for a sparse param) sent as SLICE.delta
 *   to its vars_info endpoint, whose grad_to_block_id block adds it in;
 * - after every trainer pushed, each pulls: param += pserver - old,
 *   old = pserver (a sparse param: the rows of every trainer's ids).
 * The reference (geo_ref_step) applies the same formulas to views that
 * run all of MAIN locally, with a server value per param that starts as
 * the pservers' initial values: so the job is equal when each trainer
 * trains as MAIN, sends the ids MAIN's lookups read, each slice's block
 * adds its delta into that slice and vars_info, the pservers' blocks and
 * the startup recvs agree. */
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>

#include "../ckd.h"
#include "../ir/util.h"
#include "geo.h"

static sym_geo *G(sym_job *j)
{
    return j->geo;
}

int sym_geo_delta_block(sym_proc *ps, const char *name)
{
    return sym_listen_block(ps, "grad_to_block_id", name);
}

static bool lists_string(ir_op *l, const char *attr, const char *want)
{
    ir_attr *a = l ? ir_op_attr(l, attr) : NULL;
    size_t n = strlen(want);
    for (size_t k = 0; a && a->type == IR_ATTR_STRINGS && k < a->n_strings; k++)
        if (a->strings[k].len == n && !memcmp(a->strings[k].data, want, n))
            return true;
    return false;
}

static void bad(sym_geo *g, size_t v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad(sym_geo *g, size_t v, const char *fmt, ...)
{
    if (g->bad[v])
        return;
    va_list ap;
    va_start(ap, fmt);
    g->bad[v] = g_string_new(NULL);
    g_string_append_vprintf(g->bad[v], fmt, ap);
    va_end(ap);
}

/* Slice k of var v: its pserver serves it (grad_to_block_id has
 * `S.delta`, sparse_grad_to_param `S.delta:S` exactly when sparse), and
 * no other pserver does. */
static void check_slice(sym_job *j, size_t v, size_t k)
{
    sym_geo *g = G(j);
    const sym_geo_var *gv = &g->vars[v];
    const char *s = gv->slices[k], *ep = gv->eps[k], *d = ir_internf("%s.delta", s);
    sym_proc *ps = sym_pserver_at(j, ep);
    if (!ps) {
        bad(g, v, "'%s' to %s, which no pserver of the job serves", d, ep);
        return;
    }
    for (size_t q = 0; q < j->n_ps; q++)
        if (&j->ps[q] != ps && sym_geo_delta_block(&j->ps[q], d) >= 0) {
            bad(g, v, "'%s' to %s (%s), but %s's listen_and_serv has the block for it", d, ep,
                ps->label, j->ps[q].label);
            return;
        }
    if (sym_geo_delta_block(ps, d) < 0) {
        bad(g, v, "'%s' to %s (%s), whose listen_and_serv's grad_to_block_id has "
            "no block for it", d, ep, ps->label);
        return;
    }
    if (lists_string(sym_listen_op(ps), "sparse_grad_to_param", ir_internf("%s:%s", d, s)) !=
        gv->sparse)
        bad(g, v, "%s's listen_and_serv %s '%s:%s' in sparse_grad_to_param, but vars_info "
            "says is_sparse %s", ps->label, gv->sparse ? "lacks" : "lists", d, s,
            gv->sparse ? "True" : "False");
}

/* Where a trainer pushes: its main program's last `send` ("the GEO
 * send"), which the structural differences name. */
static void push_op_text(sym_job *j, GString *out)
{
    sym_proc *p = &j->tr[0];
    ir_block *b = ir_program_block(p->main, 0);
    for (size_t i = b ? b->n_ops : 0; i-- > 0;)
        if (!strcmp(b->ops[i]->type, "send")) {
            g_string_printf(out, "%s block 0 op %zu 'send' pushes by vars_info: ", p->label, i);
            return;
        }
    g_string_printf(out, "%s has no GEO send: ", p->label);
}

/* The rows of var v's sections, false (j->c.err set) when a section is
 * not positive or the total is past int64: geo_run.c slices the deltas by
 * these offsets, so such a vars_info is bad input, not a difference. */
static bool sum_sections(sym_job *j, const sym_geo_var *gv, int64_t *rows)
{
    *rows = 0;
    for (size_t k = 0; k < gv->n_slices; k++)
        if (gv->sections[k] <= 0 || ckd_add_i64(rows, *rows, gv->sections[k])) {
            snprintf(j->c.err, sizeof j->c.err, "the manifest's vars_info of '%s': section %zu "
                     "('%s', %lld rows) %s", gv->name, k, gv->slices[k],
                     (long long)gv->sections[k], gv->sections[k] <= 0
                     ? "is not a positive row count" : "makes the sections add up past int64");
            return false;
        }
    return true;
}

/* vars_info against MAIN and the pservers (the startup recvs are run). */
static bool check_structure(sym_job *j)
{
    sym_geo *g = G(j);
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t v = 0; v < g->n; v++) {
        int64_t rows;
        if (!sum_sections(j, &g->vars[v], &rows))
            return false;
    }
    GString *at = g_string_new(NULL);
    push_op_text(j, at);
    for (size_t v = 0; v < g->n; v++) {
        const sym_geo_var *gv = &g->vars[v];
        int64_t rows = 0, want = sym_var_rows(b, gv->name);
        sum_sections(j, gv, &rows);
        ir_var *grad = ir_block_find_var(b, ir_internf("%s@GRAD", gv->name));
        bool sr = grad && grad->type == IR_SELECTED_ROWS;
        if (want > 0 && rows != want)
            bad(g, v, "vars_info's sections of '%s' add up to %lld rows, MAIN declares %lld",
                gv->name, (long long)rows, (long long)want);
        else if (grad && sr != gv->sparse)
            bad(g, v, "vars_info says is_sparse %s, but MAIN's '%s' is %sSELECTED_ROWS",
                gv->sparse ? "True" : "False", grad->name, sr ? "" : "not ");
        for (size_t k = 0; k < gv->n_slices; k++)
            check_slice(j, v, k);
        if (g->bad[v])
            g_string_prepend(g->bad[v], at->str);
    }
    g_string_free(at, TRUE);
    return true;
}

bool sym_geo_setup(sym_job *j)
{
    const sym_job_in *in = j->in;
    if (!in->geo || !in->n_geo) {
        snprintf(j->c.err, sizeof j->c.err, "a GEO job (distributed_mode 3) whose manifest has "
                 "no vars_info: the communicator's params are unknown");
        return false;
    }
    sym_geo *g = j->geo = xcalloc(1, sizeof *g);
    g->vars = in->geo;
    g->n = in->n_geo;
    g->old = xcalloc(j->n_tr + 1, sizeof *g->old);
    g->rold = xcalloc(j->n_tr + 1, sizeof *g->rold);
    g->inited = xcalloc(j->n_tr + 1, sizeof *g->inited);
    g->ids = xcalloc(j->n_tr * g->n + 1, sizeof *g->ids);
    g->rids = xcalloc(j->n_tr * g->n + 1, sizeof *g->rids);
    for (size_t i = 0; i < j->n_tr * g->n; i++) {
        g->ids[i] = g_ptr_array_new();
        g->rids[i] = g_ptr_array_new();
    }
    g->bad = xcalloc(g->n + 1, sizeof *g->bad);
    g->push_site = xcalloc(j->n_tr + 1, sizeof *g->push_site);
    for (size_t v = 0; v < g->n; v++)
        g->sparse_init |= g->vars[v].sparse;
    return check_structure(j);
}

void sym_geo_free(sym_job *j)
{
    sym_geo *g = G(j);
    if (!g)
        return;
    for (size_t t = 0; t < j->n_tr; t++) {
        pmap_free(&g->old[t]);
        pmap_free(&g->rold[t]);
    }
    for (size_t i = 0; i < j->n_tr * g->n; i++) {
        g_ptr_array_free(g->ids[i], TRUE);
        g_ptr_array_free(g->rids[i], TRUE);
    }
    for (size_t v = 0; v < g->n; v++)
        if (g->bad[v])
            g_string_free(g->bad[v], TRUE);
    pmap_free(&g->server);
    free(g->old);
    free(g->rold);
    free(g->inited);
    free(g->ids);
    free(g->rids);
    free(g->bad);
    free(g->push_site);
    free(g);
    j->geo = NULL;
}

/* Adds term t to a set of ids terms (a set: sorted by id, once each). */
void sym_geo_add_ids(GPtrArray *a, sym_term *t)
{
    guint i = 0;
    while (i < a->len && ((sym_term *)a->pdata[i])->id < t->id)
        i++;
    if (i == a->len || a->pdata[i] != t)
        g_ptr_array_insert(a, (gint)i, t);
}

/* The rows of x that the ids name (an uninterpreted row restriction: the
 * ids' values are unknown); rows kept for the slicing axioms. */
sym_term *sym_geo_rows(sym_store *st, sym_term *x, GPtrArray *ids)
{
    guint n = ids->len + 1;
    sym_term **a = xmalloc_n(n, sizeof *a);
    const char **slots = xmalloc_n(n, sizeof *slots);
    a[0] = x;
    slots[0] = ir_intern("X");
    for (guint i = 1; i < n; i++) {
        a[i] = ids->pdata[i - 1];
        slots[i] = ir_intern("Ids");
    }
    sym_term *r = sym_app(st, ir_intern("@geo_rows"), ir_intern("X:1,Ids:n|"), a, slots, n, -1);
    if (r->rows < 0)
        r->rows = x->rows;
    free(a);
    free(slots);
    return r;
}

/* float(1/n) * (param - old): the communicator's delta (dense rows). */
sym_term *sym_geo_delta(sym_job *j, sym_term *param, sym_term *old)
{
    sym_store *st = j->c.st;
    sym_term *d[2] = {param, sym_scale(st, old, -1, 0, true)};
    return sym_scale(st, sym_sum(st, d, 2), (double)(float)(1.0 / (double)j->n_tr), 0, true);
}

/* a + b - c, the pull's param += pserver - old. */
sym_term *sym_geo_plus_minus(sym_store *st, sym_term *a, sym_term *b, sym_term *c)
{
    sym_term *d[2] = {b, sym_scale(st, c, -1, 0, true)};
    sym_term *e[2] = {a, sym_sum(st, d, 2)};
    return sym_sum(st, e, 2);
}
