/* backward_addup.c - _addup_repetitive_outputs_: a grad name written by
 * more than one grad op is renamed NAME@RENAME@block<b>@<n> at each write
 * and the copies are summed before the next read (the first step after the
 * raw grad ops are made; see backward_ops.c).
 *
 * The seed renames by scanning op ranges; here each grad name keeps the list
 * of op positions that mention it, so a rename touches only those ops and
 * the whole pass stays linear in the size of the op list. */
#include <stdio.h>

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
        for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
            if (tracked(a, ir_op_ins(op)[s].args[k]))
                occ_add(a, ir_op_ins(op)[s].args[k], pos);
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
            if (tracked(a, ir_op_outs(op)[s].args[k]))
                occ_add(a, ir_op_outs(op)[s].args[k], pos);
}

static void count_writes(addup *a)
{
    const char *empty = IR_WK(EMPTY);
    pmap *once = pmap_new();
    pmap_reserve(once, a->ops->len * 2);
    for (size_t i = 0; i < a->ops->len; i++) {
        const ir_op *op = a->ops->pdata[i];
        pmap *inputs = bw_input_set(op);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++) {
                const char *v = ir_op_outs(op)[s].args[k];
                if (!bw_counts_as_write(op, inputs, v, empty))
                    continue;
                if (!pmap_add(once, v))
                    pmap_add(a->multi, v);
            }
        pmap_destroy(inputs);
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
    const ir_attr *a = bw_attr(op, IR_WK(op_device));
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
    const char *empty = IR_WK(EMPTY);
    size_t n_slots = op->n_outputs;
    size_t *sidx = g_newa(size_t, n_slots + 1);
    bw_sorted_slots(op, true, sidx);
    /* the op's inputs are not renamed here (rename_range stops before it) */
    pmap *inputs = bw_input_set(op);
    for (size_t pi = 0; pi < n_slots; pi++) {
        const char *slot_name = ir_op_outs(op)[sidx[pi]].name;
        size_t n = ir_op_outs(op)[sidx[pi]].n_args;
        /* on the heap: a slot of 1M args is 8 MB, the whole default stack */
        const char **orig = xmalloc_n(n + 1, sizeof *orig);
        const char **cur = xmalloc_n(n + 1, sizeof *cur);
        for (size_t k = 0; k < n; k++)
            orig[k] = cur[k] = ir_op_outs(op)[sidx[pi]].args[k];
        for (size_t ai = 0; ai < n; ai++) {
            const char *v = orig[ai];
            if (!tracked(a, v) || !bw_counts_as_write(op, inputs, v, empty))
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
                    rename_in_slot(op, &ir_op_outs(op)[sidx[pj]], v, fresh);
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
        free(orig);
        free(cur);
    }
    pmap_destroy(inputs);
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
