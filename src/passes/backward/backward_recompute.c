/* backward_recompute.c - recompute: the seed's
 * _append_backward_ops_with_checkpoints_ (../shared/seeds/backward.py.txt),
 * using the ProgramStats of backward_program_stats.c.  Function and step
 * names follow the seed; comments say where pdtrans must differ and why. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_program_stats.h"
#include "backward_recompute.h"

typedef struct {
    const char *to;
    size_t order;
} rename_entry;

typedef struct {
    bw_run *r;
    ir_block *block;
    prog_stats stats;
    pmap *ckpt;       /* checkpoint names */
    pmap *hold;       /* vars_should_be_hold */
    pmap *renames;    /* var_name_dict: name -> rename_entry* */
    size_t n_renames;
    GPtrArray *grad_ops;    /* grad_op_descs */
    GPtrArray *local_ops;   /* what Paddle leaves in local_block */
    GPtrArray *buffer_ops;  /* ... and in buffer_block */
} recompute;

/* _rename_arg_ with every var_name_dict entry, applied in insertion order
 * as the seed does (a name renamed to a later key is renamed again). */
static void rename_args(recompute *rc, ir_op *op)
{
    for (int out = 0; out < 2; out++) {
        ir_slot *slots = out ? ir_op_outs(op) : ir_op_ins(op);
        size_t n = out ? op->n_outputs : op->n_inputs;
        for (size_t s = 0; s < n; s++) {
            const char **args = NULL;
            for (size_t k = 0; k < slots[s].n_args; k++) {
                const char *cur = slots[s].args[k];
                long last = -1;
                for (;;) {
                    const rename_entry *e = pmap_get(rc->renames, cur);
                    if (!e || (long)e->order <= last)
                        break;
                    cur = e->to;
                    last = (long)e->order;
                }
                if (cur == slots[s].args[k])
                    continue;
                if (!args) {
                    args = g_newa(const char *, slots[s].n_args + 1);
                    memcpy(args, slots[s].args, slots[s].n_args * sizeof *args);
                }
                args[k] = cur;
            }
            if (!args)
                continue;
            if (out)
                ir_op_set_output(op, slots[s].name, args, slots[s].n_args);
            else
                ir_op_set_input(op, slots[s].name, args, slots[s].n_args);
        }
    }
}

/* Recompute re-makes ops of one block only: no op with a block attr (a
 * sub_block, or any other BLOCK/BLOCKS attr a grad maker would copy). */
static bool refuse_sub_block(recompute *rc, const ir_op *op)
{
    const ir_attr *a = bw_attr(op, IR_WK(sub_block));
    if (!a)
        a = bw_plain_block_attr(op);
    if (!a)
        return false;
    pdt_error("%s: block %d, op %d '%s': recompute does not support ops with a block attr "
              "('%s')",
              rc->r->path, rc->block->idx, bw_op_index(rc->block, op), op->type, a->name);
    return true;
}

/* core.get_grad_op_desc for `op` (fwd: the op of the program, for
 * messages), with op_device copied from op onto the grad ops. */
static bool make_grads(recompute *rc, const ir_op *op, const ir_op *fwd, GPtrArray *out)
{
    bw_run *r = rc->r;
    const grad_maker *m = grad_maker_find(op->type);
    if (!m) {
        pdt_error("%s: block %d, op %d '%s': no gradient maker is known for op type '%s', "
                  "and the op is on the gradient path",
                  r->path, rc->block->idx, bw_op_index(rc->block, fwd), op->type, op->type);
        return false;
    }
    grad_ctx c = {0};
    c.prog = r->prog;
    c.fwd = op;
    c.no_grad = r->no_grad[rc->block->idx];
    c.grad_to_var = r->grad_to_var;
    c.out = out;
    g_ptr_array_set_size(out, 0);
    if (!grad_make(m, &c)) {
        pdt_error("%s: block %d, op %d '%s': %s", r->path, rc->block->idx,
                  bw_op_index(rc->block, fwd), op->type, c.err);
        return false;
    }
    const ir_attr *dev = bw_attr(op, IR_WK(op_device));
    for (size_t i = 0; dev && i < out->len; i++)
        ir_op_copy_attr(out->pdata[i], dev);
    return true;
}

