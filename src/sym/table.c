/* table.c - a distributed lookup table in `verify job` (table.h).  The
 * table is one term T; pserver k holds its shard view shard(T, k, n), the
 * rows whose id is k mod n (the id-mod-n sharding split_ids does).  The
 * trainer's split_ids gives shard k of its ids (or of its SelectedRows
 * grad), prefetch k runs the prefetch block of the pserver epmap[k] names
 * (lookup_sparse_table on that pserver's shard), and merge_ids puts the
 * rows back: when each part k is a lookup of shard k's ids in some table
 * T_k, the result is MAIN's own lookup op on the table modcat(T_0..T_n-1),
 * which is T exactly when every prefetch went to the pserver holding those
 * rows.  A prefetch to a pserver with no block for its var is an error, as
 * Paddle's RequestPrefetchHandler would run a null block. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "table.h"

#define MAX_TABLES 16

static bool is_named(const sym_term *t, const char *name)
{
    return t->kind == SYM_APP && t->name == ir_intern(name);
}

/* t's table when t is shard(table, k, n), else NULL. */
static sym_term *shard_base(const sym_term *t, int k, int n)
{
    if (!is_named(t, "@shard") || t->key != ir_internf("%d/%d", k, n))
        return NULL;
    return t->args[0];
}

sym_term *sym_shard(sym_store *s, sym_term *t, int k, int n)
{
    if (is_named(t, "@modcat") && t->n == (uint32_t)n)
        return t->args[k];
    const char *slot = ir_intern("X");
    return sym_app(s, ir_intern("@shard"), ir_internf("%d/%d", k, n), &t, &slot, 1, -1);
}

/* Parts that are one output of row-wise ops alike (the pservers' updates
 * of their shards): that op on the modcats of the args that differ. */
static sym_term *pull_rowwise(sym_store *s, sym_term **p, int n)
{
    sym_term *a0 = p[0]->kind == SYM_PROJ ? p[0]->args[0] : NULL;
    if (!a0 || a0->kind != SYM_APP || !sym_rowwise_type(a0->name))
        return NULL;
    for (int k = 1; k < n; k++) {
        sym_term *a = p[k]->kind == SYM_PROJ ? p[k]->args[0] : NULL;
        if (!a || p[k]->name != p[0]->name || p[k]->a != p[0]->a || a->kind != SYM_APP ||
            a->name != a0->name || a->key != a0->key || a->n != a0->n)
            return NULL;
    }
    sym_term **args = xmalloc_n(a0->n + 1, sizeof *args), **col = xmalloc_n((size_t)n, sizeof *col);
    for (uint32_t i = 0; i < a0->n; i++) {
        bool same = true;
        for (int k = 0; k < n; k++) {
            col[k] = p[k]->args[0]->args[i];
            same &= col[k] == col[0];
        }
        args[i] = same ? col[0] : sym_modcat(s, col, n);
    }
    sym_term *app = sym_app(s, a0->name, a0->key, args, a0->arg_slots, a0->n, -1);
    free(args);
    free(col);
    return sym_proj(s, app, p[0]->name, p[0]->a, -1);
}

/* Parts that are sums of shards (a pserver's sum of the trainers' grad
 * shards): the sum of the shards' tables, when every part sums the same
 * tables' shards. */
static sym_term *pull_sum(sym_store *s, sym_term **p, int n)
{
    uint32_t m = p[0]->n;
    for (int k = 0; k < n; k++)
        if (p[k]->kind != SYM_SUM || p[k]->n != m)
            return NULL;
    sym_term **base = xmalloc_n(m + 1, sizeof *base), *r = NULL;
    bool ok = true;
    for (uint32_t i = 0; ok && i < m; i++) {
        base[i] = shard_base(p[0]->args[i], 0, n);
        ok = base[i] != NULL;
        for (int k = 1; ok && k < n; k++) {
            uint32_t hits = 0;
            for (uint32_t q = 0; q < m; q++)
                hits += shard_base(p[k]->args[q], k, n) == base[i];
            ok = hits == 1;
        }
    }
    if (ok)
        r = sym_sum(s, base, m);
    free(base);
    return r;
}

