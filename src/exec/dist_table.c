/* dist_table.c - `verify transpile` for lookup tables the trainers never
 * hold.  A distributed table (prefetch): split_ids shards ids by
 * id % pservers, prefetch hands each shard to its pserver's prefetch block
 * (lookup_sparse_table on the pserver's SELECTED_ROWS shard), merge_ids
 * puts the rows back; the table grad is split the same way and updated by
 * the pservers' table block.  A remote_prefetch table: the trainer's
 * distributed_lookup_table reads rows of the pservers' param slices
 * (height_sections), as Paddle's prefetch handler does with a lookup_table
 * op on the slice. */
#include <glib.h>
#include <string.h>

#include "dist.h"

static size_t strings_of(const ir_op *op, const char *attr, const char ***out)
{
    const ir_attr *a = ir_op_attr(op, attr);
    size_t n = a && a->type == IR_ATTR_STRINGS ? a->n_strings : 0;
    *out = xcalloc(n + 1, sizeof(const char *));
    for (size_t i = 0; i < n; i++)
        (*out)[i] = ir_intern_n((const char *)a->strings[i].data, a->strings[i].len);
    return n;
}

int32_t ex_named_block(const ir_op *ls, const char *attr, const char *name)
{
    const ir_attr *a = ls ? ir_op_attr(ls, attr) : NULL;
    size_t n = strlen(name);
    for (size_t i = 0; a && a->type == IR_ATTR_STRINGS && i < a->n_strings; i++) {
        const char *s = (const char *)a->strings[i].data;
        if (a->strings[i].len > n + 1 && !strncmp(s, name, n) && s[n] == ':')
            return (int32_t)g_ascii_strtoll(s + n + 1, NULL, 10);
    }
    return -1;
}

const ex_table *ex_cluster_table(const ex_cluster *c, const char *name)
{
    for (size_t i = 0; i < c->n_tables; i++)
        if (!strcmp(c->tables[i].name, name))
            return &c->tables[i];
    return NULL;
}

static ex_table *add_table(ex_cluster *c, const char *name, ex_table_kind kind)
{
    if (ex_cluster_table(c, name))
        return NULL;
    const ir_block *b = ir_program_block(c->trainers[0].main, 0);
    const ir_var *v = b ? ir_block_find_var(b, ir_intern(name)) : NULL;
    c->tables = xrealloc_n(c->tables, c->n_tables + 1, sizeof(ex_table));
    ex_table *t = memset(&c->tables[c->n_tables++], 0, sizeof(ex_table));
    t->name = ir_intern(name);
    t->kind = kind;
    t->height = v && v->n_dims ? v->dims[0] : 0;
    return t;
}

/* The endpoint of the pserver whose program declares `var`, or NULL. */
static const char *declaring_pserver(const ex_cluster *c, const char *var)
{
    for (size_t k = 0; k < c->n_pservers; k++) {
        const ir_block *b = ir_program_block(c->pservers[k].main, 0);
        if (b && ir_block_find_var(b, var))
            return c->pservers[k].endpoint;
    }
    return NULL;
}

/* The slices of param `name` as the transpile places them on the pservers
 * (NAME.block0, NAME.block1, ..., or NAME unsliced); the count. */
static size_t derive_slices(const ex_cluster *c, const char *name, const char ***slices,
                            const char ***eps)
{
    GPtrArray *s = g_ptr_array_new(), *e = g_ptr_array_new();
    for (size_t k = 0;; k++) {
        const char *in = ir_internf("%s.block%zu", name, k), *ep = declaring_pserver(c, in);
        if (!ep)
            break;
        g_ptr_array_add(s, (void *)in);
        g_ptr_array_add(e, (void *)ep);
    }
    const char *whole = s->len ? NULL : declaring_pserver(c, ir_intern(name));
    if (whole) {
        g_ptr_array_add(s, (void *)ir_intern(name));
        g_ptr_array_add(e, (void *)whole);
    }
    size_t n = s->len;
    *slices = ex_names_take(s);
    *eps = ex_names_take(e);
    return n;
}

/* nce with remote_prefetch: Paddle's kernel prefetches the rows of its
 * Weight when the op names table_names/epmap (Paddle <= 1.5's transpiler set
 * them); the seed's transpiler leaves nce as it is, so the slices are found
 * where the transpile put them. */
