/* backward_core.c - op paths, no-grad sets, grad op emission, renaming and
 * grad var creation; each function follows the seed function it is named
 * after (../shared/seeds/backward.py.txt). */
#include <stdio.h>
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"

static pmap *name_set(void)
{
    return pmap_new();
}

void bw_sync_blocks(bw_run *r)
{
    size_t n = r->prog->n_blocks;
    if (n > r->n_no_grad) {
        r->no_grad = xrealloc(r->no_grad, n * sizeof *r->no_grad);
        for (size_t i = r->n_no_grad; i < n; i++)
            r->no_grad[i] = name_set();
        r->n_no_grad = n;
    }
    if (n > r->n_op_path) {
        r->op_path = xrealloc(r->op_path, n * sizeof *r->op_path);
        for (size_t i = r->n_op_path; i < n; i++)
            r->op_path[i] = NULL;
        r->n_op_path = n;
    }
}

const char *bw_n_sub_block, *bw_n_op_device, *bw_n_sum, *bw_n_while,
    *bw_n_conditional_block, *bw_n_empty;

const ir_attr *bw_attr(const ir_op *op, const char *interned)
{
    for (size_t i = 0; i < op->n_attrs; i++)
        if (op->attrs[i].name == interned)
            return &op->attrs[i];
    return NULL;
}

int32_t bw_sub_block_id(const ir_op *op)
{
    const ir_attr *a = bw_attr(op, bw_n_sub_block);
    return a && a->type == IR_ATTR_BLOCK ? a->block_idx : -1;
}

bool bw_reads(const ir_op *op, const char *name)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t k = 0; k < op->inputs[s].n_args; k++)
            if (op->inputs[s].args[k] == name)
                return true;
    return false;
}

void bw_init(bw_run *r, ir_program *p, const char *path)
{
    bw_n_sub_block = ir_intern("sub_block");
    bw_n_op_device = ir_intern("op_device");
    bw_n_sum = ir_intern("sum");
    bw_n_while = ir_intern("while");
    bw_n_conditional_block = ir_intern("conditional_block");
    bw_n_empty = ir_intern("@EMPTY@");
    memset(r, 0, sizeof *r);
    r->prog = p;
    r->path = path ? path : "main program";
    r->grad_to_var = name_set();
    r->grad_info = name_set();
    r->unique = name_set();
    bw_sync_blocks(r);
}

void bw_free(bw_run *r)
{
    for (size_t i = 0; i < r->n_no_grad; i++)
        pmap_destroy(r->no_grad[i]);
    for (size_t i = 0; i < r->n_op_path; i++)
        if (r->op_path[i])
            g_ptr_array_free(r->op_path[i], TRUE);
    free(r->no_grad);
    free(r->op_path);
    pmap_destroy(r->grad_to_var);
    pmap_destroy(r->grad_info);
    pmap_destroy(r->unique);
    pmap_destroy(r->last_writer);
    memset(r, 0, sizeof *r);
}

void bw_stop_gradients(bw_run *r)
{
    for (size_t i = 0; i < r->prog->n_blocks; i++) {
        const ir_block *b = r->prog->blocks[i];
        for (size_t k = 0; k < b->n_vars; k++)
            if (!b->vars[k]->removed && b->vars[k]->stop_gradient)
                pmap_add(r->no_grad[i], grad_name(b->vars[k]->name));
    }
}

ir_op *bw_new_op(ir_program *p, const char *type)
{
    ir_op *op = ir_op_new(p, type);
    ir_op_set_role(op, IR_ROLE_BACKWARD);
    ir_op_set_string(op, IR_NAME("op_device"), "");
    return op;
}

void bw_sorted_slots(const ir_op *op, bool outputs, size_t *idx)
{
    const ir_slot *s = outputs ? op->outputs : op->inputs;
    size_t n = outputs ? op->n_outputs : op->n_inputs;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && strcmp(s[idx[k - 1]].name, s[idx[k]].name) > 0; k--) {
            size_t t = idx[k];
            idx[k] = idx[k - 1];
            idx[k - 1] = t;
        }
}

size_t bw_arg_names(const ir_op *op, bool outputs, GPtrArray *buf)
{
    const ir_slot *s = outputs ? op->outputs : op->inputs;
    size_t n = outputs ? op->n_outputs : op->n_inputs;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += s[i].n_args;
    g_ptr_array_set_size(buf, (guint)total);
    if (!total)
        return 0;
    size_t *idx = g_newa(size_t, n + 1);
    bw_sorted_slots(op, outputs, idx);
    void **out = buf->pdata;
    for (size_t i = 0; i < n; i++) {
        const ir_slot *sl = &s[idx[i]];
        for (size_t k = 0; k < sl->n_args; k++)
            *out++ = (void *)sl->args[k];
    }
    return total;
}

int bw_op_index(const ir_block *b, const ir_op *op)
{
    for (size_t i = 0; i < b->n_ops; i++)
        if (b->ops[i] == op)
            return (int)i;
    return -1;
}