sym_term *sym_modcat(sym_store *s, sym_term **parts, int n)
{
    sym_term *base = shard_base(parts[0], 0, n);
    for (int k = 1; base && k < n; k++)
        if (shard_base(parts[k], k, n) != base)
            base = NULL;
    if (base)
        return base;
    sym_term *r = pull_rowwise(s, parts, n);
    if (!r)
        r = pull_sum(s, parts, n);
    if (r)
        return r;
    const char **slots = xmalloc_n((size_t)n, sizeof *slots);
    for (int k = 0; k < n; k++)
        slots[k] = ir_intern("X");
    r = sym_app(s, ir_intern("@modcat"), ir_internf("%d", n), parts, slots, (uint32_t)n, -1);
    free(slots);
    return r;
}


/* The tables pserver ps serves: the W of its prefetch blocks' lookups. */
static size_t table_names(sym_proc *ps, const char **out)
{
    ir_op *l = sym_listen_op(ps);
    ir_attr *a = l ? ir_op_attr(l, "prefetch_var_name_to_block_id") : NULL;
    size_t n = 0;
    for (size_t k = 0; a && a->type == IR_ATTR_STRINGS && k < a->n_strings; k++) {
        const ir_bytes *s = &a->strings[k];
        const char *colon = memchr(s->data, ':', s->len);
        ir_block *b = colon ? ir_program_block(ps->main, atoi(colon + 1)) : NULL;
        for (size_t i = 0; b && i < b->n_ops; i++) {
            const char *w = !strcmp(b->ops[i]->type, "lookup_sparse_table")
                                ? ir_op_input1(b->ops[i], "W") : NULL;
            bool seen = false;
            for (size_t q = 0; w && q < n; q++)
                seen |= out[q] == w;
            if (w && !seen && n < MAX_TABLES)
                out[n++] = w;
        }
    }
    return n;
}

static bool is_table(sym_job *j, const char *name)
{
    const char *t[MAX_TABLES];
    size_t n = j->n_ps ? table_names(&j->ps[0], t) : 0;
    for (size_t k = 0; k < n; k++)
        if (t[k] == name)
            return true;
    return false;
}

