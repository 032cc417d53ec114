/* backward_accum.c - the post-processing of the raw grad op list:
 * _addup_repetitive_outputs_ (rename repeated writes and sum them),
 * _remove_no_grad_branch_ (drop dead grad ops, zero-fill where needed) and
 * _find_not_need_ops (drop grad sub-graphs unconnected to the rest).
 *
 * The seed renames by scanning op ranges; here each grad name keeps the list
 * of op positions that mention it, so a rename touches only those ops and
 * the whole pass stays linear in the size of the op list. */
#include <stdio.h>
#include <string.h>

#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"

typedef struct {
    ir_program *prog;
    int block_idx;
    GPtrArray *ops;
    pmap *renamed;        /* name -> GPtrArray (renamed_vars) */
    GPtrArray *order;           /* renamed_vars key order */
    pmap *start;          /* name -> first writer idx + 1 */
    pmap *count;          /* name -> var_rename_count */
    pmap *device;         /* name -> device of the latest writer */
    pmap *occ;            /* name -> GArray of op positions */
    pmap *pend_occ;       /* name -> GPtrArray of pending sum ops */
    GArray *pend_idx;           /* pending sums: insertion positions ... */
    GPtrArray *pend_ops;        /* ... and the ops, in creation order */
    pmap *multi;          /* names written more than once, and fresh ones */
} addup;

static void free_ptr_array(void *p)
{
    g_ptr_array_free(p, TRUE);
}

static void free_array(void *p)
{
    g_array_free(p, TRUE);
}

/* Destroys a map whose values are owned. */
static void destroy_owning(pmap *m, void (*free_val)(void *))
{
    PMAP_FOR(m, s)
        free_val(s->val);
    pmap_destroy(m);
}

static GPtrArray *renamed_list(addup *a, const char *name)
{
    GPtrArray *l = pmap_get(a->renamed, name);
    if (!l) {
        l = g_ptr_array_new();
        pmap_put(a->renamed, name, l);
        g_ptr_array_add(a->order, (void *)name);
    }
    return l;
}

static void occ_add(addup *a, const char *name, size_t pos)
{
    GArray *l = pmap_get(a->occ, name);
    if (!l) {
        l = g_array_new(FALSE, FALSE, sizeof(size_t));
        pmap_put(a->occ, name, l);
    }
    if (l->len && g_array_index(l, size_t, l->len - 1) == pos)
        return;
    g_array_append_val(l, pos);
}

static void pend_occ_add(addup *a, const char *name, ir_op *op)
{
    GPtrArray *l = pmap_get(a->pend_occ, name);
    if (!l) {
        l = g_ptr_array_new();
        pmap_put(a->pend_occ, name, l);
    }
    g_ptr_array_add(l, op);
}

/* Only names written more than once are ever renamed, and only renamed
 * names (and the fresh names they get) are looked up here. */
static bool tracked(addup *a, const char *name)
{
    return pmap_has(a->multi, name);
}

static void register_op(addup *a, size_t pos)
{
    const ir_op *op = a->ops->pdata[pos];
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t k = 0; k < op->inputs[s].n_args; k++)
            if (tracked(a, op->inputs[s].args[k]))
                occ_add(a, op->inputs[s].args[k], pos);
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t k = 0; k < op->outputs[s].n_args; k++)
            if (tracked(a, op->outputs[s].args[k]))
                occ_add(a, op->outputs[s].args[k], pos);
}

/* The seed's write test: a grad name, not @EMPTY@, not read by the same
 * op (in-place).  Renames never change its outcome for an op not yet
 * processed, so counting up front is exact. */
static bool counts_as_write(const ir_op *op, const char *v, const char *empty)
{
    return v != empty && grad_is_grad_name(v) && !bw_reads(op, v);
}

static void count_writes(addup *a)
{
    const char *empty = IR_NAME(EMPTY_VAR);
    pmap *once = pmap_new();
    pmap_reserve(once, a->ops->len * 2);
    for (size_t i = 0; i < a->ops->len; i++) {
        const ir_op *op = a->ops->pdata[i];
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < op->outputs[s].n_args; k++) {
                const char *v = op->outputs[s].args[k];
                if (!counts_as_write(op, v, empty))
                    continue;
                if (!pmap_add(once, v))
                    pmap_add(a->multi, v);
            }
    }
    pmap_destroy(once);
}