/* _add_descs_to_block: a copy with op_role Backward (op_device is copied
 * onto itself, which changes nothing). */
static ir_op *backward_copy(ir_program *p, const ir_op *op)
{
    ir_op *c = ir_op_clone(p, op);
    ir_op_set_role(c, IR_ROLE_BACKWARD);
    return c;
}

/* The grads of ops[begin, end) in reverse order (a "gap"): made, copied
 * into local_block, and the copies join grad_op_descs. */
static bool gap_grads(recompute *rc, size_t begin, size_t end, GPtrArray *tmp)
{
    GPtrArray *ops = rc->stats.ops;
    for (size_t i = end; i-- > begin;) {
        const ir_op *op = ops->pdata[i];
        if (refuse_sub_block(rc, op) || !make_grads(rc, op, op, tmp))
            return false;
        for (size_t k = 0; k < tmp->len; k++) {
            /* The copy is what Paddle keeps using; the maker's op is
             * dropped, so setting the role in place is the same. */
            ir_op_set_role(tmp->pdata[k], IR_ROLE_BACKWARD);
            g_ptr_array_add(rc->local_ops, tmp->pdata[k]);
            g_ptr_array_add(rc->grad_ops, tmp->pdata[k]);
        }
    }
    return true;
}

/* The var `name` + suffix, created in the forward block like the original
 * (Python's create_var: type, shape, dtype, persistable, stop_gradient;
 * no lod_level). */
static void create_renamed_var(recompute *rc, const char *name, const char *to)
{
    ir_block *b = rc->block;
    if (ir_block_find_var(b, to))
        return;
    const ir_var *ref = ir_block_find_var(b, name);
    ir_var *v = ir_block_var(b, to);
    if (!ref)
        return;
    v->type = ref->type;
    v->tensor_slot = ref->type == IR_SELECTED_ROWS      ? IR_TD_SELECTED_ROWS
                     : ref->type == IR_LOD_TENSOR_ARRAY ? IR_TD_TENSOR_ARRAY
                                                        : IR_TD_LOD_TENSOR;
    v->dtype = ref->dtype;
    ir_var_set_dims(rc->r->prog, v, ref->dims, ref->n_dims);
    v->has_persistable = true;
    v->persistable = ref->persistable;
    v->has_stop_gradient = true;
    v->stop_gradient = ref->stop_gradient;
}

static bool run_segment(recompute *rc, const segment *seg, size_t i, GPtrArray *tmp)
{
    GPtrArray *ops = rc->stats.ops;
    const char *suffix = ir_internf(".subprog_%zu", i);
    GPtrArray *names = g_ptr_array_new();
    for (size_t o = seg->begin; o < seg->end; o++) {
        const ir_op *op = ops->pdata[o];
        if (refuse_sub_block(rc, op)) {
            g_ptr_array_free(names, TRUE);
            return false;
        }
        for (int out = 0; out < 2; out++) {
            bw_arg_names(op, out, names);
            for (size_t k = 0; k < names->len; k++) {
                const char *n = names->pdata[k];
                if (bw_persistable(rc->block, n) || pmap_has(rc->ckpt, n) ||
                    pmap_has(rc->hold, n) ||
                    pmap_has(rc->renames, n))
                    continue;
                rename_entry *e = xmalloc(sizeof(rename_entry));
                e->to = ir_internf("%s%s", n, suffix);
                e->order = rc->n_renames++;
                pmap_put(rc->renames, n, e);
                create_renamed_var(rc, n, e->to);
            }
        }
    }
    g_ptr_array_free(names, TRUE);

    /* 3.a: _add_needed_descs_to_block (ops with an output that is neither
     * persistable nor in memory are re-run) and _add_descs_to_block. */
    GPtrArray *buffer = g_ptr_array_new(), *added = g_ptr_array_new(), *outs = g_ptr_array_new();
    for (size_t o = seg->begin; o < seg->end; o++) {
        const ir_op *op = ops->pdata[o];
        bool needed = false;
        bw_arg_names(op, true, outs);
        for (size_t k = 0; k < outs->len && !needed; k++) {
            const char *n = outs->pdata[k];
            if (bw_persistable(rc->block, n))
                continue;
            needed = !pmap_has(rc->hold, n) && !pmap_has(rc->ckpt, n);
        }
        if (needed) {
            ir_op *c = backward_copy(rc->r->prog, op);
            g_ptr_array_add(buffer, c);
            g_ptr_array_add(rc->buffer_ops, c);
        }
    }
    for (size_t o = seg->begin; o < seg->end; o++) {
        ir_op *c = backward_copy(rc->r->prog, ops->pdata[o]);
        g_ptr_array_add(added, c);
        g_ptr_array_add(rc->local_ops, c);
    }
    /* 3.b */
    for (size_t k = 0; k < buffer->len; k++) {
        rename_args(rc, buffer->pdata[k]);
        g_ptr_array_add(rc->grad_ops, buffer->pdata[k]);
    }
    /* 3.c: grads of the copies, renamed. */
    bool ok = true;
    for (size_t k = added->len; k-- > 0 && ok;) {
        ok = make_grads(rc, added->pdata[k], ops->pdata[seg->begin + k], tmp);
        for (size_t j = 0; ok && j < tmp->len; j++) {
            rename_args(rc, tmp->pdata[j]);
            g_ptr_array_add(rc->grad_ops, tmp->pdata[j]);
        }
    }
    g_ptr_array_free(buffer, TRUE);
    g_ptr_array_free(added, TRUE);
    g_ptr_array_free(outs, TRUE);
    return ok;
}