static bool reads(const ir_op *op, const char *name)
{
    for (uint32_t s = 0; s < op->n_inputs; s++)
        for (uint32_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
            if (ir_op_ins(op)[s].args[k] == name)
                return true;
    return false;
}

bool sym_table_accepts(sym_proc *ps, const char *name)
{
    const char *t[MAX_TABLES];
    size_t nt = table_names(ps, t);
    for (size_t bi = 1; nt && bi < ps->main->n_blocks; bi++) {
        ir_block *b = ir_program_block(ps->main, (int32_t)bi);
        bool table_block = false, hit = false;
        for (size_t i = 0; b && i < b->n_ops; i++) {
            const char *param = ir_op_input1(b->ops[i], "Param");
            for (size_t q = 0; param && q < nt; q++)
                table_block |= t[q] == param;
            hit |= reads(b->ops[i], name);
        }
        if (table_block && hit)
            return true;
    }
    return false;
}

static const char *label_of(sym_proc *p, ir_program *prog)
{
    return prog == p->main ? p->label : p->startup_label;
}

/* split_ids: shard k of its SelectedRows input (a table's grad, whose rows
 * are global ids), or of its ids (deduped and sorted by Paddle: the shard
 * is a function of the ids vars together). */
static int do_split_ids(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                        ir_op *op)
{
    ir_block *b = ir_program_block(prog, block);
    const ir_slot *ids = ir_op_input(op, "Ids"), *out = ir_op_output(op, "Out");
    if (!ids || !ids->n_args || !out || !out->n_args)
        return 0;
    const sym_site *site = sym_site_make(c->st, label_of(p, prog), block, (int)i, op);
    ir_var *v = ir_block_find_var_recursive(b, ids->args[0]);
    int n = (int)out->n_args;
    if (ids->n_args == 1 && v && v->type == IR_SELECTED_ROWS) {
        sym_term *t = sym_read(c, p, b, ids->args[0]);
        for (int k = 0; k < n; k++)
            sym_write(p, out->args[k], sym_shard(c->st, t, k, n), site);
        return 1;
    }
    sym_term **args = xmalloc_n(ids->n_args, sizeof *args);
    const char **slots = xmalloc_n(ids->n_args, sizeof *slots);
    for (uint32_t q = 0; q < ids->n_args; q++) {
        args[q] = sym_read(c, p, b, ids->args[q]);
        slots[q] = ir_intern("Ids");
    }
    for (int k = 0; k < n; k++)
        sym_write(p, out->args[k], sym_app(c->st, ir_intern("@ids_shard"), ir_internf("%d/%d", k, n),
                                           args, slots, ids->n_args, -1), site);
    free(args);
    free(slots);
    return 1;
}

static sym_proc *pserver_at(sym_job *j, const char *ep)
{
    for (size_t k = 0; ep && k < j->n_ps; k++)
        if (j->ps[k].endpoint && !strcmp(j->ps[k].endpoint, ep))
            return &j->ps[k];
    return NULL;
}

/* prefetch: X[k] to the pserver epmap[k] names, which runs the block its
 * prefetch_var_name_to_block_id gives X[k] and returns Out[k]. */
static int do_prefetch(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    sym_job *j = c->job;
    const char *label = label_of(p, prog);
    ir_block *b = ir_program_block(prog, block);
    const ir_slot *x = ir_op_input(op, "X"), *out = ir_op_output(op, "Out");
    ir_arena *a = ir_arena_new();
    size_t ne = 0;
    const char **eps = ir_op_get_names(op, "epmap", &ne, a);
    const sym_site *site = sym_site_make(c->st, label, block, (int)i, op);
    int rc = 1;
    for (uint32_t k = 0; x && rc > 0 && k < x->n_args; k++) {
        const char *v = x->args[k], *ep = k < ne ? eps[k] : NULL;
        sym_proc *ps = pserver_at(j, ep);
        int blk = ps ? sym_listen_block(ps, "prefetch_var_name_to_block_id", v) : -1;
        const char *o = out && k < out->n_args ? out->args[k] : NULL;
        rc = -1;
        if (!ps)
            sym_fail(c, label, block, i, op, "prefetches '%s' from %s%s%s, which no pserver of the job serves",
                     v, ep ? "'" : "", ep ? ep : "no endpoint (epmap is too short)", ep ? "'" : "");
        else if (blk < 0)
            sym_fail(c, label, block, i, op, "prefetches '%s' from '%s' (%s), whose listen_and_serv has no "
                     "prefetch block for it (Paddle would run a null block)", v, ep, ps->label);
        else if (!o)
            sym_fail(c, label, block, i, op, "has no Out for X '%s'", v);
        else
            rc = 0;
        if (rc < 0)
            break;
        sym_write(ps, v, sym_read(c, p, b, v), pmap_get(&p->sites, v));
        if (!sym_run_block(c, ps, ps->main, ps->label, blk)) {
            rc = -1;
        } else if (!pmap_get(&ps->vals, o)) {
            sym_fail(c, label, block, i, op, "prefetches '%s' from '%s' (%s), whose prefetch block %d "
                     "writes no '%s'", v, ep, ps->label, blk, o);
            rc = -1;
        } else {
            sym_write(p, o, pmap_get(&ps->vals, o), site);
            rc = 1;
        }
    }
    sym_store_set_site(c->st, site);
    ir_arena_free(a);
    return rc;
}

/* The table T_k that part k of a merge_ids is a lookup in, when it looks
 * up exactly shard k of the ids (Rows[k]), else NULL. */
static sym_term *looked_up(sym_term *x, sym_term *rows, sym_term *want_rows)
{
    sym_term *a = x->kind == SYM_PROJ ? x->args[0] : NULL;
    sym_term *ids = NULL, *w = NULL;
    if (!a || !is_named(a, "lookup_sparse_table") || rows != want_rows)
        return NULL;
    for (uint32_t q = 0; q < a->n; q++) {
        if (!strcmp(a->arg_slots[q], "Ids"))
            ids = a->args[q];
        else if (!strcmp(a->arg_slots[q], "W"))
            w = a->args[q];
    }
    return ids == rows ? w : NULL;
}

/* MAIN's lookup of the table that wrote `out`, or NULL. */
static ir_op *main_lookup(sym_job *j, const char *out)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        if ((!strcmp(op->type, "lookup_table") || !strcmp(op->type, "lookup_table_v2")) &&
            ir_op_output1(op, "Out") == out && ir_op_input1(op, "Ids") && ir_op_input1(op, "W"))
            return op;
    }
    return NULL;
}

