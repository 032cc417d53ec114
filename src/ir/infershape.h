/* infershape.h - the var-desc fields a created op's compile-time
 * InferShape changes (issue 30 point 3).  Python's block.append_op runs
 * op.desc.infer_var_type(block) and then op.desc.infer_shape(block) as it
 * appends an op with a kernel, so the fields change at creation, in order,
 * on every var the op writes, whether the op's creator made that var or it
 * existed.  The table (infershape_rows.c) holds one row per op type, with
 * the Paddle source that shows it; ir_infer_apply plays a row on a block. */
#ifndef PDT_IR_INFERSHAPE_H
#define PDT_IR_INFERSHAPE_H

#include <stdbool.h>

#include "ir.h"

/* How SetOutputDim computes an output's dims (GetDim of a var without
 * dims reads [0], CompileTimeInferShapeContext::GetDim). */
typedef enum {
    IR_DIM_NONE = 0,
    IR_DIM_COPY,    /* each "IN:OUT" pair of dims: OUT gets IN's dims */
    IR_DIM_SUM,     /* sum: the first X whose product is not 0, else [0] */
    IR_DIM_BCAST,   /* elementwise: X's when X and Y agree, else broadcast */
    IR_DIM_ATTR     /* fill_constant: "ATTR:OUT", the attr's ints or longs */
} ir_dim_rule;

/* What the op's VarTypeInference writes. */
typedef enum {
    IR_VT_NONE = 0,
    IR_VT_SYNC,     /* SetType(in's) and SetDataType(in's): vt "IN:OUT" */
    IR_VT_TYPE,     /* SetOutputType(OUT, in's type) only */
    IR_VT_SUM,      /* SumOpVarTypeInference: SELECTED_ROWS unless an input
                     * is a LOD_TENSOR (or all are arrays); X[0]'s dtype */
    IR_VT_DTYPE     /* SetDataType(OUT, attr "dtype"): vt "dtype:OUT" */
} ir_vt_rule;

typedef struct {
    const char *type;       /* op type */
    const char *in, *out;   /* ctx->ShareLoD(in, out): slots; NULL: none */
    ir_dim_rule dim;
    const char *dims;       /* space-separated "IN:OUT" slot pairs */
    ir_vt_rule vt;
    const char *vts;        /* one "IN:OUT" pair */
    const char *source;     /* the Paddle file and function that shows it */
} ir_infer_row;

/* The row of an op type; NULL when the table has none (the op's
 * InferShape writes no field pdtrans models: the vars stay as they are). */
const ir_infer_row *ir_infer_find(const char *type);

/* Plays op's row on the vars of b (found recursively, so an output in a
 * parent block changes too), in Paddle's order: the var type inference,
 * then SetOutputDim, then ShareLoD.  ShareLoD
 * (CompileTimeInferShapeContext::ShareLoD) sets each output's lod_level to
 * the input's (0 when the input has none, the field written even then)
 * when the input is a LoD tensor or tensor array and the output a LoD
 * tensor.  SetDim writes the dims of an output with a tensor desc.  A type
 * change that would move the var's tensor desc to another VarType field is
 * not played (Paddle's SetType keeps the old field beside the new one,
 * which pdtrans's vars cannot hold).  An input var b cannot find reads as
 * a LoD tensor of level 0 without dims for ShareLoD and changes no dims or
 * type.  No row: nothing changes. */
void ir_infer_apply(ir_block *b, const ir_op *op);

/* Plays ir_infer_apply on every op of b from position `from` on whose
 * `made` bit is set, in block order: one call after a builder appended its
 * ops to a block (the order append_op ran them). */
void ir_infer_apply_made(ir_block *b, size_t from);

#endif
