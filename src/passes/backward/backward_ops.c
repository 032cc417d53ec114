/* backward_ops.c - _append_backward_ops_: makes the grad ops of an op
 * path, block by block (grad sub-blocks first), then runs the seed's three
 * steps on each block's list (backward_addup.c, backward_no_grad.c,
 * backward_prune.c) and appends what is left (../shared/seeds/backward.py.txt). */
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"

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
    for (size_t i = 0; i < c.out->len; i++) {
        ir_op *g = c.out->pdata[i];
        ir_op_copy_attr_from(g, op, IR_WK(op_device));
        /* Every grad op ends with op_role Backward (the seed sets it when
         * appending); set now, while g is in cache. */
        ir_op_set_role(g, IR_ROLE_BACKWARD);
        bw_scan_grad(&f->scan, g, op, f->grad_ops->len, c.no_grad);
        g_ptr_array_add(f->grad_ops, g);
    }
    return true;
}

/* True (after one error) for an op on the gradient path that backward
 * cannot differentiate: a plain op with a block attr (bw_plain_block_attr),
 * when it has a grad maker at all. */
static bool refuse_plain_block_attr(bw_run *r, const ir_block *b, const ir_op *op)
{
    const ir_attr *a = bw_plain_block_attr(op);
    if (!a)
        return false;
    const grad_maker *m = grad_maker_find(op->type);
    if (!m || m->kind == GM_NONE)
        return false;
    pdt_error("%s: block %d, op %d '%s': attr '%s' names a block, but only conditional_block "
              "and while ops can be differentiated with their sub-blocks",
              r->path, b->idx, bw_op_index(b, op), op->type, a->name);
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
        if (!f->gsb && refuse_plain_block_attr(r, f->b, op))
            return -1;
        if (sub) {
            f->gsb = ir_program_add_block(r->prog, f->target->idx);
            f->gsb->has_forward_block_idx = true;
            f->gsb->forward_block_idx = sub->idx;
            bw_sync_blocks(r);
            ops_frame_open(child, sub, r->op_path[sid], f->gsb);
            return 1;
        }
        bool ok = make_grads(r, f, op, out);
        bw_swept(r);    /* the grad ops borrowed op's bytes (attrs, op_device) */
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
    /* About 1.75 grad names per op (1.67 on an MLP): a table sized for
     * two per op was 8 MB at 100k ops, fully touched; one for 1.5 grew by
     * half at the end, to 48 MB at 1M ops where 36 hold them all. */
    pmap_reserve(r->grad_to_var, (path ? path->len : 0) * 7 / 4);
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