static void add_nce_table(ex_cluster *c, const ir_op *op)
{
    const char *w = ir_op_input1(op, "Weight");
    ex_table *t = w && ir_op_get_bool(op, "remote_prefetch", false)
                  ? add_table(c, w, EX_TABLE_SLICED) : NULL;
    if (!t)
        return;
    t->n_slices = strings_of(op, "table_names", &t->slices);
    if (t->n_slices && strings_of(op, "epmap", &t->eps) >= t->n_slices)
        return;
    free(t->slices);
    free(t->eps);
    t->n_slices = derive_slices(c, w, &t->slices, &t->eps);
}

void ex_tables_find(ex_cluster *c)
{
    for (size_t k = 0; k < c->n_pservers; k++) {
        const ir_program *p = c->pservers[k].main;
        for (size_t bi = 0; bi < p->n_blocks; bi++) {
            const ir_block *b = ir_program_block(p, (int32_t)bi);
            for (size_t i = 0; b && i < b->n_ops; i++)
                if (!strcmp(b->ops[i]->type, "lookup_sparse_table") && ir_op_input1(b->ops[i], "W"))
                    add_table(c, ir_op_input1(b->ops[i], "W"), EX_TABLE_BY_ID);
        }
    }
    const ir_block *b = c->n_trainers ? ir_program_block(c->trainers[0].main, 0) : NULL;
    for (size_t i = 0; b && i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        ex_table *t = !strcmp(op->type, "distributed_lookup_table") && ir_op_input1(op, "W")
                      ? add_table(c, ir_op_input1(op, "W"), EX_TABLE_SLICED) : NULL;
        if (t) {
            t->n_slices = strings_of(op, "table_names", &t->slices);
            free(t->eps);
            if (strings_of(op, "endpoints", &t->eps) < t->n_slices)
                t->n_slices = 0;
        }
        if (!strcmp(op->type, "nce"))
            add_nce_table(c, op);
    }
}

void ex_tables_shard(ex_cluster *c, size_t k)
{
    ex_proc *p = &c->pservers[k];
    for (size_t i = 0; i < c->n_tables; i++) {
        const ex_table *t = &c->tables[i];
        const ex_tensor *v = t->kind == EX_TABLE_BY_ID ? ex_scope_get(p->scope, t->name) : NULL;
        if (!v || v->kind != EX_DENSE || v->nd < 1)
            continue;
        size_t slots = (size_t)v->dims[0], w = slots ? v->numel / slots : 0, m = 0;
        while (m < slots && (int64_t)(k + m * c->n_pservers) < t->height)
            m++;
        ex_tensor *shard = ex_rows_new(v->dtype, m, NULL, v->nd - 1, v->dims + 1, t->height);
        for (size_t s = 0; s < m; s++)
            shard->rows[s] = (int64_t)(k + s * c->n_pservers);
        memcpy(shard->data, v->data, m * w * sizeof *shard->data);
        ex_scope_put(p->scope, t->name, shard);
    }
}

static ex_tensor *gather_by_id(ex_cluster *c, const ex_table *t)
{
    ex_tensor *all = NULL;
    for (size_t k = 0; k < c->n_pservers; k++) {
        const ex_tensor *v = ex_scope_get(c->pservers[k].scope, t->name);
        if (!v || v->kind != EX_ROWS)
            continue;
        size_t n = (size_t)v->dims[0], w = v->nd > 1 ? (size_t)v->dims[1] : 1;
        if (!all) {
            int64_t dims[2] = {t->height, (int64_t)w};
            all = ex_tensor_new(v->dtype, 2, dims);
        }
        if (all->numel != (size_t)t->height * w) {
            ex_tensor_free(all);
            g_snprintf(c->err, sizeof c->err, "the pservers' rows of '%s' differ in width", t->name);
            return NULL;
        }
        for (size_t s = 0; s < n; s++)
            if (v->rows[s] >= 0 && v->rows[s] < t->height)
                memcpy(all->data + (size_t)v->rows[s] * w, v->data + s * w, w * sizeof *all->data);
    }
    if (!all)
        g_snprintf(c->err, sizeof c->err, "no pserver holds rows of the table '%s'", t->name);
    return all;
}