/* merge_ids: when part k is a lookup of shard k of the ids in T_k, Out[j]
 * is MAIN's lookup of Ids[j] in modcat(T_0..T_n-1) (the table itself when
 * each prefetch reached the pserver holding those rows); else 0, and the
 * op is an uninterpreted function (a difference). */
static int do_merge_ids(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                        ir_op *op)
{
    sym_job *j = c->job;
    ir_block *b = ir_program_block(prog, block);
    const ir_slot *ids = ir_op_input(op, "Ids"), *rows = ir_op_input(op, "Rows"),
                  *x = ir_op_input(op, "X"), *out = ir_op_output(op, "Out");
    if (!ids || !rows || !x || !out || !ids->n_args || rows->n_args != x->n_args ||
        out->n_args != ids->n_args || !x->n_args)
        return 0;
    int n = (int)x->n_args;
    sym_term **it = xmalloc_n(ids->n_args, sizeof *it), **tk = xmalloc_n((size_t)n, sizeof *tk);
    const char **slots = xmalloc_n(ids->n_args, sizeof *slots);
    for (uint32_t q = 0; q < ids->n_args; q++) {
        it[q] = sym_read(c, p, b, ids->args[q]);
        slots[q] = ir_intern("Ids");
    }
    bool ok = true;
    for (int k = 0; ok && k < n; k++) {
        sym_term *want = sym_app(c->st, ir_intern("@ids_shard"), ir_internf("%d/%d", k, n), it,
                                 slots, ids->n_args, -1);
        tk[k] = looked_up(sym_read(c, p, b, x->args[k]), sym_read(c, p, b, rows->args[k]), want);
        ok = tk[k] != NULL;
    }
    for (uint32_t q = 0; ok && q < out->n_args; q++)
        ok = main_lookup(j, out->args[q]) != NULL;
    const sym_site *site = sym_site_make(c->st, label_of(p, prog), block, (int)i, op);
    sym_term *w = ok ? sym_modcat(c->st, tk, n) : NULL;
    for (uint32_t q = 0; ok && q < out->n_args; q++) {
        ir_op *mop = main_lookup(j, out->args[q]);
        sym_proc tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.trainer = p->trainer;
        tmp.emulate_from = -1;
        sym_write(&tmp, ir_op_input1(mop, "Ids"), it[q], pmap_get(&p->sites, ids->args[q]));
        sym_write(&tmp, ir_op_input1(mop, "W"), w, pmap_get(&p->sites, x->args[0]));
        sym_run_generic(c, &tmp, j->in->main, ir_program_block(j->in->main, 0), mop, site);
        sym_write(p, out->args[q], pmap_get(&tmp.vals, out->args[q]), site);
        sym_proc_clear(&tmp);
    }
    sym_store_set_site(c->st, site);
    free(it);
    free(tk);
    free(slots);
    return ok ? 1 : 0;
}

/* lookup_table_grad reads only W's dims: W is a leaf named by the var, so
 * the trainer's fake_init table and the reference's table give one grad. */
