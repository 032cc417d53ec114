/* infershape.h - the var-desc fields a created op's compile-time
 * InferShape changes (issue 30 point 3).  Python's block.append_op runs
 * op.desc.infer_shape(block) (and infer_var_type) as it appends an op, so
 * the fields change at creation, in order, on every var the op writes,
 * whether the op's creator made that var or it existed.  The table
 * (infershape.c) holds one row per op type, with the Paddle source that
 * shows it; ir_infer_apply plays a row on a block. */
#ifndef PDT_IR_INFERSHAPE_H
#define PDT_IR_INFERSHAPE_H

#include <stdbool.h>

#include "ir.h"

typedef struct {
    const char *type;       /* op type */
    const char *in, *out;   /* ctx->ShareLoD(in, out): slots */
    const char *source;     /* the Paddle file and function that shows it */
} ir_infer_row;

/* The row of an op type; NULL when the table has none (the op's
 * InferShape writes no field pdtrans models: lod_level stays as it is). */
const ir_infer_row *ir_infer_find(const char *type);

/* Plays op's row on the vars of b (found recursively, so an output in a
 * parent block changes too): CompileTimeInferShapeContext::ShareLoD sets
 * each output's lod_level to the input's (0 when the input has none, the
 * field written even then) when the input is a LoD tensor or tensor array
 * and the output a LoD tensor.  An input var b cannot find reads as a LoD
 * tensor of level 0.  No row: nothing changes. */
void ir_infer_apply(ir_block *b, const ir_op *op);

#endif
