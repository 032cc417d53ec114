/* backward_path.c - _find_op_path_ (with _get_sub_block_path) and
 * _find_no_grad_vars of the seed (../shared/seeds/backward.py.txt).
 *
 * The seed recurses into each sub-block as it meets the op that runs it;
 * here every block being searched is a frame on an explicit stack, so a
 * program nested 100 000 blocks deep costs heap, not C stack.  A frame stops
 * at an op with a sub-block, the sub-block's frame runs to its end, and the
 * frame resumes at the same op: the same order of work and of errors as
 * the recursion. */
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"

static bool some_in(const ir_slot *slots, size_t n, pmap *set)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < slots[i].n_args; k++)
            if (pmap_has(set, slots[i].args[k]))
                return true;
    return false;
}

static void add_args(const ir_slot *slots, size_t n, pmap *set, pmap *except)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < slots[i].n_args; k++)
            if (!except || !pmap_has(except, slots[i].args[k]))
                pmap_add(set, slots[i].args[k]);
}

static const grad_maker *maker_or_error(bw_run *r, const ir_block *b, size_t i)
{
    const ir_op *op = b->ops[i];
    const grad_maker *m = grad_maker_find(op->type);
    if (!m)
        pdt_error("%s: block %d, op %zu '%s': no gradient maker is known for op type '%s', "
                  "and the op is on the gradient path",
                  r->path, b->idx, i, op->type, op->type);
    return m;
}

/* One block being searched. */
typedef struct {
    ir_block *b;
    pmap *no_grad;          /* the caller's set, or owned (sub-blocks) */
    pmap *owned_targets;    /* sub-blocks: the targets built for them */
    bool is_while, is_sub;
    pmap *input_names, *output_names;
    bool *relevant;
    size_t i;               /* ops [0, i) are still to be walked back */
    bool descended;         /* op i - 1's sub-block is done */
} frame;

static void frame_free(frame *f)
{
    pmap_destroy(f->input_names);
    pmap_destroy(f->output_names);
    free(f->relevant);
    if (f->is_sub) {
        pmap_destroy(f->no_grad);
        pmap_destroy(f->owned_targets);
    }
}

/* The first half of _find_op_path_: what the inputs reach (forward). */
static bool frame_open(bw_run *r, frame *f, pmap *targets, const char *const *inputs,
                       size_t n_inputs)
{
    ir_block *b = f->b;
    f->input_names = pmap_new();
    for (size_t i = 0; i < n_inputs; i++)
        pmap_add(f->input_names, inputs[i]);
    f->output_names = pmap_new();
    pmap_reserve(f->output_names, b->n_ops);
    PMAP_FOR(targets, it_s)
        pmap_add(f->output_names, it_s->key);
    f->relevant = xmalloc((b->n_ops + 1) * sizeof *f->relevant);
    for (size_t i = 0; i < b->n_ops; i++)
        f->relevant[i] = true;
    f->i = b->n_ops;
    if (!n_inputs)
        return true;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        if (some_in(ir_op_ins(op), op->n_inputs, f->input_names)) {
            const grad_maker *m = maker_or_error(r, b, i);
            if (!m)
                return false;
            if (m->kind != GM_NONE) {
                add_args(ir_op_outs(op), op->n_outputs, f->input_names, f->no_grad);
                continue;
            }
        }
        f->relevant[i] = false;
    }
    return true;
}

/* _get_sub_block_path for op's sub-block `sub`: for conditional_block and
 * while, a frame searching the sub-block towards the op's needed outputs
 * (with an empty no-grad set, as in the seed), returned in *child; for any
 * other op, all of the sub-block's ops, stored at once. */
