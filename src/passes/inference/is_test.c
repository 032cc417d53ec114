/* is_test.c - the `is_test` pass: InferenceTranspiler._is_test_pass
 * (fluid 1.4-1.5).  Block 0: an op with an `is_test` attr gets it set to
 * true, other ops of the listed types get one.  fluid 1.4-1.5's
 * Operator._set_attr stored a Python True as an INT 1 (the note's §11.2), so
 * that is what is written, replacing a BOOLEAN attr. */
#include <string.h>

#include "../../diag.h"
#include "../pass.h"

static const char *const activation_types[] = {
    "pool2d", "sigmoid", "logsigmoid", "softshrink", "exp", "brelu", "pow",
    "leaky_relu", "stanh", "relu", "tanh", "tanh_shrink", "sqrt", "abs", "ceil",
    "elu", "floor", "cos", "sin", "round", "reciprocal", "hard_shrink",
    "hard_sigmoid", "relu6", "soft_relu", "swish", "thresholded_relu", "log",
    "square", "softplus", "softsign",
};

static bool listed(const char *type)
{
    for (size_t i = 0; i < sizeof activation_types / sizeof *activation_types; i++)
        if (strcmp(type, activation_types[i]) == 0)
            return true;
    return false;
}

int pass_is_test(pdt_ctx *ctx)
{
    ir_program *p = ctx->main;
    if (!p || p->n_blocks == 0)
        return PDT_OK;
    ir_block *b = p->blocks[0];
    for (size_t i = 0; i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        if (ir_op_has_attr(op, "is_test") || listed(op->type))
            ir_op_set_int(op, "is_test", 1);
    }
    return PDT_OK;
}
