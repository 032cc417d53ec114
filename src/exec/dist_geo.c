/* dist_geo.c - GEO-SGD in `verify transpile` (transpile --geo): what the
 * GEO communicator of Paddle 1.7-1.8 (GeoSgdCommunicator) does around the
 * programs, which only mark its two entry points with `send`:
 * - the trainer startup's send of `param_init`: each trainer keeps an
 *   "old" copy of every param of vars_info (its values after the startup:
 *   dense params received from the pservers, sparse tables initialised
 *   locally);
 * - the main program's send of the sparse ids: the step's ids of each
 *   sparse table are recorded; every push_nums such sends the trainer
 *   pushes, for each param, delta = (param - old) / trainers (float32
 *   factor), old += delta, each slice's rows as SLICE.delta to its pserver
 *   (whose block for it, by grad_to_block_id, adds it in), then pulls:
 *   param += pserver - old, old = pserver.  A sparse param pushes and
 *   pulls only the rows of the ids recorded since the last push.
 * Beside the cluster it keeps each param's expected pserver value, its
 * value after the pserver startup plus every delta pushed, which
 * ex_geo_check compares with what the pservers hold. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "dist.h"

struct ex_geo {
    ex_tensor **old;        /* [trainer * n_vars + v]: the trainer's old copy */
    GArray **ids;           /* [trainer * n_vars + v]: sparse ids since the last push */
    int *sends;             /* per trainer: sends of ids so far */
    ex_tensor **expect;     /* per var: the pservers' value it should hold */
};

static ex_geo *geo_state(ex_cluster *c)
{
    if (!c->geo) {
        size_t n = c->n_trainers * c->n_geo_vars + 1;
        c->geo = xcalloc(1, sizeof *c->geo);
        c->geo->old = xcalloc(n, sizeof(ex_tensor *));
        c->geo->ids = xcalloc(n, sizeof(GArray *));
        c->geo->sends = xcalloc(c->n_trainers + 1, sizeof(int));
        c->geo->expect = xcalloc(c->n_geo_vars + 1, sizeof(ex_tensor *));
    }
    return c->geo;
}

void ex_geo_free(ex_cluster *c)
{
    ex_geo *g = c->geo;
    if (!g)
        return;
    for (size_t i = 0; i < c->n_trainers * c->n_geo_vars; i++) {
        ex_tensor_free(g->old[i]);
        if (g->ids[i])
            g_array_free(g->ids[i], TRUE);
    }
    for (size_t v = 0; v < c->n_geo_vars; v++)
        ex_tensor_free(g->expect[v]);
    free(g->old);
    free(g->ids);
    free(g->sends);
    free(g->expect);
    free(g);
    c->geo = NULL;
}

static size_t row_width(const ex_tensor *t)
{
    return t->nd && t->dims[0] ? t->numel / (size_t)t->dims[0] : t->numel;
}

/* The trainer's own value of var v, dense. */
static ex_tensor *trainer_value(ex_ctx *x, ex_cluster *c, size_t t, size_t v)
{
    const ex_tensor *p = ex_scope_get(c->trainers[t].scope, c->geo_vars[v].name);
    if (!p) {
        ex_fail(x, "GEO: trainer %zu holds no param '%s'", t, c->geo_vars[v].name);
        return NULL;
    }
    return ex_densify(p);
}

/* param_init: the old copies, and (once) the expected pserver values. */
static bool geo_init(ex_ctx *x, ex_cluster *c, size_t t)
{
    ex_geo *g = geo_state(c);
    for (size_t v = 0; v < c->n_geo_vars; v++) {
        ex_tensor *mine = trainer_value(x, c, t, v);
        if (!mine)
            return false;
        ex_tensor_free(g->old[t * c->n_geo_vars + v]);
        g->old[t * c->n_geo_vars + v] = mine;
        if (!g->expect[v] && !(g->expect[v] = ex_param_gather(c, c->geo_vars[v].name)))
            return ex_fail(x, "%s", c->err);
    }
    return true;
}

/* The ids of one send input, recorded for table `name`. */
static bool record_ids(ex_ctx *x, ex_cluster *c, size_t t, const char *name, const ex_tensor *ids)
{
    for (size_t v = 0; v < c->n_geo_vars; v++) {
        if (strcmp(c->geo_vars[v].name, name))
            continue;
        GArray **a = &c->geo->ids[t * c->n_geo_vars + v];
        if (!*a)
            *a = g_array_new(FALSE, FALSE, sizeof(int64_t));
        for (size_t i = 0; i < ids->numel; i++) {
            int64_t id = (int64_t)ids->data[i];
            g_array_append_val(*a, id);
        }
        return true;
    }
    return ex_fail(x, "GEO: send_varnames names '%s', which vars_info does not list", name);
}