static bool sub_block_frame(bw_run *r, const frame *f, const ir_op *op, ir_block *sub,
                            frame *child, bool *has_child)
{
    *has_child = false;
    bw_sync_blocks(r);
    if (op->type != IR_WK(conditional_block) && op->type != IR_WK(while)) {
        GPtrArray *path = g_ptr_array_new();
        for (size_t i = 0; i < sub->n_ops; i++)
            g_ptr_array_add(path, sub->ops[i]);
        if (r->op_path[sub->idx])
            g_ptr_array_free(r->op_path[sub->idx], TRUE);
        r->op_path[sub->idx] = path;
        return true;
    }
    pmap *st = pmap_new();
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
            if (pmap_has(f->output_names, ir_op_outs(op)[s].args[k]))
                pmap_add(st, ir_op_outs(op)[s].args[k]);
    pmap *outs = pmap_new();
    PMAP_FOR(st, it_s)
        pmap_add(outs, it_s->key);
    for (size_t i = 0; i < sub->n_ops; i++) {
        const ir_op *o = sub->ops[i];
        if (some_in(ir_op_outs(o), o->n_outputs, st))
            add_args(ir_op_ins(o), o->n_inputs, outs, NULL);
    }
    pmap_destroy(st);
    memset(child, 0, sizeof *child);
    child->b = sub;
    child->no_grad = pmap_new();
    child->owned_targets = outs;
    child->is_sub = true;
    child->is_while = op->type == IR_WK(while);
    *has_child = true;
    return frame_open(r, child, outs, NULL, 0);
}

typedef enum { STEP_DONE, STEP_CHILD, STEP_FAIL } step;

/* The backward walk of _find_op_path_, from op f->i - 1 down; stops to
 * hand out the frame of a sub-block. */
static step frame_walk(bw_run *r, frame *f, frame *child)
{
    ir_block *b = f->b;
    for (; f->i > 0; f->i--, f->descended = false) {
        size_t i = f->i - 1;
        const ir_op *op = b->ops[i];
        int32_t sid = f->descended ? -1 : bw_sub_block_id(op);
        ir_block *sub = sid >= 0 ? ir_program_block(r->prog, sid) : NULL;
        if (sub) {
            bool has_child;
            f->descended = true;
            if (!sub_block_frame(r, f, op, sub, child, &has_child)) {
                if (has_child)
                    frame_free(child);
                return STEP_FAIL;
            }
            if (has_child)
                return STEP_CHILD;
        }
        if (some_in(ir_op_outs(op), op->n_outputs, f->output_names)) {
            const grad_maker *m = maker_or_error(r, b, i);
            if (!m)
                return STEP_FAIL;
            if (m->kind != GM_NONE) {
                add_args(ir_op_ins(op), op->n_inputs, f->output_names, f->no_grad);
                continue;
            }
        }
        f->relevant[i] = false;
    }
    return STEP_DONE;
}

/* The end of _find_op_path_: the while fix-up and the path itself. */
static GPtrArray *frame_close(bw_run *r, frame *f, size_t n_inputs)
{
    ir_block *b = f->b;
    if (f->is_while) {
        /* A while body feeds its own inputs: ops writing a needed var join
         * the path even when they come later than its readers. */
        for (size_t i = b->n_ops; i-- > 0;) {
            const ir_op *op = b->ops[i];
            if (f->relevant[i] || !some_in(ir_op_outs(op), op->n_outputs, f->output_names))
                continue;
            f->relevant[i] = true;
            const grad_maker *m = maker_or_error(r, b, i);
            if (!m)
                return NULL;
            if (m->kind != GM_NONE)
                add_args(ir_op_ins(op), op->n_inputs, f->output_names, f->no_grad);
        }
    }
    GPtrArray *path = g_ptr_array_new();
    for (size_t i = 0; i < b->n_ops; i++)
        if (f->relevant[i])
            g_ptr_array_add(path, b->ops[i]);
    for (size_t p = 0; n_inputs && p < path->len; p++) {
        const ir_op *op = path->pdata[p];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++) {
                const char *n = ir_op_ins(op)[s].args[k];
                if (pmap_has(f->input_names, n))
                    continue;
                const ir_var *v = ir_block_find_var(b, n);
                if (v && v->stop_gradient)
                    pmap_add(f->no_grad, n);
            }
    }
    return path;
}