/* _rename_arg_(op_descs, var, new, start, idx) and over the pending sums. */
static void rename_range(addup *a, const char *var, const char *fresh, size_t start)
{
    GArray *l = pmap_get(a->occ, var);
    if (l) {
        size_t keep = l->len;
        while (keep > 0 && g_array_index(l, size_t, keep - 1) >= start)
            keep--;
        for (size_t i = keep; i < l->len; i++) {
            size_t pos = g_array_index(l, size_t, i);
            ir_op_rename_input(a->ops->pdata[pos], var, fresh);
            ir_op_rename_output(a->ops->pdata[pos], var, fresh);
            occ_add(a, fresh, pos);
        }
        g_array_set_size(l, (guint)keep);
    }
    GPtrArray *p = pmap_get(a->pend_occ, var);
    if (p) {
        for (size_t i = 0; i < p->len; i++) {
            ir_op_rename_input(p->pdata[i], var, fresh);
            ir_op_rename_output(p->pdata[i], var, fresh);
            pend_occ_add(a, fresh, p->pdata[i]);
        }
        g_ptr_array_set_size(p, 0);
    }
}

/* _accumulate_gradients_by_sum_op_ (FLAGS_max_inplace_grad_add is 0, so
 * the grad_add chain is never chosen). */
static void accumulate(addup *a, const char *var, size_t pos)
{
    GPtrArray *l = pmap_get(a->renamed, var);
    ir_op *sum = bw_new_op(a->prog, "sum");
    ir_op_set_input(sum, "X", (const char *const *)l->pdata, l->len);
    ir_op_set_output1(sum, "Out", var);
    const char *dev = pmap_get(a->device, var);
    ir_op_set_string(sum, "op_device", dev ? dev : "");
    for (size_t i = 0; i < l->len; i++)
        pend_occ_add(a, l->pdata[i], sum);
    pend_occ_add(a, var, sum);
    g_array_append_val(a->pend_idx, pos);
    g_ptr_array_add(a->pend_ops, sum);
    g_ptr_array_set_size(l, 0);
    g_ptr_array_add(l, (void *)var);
}

static const char *op_device(const ir_op *op)
{
    const ir_attr *a = bw_attr(op, bw_n_op_device);
    if (!a || a->type != IR_ATTR_STRING)
        return ir_intern("");
    return ir_intern_n((const char *)a->s.data, a->s.len);
}

static const char *next_name(addup *a, const char *var)
{
    size_t n = GPOINTER_TO_SIZE(pmap_get(a->count, var));
    pmap_put(a->count, var, GSIZE_TO_POINTER(n + 1));
    const char *fresh = ir_internf("%s@RENAME@block%d@%zu", var, a->block_idx, n);
    pmap_add(a->multi, fresh);
    return fresh;
}

static void rename_in_slot(ir_op *op, ir_slot *s, const char *from, const char *to)
{
    const char **args = g_newa(const char *, s->n_args + 1);
    bool changed = false;
    for (size_t k = 0; k < s->n_args; k++) {
        args[k] = s->args[k] == from ? to : s->args[k];
        changed |= s->args[k] == from;
    }
    if (changed)
        ir_op_set_output(op, s->name, args, s->n_args);
}