static bool checkpoints_exist(const bw_run *r, const ir_block *b, const pdt_list *checkpoints)
{
    for (size_t i = 0; i < checkpoints->n; i++)
        if (!ir_block_find_var(b, checkpoints->items[i])) {
            char *hint = pdt_var_hint(b, checkpoints->items[i]);
            pdt_error("%s: block %d has no var '%s' (--checkpoints)%s", r->path, b->idx,
                      checkpoints->items[i], hint);
            g_free(hint);
            return false;
        }
    return true;
}

/* The stats, the checkpoints, the segments and the held vars; returns the
 * segments. */
static GArray *plan(recompute *rc, GPtrArray *path, const pdt_list *checkpoints)
{
    bw_stats_init(&rc->stats, rc->r, rc->block, path);
    bw_stats_add_dropout_seeds(&rc->stats);
    bw_stats_build(&rc->stats);
    GPtrArray *ckpts = bw_stats_sort_checkpoints(&rc->stats, checkpoints);
    rc->ckpt = pmap_new();
    for (size_t i = 0; i < ckpts->len; i++)
        pmap_add(rc->ckpt, ckpts->pdata[i]);
    GArray *segs = bw_stats_segments(&rc->stats, ckpts);
    g_ptr_array_free(ckpts, TRUE);
    rc->hold = pmap_new();
    bw_stats_held_vars(&rc->stats, segs, rc->hold);
    for (size_t i = 0; i < segs->len; i++)
        pdt_note("recompute: segment %zu: ops [%zu, %zu) of the op path", i,
                 g_array_index(segs, segment, i).begin, g_array_index(segs, segment, i).end);
    return segs;
}

/* 3): from the last segment back, the grads of the gap after it, then
 * the segment's recomputation and grads. */
static bool walk_segments(recompute *rc, GArray *segs)
{
    GPtrArray *tmp = g_ptr_array_new();
    bool ok = true;
    size_t max_calculated = rc->stats.ops->len;
    if (segs->len == 0)
        ok = gap_grads(rc, 0, max_calculated, tmp);
    for (size_t i = 0; ok && i < segs->len; i++) {
        const segment *seg = &g_array_index(segs, segment, segs->len - 1 - i);
        if (seg->end < max_calculated)
            ok = gap_grads(rc, seg->end, max_calculated, tmp);
        max_calculated = seg->begin;
        ok = ok && run_segment(rc, seg, i, tmp);
    }
    g_ptr_array_free(tmp, TRUE);
    return ok;
}

