/* grad_control.c - makers of control-flow ops, which take the grad
 * sub-block the backward pass has already filled
 * (controlflow/conditional_block_op.cc, controlflow/while_op.cc). */
#include "grad.h"

#include <string.h>

/* ConditionalBlockGradMaker. */
bool grad_fn_conditional_block(grad_ctx *c)
{
    if (c->n_sub_blocks < 1) {
        g_strlcpy(c->err, "no grad sub-block was built", sizeof c->err);
        return false;
    }
    ir_op *op = grad_new_op(c, "conditional_block_grad");
    grad_set_in(c, op, "Cond", "Cond");
    grad_set_in(c, op, "Input", "Input");
    grad_set_out_as_in(c, op, "Out", "Out");
    grad_set_og(c, op, false, "Out" GRAD_SUFFIX, "Out");
    grad_set_out_as_in(c, op, "Scope", "Scope");
    if (!grad_set_ig(c, op, false, "Input" GRAD_SUFFIX, "Input", false))
        return false;
    ir_op_set_block(op, "sub_block", c->sub_blocks[0]->idx);
    const ir_attr *sc = ir_op_attr(c->fwd, "is_scalar_condition");
    if (sc)
        ir_op_copy_attr(op, sc);
    else
        ir_op_set_bool(op, "is_scalar_condition", false);
    return true;
}

static void add_set(pmap *set, GPtrArray *order, const char *name)
{
    if (pmap_add(set, name) && order)
        g_ptr_array_add(order, (void *)name);
}

/* WhileGradOpMaker.  Paddle collects the outer output grads in an
 * unordered_set, so its order is an accident of hashing; pdtrans keeps
 * first-occurrence order in the grad block. */
bool grad_fn_while(grad_ctx *c)
{
    if (c->n_sub_blocks < 1) {
        g_strlcpy(c->err, "no grad sub-block was built", sizeof c->err);
        return false;
    }
    const ir_block *gb = c->sub_blocks[0];
    const ir_block *fwd_block = ir_program_block(gb->program, gb->forward_block_idx);
    const ir_block *parent = ir_block_parent(gb);
    ir_op *op = grad_new_op(c, "while_grad");
    grad_set_in(c, op, "X", "X");
    grad_set_out_as_in(c, op, "Out", "Out");
    grad_set_out_as_in(c, op, "StepScopes", "StepScopes");

    pmap inner_out = PMAP_INIT;
    for (size_t i = 0; i < gb->n_ops; i++) {
        const ir_op *o = gb->ops[i];
        for (size_t s = 0; s < o->n_outputs; s++)
            for (size_t k = 0; k < ir_op_outs(o)[s].n_args; k++)
                pmap_add(&inner_out, ir_op_outs(o)[s].args[k]);
    }
    ir_op *tmp = ir_op_new(c->prog, "tmp");
    if (!grad_set_ig(c, tmp, false, "G", "X", false)) {
        pmap_free(&inner_out);
        return false;
    }
    const ir_slot *igs = ir_op_output(tmp, "G");
    const char **ig = g_newa(const char *, igs->n_args + 1);
    for (size_t i = 0; i < igs->n_args; i++)
        ig[i] = pmap_has(&inner_out, igs->args[i]) ? igs->args[i] : ir_intern(EMPTY_VAR);
    ir_op_set_output(op, "X" GRAD_SUFFIX, ig, igs->n_args);
    pmap_free(&inner_out);

    pmap block_ins = PMAP_INIT;
    const ir_slot *x = grad_fwd_in(c, "X"), *out = grad_fwd_out(c, "Out");
    for (size_t i = 0; i < x->n_args; i++)
        add_set(&block_ins, NULL, x->args[i]);
    for (size_t i = 0; i < out->n_args; i++)
        add_set(&block_ins, NULL, out->args[i]);
    pmap og_set = PMAP_INIT;
    GPtrArray *og = g_ptr_array_new();
    for (size_t i = 0; i < gb->n_ops; i++) {
        const ir_op *o = gb->ops[i];
        for (size_t s = 0; s < o->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(o)[s].n_args; k++) {
                const char *n = ir_op_ins(o)[s].args[k];
                /* Out@GRAD are the names the grad block reads that nothing
                 * provides: not a while input/output, not written earlier
                 * in the grad block, not declared where the forward block
                 * or the grad block can see (grad vars are only created
                 * after every grad op is built). */
                if (pmap_has(&block_ins, n) ||
                    (fwd_block && ir_block_find_var_recursive(fwd_block, n)) ||
                    (parent && ir_block_find_var_recursive(parent, n)))
                    continue;
                add_set(&og_set, og, n);
            }
        for (size_t s = 0; s < o->n_outputs; s++)
            for (size_t k = 0; k < ir_op_outs(o)[s].n_args; k++)
                add_set(&block_ins, NULL, ir_op_outs(o)[s].args[k]);
    }
    ir_op_set_input(op, "Out" GRAD_SUFFIX, (const char *const *)og->pdata, og->len);
    ir_op_copy_attrs(op, c->fwd);
    ir_op_set_block(op, "sub_block", gb->idx);
    ir_op_set_strings(op, "original_output_grad", (const char *const *)og->pdata, og->len);
    ir_op_set_strings(op, "skip_eager_deletion_vars", NULL, 0);
    g_ptr_array_free(og, TRUE);
    pmap_free(&og_set);
    pmap_free(&block_ins);
    return true;
}
