/* hints.c - "did you mean" for vars the user named (--loss, --params, ...):
 * the nearest var names of a block, and for --loss the output of the op
 * Paddle marks as the loss (op_role Loss). */
#include <string.h>

#include "../ir/ir.h"
#include "../suggest.h"
#include "pass.h"

char *pdt_var_hint(const ir_block *b, const char *name)
{
    if (!b)
        return g_strdup("");
    pdt_near near;
    pdt_near_init(&near, name);
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed)
            pdt_near_offer(&near, b->vars[i]->name);
    if (near.n_best)
        return pdt_near_hint(&near, "");
    /* Not a typo but a part of the name ('mean_0.tmp_0' for
     * 'reduce_mean_0.tmp_0'): the first var whose name holds it. */
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && strstr(b->vars[i]->name, name))
            return g_strdup_printf("; did you mean '%s'?", b->vars[i]->name);
    return g_strdup("");
}

/* The forward op marked as the loss: op_role Forward|Loss (256), as
 * append_backward marks it; NULL when none is. */
static const ir_op *loss_op(const ir_block *b)
{
    for (size_t i = 0; i < b->n_ops; i++)
        if (ir_op_role(b->ops[i]) == IR_ROLE_LOSS)
            return b->ops[i];
    return NULL;
}

char *pdt_loss_hint(const ir_block *b, const char *name)
{
    const ir_op *op = b ? loss_op(b) : NULL;
    if (!op || !op->n_outputs || !ir_op_outs(op)[0].n_args)
        return pdt_var_hint(b, name);
    return g_strdup_printf("; the loss op '%s' (op_role Loss) writes '%s': did you mean "
                           "--loss=%s?", op->type, ir_op_outs(op)[0].args[0],
                           ir_op_outs(op)[0].args[0]);
}