/* ---- _append_backward_ops_ -------------------------------------------- */

static void merge_into(pmap *dst, pmap *src)
{
    PMAP_FOR(src, e)
        pmap_put(dst, e->key, e->val);
}

/* One block whose grad ops are being made (the seed recurses into an op's
 * sub-block before making the op's own grad; here each block in progress
 * is a frame on an explicit stack, so nesting depth costs no C stack). */
typedef struct {
    ir_block *b, *target;
    GPtrArray *path;
    GPtrArray *grad_ops;
    bw_scan scan;
    size_t p;               /* path ops [0, p) are still to be done, backwards */
    ir_block *gsb;          /* the grad sub-block made for op p - 1 */
} ops_frame;

static void ops_frame_open(ops_frame *f, ir_block *b, GPtrArray *path, ir_block *target)
{
    memset(f, 0, sizeof *f);
    f->b = b;
    f->target = target;
    f->path = path;
    f->p = path ? path->len : 0;
    f->grad_ops = g_ptr_array_new();
    bw_scan_init(&f->scan);
    /* About two grad names per op: room for them at once. */
    pmap_reserve(&f->scan.once, f->p * 2);
}

static void ops_frame_free(ops_frame *f)
{
    g_ptr_array_free(f->grad_ops, TRUE);
    bw_scan_free(&f->scan);
}

/* Makes the grad ops of one forward op (its grad sub-block, if any, is
 * f->gsb, already filled). */
static bool make_grads(bw_run *r, ops_frame *f, const ir_op *op, GPtrArray *out)
{
    ir_block *b = f->b;
    const ir_block *subs[1] = {f->gsb};
    const grad_maker *m = grad_maker_find(op->type);
    if (!m) {
        pdt_error("%s: block %d, op %d '%s': no gradient maker is known for op type '%s', "
                  "and the op is on the gradient path",
                  r->path, b->idx, bw_op_index(b, op), op->type, op->type);
        return false;
    }
    grad_ctx c = {0};
    c.prog = r->prog;
    c.fwd = op;
    c.no_grad = r->no_grad[b->idx];
    /* Paddle merges each op's grad_to_var into the run's map in op order;
     * writing straight into it gives the same map. */
    c.grad_to_var = r->grad_to_var;
    c.sub_blocks = subs;
    c.n_sub_blocks = f->gsb ? 1 : 0;
    c.out = out;
    g_ptr_array_set_size(out, 0);
    if (!grad_make(m, &c)) {
        pdt_error("%s: block %d, op %d '%s': %s", r->path, b->idx, bw_op_index(b, op),
                  op->type, c.err);
        return false;
    }
    const ir_attr *dev = bw_attr(op, bw_n_op_device);
    for (size_t i = 0; i < c.out->len; i++) {
        ir_op *g = c.out->pdata[i];
        if (dev)
            ir_op_copy_attr(g, dev);
        /* Every grad op ends with op_role Backward (the seed sets it when
         * appending); set now, while g is in cache. */
        ir_op_set_role(g, IR_ROLE_BACKWARD);
        bw_scan_grad(&f->scan, g, op, f->grad_ops->len, c.no_grad);
        g_ptr_array_add(f->grad_ops, g);
    }
    return true;
}

/* Walks the path backwards from f->p; returns 1 with *child set when a
 * sub-block must be done first, 0 when the frame is done, -1 on error. */
static int ops_frame_walk(bw_run *r, ops_frame *f, GPtrArray *out, ops_frame *child)
{
    for (; f->p > 0; f->p--) {
        const ir_op *op = f->path->pdata[f->p - 1];
        int32_t sid = f->gsb ? -1 : bw_sub_block_id(op);
        ir_block *sub = sid >= 0 ? ir_program_block(r->prog, sid) : NULL;
        if (sub) {
            f->gsb = ir_program_add_block(r->prog, f->target->idx);
            f->gsb->has_forward_block_idx = true;
            f->gsb->forward_block_idx = sub->idx;
            bw_sync_blocks(r);
            ops_frame_open(child, sub, r->op_path[sid], f->gsb);
            return 1;
        }
        bool ok = make_grads(r, f, op, out);
        f->gsb = NULL;
        if (!ok)
            return -1;
    }
    return 0;
}

/* The seed's steps after making the grad ops, then the append. */
static void ops_frame_close(bw_run *r, ops_frame *f)
{
    ir_block *b = f->b;
    /* Nothing written twice: the addup step leaves the list as it is; no
     * op meeting a removal or zero-fill test: so does the next step. */
    bool same = f->scan.multi.n == 0;
    GPtrArray *a = bw_addup_scanned(r, f->grad_ops, b->idx, &f->scan);
    GPtrArray *c2;
    if (same && !f->scan.remove_may_act) {
        c2 = a;
    } else {
        c2 = bw_remove_no_grad_branch(r, a, r->no_grad[b->idx]);
        g_ptr_array_free(a, TRUE);
        same = false;
    }
    GPtrArray *fwd = f->path ? f->path : g_ptr_array_new();
    GPtrArray *d = bw_prune_scanned(r, c2, fwd, &f->scan, same);
    if (!f->path)
        g_ptr_array_free(fwd, TRUE);
    g_ptr_array_free(c2, TRUE);
    ir_block_splice(f->target, f->target->n_ops, 0, (ir_op *const *)d->pdata, d->len);
    g_ptr_array_free(d, TRUE);
}