static void process_outputs(addup *a, size_t idx)
{
    ir_op *op = a->ops->pdata[idx];
    const char *empty = IR_NAME(EMPTY_VAR);
    size_t n_slots = op->n_outputs;
    size_t *sidx = g_newa(size_t, n_slots + 1);
    bw_sorted_slots(op, true, sidx);
    for (size_t pi = 0; pi < n_slots; pi++) {
        const char *slot_name = op->outputs[sidx[pi]].name;
        size_t n = op->outputs[sidx[pi]].n_args;
        const char **orig = g_newa(const char *, n + 1);
        const char **cur = g_newa(const char *, n + 1);
        for (size_t k = 0; k < n; k++)
            orig[k] = cur[k] = op->outputs[sidx[pi]].args[k];
        for (size_t ai = 0; ai < n; ai++) {
            const char *v = orig[ai];
            if (!tracked(a, v) || !counts_as_write(op, v, empty))
                continue;
            GPtrArray *l = renamed_list(a, v);
            if (l->len == 0) {
                g_ptr_array_add(l, (void *)v);
                pmap_put(a->start, v, GSIZE_TO_POINTER(idx + 1));
                continue;
            }
            if (l->len == 1) {
                const char *fresh = next_name(a, v);
                l->pdata[0] = (void *)fresh;
                size_t start = GPOINTER_TO_SIZE(pmap_get(a->start, v)) - 1;
                rename_range(a, v, fresh, start);
                for (size_t pj = 0; pj < pi; pj++)
                    rename_in_slot(op, &op->outputs[sidx[pj]], v, fresh);
                for (size_t k = 0; k < ai; k++)
                    if (cur[k] == v)
                        cur[k] = fresh;
            }
            const char *fresh = next_name(a, v);
            cur[ai] = fresh;
            ir_op_set_output(op, slot_name, cur, n);
            g_ptr_array_add(l, (void *)fresh);
            pmap_put(a->device, v, (void *)op_device(op));
        }
    }
}

static GPtrArray *addup_run(bw_run *r, GPtrArray *ops, int block_idx, const pmap *multi);

GPtrArray *bw_addup_repetitive_outputs(bw_run *r, GPtrArray *ops, int block_idx)
{
    return addup_run(r, ops, block_idx, NULL);
}

GPtrArray *bw_addup_scanned(bw_run *r, GPtrArray *ops, int block_idx, const bw_scan *s)
{
    return addup_run(r, ops, block_idx, &s->multi);
}

/* multi: the names written more than once, when already counted. */
static GPtrArray *addup_run(bw_run *r, GPtrArray *ops, int block_idx, const pmap *multi)
{
    addup a = {0};
    a.prog = r->prog;
    a.block_idx = block_idx;
    a.ops = ops;
    a.renamed = pmap_new();
    a.order = g_ptr_array_new();
    a.start = pmap_new();
    a.count = pmap_new();
    a.device = pmap_new();
    a.occ = pmap_new();
    a.pend_occ = pmap_new();
    a.pend_idx = g_array_new(FALSE, FALSE, sizeof(size_t));
    a.pend_ops = g_ptr_array_new();
    a.multi = pmap_new();
    if (multi) {
        pmap_reserve(a.multi, multi->n);
        PMAP_FOR(multi, e)
            pmap_add(a.multi, e->key);
    } else {
        count_writes(&a);
    }
    /* Nothing is written twice: no renames, no sums, the list as it is. */
    bool quiet = a.multi->n == 0;
    GPtrArray *buf = g_ptr_array_new();
    for (size_t idx = 0; idx < ops->len && !quiet; idx++) {
        bw_arg_names(ops->pdata[idx], false, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *v = buf->pdata[k];
            if (!tracked(&a, v) || !grad_is_grad_name(v))
                continue;
            if (renamed_list(&a, v)->len > 1)
                accumulate(&a, v, idx);
        }
        process_outputs(&a, idx);
        register_op(&a, idx);
    }
    for (size_t i = 0; i < a.order->len; i++) {
        const char *v = a.order->pdata[i];
        if (((GPtrArray *)pmap_get(a.renamed, v))->len > 1)
            accumulate(&a, v, ops->len);
    }
    GPtrArray *res = g_ptr_array_sized_new(ops->len + a.pend_ops->len);
    size_t p = 0;
    for (size_t idx = 0; idx <= ops->len; idx++) {
        while (p < a.pend_ops->len && g_array_index(a.pend_idx, size_t, p) == idx)
            g_ptr_array_add(res, a.pend_ops->pdata[p++]);
        if (idx < ops->len)
            g_ptr_array_add(res, ops->pdata[idx]);
    }
    g_ptr_array_free(buf, TRUE);
    destroy_owning(a.renamed, free_ptr_array);
    g_ptr_array_free(a.order, TRUE);
    pmap_destroy(a.start);
    pmap_destroy(a.count);
    pmap_destroy(a.device);
    destroy_owning(a.occ, free_array);
    destroy_owning(a.pend_occ, free_ptr_array);
    g_array_free(a.pend_idx, TRUE);
    g_ptr_array_free(a.pend_ops, TRUE);
    pmap_destroy(a.multi);
    return res;
}

