/* k_while.c - while and while_grad, after Paddle's
 * operators/controlflow/while_op.cc.
 *
 * Paddle runs each step in a new child scope (its "step scope") and keeps
 * them for while_grad: a step scope holds the vars the step block declares
 * and a copy of each input X as it was before the step (not of parameters,
 * nor of vars an op of the block both reads and writes).  The executor has
 * one scope, so a step's scope is kept in it as tensors named
 * "STEPSCOPES@t@NAME" (and the step count as "STEPSCOPES@steps").
 * while_grad runs the grad block once per step, last step first, with that
 * step's values put in place of the current ones (and the current ones put
 * back afterwards); a grad of an X that is also an output grad is carried
 * from step to step, any other is summed over the steps. */
#include <glib.h>
#include <string.h>

#include "exec.h"

#define MAX_STEPS 100000

/* Interned: the scope interns every name it is asked for anyway. */
static const char *step_name(const char *scopes, long t, const char *name)
{
    return t < 0 ? ir_internf("%s@steps", scopes) : ir_internf("%s@%ld@%s", scopes, t, name);
}

static bool cond_value(ex_ctx *x, const ir_op *op, bool *run)
{
    const ex_tensor *c = ex_in(x, op, "Condition");
    if (!c)
        return false;
    if (c->numel != 1)
        return ex_fail(x, "Condition has %zu values, not 1", c->numel);
    *run = c->data[0] != 0;
    return true;
}

/* Names some op of the block both reads and writes (Paddle's step scope
 * does not copy them), as a set. */
static void read_and_written(const ir_block *b, pmap *set)
{
    pmap in = PMAP_INIT;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        pmap_clear(&in);
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
                pmap_add(&in, ir_op_ins(op)[s].args[k]);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
                if (pmap_has(&in, ir_op_outs(op)[s].args[k]))
                    pmap_add(set, ir_op_outs(op)[s].args[k]);
    }
    pmap_free(&in);
}

/* Keeps step t: the copied inputs' values from before it (`before`), and
 * the block's own vars after it. */
static void keep_step(ex_ctx *x, const ir_block *b, const char *scopes, long t, ex_scope *before)
{
    const char **names;
    size_t n = ex_scope_names(before, &names);
    for (size_t i = 0; i < n; i++) {
        const char *k = step_name(scopes, t, names[i]);
        ex_scope_put(x->scope, k, ex_tensor_copy(ex_scope_get(before, names[i])));
    }
    free(names);
    for (size_t i = 0; i < b->n_vars; i++) {
        const ir_var *v = b->vars[i];
        const ex_tensor *val = ex_scope_get(x->scope, v->name);
        if (!val || v->removed || ex_scope_get(before, v->name))
            continue;
        ex_scope_put(x->scope, step_name(scopes, t, v->name), ex_tensor_copy(val));
    }
}

static bool k_while(ex_ctx *x, const ir_op *op)
{
    const ir_attr *a = ir_op_attr(op, "sub_block");
    const ir_block *b = a ? ir_program_block(x->prog, a->block_idx) : NULL;
    if (!b)
        return ex_fail(x, "attr 'sub_block' names no block");
    const char *scopes = ex_out_name(op, "StepScopes", 0);
    bool keep = scopes && !ir_op_get_bool(op, "is_test", false), run = false, ok = true;
    const ir_slot *xs = ir_op_input(op, "X");
    pmap no_copy = PMAP_INIT;
    read_and_written(b, &no_copy);
    long t = 0;
    for (; ok && (ok = cond_value(x, op, &run)) && run; t++) {
        if (t >= MAX_STEPS) {
            ok = ex_fail(x, "more than %d steps", MAX_STEPS);
            break;
        }
        ex_scope *before = ex_scope_new();
        for (size_t i = 0; keep && xs && i < xs->n_args; i++) {
            const ex_tensor *v = ex_scope_get(x->scope, xs->args[i]);
            const ir_var *d = ir_block_find_var_recursive(b, xs->args[i]);
            if (v && !(d && d->is_parameter) && !pmap_has(&no_copy, xs->args[i]))
                ex_scope_put(before, xs->args[i], ex_tensor_copy(v));
        }
        ok = ex_run_block(x, b->idx, NULL);
        if (ok && keep)
            keep_step(x, b, scopes, t, before);
        ex_scope_free(before);
    }
    pmap_free(&no_copy);
    if (ok && keep) {
        int64_t one = 1;
        ex_tensor *n = ex_tensor_new(IR_INT64, 1, &one);
        n->data[0] = (double)t;
        ex_scope_put(x->scope, step_name(scopes, -1, NULL), n);
    }
    return ok;
}

/* Puts step t's kept values (of X and of the forward block's vars) in
 * place; what they replace goes to `saved` (a name with no current value
 * is listed in `fresh`). */
static void enter_step(ex_ctx *x, const ir_op *op, const ir_block *fwd, const char *scopes, long t,
                       ex_scope *saved, GPtrArray *fresh)
{
    const ir_slot *xs = ir_op_input(op, "X");
    size_t nx = xs ? xs->n_args : 0, nv = fwd ? fwd->n_vars : 0;
    for (size_t i = 0; i < nx + nv; i++) {
        const char *name = i < nx ? xs->args[i] : fwd->vars[i - nx]->name;
        const ex_tensor *kept = ex_scope_get(x->scope, step_name(scopes, t, name));
        if (!kept || ex_scope_get(saved, name))
            continue;
        const ex_tensor *cur = ex_scope_get(x->scope, name);
        if (cur)
            ex_scope_put(saved, name, ex_tensor_copy(cur));
        else
            g_ptr_array_add(fresh, (void *)name);
        ex_scope_put(x->scope, name, ex_tensor_copy(kept));
    }
}

