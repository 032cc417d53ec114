/* backward_vars.c - _append_backward_vars_ of the seed
 * (../shared/seeds/backward.py.txt): creates the grad vars the new grad
 * ops write, with their types and shapes, and drops grad ops with nothing
 * to do.
 *
 * The seed recurses into an op's sub-block before the op itself; here each
 * block in progress is a frame on an explicit stack (no C stack per level
 * of nesting), and the op that runs each block is looked up in an index
 * built once, not by scanning every op of the program per block. */
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"

/* _infer_var_data_type_shape_: dtype and shape of the forward var. */
/* _strip_grad_suffix_(g).  A grad the makers named gives its forward name
 * back when that name holds neither "@GRAD" nor "grad/" (then the only
 * match is the trailing suffix), which spares the string work. */
static const char *strip_grad(const char *g, const char *fwd)
{
    if (fwd && !strstr(fwd, GRAD_SUFFIX) && !strstr(fwd, "grad/")) {
        size_t n = strlen(fwd);
        if (strncmp(g, fwd, n) == 0 && strcmp(g + n, GRAD_SUFFIX) == 0)
            return fwd;
    }
    return grad_strip_suffix(g);
}

/* to_var: grad_to_var[gv->name], or NULL. */
/* Returns the forward var (NULL when missing). */
static const ir_var *infer_dtype_shape(bw_run *r, ir_block *b, ir_var *gv, const char *to_var,
                                       const ir_op *op)
{
    const char *fwd = strip_grad(gv->name, to_var);
    const ir_var *fv = ir_block_find_var_recursive(b, fwd);
    if (!fv) {
        pdt_warning("%s: set grad var '%s' dtype to default FP32, since its forward var "
                    "'%s' is not found", r->path, gv->name, fwd);
        gv->dtype = IR_FP32;
        return NULL;
    }
    gv->dtype = fv->dtype;
    ir_var_share_dims(gv, fv);     /* fv is in r->prog: found from b */
    /* lod_level is what the grad op's compile-time InferShape leaves:
     * ShareLoD from the forward var, from sum's first input, or nothing. */
    const ir_var *lod_from = NULL;
    switch (grad_lod_rule(op->type)) {
    case GRAD_LOD_FORWARD: lod_from = fv; break;
    case GRAD_LOD_FIRST_INPUT:
        if (op->n_inputs && ir_op_ins(op)[0].n_args)
            lod_from = ir_block_find_var_recursive(b, ir_op_ins(op)[0].args[0]);
        break;
    default: break;
    }
    /* ShareLoD sets the field even to 0 (GetLoDLevel of a var without one
     * reads 0), but only from a LoD tensor or tensor array. */
    if (gv->type == IR_LOD_TENSOR && lod_from &&
        (lod_from->type == IR_LOD_TENSOR || lod_from->type == IR_LOD_TENSOR_ARRAY)) {
        gv->has_lod_level = true;
        gv->lod_level = lod_from->has_lod_level ? lod_from->lod_level : 0;
    }
    return fv;
}

/* Is fwd (the forward name of a new grad var, whose var is fv when it
 * is the grad's stripped name) one of r->wanted?  When the wanted names
 * are the trainable parameters, a var that is no parameter answers
 * without a lookup. */
static bool wanted(const bw_run *r, const char *fwd, const ir_var *fv)
{
    if (r->trainable_in) {
        if (!fv || fv->name != fwd)
            fv = ir_block_find_var(r->trainable_in, fwd);
        return fv && bw_is_trainable(fv);
    }
    if (!r->wanted)
        return true;
    if (r->wanted_are_params && fv && fv->name == fwd && !fv->is_parameter)
        return false;
    return pmap_has(r->wanted, fwd);
}

/* has_var_recursive: the block's own var map and its ancestors'. */
static bool visible(const ir_block *b, const char *name)
{
    return ir_block_find_var_recursive(b, name) != NULL;
}

/* The op whose sub_block attr names each block (the first one, in block
 * and op order, as the seed's search finds it); built in one sweep. */
static const ir_op **parent_ops(const ir_program *p)
{
    const ir_op **of = xcalloc(p->n_blocks + 1, sizeof *of);
    for (size_t i = 0; i < p->n_blocks; i++)
        for (size_t k = 0; k < p->blocks[i]->n_ops; k++) {
            int32_t sid = bw_sub_block_id(p->blocks[i]->ops[k]);
            if (sid > 0 && (size_t)sid < p->n_blocks && !of[sid])
                of[sid] = p->blocks[i]->ops[k];
        }
    return of;
}