/* ---- _remove_no_grad_branch_ ------------------------------------------ */

GPtrArray *bw_remove_no_grad_branch(bw_run *r, GPtrArray *ops, pmap *no_grad)
{
    pmap *targets = pmap_new();
    for (size_t i = 0; i < r->n_targets; i++)
        pmap_add(targets, grad_name(r->targets[i]));
    GPtrArray *kept = g_ptr_array_new();
    GPtrArray *ins = g_ptr_array_new();
    /* The tests below are about sets of names, so they walk the slots as
     * they are; only the zero-fill order needs Paddle's sorted order. */
    for (size_t i = 0; i < ops->len; i++) {
        ir_op *op = ops->pdata[i];
        size_t n_out = 0, n_out_no = 0, n_gin = 0, n_gin_no = 0;
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < op->outputs[s].n_args; k++) {
                n_out++;
                n_out_no += pmap_has(no_grad, op->outputs[s].args[k]);
            }
        if (n_out == 0 || n_out_no == n_out)
            continue;
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < op->inputs[s].n_args; k++)
                if (grad_is_grad_name(op->inputs[s].args[k])) {
                    n_gin++;
                    n_gin_no += pmap_has(no_grad, op->inputs[s].args[k]);
                }
        if (n_gin && n_gin_no == n_gin) {
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t k = 0; k < op->outputs[s].n_args; k++)
                    if (!pmap_has(targets, op->outputs[s].args[k]))
                        pmap_add(no_grad, op->outputs[s].args[k]);
            continue;
        }
        g_ptr_array_add(kept, op);
    }
    GPtrArray *res = g_ptr_array_sized_new(kept->len);
    ir_program *prog = r->prog;
    for (size_t i = 0; i < kept->len; i++) {
        ir_op *op = kept->pdata[i];
        bool any = false;
        for (size_t s = 0; s < op->n_inputs && !any; s++)
            for (size_t k = 0; k < op->inputs[s].n_args && !any; k++)
                any = pmap_has(no_grad, op->inputs[s].args[k]);
        if (!any) {
            g_ptr_array_add(res, op);
            continue;
        }
        bw_arg_names(op, false, ins);
        for (size_t k = 0; k < ins->len; k++) {
            const char *arg = ins->pdata[k];
            if (!grad_is_grad_name(arg) || !pmap_has(no_grad, arg))
                continue;
            ir_op *fill = bw_new_op(prog, "fill_any_like");
            ir_op_set_input1(fill, "X", grad_strip_suffix(arg));
            ir_op_set_output1(fill, "Out", arg);
            ir_op_set_float(fill, "value", 0.0f);
            ir_op_set_int(fill, "dtype", -1);
            g_ptr_array_add(res, fill);
        }
        g_ptr_array_add(res, op);
    }
    g_ptr_array_free(kept, TRUE);
    g_ptr_array_free(ins, TRUE);
    pmap_destroy(targets);
    return res;
}

/* ---- _find_not_need_ops ----------------------------------------------- */

/* A grow-only array of size_t. */
typedef struct {
    size_t *v;
    size_t n, cap;
} zvec;

static void zpush(zvec *z, size_t x)
{
    if (z->n == z->cap) {
        z->cap = z->cap ? z->cap * 2 : 64;
        z->v = xrealloc(z->v, z->cap * sizeof *z->v);
    }
    z->v[z->n++] = x;
}

/* The seed builds a graph of versioned var nodes: reading a name uses its
 * latest version, writing one makes a new version.  Here nodes and edges
 * live in flat arrays: op i reads nodes in_ids[in_at[i] .. in_at[i+1]) and
 * writes out_ids[out_at[i] .. out_at[i+1]); a node's readers form a linked
 * list (first_reader / next_reader over edge ids) in creation order. */
/* A candidate head reads only names that are neither forward vars nor
 * written by an earlier grad op.  Most grad ops read a forward var, so the
 * cheap test is first: an op with one is no head. */