static void leave_step(ex_ctx *x, ex_scope *saved, GPtrArray *fresh)
{
    const char **names;
    size_t n = ex_scope_names(saved, &names);
    for (size_t i = 0; i < n; i++)
        ex_scope_put(x->scope, names[i], ex_tensor_copy(ex_scope_get(saved, names[i])));
    free(names);
    for (size_t i = 0; i < fresh->len; i++)
        ex_scope_remove(x->scope, g_ptr_array_index(fresh, i));
}

static bool is_output_grad(const ir_op *op, const char *name)
{
    const ir_slot *og = ir_op_input(op, "Out@GRAD");
    for (size_t i = 0; og && i < og->n_args; i++)
        if (og->args[i] == name)
            return true;
    return false;
}

/* An output grad nothing computed is zero, shaped like its var. */
static void zero_missing_output_grads(ex_ctx *x, const ir_op *op)
{
    const ir_slot *og = ir_op_input(op, "Out@GRAD");
    for (size_t i = 0; og && i < og->n_args; i++) {
        const char *g = og->args[i];
        size_t n = strlen(g);
        if (ex_scope_get(x->scope, g) || n <= 6 || strcmp(g + n - 6, "@GRAD"))
            continue;
        const ex_tensor *v = ex_scope_get(x->scope, ir_intern_n(g, n - 6));
        if (v)
            ex_scope_put(x->scope, g, ex_tensor_like(v));
    }
}

/* One step of while_grad: sums the non-carried X grads into acc. */
static bool grad_step(ex_ctx *x, const ir_op *op, int32_t blk, ex_tensor **acc)
{
    const ir_slot *xs = ir_op_input(op, "X"), *gs = ir_op_output(op, "X@GRAD");
    if (!ex_run_block(x, blk, NULL))
        return false;
    for (size_t i = 0; gs && xs && i < gs->n_args && i < xs->n_args; i++) {
        const char *pg = gs->args[i];
        const char *inside = ir_internf("%s@GRAD", xs->args[i]);
        const ex_tensor *v = ex_scope_get(x->scope, inside);
        if (!strcmp(pg, "@EMPTY@") || !v)
            continue;
        if (is_output_grad(op, pg)) {
            /* carried: the next (earlier) step reads it as its output grad */
            if (pg != inside)
                ex_scope_put(x->scope, pg, ex_tensor_copy(v));
            continue;
        }
        ex_tensor *d = ex_densify(v);
        if (!acc[i]) {
            acc[i] = d;
            continue;
        }
        if (d->numel != acc[i]->numel) {
            ex_tensor_free(d);
            return ex_fail(x, "the grad of '%s' changes size between steps", xs->args[i]);
        }
        for (size_t k = 0; k < d->numel; k++)
            acc[i]->data[k] += d->data[k];
        ex_tensor_free(d);
    }
    return true;
}

static bool k_while_grad(ex_ctx *x, const ir_op *op)
{
    const ir_attr *a = ir_op_attr(op, "sub_block");
    const ir_block *gb = a ? ir_program_block(x->prog, a->block_idx) : NULL;
    const char *scopes = ir_op_input1(op, "StepScopes");
    if (!gb || !scopes)
        return ex_fail(x, "needs a grad sub_block and StepScopes");
    const ir_block *fwd = ir_program_block(x->prog, gb->forward_block_idx);
    const ex_tensor *steps = ex_scope_get(x->scope, step_name(scopes, -1, NULL));
    if (!steps)
        return ex_fail(x, "'%s' holds no steps of a while op", scopes);
    /* the count is a tensor's value, which a program can write under that
     * name: no more steps than a while op runs, each charged (an empty
     * grad block charges nothing else) */
    double n_steps = steps->numel ? steps->data[0] : -1;
    if (!(n_steps >= 0 && n_steps <= MAX_STEPS && n_steps == (double)(long)n_steps))
        return ex_fail(x, "'%s@steps' holds no step count of a while op (0 to %d)", scopes,
                       MAX_STEPS);
    ex_work((uint64_t)n_steps);
    zero_missing_output_grads(x, op);
    size_t nx = ex_n_out(op, "X@GRAD");
    ex_tensor **acc = xcalloc(nx + 1, sizeof(ex_tensor *));
    bool ok = true;
    for (long t = (long)n_steps - 1; ok && t >= 0; t--) {
        ex_scope *saved = ex_scope_new();
        GPtrArray *fresh = g_ptr_array_new();
        enter_step(x, op, fwd, scopes, t, saved, fresh);
        ok = grad_step(x, op, a->block_idx, acc);
        leave_step(x, saved, fresh);
        ex_scope_free(saved);
        g_ptr_array_free(fresh, TRUE);
    }
    const ir_slot *gs = ir_op_output(op, "X@GRAD");
    for (size_t i = 0; i < nx; i++) {
        if (ok && acc[i])
            ex_scope_put(x->scope, gs->args[i], acc[i]);
        else
            ex_tensor_free(acc[i]);
    }
    free(acc);
    return ok;
}

const ex_kernel ex_kernels_while[] = {
    {"while", k_while}, {"while_grad", k_while_grad},
    {NULL, NULL},
};
