/* attr_walk.c - walks over an op's attrs (ir_attr_iter, ir.h) that know
 * about attrs still encoded, so that no caller has to. */
#include "ir.h"

#include "ir_internal.h"

ir_attr_iter ir_op_attr_iter(const ir_op *op)
{
    const ir_attr *attrs = ir_op_attrs(op);
    return (ir_attr_iter){attrs, 0, attrs ? op->n_attrs : 0, false};
}

/* An op whose attrs are still encoded has no BLOCK or BLOCKS attr (src/io
 * decodes those ops at once), and a borrower's overlay takes none: nothing
 * to walk, and nothing decoded. */
ir_attr_iter ir_op_block_attr_iter(const ir_op *op)
{
    if (!ir_op_may_name_blocks(op) || !op->attrs)
        return (ir_attr_iter){NULL, 0, 0, true};
    return (ir_attr_iter){op->attrs, 0, op->n_attrs, true};
}

const ir_attr *ir_op_block_attr(const ir_op *op, const char *name)
{
    if (!ir_op_may_name_blocks(op))
        return NULL;
    const ir_attr *at = ir_op_attr(op, name);
    return at && (at->type == IR_ATTR_BLOCK || at->type == IR_ATTR_BLOCKS) ? at : NULL;
}