static bool has_head(GPtrArray *grad_ops, const pmap *fwd_vars)
{
    pmap *bwd_vars = NULL;
    bool found = false;
    for (size_t i = 0; i < grad_ops->len && !found; i++) {
        const ir_op *op = grad_ops->pdata[i];
        bool head = true;
        for (size_t s = 0; s < op->n_inputs && head; s++)
            for (size_t k = 0; k < op->inputs[s].n_args && head; k++)
                head = !pmap_has(fwd_vars, op->inputs[s].args[k]);
        if (head) {
            if (!bwd_vars) {
                bwd_vars = pmap_new();
                for (size_t j = 0; j < i; j++) {
                    const ir_op *w = grad_ops->pdata[j];
                    for (size_t s = 0; s < w->n_outputs; s++)
                        for (size_t k = 0; k < w->outputs[s].n_args; k++)
                            pmap_add(bwd_vars, w->outputs[s].args[k]);
                }
            }
            for (size_t s = 0; s < op->n_inputs && head; s++)
                for (size_t k = 0; k < op->inputs[s].n_args && head; k++)
                    head = !pmap_has(bwd_vars, op->inputs[s].args[k]);
            found = head;
        }
        if (bwd_vars)
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t k = 0; k < op->outputs[s].n_args; k++)
                    pmap_add(bwd_vars, op->outputs[s].args[k]);
    }
    if (bwd_vars)
        pmap_destroy(bwd_vars);
    return found;
}

static GPtrArray *prune(GPtrArray *grad_ops, const pmap *fwd_vars, bool any_head);

GPtrArray *bw_prune_not_needed(bw_run *r, GPtrArray *grad_ops, GPtrArray *fwd_ops)
{
    (void)r;
    pmap fwd_vars = PMAP_INIT;
    pmap_reserve(&fwd_vars, fwd_ops->len * 2);
    for (size_t i = 0; i < fwd_ops->len; i++) {
        const ir_op *op = fwd_ops->pdata[i];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < op->inputs[s].n_args; k++)
                pmap_add(&fwd_vars, op->inputs[s].args[k]);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < op->outputs[s].n_args; k++)
                pmap_add(&fwd_vars, op->outputs[s].args[k]);
    }
    GPtrArray *res = prune(grad_ops, &fwd_vars, has_head(grad_ops, &fwd_vars));
    pmap_free(&fwd_vars);
    return res;
}

static void add_fwd_vars(pmap *fwd_vars, GPtrArray *fwd_ops)
{
    pmap_reserve(fwd_vars, fwd_ops->len * 2);
    for (size_t i = 0; i < fwd_ops->len; i++) {
        const ir_op *op = fwd_ops->pdata[i];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < op->inputs[s].n_args; k++)
                pmap_add(fwd_vars, op->inputs[s].args[k]);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < op->outputs[s].n_args; k++)
                pmap_add(fwd_vars, op->outputs[s].args[k]);
    }
}

static bool scan_has_head(const bw_scan *s, GPtrArray *ops, const pmap *fwd_vars);

/* scanned: grad_ops is exactly the list s was gathered on; then, with no
 * candidate head, the forward vars are not even collected. */
GPtrArray *bw_prune_scanned(bw_run *r, GPtrArray *grad_ops, GPtrArray *fwd_ops,
                            const bw_scan *s, bool scanned)
{
    if (!scanned)
        return bw_prune_not_needed(r, grad_ops, fwd_ops);
    pmap fwd_vars = PMAP_INIT;
    if (s->head_cands->len)
        add_fwd_vars(&fwd_vars, fwd_ops);
    GPtrArray *res = prune(grad_ops, &fwd_vars,
                           s->head_cands->len && scan_has_head(s, grad_ops, &fwd_vars));
    pmap_free(&fwd_vars);
    return res;
}