/* One block in progress. */
typedef struct {
    ir_block *b;
    pmap *parent_vars;      /* the parent op's in-place vars */
    bool *remove;
    size_t i;               /* the op being handled */
    bool descended;         /* its sub-block is done */
} frame;

static void frame_open(bw_run *r, frame *f, ir_block *b, size_t start, const ir_op *parent_op)
{
    memset(f, 0, sizeof *f);
    f->b = b;
    f->i = start;
    f->parent_vars = pmap_new();
    if (parent_op)
        for (size_t s = 0; s < parent_op->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(parent_op)[s].n_args; k++)
                if (ir_op_writes(parent_op, ir_op_ins(parent_op)[s].args[k]))
                    pmap_add(f->parent_vars, ir_op_ins(parent_op)[s].args[k]);
    /* At most one new var per output arg of the new ops: room for them in
     * one step, exactly for an MLP (about 1.7 per op; two per op left the
     * var map 7 MB larger at 1M ops: issue 33). */
    size_t outs = 0;
    for (size_t i = start; i < b->n_ops; i++)
        for (size_t s = 0; s < b->ops[i]->n_outputs; s++)
            outs += ir_op_outs(b->ops[i])[s].n_args;
    ir_block_reserve_vars(b, outs);
    if (r->wanted || r->trainable_in)
        pmap_reserve(r->grad_info, r->n_wanted);
    f->remove = xcalloc(b->n_ops + 1, sizeof *f->remove);
}

/* Drops the ops marked for removal and frees the frame. */
static void frame_close(frame *f)
{
    ir_block *b = f->b;
    size_t n_removed = 0;
    for (size_t i = 0; i < b->n_ops; i++)
        n_removed += f->remove[i];
    /* Most runs remove nothing: no copy of the op list then (it was alive
     * at backward's peak, 16 MB at 1M ops). */
    if (n_removed) {
        GPtrArray *kept = g_ptr_array_sized_new((guint)(b->n_ops - n_removed));
        for (size_t i = 0; i < b->n_ops; i++) {
            if (f->remove[i])
                b->ops[i]->block = NULL;
            else
                g_ptr_array_add(kept, b->ops[i]);
        }
        ir_block_set_ops(b, (ir_op *const *)kept->pdata, kept->len);
        g_ptr_array_free(kept, TRUE);
    }
    free(f->remove);
    pmap_destroy(f->parent_vars);
}

/* Scratch lists shared by every frame (an op is handled in one go). */
typedef struct {
    GPtrArray *outs, *fresh;
    const char *empty;
    bool failed;            /* an error was printed: stop */
} scratch;

/* Does op i stay?  Not when it writes nothing, or reads only grads that
 * exist nowhere. */
static bool op_has_work(const frame *f, const ir_op *op, const scratch *sc)
{
    size_t n_out = 0, n_grad_in = 0, n_exist = 0;
    for (size_t k = 0; k < sc->outs->len; k++)
        n_out += sc->outs->pdata[k] != sc->empty;
    if (!n_out)
        return false;
    /* Only "is there a grad input, and does one exist" matters. */
    for (size_t s = 0; s < op->n_inputs && !n_exist; s++)
        for (size_t k = 0; k < ir_op_ins(op)[s].n_args && !n_exist; k++) {
            const char *n = ir_op_ins(op)[s].args[k];
            if (!grad_is_grad_name(n))
                continue;
            n_grad_in++;
            n_exist += visible(f->b, n) || pmap_has(f->parent_vars, n);
        }
    return !n_grad_in || n_exist;
}

static void keep_visible_sum_inputs(ir_block *b, ir_op *op)
{
    const ir_slot *x = ir_op_input(op, "X");
    const char **keep = g_newa(const char *, (x ? x->n_args : 0) + 1);
    size_t nk = 0;
    for (size_t k = 0; x && k < x->n_args; k++)
        if (visible(b, x->args[k]))
            keep[nk++] = x->args[k];
    if (nk && (!x || nk != x->n_args))
        ir_op_set_input(op, "X", keep, nk);
}

/* A grad op that stays must find every grad it reads.  One it cannot is a
 * grad no maker wrote: an op on the path that reads the forward var gave
 * it none (a forward op without the slot its maker reads, as fuzzing
 * built: `mean` with its input under another slot name).  Paddle stops at
 * the grad op's InferShape; so does this, naming the var, instead of
 * writing a program that reads a var nothing declares. */