bool bw_append_backward_ops(bw_run *r, ir_block *b, GPtrArray *path, ir_block *target)
{
    pmap_reserve(r->grad_to_var, (path ? path->len : 0) * 2);
    GPtrArray *out = g_ptr_array_new();
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(ops_frame));
    ops_frame root;
    ops_frame_open(&root, b, path, target);
    g_array_append_val(stack, root);
    bool ok = true;
    while (ok && stack->len) {
        ops_frame *f = &g_array_index(stack, ops_frame, stack->len - 1);
        ops_frame child;
        int st = ops_frame_walk(r, f, out, &child);
        if (st > 0) {
            g_array_append_val(stack, child);   /* f is stale from here */
            continue;
        }
        ok = st == 0;
        if (ok) {
            ops_frame_close(r, f);
            ops_frame_free(f);
            g_array_set_size(stack, stack->len - 1);
        }
    }
    for (guint k = 0; k < stack->len; k++)
        ops_frame_free(&g_array_index(stack, ops_frame, k));
    g_array_free(stack, TRUE);
    g_ptr_array_free(out, TRUE);
    return ok;
}

/* ---- _rename_grad_ ---------------------------------------------------- */

/* Does any output of op name an existing grad var (a rename to do)? */
static bool renames_output(const ir_op *op, const ir_block *b)
{
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t k = 0; k < op->outputs[s].n_args; k++)
            if (grad_is_grad_name(op->outputs[s].args[k]) &&
                ir_block_find_var(b, op->outputs[s].args[k]))
                return true;
    return false;
}

void bw_rename_grad(bw_run *r, ir_block *b, size_t start, pmap *target_grad_map,
                    pmap *skip)
{
    pmap *var_map = name_set();
    if (target_grad_map)
        merge_into(var_map, target_grad_map);
    /* Renames happen only for grads that already have a var, i.e. from an
     * earlier backward pass; a block without any "@GRAD" var (the usual
     * case) has nothing to rename. */
    bool any_grad_var = false;
    for (size_t i = 0; i < b->n_vars && !any_grad_var; i++)
        any_grad_var = !b->vars[i]->removed && grad_is_grad_name(b->vars[i]->name);
    if (!any_grad_var && !var_map->n)
        start = b->n_ops;
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = start; i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        if (!var_map->n && !renames_output(op, b))
            continue;
        bw_arg_names(op, false, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *to = pmap_get(var_map, buf->pdata[k]);
            if (to)
                ir_op_rename_input(op, buf->pdata[k], to);
        }
        bw_arg_names(op, true, buf);
        for (size_t k = 0; k < buf->len; k++) {
            const char *n = buf->pdata[k];
            if (!grad_is_grad_name(n) || !ir_block_find_var(b, n))
                continue;
            if (skip && pmap_has(skip, n))
                continue;
            /* unique_name.generate(name): name + "_" + per-key counter. */
            size_t cnt = GPOINTER_TO_SIZE(pmap_get(r->unique, n));
            pmap_put(r->unique, n, GSIZE_TO_POINTER(cnt + 1));
            const char *fresh = ir_internf("%s_%zu", n, cnt);
            ir_op_rename_output(op, n, fresh);
            pmap_put(var_map, n, (void *)fresh);
        }
    }
    g_ptr_array_free(buf, TRUE);
    PMAP_FOR(var_map, e) {
        void *fwd = pmap_get(r->grad_to_var, e->key);
        if (fwd) {
            pmap_put(r->grad_to_var, e->val, fwd);
            pmap_remove(r->grad_to_var, e->key);
        }
    }
    pmap_destroy(var_map);
}

/* ---- canonical order ------------------------------------------------------ */

static void sort_slots(ir_slot *s, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        ir_slot t = s[i];
        size_t k = i;
        for (; k > 0 && strcmp(s[k - 1].name, t.name) > 0; k--)
            s[k] = s[k - 1];
        s[k] = t;
    }
}

void bw_settle_op(ir_op *op)
{
    if (!op->dirty)
        return;
    sort_slots(op->inputs, op->n_inputs);
    sort_slots(op->outputs, op->n_outputs);
    for (size_t a = 1; a < op->n_attrs; a++) {
        if (strcmp(op->attrs[a - 1].name, op->attrs[a].name) < 0)
            continue;
        ir_attr t = op->attrs[a];
        size_t k = a;
        for (; k > 0 && strcmp(op->attrs[k - 1].name, t.name) > 0; k--)
            op->attrs[k] = op->attrs[k - 1];
        op->attrs[k] = t;
    }
    op->dirty = false;
}

