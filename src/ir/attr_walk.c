/* attr_walk.c - attrs still encoded: the program's decoder of them, and
 * walks over an op's attrs (ir_attr_iter, ir.h) that know about them, so
 * that no caller has to. */
#include "ir.h"

#include <stdlib.h>

#include "ir_internal.h"

/* The decoder of the op's encoded attrs: its program's, set by the
 * reader that made it (the program it was made for, or failing that the
 * one it sits in). */
static const ir_attr_codec *codec(const ir_op *op)
{
    const ir_attr_codec *c = ir_enc(op)->program->attr_codec;
    if (!c && op->block)
        c = op->block->program->attr_codec;
    if (!c)
        abort();    /* attrs are left encoded only by a reader that sets it */
    return c;
}

size_t ir_op_decode_kept(const ir_op *op, ir_arena *a, ir_attr *out, const char *only)
{
    return codec(op)->decode(op, a, out, only);
}

bool ir_op_probe_kept(const ir_op *op, const char *name)
{
    return codec(op)->probe(op, name);
}

/* The slots too are left as bytes by the reader only (ir.h). */
void ir_op_load_slots_(const ir_op *op)
{
    ir_op *w = (ir_op *)(uintptr_t)op;
    codec(op)->slots(w, ir_op_arena(w));
}

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
