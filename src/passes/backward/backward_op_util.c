/* backward_op_util.c - small questions and edits on single ops that every
 * step of the backward passes shares (Paddle's slot order, attr lookup by
 * interned name, the seed's write test).
 * It calls nothing else of the backward folder. */
#include <string.h>

#include "../../grad/grad.h"
#include "backward_internal.h"

const ir_attr *bw_attr(const ir_op *op, const char *interned)
{
    return ir_op_attr(op, interned);
}

int32_t bw_sub_block_id(const ir_op *op)
{
    /* decodes nothing: an op whose attrs are still bytes has no BLOCK attr */
    const ir_attr *a = ir_op_block_attr(op, IR_WK(sub_block));
    return a && a->type == IR_ATTR_BLOCK ? a->block_idx : -1;
}

const ir_attr *bw_plain_block_attr(const ir_op *op)
{
    if (op->type == IR_WK(conditional_block) || op->type == IR_WK(while))
        return NULL;
    ir_attr_iter it = ir_op_block_attr_iter(op);
    return ir_attr_next(&it);
}

bool bw_reads(const ir_op *op, const char *name)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
            if (ir_op_ins(op)[s].args[k] == name)
                return true;
    return false;
}

ir_op *bw_new_op(ir_program *p, const char *type)
{
    ir_op *op = ir_op_new(p, type);
    ir_op_set_role(op, IR_ROLE_BACKWARD);
    ir_op_set_string(op, IR_WK(op_device), "");
    return op;
}

void bw_sorted_slots(const ir_op *op, bool outputs, size_t *idx)
{
    const ir_slot *s = outputs ? ir_op_outs(op) : ir_op_ins(op);
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
    const ir_slot *s = outputs ? ir_op_outs(op) : ir_op_ins(op);
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

/* The seed's write test: a grad name, not @EMPTY@, not read by the same
 * op (in-place).  Renames never change its outcome for an op not yet
 * processed, so counting up front is exact. */
bool bw_counts_as_write(const ir_op *op, const pmap *inputs, const char *v, const char *empty)
{
    if (v == empty || !grad_is_grad_name(v))
        return false;
    return inputs ? !pmap_has(inputs, v) : !bw_reads(op, v);
}

pmap *bw_input_set(const ir_op *op)
{
    size_t n = 0;
    for (size_t s = 0; s < op->n_inputs; s++)
        n += ir_op_ins(op)[s].n_args;
    if (n <= 16)
        return NULL;
    pmap *set = pmap_new();
    pmap_reserve(set, n);
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
            pmap_add(set, ir_op_ins(op)[s].args[k]);
    return set;
}


bool bw_is_trainable(const ir_var *v)
{
    return !v->removed && v->is_parameter && !v->stop_gradient;
}
