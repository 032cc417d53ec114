/* backward_no_grad.c - _remove_no_grad_branch_: drops the grad ops whose
 * outputs are all no-grad (or whose grad inputs all are, which makes their
 * outputs no-grad too) and puts a zero fill_any_like in front of an op that
 * reads a no-grad grad (../shared/seeds/backward.py.txt). */
#include "../../grad/grad.h"
#include "backward_internal.h"

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
            for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++) {
                n_out++;
                n_out_no += pmap_has(no_grad, ir_op_outs(op)[s].args[k]);
            }
        if (n_out == 0 || n_out_no == n_out)
            continue;
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
                if (grad_is_grad_name(ir_op_ins(op)[s].args[k])) {
                    n_gin++;
                    n_gin_no += pmap_has(no_grad, ir_op_ins(op)[s].args[k]);
                }
        if (n_gin && n_gin_no == n_gin) {
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
                    if (!pmap_has(targets, ir_op_outs(op)[s].args[k]))
                        pmap_add(no_grad, ir_op_outs(op)[s].args[k]);
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
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args && !any; k++)
                any = pmap_has(no_grad, ir_op_ins(op)[s].args[k]);
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