/* 3.d and 4); no _find_not_need_ops here, as in the seed. */
static void finish(recompute *rc, ir_block *target, ir_block *local, ir_block *buffer)
{
    bw_run *r = rc->r;
    GPtrArray *a = bw_addup_repetitive_outputs(r, rc->grad_ops, rc->block->idx);
    GPtrArray *d = bw_remove_no_grad_branch(r, a, r->no_grad[rc->block->idx]);
    g_ptr_array_free(a, TRUE);
    GPtrArray *copies = g_ptr_array_sized_new(d->len);
    for (size_t i = 0; i < d->len; i++)
        g_ptr_array_add(copies, backward_copy(r->prog, d->pdata[i]));
    ir_block_splice(target, target->n_ops, 0, (ir_op *const *)copies->pdata, copies->len);
    g_ptr_array_free(copies, TRUE);
    g_ptr_array_free(d, TRUE);
    ir_block_set_ops(local, (ir_op *const *)rc->local_ops->pdata, rc->local_ops->len);
    ir_block_set_ops(buffer, (ir_op *const *)rc->buffer_ops->pdata, rc->buffer_ops->len);
}

static void recompute_free(recompute *rc)
{
    g_ptr_array_free(rc->grad_ops, TRUE);
    g_ptr_array_free(rc->local_ops, TRUE);
    g_ptr_array_free(rc->buffer_ops, TRUE);
    PMAP_FOR(rc->renames, e)
        free(e->val);
    pmap_destroy(rc->renames);
    pmap_destroy(rc->hold);
    pmap_destroy(rc->ckpt);
    bw_stats_free(&rc->stats);
}

bool bw_append_backward_ops_with_checkpoints(bw_run *r, ir_block *b, GPtrArray *path,
                                             ir_block *target, const pdt_list *checkpoints)
{
    if (!checkpoints_exist(r, b, checkpoints))
        return false;
    /* The seed's local_block and buffer_block: created first, never
     * removed, so they stay in the program (and shift the numbering of
     * blocks created later), holding copies of the ops built here. */
    ir_block *local = ir_program_add_block(r->prog, b->idx);
    ir_block *buffer = ir_program_add_block(r->prog, local->idx);
    bw_sync_blocks(r);
    r->scratch[0] = local->idx;
    r->scratch[1] = buffer->idx;
    r->n_scratch = 2;

    recompute rc = {.r = r, .block = b};
    GArray *segs = plan(&rc, path, checkpoints);
    rc.renames = pmap_new();
    rc.grad_ops = g_ptr_array_new();
    rc.local_ops = g_ptr_array_new();
    rc.buffer_ops = g_ptr_array_new();
    bool ok = walk_segments(&rc, segs);
    if (ok)
        finish(&rc, target, local, buffer);
    g_array_free(segs, TRUE);
    recompute_free(&rc);
    return ok;
}

/* Paddle's scratch blocks may keep copies of grad ops that the pruning
 * steps later dropped from block 0, naming grad vars that no block
 * declares.  Such copies are dead (no op refers to these blocks) but would
 * fail `pdtrans check`; they are left out. */
void bw_recompute_prune_scratch(bw_run *r)
{
    const char *empty = ir_intern(EMPTY_VAR);
    for (size_t i = 0; i < r->n_scratch; i++) {
        ir_block *b = ir_program_block(r->prog, r->scratch[i]);
        if (!b)
            continue;
        GPtrArray *kept = g_ptr_array_sized_new((guint)b->n_ops);
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_op *op = b->ops[k];
            bool ok = true;
            for (int out = 0; out < 2 && ok; out++) {
                const ir_slot *slots = out ? ir_op_outs(op) : ir_op_ins(op);
                size_t n = out ? op->n_outputs : op->n_inputs;
                for (size_t s = 0; s < n && ok; s++)
                    for (size_t a = 0; a < slots[s].n_args && ok; a++)
                        ok = slots[s].args[a] == empty ||
                             ir_block_find_var_recursive(b, slots[s].args[a]);
            }
            if (ok)
                g_ptr_array_add(kept, op);
            else
                op->block = NULL;
        }
        if (kept->len != b->n_ops)
            ir_block_set_ops(b, (ir_op *const *)kept->pdata, kept->len);
        g_ptr_array_free(kept, TRUE);
    }
}