static gint cmp_i64(gconstpointer a, gconstpointer b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The rows a push of var v touches: every row (dense), or the recorded
 * ids, sorted and unique; NULL and *n 0 for none. */
static int64_t *push_rows(ex_cluster *c, size_t t, size_t v, int64_t height, size_t *n,
                          ex_ctx *x, bool *ok)
{
    *ok = true;
    if (!c->geo_vars[v].sparse) {
        int64_t *r = xmalloc_n((size_t)height + 1, sizeof *r);
        for (int64_t i = 0; i < height; i++)
            r[i] = i;
        *n = (size_t)height;
        return r;
    }
    GArray *a = c->geo->ids[t * c->n_geo_vars + v];
    *n = 0;
    if (!a || !a->len)
        return NULL;
    g_array_sort(a, cmp_i64);
    int64_t *r = xmalloc_n(a->len, sizeof *r);
    for (guint i = 0; i < a->len; i++) {
        int64_t id = g_array_index(a, int64_t, i);
        if (id < 0 || id >= height) {
            free(r);
            *ok = ex_fail(x, "GEO: id %lld is outside table '%s' of %lld rows", (long long)id,
                          c->geo_vars[v].name, (long long)height);
            return NULL;
        }
        if (!*n || r[*n - 1] != id)
            r[(*n)++] = id;
    }
    g_array_set_size(a, 0);
    return r;
}

/* Slice k of var v as the pserver gets it: dense rows, or SELECTED_ROWS. */
static ex_tensor *slice_delta(const ex_geo_var *gv, const ex_tensor *delta, const int64_t *rows,
                              size_t n, int64_t off, int64_t sec)
{
    size_t w = row_width(delta);
    if (!gv->sparse) {
        int64_t dims[EX_MAX_DIMS];
        memcpy(dims, delta->dims, sizeof dims);
        dims[0] = sec;
        ex_tensor *s = ex_tensor_new(delta->dtype, delta->nd ? delta->nd : 1, dims);
        memcpy(s->data, delta->data + (size_t)off * w, (size_t)sec * w * sizeof *s->data);
        return s;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += rows[i] >= off && rows[i] < off + sec;
    if (!m)
        return NULL;
    ex_tensor *s = ex_rows_new(delta->dtype, m, NULL, delta->nd - 1, delta->dims + 1, sec);
    for (size_t i = 0, j = 0; i < n; i++) {
        if (rows[i] < off || rows[i] >= off + sec)
            continue;
        s->rows[j] = rows[i] - off;
        memcpy(s->data + j * w, delta->data + (size_t)rows[i] * w, w * sizeof *s->data);
        j++;
    }
    return s;
}

/* Push of var v by trainer t, then its pull; `rows` are the rows touched. */
static bool push_pull(ex_ctx *x, ex_cluster *c, size_t t, size_t v, ex_tensor *mine,
                      const int64_t *rows, size_t n)
{
    const ex_geo_var *gv = &c->geo_vars[v];
    ex_tensor *old = c->geo->old[t * c->n_geo_vars + v], *want = c->geo->expect[v];
    size_t w = row_width(mine);
    if (old->numel != mine->numel || want->numel != mine->numel)
        return ex_fail(x, "GEO: '%s' changed size", gv->name);
    ex_tensor *delta = ex_tensor_like(mine);
    double f = ex_mean_factor(c->n_trainers);
    for (size_t i = 0; i < n; i++)
        for (size_t k = (size_t)rows[i] * w; k < (size_t)(rows[i] + 1) * w; k++) {
            delta->data[k] = (mine->data[k] - old->data[k]) * f;
            old->data[k] += delta->data[k];
            want->data[k] += delta->data[k];
        }
    bool ok = true;
    int64_t off = 0;
    for (size_t s = 0; ok && s < gv->n_slices; s++) {
        ex_tensor *part = slice_delta(gv, delta, rows, n, off, gv->sections[s]);
        off += gv->sections[s];
        if (part)
            ok = ex_pserver_deliver(x, c, gv->eps[s], ir_internf("%s.delta", gv->slices[s]), part);
    }
    ex_tensor_free(delta);
    ex_tensor *theirs = ok ? ex_param_gather(c, gv->name) : NULL;
    if (ok && (!theirs || theirs->numel != mine->numel))
        ok = ex_fail(x, "GEO: cannot pull '%s' from the pservers%s%s", gv->name,
                     theirs ? "" : ": ", theirs ? "" : c->err);
    for (size_t i = 0; ok && i < n; i++)
        for (size_t k = (size_t)rows[i] * w; k < (size_t)(rows[i] + 1) * w; k++) {
            mine->data[k] += theirs->data[k] - old->data[k];
            old->data[k] = theirs->data[k];
        }
    ex_tensor_free(theirs);
    return ok;
}

static bool push(ex_ctx *x, ex_cluster *c, size_t t)
{
    for (size_t v = 0; v < c->n_geo_vars; v++) {
        ex_tensor *mine = trainer_value(x, c, t, v);
        if (!mine)
            return false;
        size_t n = 0;
        bool ok = true;
        int64_t height = mine->nd ? mine->dims[0] : 1;
        int64_t *rows = push_rows(c, t, v, height, &n, x, &ok);
        ok = ok && push_pull(x, c, t, v, mine, rows, n);
        free(rows);
        if (!ok) {
            ex_tensor_free(mine);
            return false;
        }
        ex_scope_put(c->trainers[t].scope, c->geo_vars[v].name, mine);
    }
    return true;
}

bool ex_geo_send(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    const ir_attr *a = ir_op_attr(op, "send_varnames");
    size_t n = a && a->type == IR_ATTR_STRINGS ? a->n_strings : 0;
    size_t t = c->cur_trainer;
    if (n == 1 && a->strings[0].len == 10 && !memcmp(a->strings[0].data, "param_init", 10))
        return geo_init(x, c, t);
    ex_geo *g = c->geo;
    if (!g || !g->old[t * c->n_geo_vars])
        return ex_fail(x, "GEO: the trainer startup sent no 'param_init' before training");
    if (n != ex_n_in(op, "X"))
        return ex_fail(x, "GEO: %zu ids vars but %zu send_varnames", ex_n_in(op, "X"), n);
    for (size_t i = 0; i < n; i++) {
        const ex_tensor *ids = ex_in_at(x, op, "X", i);
        const char *table = ir_intern_n((const char *)a->strings[i].data, a->strings[i].len);
        if (!ids || !record_ids(x, c, t, table, ids))
            return false;
    }
    if (++g->sends[t] % c->geo_push_nums)
        return true;
    return push(x, c, t);
}

bool ex_geo_exact(const ex_cluster *c)
{
    for (size_t v = 0; v < c->n_geo_vars; v++)
        if (c->geo_vars[v].sparse)
            return false;
    /* one trainer: its pulls give back what it pushed, whatever push_nums */
    return c->n_trainers == 1;
}

/* Each slice on its pserver against the expected value's rows. */
bool ex_geo_check(ex_cluster *c, ex_param_result **res, size_t *n_res)
{
    ex_geo *g = c->geo;
    if (!g) {
        g_snprintf(c->err, sizeof c->err, "GEO: no trainer sent 'param_init'");
        return false;
    }
    size_t n = *n_res, cap = n + 1;
    for (size_t v = 0; v < c->n_geo_vars; v++)
        cap += c->geo_vars[v].n_slices;
    ex_param_result *r = xrealloc_n(*res, cap, sizeof *r);
    for (size_t v = 0; v < c->n_geo_vars; v++) {
        const ex_geo_var *gv = &c->geo_vars[v];
        const ex_tensor *want = g->expect[v];
        size_t w = row_width(want);
        int64_t off = 0;
        for (size_t s = 0; s < gv->n_slices; s++) {
            ex_proc *p = ex_pserver_at(c, gv->eps[s]);
            const ex_tensor *got = p ? ex_scope_get(p->scope, gv->slices[s]) : NULL;
            ex_param_result *e = memset(&r[n++], 0, sizeof *r);
            e->param = ir_internf("%s on %s", gv->slices[s], gv->eps[s]);
            e->pserver_sum = true;
            e->finite = got != NULL;
            size_t base = (size_t)off * w, len = (size_t)gv->sections[s] * w;
            off += gv->sections[s];
            if (!got || got->numel != len || base + len > want->numel) {
                e->worst_rel = INFINITY;
                e->finite = false;
                continue;
            }
            for (size_t i = 0; i < len; i++) {
                double b = want->data[base + i], d = fabs(got->data[i] - b) / fmax(1.0, fabs(b));
                e->finite &= isfinite(got->data[i]);
                e->worst_rel = isnan(d) ? INFINITY : fmax(e->worst_rel, d);
            }
        }
    }
    *res = r;
    *n_res = n;
    return true;
}