static ex_tensor *gather_slices(ex_cluster *c, const ex_table *t)
{
    const ex_tensor **part = xcalloc(t->n_slices + 1, sizeof(const ex_tensor *));
    int64_t rows = 0;
    for (size_t k = 0; k < t->n_slices; k++) {
        ex_proc *p = ex_pserver_at(c, t->eps[k]);
        part[k] = p ? ex_scope_get(p->scope, t->slices[k]) : NULL;
        if (!part[k] || part[k]->kind != EX_DENSE || part[k]->nd < 1) {
            g_snprintf(c->err, sizeof c->err, "pserver '%s' holds no slice '%s' of '%s'", t->eps[k],
                       t->slices[k], t->name);
            free(part);
            return NULL;
        }
        rows += part[k]->dims[0];
    }
    ex_tensor *all = NULL;
    if (t->n_slices) {
        int64_t dims[EX_MAX_DIMS];
        memcpy(dims, part[0]->dims, sizeof dims);
        dims[0] = rows;
        all = ex_tensor_new(part[0]->dtype, part[0]->nd, dims);
        size_t at = 0;
        for (size_t k = 0; k < t->n_slices && at + part[k]->numel <= all->numel; k++) {
            memcpy(all->data + at, part[k]->data, part[k]->numel * sizeof *all->data);
            at += part[k]->numel;
        }
    } else {
        g_snprintf(c->err, sizeof c->err, "the lookup of '%s' names no table slices", t->name);
    }
    free(part);
    return all;
}

ex_tensor *ex_param_gather(ex_cluster *c, const char *name)
{
    ex_table t = {.name = ir_intern(name), .kind = EX_TABLE_SLICED};
    t.n_slices = derive_slices(c, name, &t.slices, &t.eps);
    ex_tensor *all = gather_slices(c, &t);
    if (!all && !t.n_slices)
        g_snprintf(c->err, sizeof c->err, "no pserver holds a slice of '%s'", name);
    free(t.slices);
    free(t.eps);
    return all;
}

ex_tensor *ex_table_gather(ex_cluster *c, const ex_table *t)
{
    return t->kind == EX_TABLE_BY_ID ? gather_by_id(c, t) : gather_slices(c, t);
}

/* prefetch: X[i] goes to the pserver at epmap[i], which runs the block its
 * prefetch_var_name_to_block_id names for X[i] and answers with Out[i]. */
bool ex_dist_prefetch(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    const char **ep;
    size_t n_ep = strings_of(op, "epmap", &ep), n = ex_n_in(op, "X");
    bool ok = (n == n_ep && n == ex_n_out(op, "Out")) ||
              ex_fail(x, "X, Out and epmap differ in length");
    for (size_t i = 0; ok && i < n; i++) {
        const char *in = ir_op_input(op, "X")->args[i], *out = ir_op_output(op, "Out")->args[i];
        const ex_tensor *ids = ex_in_at(x, op, "X", i);
        ex_proc *p = ids ? ex_pserver_at(c, ep[i]) : NULL;
        int32_t blk = p ? ex_named_block(ex_listen_op(p), "prefetch_var_name_to_block_id", in) : -1;
        if (!ids)
            ok = false;
        else if (!p)
            ok = ex_fail(x, "no pserver listens at '%s' (prefetching '%s')", ep[i], in);
        else if (blk < 0)
            ok = ex_fail(x, "pserver '%s' has no prefetch block for '%s'", ep[i], in);
        if (!ok)
            break;
        ex_scope_put(p->scope, in, ex_tensor_copy(ids));
        if (!ex_pserver_run_block(c, p, blk)) {
            ok = ex_fail(x, "%s", c->err);
            break;
        }
        const ex_tensor *rows = ex_scope_get(p->scope, out);
        if (!rows)
            ok = ex_fail(x, "pserver '%s' answers with no '%s'", ep[i], out);
        else
            ex_put(x, op, "Out", i, ex_tensor_copy(rows));
    }
    free(ep);
    return ok;
}

/* The slice and local row of `id` (height_sections), or false. */
static bool section_of(const int64_t *h, size_t n, int64_t id, size_t *k, int64_t *local)
{
    int64_t off = 0;
    for (size_t i = 0; i < n; off += h[i], i++)
        if (id >= off && id < off + h[i]) {
            *k = i;
            *local = id - off;
            return true;
        }
    return false;
}