GPtrArray *bw_find_op_path(bw_run *r, ir_block *b, pmap *targets,
                           const char *const *inputs, size_t n_inputs,
                           pmap *no_grad, bool is_while)
{
    GArray *stack = g_array_new(FALSE, TRUE, sizeof(frame));
    frame root = {.b = b, .no_grad = no_grad, .is_while = is_while};
    bool ok = frame_open(r, &root, targets, inputs, n_inputs);
    g_array_append_val(stack, root);
    GPtrArray *result = NULL;
    while (ok && stack->len) {
        frame *f = &g_array_index(stack, frame, stack->len - 1);
        frame child;
        step st = frame_walk(r, f, &child);
        if (st == STEP_CHILD) {
            g_array_append_val(stack, child);   /* f is stale from here */
            continue;
        }
        GPtrArray *path = st == STEP_DONE ? frame_close(r, f, f->is_sub ? 0 : n_inputs) : NULL;
        ok = path != NULL;
        if (!ok)
            break;
        if (f->is_sub) {
            if (r->op_path[f->b->idx])
                g_ptr_array_free(r->op_path[f->b->idx], TRUE);
            r->op_path[f->b->idx] = path;
        } else {
            result = path;
        }
        frame_free(f);
        g_array_set_size(stack, stack->len - 1);
    }
    for (guint k = 0; k < stack->len; k++)
        frame_free(&g_array_index(stack, frame, k));
    g_array_free(stack, TRUE);
    return result;
}

/* ---- _find_no_grad_vars ----------------------------------------------- */

void bw_find_no_grad_vars(bw_run *r, ir_block *b, GPtrArray *path, pmap *targets,
                          pmap *no_grad, pmap *out)
{
    (void)r;
    pmap *output_names = pmap_new();
    pmap_reserve(output_names, path->len * 2);
    PMAP_FOR(targets, it_s)
        pmap_add(output_names, it_s->key);
    for (size_t p = path->len; p-- > 0;) {
        const ir_op *op = path->pdata[p];
        /* The seed skips ops with a sub_block: the grads of conditional_block
         * and while fill missing output grads themselves.  Any other op's
         * grad reads every output grad, so its unused outputs need their
         * fill_zeros_like (the seed would leave a dangling @GRAD name). */
        if (bw_sub_block_id(op) < 0 ||
            (op->type != IR_WK(conditional_block) && op->type != IR_WK(while))) {
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++) {
                    const char *n = ir_op_outs(op)[s].args[k];
                    if (pmap_has(output_names, n) || bw_reads(op, n))
                        continue;
                    const ir_var *v = ir_block_find_var_recursive(b, n);
                    if (!v || !v->stop_gradient)
                        pmap_add(out, n);
                }
        }
        add_args(ir_op_ins(op), op->n_inputs, output_names, no_grad);
    }
    pmap_destroy(output_names);
}

pmap *bw_forward_no_grad(const bw_run *r, int block_idx)
{
    pmap *names = pmap_new();
    PMAP_FOR(r->no_grad[block_idx], e)
        pmap_add(names, grad_strip_suffix(e->key));
    return names;
}

void bw_extend_no_grad(bw_run *r, ir_block *b, GPtrArray *path, pmap *targets,
                       pmap *block_no_grad)
{
    pmap *extra = pmap_new();
    bw_find_no_grad_vars(r, b, path, targets, block_no_grad, extra);
    PMAP_FOR(extra, e)
        pmap_add(block_no_grad, e->key);
    pmap_destroy(extra);
    PMAP_FOR(block_no_grad, e)
        pmap_add(r->no_grad[b->idx], grad_name(e->key));
}