static bool grads_found(const bw_run *r, const frame *f, const ir_op *op, const scratch *sc)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++) {
            const char *n = ir_op_ins(op)[s].args[k];
            if (n == sc->empty || !grad_is_grad_name(n) || visible(f->b, n) ||
                pmap_has(f->parent_vars, n))
                continue;
            pdt_error("%s: block %d, op %zu '%s': input '%s' names '%s', which no gradient op "
                      "makes (an op that reads '%s' gives it no gradient)",
                      r->path, f->b->idx, f->i, op->type, ir_op_ins(op)[s].name, n,
                      grad_strip_suffix(n));
            return false;
        }
    return true;
}

/* Creates the vars op writes that no visible block declares yet. */
static void make_vars(bw_run *r, const frame *f, ir_op *op, scratch *sc)
{
    ir_block *b = f->b;
    g_ptr_array_set_size(sc->fresh, 0);
    for (size_t k = 0; k < sc->outs->len; k++) {
        const char *n = sc->outs->pdata[k];
        if (n == sc->empty)
            continue;
        /* (the last writer of each param grad is found after: append_backward.c) */
        if (visible(b, n))
            continue;
        ir_var *v = ir_block_var(b, n);
        v->has_persistable = false;
        g_ptr_array_add(sc->fresh, v);
    }
    /* Then types and shapes (infer_var_type, _infer_var_data_type_shape_)
     * and grad_info, in the order the vars were made. */
    for (size_t k = 0; k < sc->fresh->len; k++) {
        ir_var *v = sc->fresh->pdata[k];
        const char *fwd = pmap_get(r->grad_to_var, v->name);
        int t = grad_var_type(b, op, v->name);
        if (t >= 0) {
            v->type = t;
            v->tensor_slot = t == IR_SELECTED_ROWS      ? IR_TD_SELECTED_ROWS
                             : t == IR_LOD_TENSOR_ARRAY ? IR_TD_TENSOR_ARRAY
                                                        : IR_TD_LOD_TENSOR;
        }
        const ir_var *fv = infer_dtype_shape(r, b, v, fwd, op);
        /* Parameters live in block 0; elsewhere fv could shadow one. */
        if (fwd && wanted(r, fwd, b->idx == 0 ? fv : NULL))
            pmap_put(r->grad_info, fwd, (void *)v->name);
    }
}

/* Ops ahead: every arg of a grad op is looked up in the block's var map
 * (visible), a cache miss each at 1M ops when done one after another. */
enum { PREFETCH_AHEAD = 2 };

/* Handles ops from f->i on; returns the sub-block to do first, if any. */
static ir_block *frame_walk(bw_run *r, frame *f, scratch *sc)
{
    ir_block *b = f->b;
    for (; f->i < b->n_ops; f->i++, f->descended = false) {
        ir_op *op = b->ops[f->i];
        if (f->i + PREFETCH_AHEAD < b->n_ops)
            ir_block_prefetch_args(b, b->ops[f->i + PREFETCH_AHEAD]);
        int32_t sid = f->descended ? -1 : bw_sub_block_id(op);
        ir_block *sub = sid >= 0 ? ir_program_block(r->prog, sid) : NULL;
        if (sub) {
            f->descended = true;
            return sub;
        }
        bw_arg_names(op, true, sc->outs);
        if (!op_has_work(f, op, sc)) {
            f->remove[f->i] = true;
            continue;
        }
        if (op->type == IR_WK(sum))
            keep_visible_sum_inputs(b, op);
        if (!grads_found(r, f, op, sc)) {
            sc->failed = true;
            return NULL;
        }
        make_vars(r, f, op, sc);
        /* Done with this op while it is in cache (see ir_op_settle). */
        ir_op_settle(op);
    }
    return NULL;
}

bool bw_append_backward_vars(bw_run *r, ir_block *b, size_t start)
{
    const ir_op **parent_op = parent_ops(r->prog);
    scratch sc = {g_ptr_array_new(), g_ptr_array_new(), ir_intern(EMPTY_VAR), false};
    GArray *stack = g_array_new(FALSE, FALSE, sizeof(frame));
    frame root;
    frame_open(r, &root, b, start, b->idx > 0 ? parent_op[b->idx] : NULL);
    g_array_append_val(stack, root);
    while (stack->len) {
        frame *f = &g_array_index(stack, frame, stack->len - 1);
        ir_block *sub = sc.failed ? NULL : frame_walk(r, f, &sc);
        if (sub) {
            frame child;
            frame_open(r, &child, sub, 0, sub->idx > 0 ? parent_op[sub->idx] : NULL);
            g_array_append_val(stack, child);
            continue;
        }
        frame_close(f);
        g_array_set_size(stack, stack->len - 1);
    }
    g_array_free(stack, TRUE);
    g_ptr_array_free(sc.outs, TRUE);
    g_ptr_array_free(sc.fresh, TRUE);
    free(parent_op);
    return !sc.failed;
}