static int do_lookup_grad(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                          ir_op *op)
{
    const char *w = ir_op_input1(op, "W");
    if (!w || !*w)
        return 0;
    ir_block *b = ir_program_block(prog, block);
    const sym_site *site = sym_site_make(c->st, label_of(p, prog), block, (int)i, op);
    sym_term *dims = sym_leaf(c->st, ir_internf("dims:%s", w), sym_var_rows(b, w));
    sym_run_with(c, p, prog, b, op, site, w, dims, pmap_get(&p->sites, w));
    return 1;
}

/* The reference's update of a distributed table is Paddle's table block
 * (_create_table_optimize_block), as `verify transpile`'s reference has it:
 * sgd, whatever MAIN's optimizer, with that optimizer's learning rate, on
 * the trainers' grads summed (ref.c made the mean scale(sum, 1/n): the
 * sum is under it). */
static int ref_table_update(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                            ir_op *op)
{
    sym_job *j = c->job;
    const char *param = ir_op_input1(op, "Param"), *grad = ir_op_input1(op, "Grad");
    const char *lr = ir_op_input1(op, "LearningRate"), *out = ir_op_output1(op, "ParamOut");
    if (p != &j->ref || !(ir_op_role(op) & IR_ROLE_OPTIMIZE) || !param || !grad || !lr || !out ||
        !is_table(j, param))
        return 0;
    ir_block *b = ir_program_block(prog, block);
    sym_term *g = sym_read(c, p, b, grad);
    if (g->kind == SYM_SCALE && g->bias == 0 && g->scale == (double)(float)(1.0 / (double)j->n_tr))
        g = g->args[0];
    sym_term *args[] = {g, sym_read(c, p, b, lr), sym_read(c, p, b, param)};
    const char *slots[] = {ir_intern("Grad"), ir_intern("LearningRate"), ir_intern("Param")};
    sym_term *app = sym_app(c->st, ir_intern("sgd"), ir_intern("Grad:1,LearningRate:1,Param:1 | "),
                            args, slots, 3, -1);
    const sym_site *site = sym_site_make(c->st, p->label, block, (int)i, op);
    sym_write(p, out, sym_proj(c->st, app, "ParamOut", 0, -1), site);
    return 1;
}

/* A reference view's lookup of a table reads the shared table (R's), as
 * a prefetch reads the pservers' table as it is now: in async a view's
 * dense params are what its trainer last received, but a table is never
 * received. */
static int view_lookup(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    sym_job *j = c->job;
    const char *w = ir_op_input1(op, "W");
    if (!j->view || p < j->view || p >= j->view + j->n_tr || !w || !is_table(j, w) ||
        (strcmp(op->type, "lookup_table") && strcmp(op->type, "lookup_table_v2")))
        return 0;
    ir_block *b = ir_program_block(prog, block);
    sym_term *old = pmap_get(&p->vals, w);
    const sym_site *old_site = pmap_get(&p->sites, w);
    sym_write(p, w, sym_read(c, &j->ref, b, w), pmap_get(&j->ref.sites, w));
    sym_run_generic(c, p, prog, b, op, sym_site_make(c->st, p->label, block, (int)i, op));
    sym_write(p, w, old ? old : sym_read(c, &j->ref, b, w), old_site);
    return 1;
}

int sym_table_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    const char *t = op->type;
    int r = ref_table_update(c, p, prog, block, i, op);
    if (!r)
        r = view_lookup(c, p, prog, block, i, op);
    if (r)
        return r;
    if (!strcmp(t, "split_ids"))
        return do_split_ids(c, p, prog, block, i, op);
    if (!strcmp(t, "prefetch"))
        return do_prefetch(c, p, prog, block, i, op);
    if (!strcmp(t, "merge_ids"))
        return do_merge_ids(c, p, prog, block, i, op);
    if (!strcmp(t, "lookup_table_grad") || !strcmp(t, "lookup_table_v2_grad"))
        return do_lookup_grad(c, p, prog, block, i, op);
    if (!strcmp(t, "checkpoint_notify"))   /* saves: no value depends on it */
        return 1;
    return 0;
}