static GPtrArray *prune(GPtrArray *grad_ops, const pmap *fwd_vars, bool any_head)
{
    size_t n = grad_ops->len;
    if (!any_head) {
        GPtrArray *res = g_ptr_array_sized_new((guint)n);
        for (size_t i = 0; i < n; i++)
            g_ptr_array_add(res, grad_ops->pdata[i]);
        return res;
    }
    pmap *bwd_vars = pmap_new();
    pmap *latest = pmap_new();
    size_t *in_at = xcalloc(n + 1, sizeof *in_at), *out_at = xcalloc(n + 1, sizeof *out_at);
    zvec in_ids = {0}, out_ids = {0};
    zvec first_reader = {0}, last_reader = {0}; /* per node: edge id + 1, 0 = none */
    zvec edge_op = {0}, next_reader = {0};      /* per edge */
    bool *head = xcalloc(n + 1, sizeof *head);
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = 0; i < n; i++) {
        const ir_op *op = grad_ops->pdata[i];
        bw_arg_names(op, false, buf);
        size_t n_uniq = 0, n_new = 0;
        for (size_t k = 0; k < buf->len; k++) {
            bool dup = false;
            for (size_t j = 0; j < k && !dup; j++)
                dup = buf->pdata[j] == buf->pdata[k];
            if (dup)
                continue;
            n_uniq++;
            if (!pmap_has(fwd_vars, buf->pdata[k]) &&
                !pmap_has(bwd_vars, buf->pdata[k]))
                n_new++;
        }
        head[i] = n_new == n_uniq;
        in_at[i] = in_ids.n;
        for (size_t k = 0; k < buf->len; k++) {
            size_t id = GPOINTER_TO_SIZE(pmap_get(latest, buf->pdata[k]));
            if (!id) {
                zpush(&first_reader, 0);
                zpush(&last_reader, 0);
                id = first_reader.n;
                pmap_put(latest, buf->pdata[k], GSIZE_TO_POINTER(id));
            }
            size_t node = id - 1, edge = edge_op.n;
            zpush(&edge_op, i);
            zpush(&next_reader, 0);
            if (last_reader.v[node])
                next_reader.v[last_reader.v[node] - 1] = edge + 1;
            else
                first_reader.v[node] = edge + 1;
            last_reader.v[node] = edge + 1;
            zpush(&in_ids, node);
        }
        bw_arg_names(op, true, buf);
        out_at[i] = out_ids.n;
        for (size_t k = 0; k < buf->len; k++) {
            pmap_add(bwd_vars, buf->pdata[k]);
            zpush(&first_reader, 0);
            zpush(&last_reader, 0);
            pmap_put(latest, buf->pdata[k], GSIZE_TO_POINTER(first_reader.n));
            zpush(&out_ids, first_reader.n - 1);
        }
    }
    size_t n_in_total = in_ids.n, n_out_total = out_ids.n;
    unsigned *ready = xcalloc(first_reader.n + 1, sizeof *ready);
    unsigned *passed = xcalloc(n + 1, sizeof *passed);
    bool *drop = xcalloc(n + 1, sizeof *drop);
    size_t n_drop = 0;
    zvec queue = {0}, list = {0};
    unsigned stamp = 0;
#define IN_END(i) ((i) + 1 < n ? in_at[(i) + 1] : n_in_total)
#define OUT_END(i) ((i) + 1 < n ? out_at[(i) + 1] : n_out_total)
    for (size_t h = 0; h < n; h++) {
        if (!head[h])
            continue;
        stamp++;
        queue.n = list.n = 0;
        zpush(&queue, h);
        zpush(&list, h);
        for (size_t k = in_at[h]; k < IN_END(h); k++)
            ready[in_ids.v[k]] = stamp;
        bool remove = true;
        for (size_t q = 0; q < queue.n; q++) {
            size_t o = queue.v[q];
            if (passed[o] == stamp)
                continue;
            bool ok = IN_END(o) > in_at[o];
            for (size_t k = in_at[o]; k < IN_END(o) && ok; k++)
                ok = ready[in_ids.v[k]] == stamp;
            if (!ok) {
                remove = false;
                break;
            }
            passed[o] = stamp;
            for (size_t k = out_at[o]; k < OUT_END(o); k++) {
                size_t node = out_ids.v[k];
                for (size_t e = first_reader.v[node]; e; e = next_reader.v[e - 1]) {
                    zpush(&queue, edge_op.v[e - 1]);
                    zpush(&list, edge_op.v[e - 1]);
                }
                ready[node] = stamp;
            }
        }
        if (remove)
            for (size_t k = 0; k < list.n; k++)
                if (!drop[list.v[k]]) {
                    drop[list.v[k]] = true;
                    n_drop++;
                }
    }
