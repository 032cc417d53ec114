/* lr_cond.c - paddle.static.nn.cond as Paddle 2.5's fluid.layers
 * learning_rate_scheduler.py calls it: polynomial_decay's cycle
 *     div_val = paddle.static.nn.cond(global_step == zero_var,
 *                                     lambda: one_var, lambda: div_res)
 * and linear_lr_warmup's paddle.static.nn.case with one (pred, fn) pair and
 * a default, which case() turns into one cond(pred, fn, default).  The ops
 * are those of the static branch of cond() in
 * python/paddle/static/nn/control_flow.py (issue 30; research-2x-3x.md 4h):
 *
 *   true:  ConditionalBlock([pred], is_scalar_condition=True): a sub-block
 *          holding true_fn's ops and copy_var_to_parent_block's assign of
 *          its value into parent_block.create_var(...) ("_generated_var_N",
 *          no name given, so Variable's unique_name); complete() appends the
 *          conditional_block (Scope: a new STEP_SCOPES "_generated_var_N")
 *   false: paddle.logical_not(pred) in the parent, then the same for
 *          false_fn under ConditionalBlock([not_pred])
 *   merge: mask = paddle.cast(pred, 'int32'), then select_input(X = [false,
 *          true], Mask = mask) into helper.create_variable(...), again an
 *          unnamed "_generated_var_N" of the true value's dtype and type.
 *
 * cond's own LayerHelper('cond') and ConditionalBlock's
 * LayerHelper('conditional_block') take unique names no var carries. */
#include "../../ir/infershape.h"
#include "../../ir/util.h"
#include "lr_schedule.h"

/* Block.create_var(dtype, shape, type) with no name and no persistable:
 * what copy_var_to_parent_block and select_input create.  Every value
 * here is an FP32 [1] LoDTensor. */
static const char *unnamed_var(lr_build *s, ir_block *b)
{
    const char *name = opt_namer_gen(s->names, "_generated_var");
    opt_var_1(b, name, IR_FP32, false);
    return name;
}

/* One branch: its sub-block, fn's ops, the copy to the parent, then the
 * conditional_block (lr_block_close). */
static const char *branch(lr_build *s, const char *cond, lr_branch b)
{
    lr_case k;
    lr_block_open(s, &k, cond);
    const char *value = b.fn ? b.fn(s, b.arg) : b.var;
    const char *copy = unnamed_var(s, k.parent);
    lr_assign(s, value, copy);
    lr_block_close(s, &k);
    return copy;
}

const char *lr_cond(lr_build *s, const char *pred, lr_branch t, lr_branch f)
{
    const char *tv = branch(s, pred, t);
    const char *not_pred = lr_layer1(s, "logical_not", pred, IR_BOOL);
    const char *fv = branch(s, not_pred, f);
    const char *mask = lr_cast(s, pred, IR_BOOL, IR_INT32);
    const char *out = unnamed_var(s, s->cur);
    const char *xs[2] = {fv, tv};
    ir_op *op = lr_op_new(s, "select_input");
    ir_op_set_input(op, "X", xs, 2);
    ir_op_set_input1(op, "Mask", mask);
    ir_op_set_output1(op, "Out", out);
    /* select_input's InferShape only checks its slots (no field effect);
     * applied all the same, as for every op built here. */
    ir_infer_apply(s->cur, op);
    return out;
}