bool sym_table_setup(sym_job *j)
{
    const char *t[MAX_TABLES];
    size_t nt = j->n_ps ? table_names(&j->ps[0], t) : 0;
    int n = (int)j->n_ps;
    for (size_t q = 0; q < nt; q++) {
        sym_term **x = xmalloc_n((size_t)n, sizeof *x);
        const char **slots = xmalloc_n((size_t)n, sizeof *slots);
        for (int k = 0; k < n; k++) {
            x[k] = sym_read(&j->c, &j->ps[k], ir_program_block(j->ps[k].main, 0), t[q]);
            slots[k] = ir_intern("X");
        }
        /* the pservers' initial rows put together: the table the reference
         * adopts, as it adopts the params the pservers initialised */
        sym_term *tab = sym_app(j->c.st, ir_intern("@table"), t[q], x, slots, (uint32_t)n, -1);
        const sym_site *site = pmap_get(&j->ps[0].sites, t[q]);
        for (int k = 0; k < n; k++)
            sym_write(&j->ps[k], t[q], sym_shard(j->c.st, tab, k, n),
                      pmap_get(&j->ps[k].sites, t[q]));
        sym_write(&j->ref, t[q], tab, site);
        for (size_t v = 0; v < j->n_tr; v++)
            sym_write(&j->view[v], t[q], tab, site);
        if (pmap_add(&j->shared_set, t[q]))
            g_ptr_array_add(j->shared, (void *)t[q]);
        free(x);
        free(slots);
    }
    return true;
}

sym_term *sym_table_value(sym_job *j, const char *name)
{
    if (!is_table(j, name))
        return NULL;
    sym_term **x = xmalloc_n(j->n_ps, sizeof *x);
    for (size_t k = 0; k < j->n_ps; k++)
        x[k] = sym_read(&j->c, &j->ps[k], ir_program_block(j->ps[k].main, 0), name);
    sym_term *r = sym_modcat(j->c.st, x, (int)j->n_ps);
    free(x);
    return r;
}

static void site_text(GString *g, const sym_site *s)
{
    if (!s || !s->op)
        g_string_append(g, s ? s->prog : "(no op)");
    else
        g_string_append_printf(g, "%s block %d op %d '%s'", s->prog, s->block, s->index,
                               s->op->type);
}

static sym_term *grad_of(const sym_term *app)
{
    for (uint32_t q = 0; app->arg_slots && q < app->n; q++)
        if (!strcmp(app->arg_slots[q], "Grad"))
            return app->args[q];
    return NULL;
}

void sym_table_explain(sym_job *j, GString *g, const char *name, sym_term *got, sym_term *want)
{
    g_string_append_printf(g, "the distributed table's shards on the %zu pservers put together "
                           "(%s's last written by ", j->n_ps, name);
    site_text(g, j->n_ps ? pmap_get(&j->ps[0].sites, name) : NULL);
    g_string_append(g, ") = ");
    sym_short(g, got, 3);
    g_string_append(g, " where single-process training has ");
    sym_short(g, want, 3);
    /* Paddle's table block: sgd whatever MAIN's optimizer, on the sum of the
     * trainers' grads (no 1/n) in sync */
    sym_term *ga = got->kind == SYM_PROJ ? got->args[0] : NULL;
    sym_term *wa = want->kind == SYM_PROJ ? want->args[0] : NULL;
    if (ga && wa && ga->kind == SYM_APP && wa->kind == SYM_APP && ga->name != wa->name)
        g_string_append_printf(g, " (the pservers update the table with %s, Paddle's table "
                               "block with %s)", ga->name, wa->name);
    else if (ga && wa && ga->name == wa->name && grad_of(ga) && grad_of(wa) &&
             grad_of(ga) != grad_of(wa))
        g_string_append(g, " (the pservers' table update reads another grad)");
}