#undef IN_END
#undef OUT_END
    GPtrArray *res = g_ptr_array_sized_new((guint)n);
    for (size_t i = 0; i < n; i++)
        if (!drop[i] || n_drop == n)
            g_ptr_array_add(res, grad_ops->pdata[i]);
    zvec *all[] = {&in_ids, &out_ids, &first_reader, &last_reader, &edge_op, &next_reader,
                   &queue, &list};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]->v);
    free(in_at);
    free(out_at);
    free(head);
    free(ready);
    free(passed);
    free(drop);
    g_ptr_array_free(buf, TRUE);
    pmap_destroy(bwd_vars);
    pmap_destroy(latest);
    return res;
}

/* ---- scanning while the ops are made ------------------------------------ */

void bw_scan_init(bw_scan *s)
{
    memset(s, 0, sizeof *s);
    s->head_cands = g_array_new(FALSE, FALSE, sizeof(size_t));
}

void bw_scan_free(bw_scan *s)
{
    pmap_free(&s->once);
    pmap_free(&s->multi);
    g_array_free(s->head_cands, TRUE);
}

static bool is_arg_of(const ir_op *fwd, const char *name)
{
    return bw_reads(fwd, name) || ir_op_writes(fwd, name);
}

void bw_scan_grad(bw_scan *s, const ir_op *op, const ir_op *fwd, size_t idx,
                  const pmap *no_grad)
{
    const char *empty = IR_NAME(EMPTY_VAR);
    /* count_writes */
    size_t n_out = 0, n_out_no = 0;
    for (size_t i = 0; i < op->n_outputs; i++)
        for (size_t k = 0; k < op->outputs[i].n_args; k++) {
            const char *v = op->outputs[i].args[k];
            n_out++;
            n_out_no += pmap_has(no_grad, v);
            if (counts_as_write(op, v, empty) && !pmap_add(&s->once, v))
                pmap_add(&s->multi, v);
        }
    /* The tests of bw_remove_no_grad_branch: an op without outputs or with
     * all of them no-grad, grad inputs all no-grad, or any no-grad input
     * (a zero fill).  None met by any op: the step changes nothing. */
    size_t n_gin = 0, n_gin_no = 0;
    bool reads_fwd = false, reads_no_grad = false;
    for (size_t i = 0; i < op->n_inputs; i++)
        for (size_t k = 0; k < op->inputs[i].n_args; k++) {
            const char *v = op->inputs[i].args[k];
            bool ng = pmap_has(no_grad, v);
            reads_no_grad |= ng;
            if (grad_is_grad_name(v)) {
                n_gin++;
                n_gin_no += ng;
            }
            if (!reads_fwd)
                reads_fwd = is_arg_of(fwd, v);
        }
    if (n_out == 0 || n_out_no == n_out || (n_gin && n_gin_no == n_gin) || reads_no_grad)
        s->remove_may_act = true;
    /* A _find_not_need_ops head reads no forward var at all: a grad op
     * reading an argument of its own forward op is none (the usual case);
     * the others are checked against every forward var later. */
    if (!reads_fwd)
        g_array_append_val(s->head_cands, idx);
}

/* has_head, looking only at the candidates of a scan of exactly ops. */
static bool scan_has_head(const bw_scan *s, GPtrArray *ops, const pmap *fwd_vars)
{
    pmap bwd_vars = PMAP_INIT;
    size_t filled = 0;
    bool found = false;
    for (size_t c = 0; c < s->head_cands->len && !found; c++) {
        size_t i = g_array_index(s->head_cands, size_t, c);
        const ir_op *op = ops->pdata[i];
        bool head = true;
        for (size_t a = 0; a < op->n_inputs && head; a++)
            for (size_t k = 0; k < op->inputs[a].n_args && head; k++)
                head = !pmap_has(fwd_vars, op->inputs[a].args[k]);
        if (!head)
            continue;
        for (; filled < i; filled++) {
            const ir_op *w = ops->pdata[filled];
            for (size_t a = 0; a < w->n_outputs; a++)
                for (size_t k = 0; k < w->outputs[a].n_args; k++)
                    pmap_add(&bwd_vars, w->outputs[a].args[k]);
        }
        for (size_t a = 0; a < op->n_inputs && head; a++)
            for (size_t k = 0; k < op->inputs[a].n_args && head; k++)
                head = !pmap_has(&bwd_vars, op->inputs[a].args[k]);
        found = head;
    }
    pmap_free(&bwd_vars);
    return found;
}