static ex_tensor *lookup_slices(ex_ctx *x, const ir_op *op, const ex_tensor *ids,
                                const ex_tensor **slice, const int64_t *h, size_t ns)
{
    int64_t pad = ir_op_get_int(op, "padding_idx", -1), w = slice[0]->nd > 1 ? slice[0]->dims[1] : 1;
    const char *ver = ir_op_get_string(op, "lookup_table_version");
    bool v1 = (!ver || !strcmp(ver, "lookup_table")) && ids->nd >= 2 && ids->dims[ids->nd - 1] == 1;
    int64_t dims[EX_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < ids->nd - (v1 ? 1 : 0) && nd + 1 < EX_MAX_DIMS; i++)
        dims[nd++] = ids->dims[i];
    dims[nd++] = w;
    ex_tensor *out = ex_tensor_new(slice[0]->dtype, nd, dims);
    ex_tensor_set_lod(out, ids->lod, ids->n_lod);
    for (size_t j = 0; j < ids->numel; j++) {
        int64_t id = (int64_t)ids->data[j], local;
        size_t k;
        if (id == pad)
            continue;
        if (!section_of(h, ns, id, &k, &local) || local >= slice[k]->dims[0]) {
            ex_fail(x, "id %lld is in no table slice", (long long)id);
            ex_tensor_free(out);
            return NULL;
        }
        memcpy(out->data + j * (size_t)w, slice[k]->data + (size_t)(local * w),
               (size_t)w * sizeof *out->data);
    }
    return out;
}

/* distributed_lookup_table (remote_prefetch): each id's row from the
 * slice that height_sections puts it in. */
bool ex_dist_lookup_table(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    const char **names, **eps;
    size_t ns = strings_of(op, "table_names", &names), ne = strings_of(op, "endpoints", &eps);
    int64_t *h = xcalloc(ns + 1, sizeof(int64_t));
    const ex_tensor **slice = xcalloc(ns + 1, sizeof(const ex_tensor *));
    bool ok = (ns && ne == ns && ex_attr_ints(op, "height_sections", h, ns + 1) == ns) ||
              ex_fail(x, "table_names, endpoints and height_sections differ in length");
    for (size_t k = 0; ok && k < ns; k++) {
        ex_proc *p = ex_pserver_at(c, eps[k]);
        slice[k] = p ? ex_scope_get(p->scope, names[k]) : NULL;
        if (!slice[k] || slice[k]->kind != EX_DENSE || slice[k]->nd != 2)
            ok = ex_fail(x, "pserver '%s' holds no 2-dim table slice '%s'", eps[k], names[k]);
    }
    size_t n = ex_n_in(op, "Ids");
    if (ok && n != ex_n_out(op, "Outputs"))
        ok = ex_fail(x, "%zu Ids but %zu Outputs", n, ex_n_out(op, "Outputs"));
    for (size_t i = 0; ok && i < n; i++) {
        const ex_tensor *ids = ex_in_at(x, op, "Ids", i);
        ex_tensor *out = ids ? lookup_slices(x, op, ids, slice, h, ns) : NULL;
        ok = out != NULL;
        if (ok)
            ex_put(x, op, "Outputs", i, out);
    }
    free(names);
    free(eps);
    free(h);
    free(slice);
    return ok;
}

/* nce in a cluster: a remote_prefetch table's rows come from the pservers
 * (the whole table is gathered; the kernel reads the rows of the true and
 * sampled classes only), and the trainer's own fake_init copy is put back. */
bool ex_dist_nce(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    const char *wn = ir_op_input1(op, "Weight");
    const ex_table *t = wn ? ex_cluster_table(c, wn) : NULL;
    ex_kernel_fn nce = ex_kernel_find("nce");
    if (!t || !nce)
        return nce ? nce(x, op) : ex_fail(x, "the executor has no kernel for this op");
    ex_tensor *rows = ex_table_gather(c, t);
    if (!rows)
        return ex_fail(x, "%s", c->err);
    const ex_tensor *mine = ex_scope_get(x->scope, wn);
    ex_tensor *own = mine ? ex_tensor_copy(mine) : NULL;
    ex_scope_put(x->scope, wn, rows);
    bool ok = nce(x, op);
    if (own)
        ex_scope_put(x->scope, wn, own);
    else
        ex_scope_remove(x->scope, wn);
    return ok;
}
