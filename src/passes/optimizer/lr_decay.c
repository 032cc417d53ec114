/* lr_decay.c - the ops of Paddle 1.8's learning-rate schedulers
 * (python/paddle/fluid/layers/learning_rate_scheduler.py), built in the
 * order the Python builds them.  Every arithmetic on a Variable there goes
 * through layers/math_op_patch.py (_elemwise_method_creator_):
 *   var / c, var * c, c * var, var + c, c + var, c - var
 *                  -> scale (output tmp_N)
 *   var ** c, var < c, c ** var, c / var
 *                  -> fill_constant (tmp_N, create_tensor: no layer slots,
 *                     force_cpu false) then the op (output tmp_N+1); a
 *                     reversed op (c ** var) puts the constant in X
 *   var OP var     -> the op alone (tmp_N)
 * Layers (cast, floor, exp, cos, ceil, fill_constant, elementwise_min,
 * logical_not, logical_and) name their output TYPE_N.tmp_0 (LayerHelper).
 * control_flow.Switch becomes logical ops and conditional_block ops whose
 * new sub-blocks hold the case's ops.  Everything is under
 * _lr_schedule_guard: op_role LRSched (16), name scope "/".  For a 1.4-1.5
 * target (s->scalar_fill) math_op_patch has no scale: var OP c is
 * create_scalar's fill_constant (tmp_N) and the elementwise_* op (tmp_N+1),
 * c - var create_tensor's and elementwise_sub(X = the constant); for 1.4-1.6
 * (s->var_block) it appends to var.block (lr_math).  A 2.5 target
 * (s->cond_forms) builds polynomial's cycle and the warm-up through
 * paddle.static.nn.cond instead (lr_cond.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/infershape.h"
#include "../../ir/util.h"
#include "lr_schedule.h"

#define COUNTER "@LR_DECAY_COUNTER@"

/* Each op's compile-time InferShape field effects (ShareLoD of X into
 * Out for every op here but fill_constant and conditional_block) are
 * played by ir_infer_apply as the op is built (ir/infershape.c); Out may
 * live in a parent block (assign in a case writes the schedule's var). */

ir_op *lr_op_new(lr_build *s, const char *type)
{
    ir_op *op = opt_op_new(s->ctx->main, type, IR_ROLE_LRSCHED, "/", NULL, NULL, NULL);
    opt_ops_push(s->out, op);
    return op;
}

/* math_op_patch's create_new_tmp_var: "tmp_N" in the current block. */
static const char *tmp_var(lr_build *s, int dtype)
{
    const char *name = opt_namer_gen(s->names, "tmp");
    opt_var_1(s->cur, name, dtype, false);
    return name;
}

/* create_variable_for_type_inference: "TYPE_N.tmp_0", persistable=false. */
const char *lr_layer_var(lr_build *s, const char *type, int dtype)
{
    const char *name = opt_namer_layer_tmp(s->names, type);
    opt_var_1(s->cur, name, dtype, true);
    return name;
}

/* The attrs Operator.__init__'s check_attrs adds from the op protos, as
 * Paddle 1.8.2's own programs hold them (PaddleOCR's det_db program in
 * ../shared/testdata-real/train: exp and cos carry use_cudnn and
 * use_mkldnn, math_op_patch's elementwise_div carries use_mkldnn and
 * x_data_format / y_data_format, less_than carries force_cpu false). */
static void elementwise_attrs(ir_op *op)
{
    ir_op_set_int(op, "axis", -1);
    ir_op_set_bool(op, "use_mkldnn", false);
    ir_op_set_string(op, "x_data_format", "");
    ir_op_set_string(op, "y_data_format", "");
}

/* _scalar_elementwise_op_(x, scale, bias). */
static const char *scale_op(lr_build *s, const char *x, double scale, double bias)
{
    const char *out = tmp_var(s, IR_FP32);
    ir_op *op = opt_scale_op(s->ctx->main, x, out, scale, IR_ROLE_LRSCHED, "/", NULL, NULL);
    ir_op_set_float(op, "bias", (float)bias);
    opt_ops_push(s->out, op);
    ir_infer_apply(s->cur, op);
    return out;
}

/* create_scalar / create_tensor: the constant operand of a binary op. */
static const char *const_var(lr_build *s, double value)
{
    const char *out = tmp_var(s, IR_FP32);
    opt_ops_push(s->out, opt_fill_constant_op(s->ctx->main, out, IR_FP32, value, false, false,
                                              IR_ROLE_LRSCHED, "/", NULL, NULL));
    return out;
}

/* A math_op_patch binary op on two Variables: elementwise_* (float out)
 * or a compare op (bool out, axis and the proto's force_cpu). */
static const char *binary(lr_build *s, const char *type, const char *x, const char *y)
{
    bool compare = strncmp(type, "elementwise_", 12) != 0;
    const char *out = tmp_var(s, compare ? IR_BOOL : IR_FP32);
    ir_op *op = lr_op_new(s, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_input1(op, "Y", y);
    ir_op_set_output1(op, "Out", out);
    if (compare) {
        ir_op_set_int(op, "axis", -1);
        ir_op_set_bool(op, "force_cpu", false);
    } else {
        elementwise_attrs(op);
    }
    ir_infer_apply(s->cur, op);
    return out;
}

/* Python's VAR OP c for a float c (math_op_patch): scale from v1.6.0
 * (_scalar_elementwise_add_/sub_/rsub_/mul_/div_: scale (1, c), (1, -c),
 * (-1, c), (c, 0), (1 / c, 0)); before it (v1.4.1, v1.5.2 _elemwise_method_
 * creator_) create_scalar's fill_constant and the elementwise op, whose
 * attrs are {axis: -1}; c - var (__rsub__, reverse) makes the constant
 * with create_tensor(shape = var.shape, [1] here) and puts it in X. */
typedef enum { LR_ADD, LR_SUB, LR_RSUB, LR_MUL, LR_DIV } lr_math_op;

static const char *lr_math(lr_build *s, lr_math_op m, const char *x, double c)
{
    static const char *const types[] = {
        [LR_ADD] = "elementwise_add", [LR_SUB] = "elementwise_sub",
        [LR_RSUB] = "elementwise_sub", [LR_MUL] = "elementwise_mul",
        [LR_DIV] = "elementwise_div",
    };
    if (!s->scalar_fill) {
        switch (m) {
        case LR_ADD: return scale_op(s, x, 1.0, c);
        case LR_SUB: return scale_op(s, x, 1.0, -c);
        case LR_RSUB: return scale_op(s, x, -1.0, c);
        case LR_MUL: return scale_op(s, x, c, 0.0);
        default: return scale_op(s, x, 1.0 / c, 0.0);
        }
    }
    const char *k = const_var(s, c);
    return m == LR_RSUB ? binary(s, types[m], k, x) : binary(s, types[m], x, k);
}

/* A layer with one input X: activations (floor, exp, cos, ceil: the
 * proto's use_cudnn / use_mkldnn) and logical_not. */
const char *lr_layer1(lr_build *s, const char *type, const char *x, int dtype)
{
    const char *out = lr_layer_var(s, type, dtype);
    ir_op *op = lr_op_new(s, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    if (dtype == IR_FP32) {
        ir_op_set_bool(op, "use_cudnn", false);
        ir_op_set_bool(op, "use_mkldnn", false);
    }
    ir_infer_apply(s->cur, op);
    return out;
}

/* logical_and and nn.elementwise_min: layers with X and Y. */
static const char *layer2(lr_build *s, const char *type, const char *x, const char *y)
{
    bool logical = strcmp(type, "logical_and") == 0;
    const char *out = lr_layer_var(s, type, logical ? IR_BOOL : IR_FP32);
    ir_op *op = lr_op_new(s, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_input1(op, "Y", y);
    ir_op_set_output1(op, "Out", out);
    if (!logical)
        elementwise_attrs(op);
    ir_infer_apply(s->cur, op);
    return out;
}

/* layers.fill_constant(shape=[1], dtype='float32', value). */
static const char *layer_fill(lr_build *s, double value, bool force_cpu)
{
    const char *out = lr_layer_var(s, "fill_constant", IR_FP32);
    opt_ops_push(s->out, opt_fill_constant_op(s->ctx->main, out, IR_FP32, value, force_cpu, true,
                                              IR_ROLE_LRSCHED, "/", NULL, NULL));
    return out;
}

void lr_assign(lr_build *s, const char *x, const char *out)
{
    ir_op *op = lr_op_new(s, "assign");
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    ir_infer_apply(s->cur, op);
}

/* _decay_step_counter(begin): autoincreased_step_counter creates the
 * int64 counter (startup value begin - 1, on the CPU) and prepends its
 * increment only when the counter is new; every call casts it anew. */
static const char *step_counter(lr_build *s, int begin)
{
    if (!ir_block_find_var(s->b, ir_intern(COUNTER))) {
        const int64_t one = 1;
        opt_global_var(s->ctx, &s->inits, COUNTER, IR_INT64, &one, 1, begin - 1.0, true, NULL);
        ir_op *inc = opt_op_new(s->ctx->main, "increment", IR_ROLE_LRSCHED, "/", NULL, NULL, NULL);
        ir_op_set_input1(inc, "X", COUNTER);
        ir_op_set_output1(inc, "Out", COUNTER);
        ir_op_set_float(inc, "step", 1.0f);
        s->increment = inc;
        ir_infer_apply(s->b, inc);
    }
    return lr_cast(s, COUNTER, IR_INT64, IR_FP32);
}

/* tensor.cast / paddle.cast(x, dtype): "cast_N.tmp_0". */
const char *lr_cast(lr_build *s, const char *x, int from, int to)
{
    const char *out = lr_layer_var(s, "cast", to);
    ir_op *cast = lr_op_new(s, "cast");
    ir_op_set_input1(cast, "X", x);
    ir_op_set_output1(cast, "Out", out);
    ir_op_set_int(cast, "in_dtype", from);
    ir_op_set_int(cast, "out_dtype", to);
    ir_infer_apply(s->cur, cast);
    return out;
}

/* ---- control_flow.Switch ------------------------------------------------ */

/* Switch.case(cond) (pre_not NULL: the first case) or Switch.default()
 * (cond NULL): the logical ops go to the parent, then the
 * ConditionalBlockGuard opens a new sub-block. */
static void case_open(lr_build *s, lr_case *k, const char **pre_not, const char *cond)
{
    if (!cond) {
        k->cond = *pre_not;
    } else if (!*pre_not) {
        k->cond = cond;
        *pre_not = lr_layer1(s, "logical_not", cond, IR_BOOL);
    } else {
        const char *not_cond = lr_layer1(s, "logical_not", cond, IR_BOOL);
        const char *new_not = layer2(s, "logical_and", *pre_not, not_cond);
        k->cond = layer2(s, "logical_and", *pre_not, cond);
        *pre_not = new_not;
    }
    lr_block_open(s, k, k->cond);
}

/* A ConditionalBlockGuard's __enter__: a new sub-block of the current one
 * (Program._create_block), where the ops go until lr_block_close. */
void lr_block_open(lr_build *s, lr_case *k, const char *cond)
{
    k->cond = cond;
    k->parent = s->cur;
    k->parent_out = s->out;
    k->sub = ir_program_add_block(s->ctx->main, (int32_t)s->cur->idx);
    memset(&k->ops, 0, sizeof k->ops);
    s->cur = k->sub;
    s->out = &k->ops;
}

static bool listed(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] == name)
            return true;
    return false;
}

/* ConditionalBlock.complete: Input = the names the sub-block reads before
 * writing them, Out = the names it writes that the parent holds, Scope =
 * a new STEP_SCOPES var "_generated_var_N".  Python gathers both in sets;
 * a case here reads and writes at most a few names, listed in the order
 * the ops name them. */
void lr_block_close(lr_build *s, lr_case *k)
{
    opt_ops_splice(&k->ops, k->sub, 0, false);
    opt_ops_free(&k->ops);
    s->cur = k->parent;
    s->out = k->parent_out;
    enum { CAP = 16 };
    const char *written[CAP], *params[CAP], *outs[CAP];
    size_t nw = 0, np = 0, no = 0;
    for (size_t i = 0; i < k->sub->n_ops; i++) {
        const ir_op *op = k->sub->ops[i];
        for (size_t sl = 0; sl < op->n_inputs; sl++)
            for (size_t a = 0; a < ir_op_ins(op)[sl].n_args; a++) {
                const char *n = ir_op_ins(op)[sl].args[a];
                if (!listed(written, nw, n) && !listed(params, np, n) && np < CAP)
                    params[np++] = n;
            }
        for (size_t sl = 0; sl < op->n_outputs; sl++)
            for (size_t a = 0; a < ir_op_outs(op)[sl].n_args; a++) {
                const char *n = ir_op_outs(op)[sl].args[a];
                if (listed(written, nw, n) || nw == CAP)
                    continue;
                written[nw++] = n;
                if (ir_block_find_var_recursive(s->cur, n))
                    outs[no++] = n;
            }
    }
    const char *scope = opt_namer_gen(s->names, "_generated_var");
    ir_var *sv = ir_block_var(s->cur, scope);
    sv->type = IR_STEP_SCOPES;
    sv->tensor_slot = IR_TD_NONE;
    sv->has_persistable = false;
    ir_op *op = lr_op_new(s, "conditional_block");
    ir_op_set_input1(op, "Cond", k->cond);
    ir_op_set_input(op, "Input", params, np);
    ir_op_set_output(op, "Out", outs, no);
    ir_op_set_output1(op, "Scope", scope);
    ir_op_set_block(op, "sub_block", k->sub->idx);
    ir_op_set_bool(op, "is_scalar_condition", true);
    /* The proto default check_attrs adds (ConditionalBlockOp). */
    ir_op_set_strings(op, "skip_eager_deletion_vars", NULL, 0);
}

/* ---- the schedules ------------------------------------------------------ */

/* global_step / decay_steps [, floor]: exponential, natural_exp and
 * inverse_time share it. */
static const char *div_res(lr_build *s, const char *step, const lr_cfg *c)
{
    const char *d = lr_math(s, LR_DIV, step, c->decay_steps);
    return c->staircase ? lr_layer1(s, "floor", d, IR_FP32) : d;
}

/* exponential_decay: learning_rate * (decay_rate ** div_res). */
static const char *exponential(lr_build *s, const lr_cfg *c)
{
    const char *d = div_res(s, step_counter(s, 0), c);
    const char *pw = binary(s, "elementwise_pow", const_var(s, c->decay_rate), d);
    return lr_math(s, LR_MUL, pw, c->learning_rate);
}

/* natural_exp_decay: learning_rate * ops.exp(-1 * decay_rate * div_res). */
static const char *natural_exp(lr_build *s, const lr_cfg *c)
{
    const char *d = div_res(s, step_counter(s, 0), c);
    const char *e = lr_layer1(s, "exp", lr_math(s, LR_MUL, d, -1 * c->decay_rate), IR_FP32);
    return lr_math(s, LR_MUL, e, c->learning_rate);
}

/* inverse_time_decay: learning_rate / (1 + decay_rate * div_res). */
static const char *inverse_time(lr_build *s, const lr_cfg *c)
{
    const char *d = div_res(s, step_counter(s, 0), c);
    const char *den = lr_math(s, LR_ADD, lr_math(s, LR_MUL, d, c->decay_rate), 1.0);
    return binary(s, "elementwise_div", const_var(s, c->learning_rate), den);
}

/* polynomial_decay: (learning_rate - end_learning_rate) *
 * ((1 - global_step / decay_steps) ** power) + end_learning_rate, where
 * with cycle decay_steps becomes decay_steps * ceil(global_step /
 * decay_steps) (1 at step 0, through a Switch; 2.5: paddle.static.nn.cond,
 * lr_cond.c), and without it
 * global_step becomes min(global_step, decay_steps). */
static const char *polynomial(lr_build *s, const lr_cfg *c)
{
    const char *step = step_counter(s, 0), *q;
    if (c->cycle) {
        const char *div = lr_layer1(s, "ceil", lr_math(s, LR_DIV, step, c->decay_steps),
                                    IR_FP32);
        const char *zero = layer_fill(s, 0.0, false), *one = layer_fill(s, 1.0, false);
        const char *eq = binary(s, "equal", step, zero);
        if (s->cond_forms) {
            /* 2.5: paddle.assign(cond(eq, lambda: one, lambda: div), div). */
            lr_branch t = {NULL, NULL, one}, f = {NULL, NULL, div};
            lr_assign(s, lr_cond(s, eq, t, f), div);
        } else {
            const char *pre_not = NULL;
            lr_case k;
            case_open(s, &k, &pre_not, eq);
            lr_assign(s, one, div);
            lr_block_close(s, &k);
        }
        q = binary(s, "elementwise_div", step, lr_math(s, LR_MUL, div, c->decay_steps));
    } else {
        const char *steps = layer_fill(s, c->decay_steps, false);
        q = lr_math(s, LR_DIV, layer2(s, "elementwise_min", step, steps), c->decay_steps);
    }
    const char *base = lr_math(s, LR_RSUB, q, 1.0);
    const char *pw = binary(s, "elementwise_pow", base, const_var(s, c->power));
    const char *m = lr_math(s, LR_MUL, pw, c->learning_rate - c->end_learning_rate);
    return lr_math(s, LR_ADD, m, c->end_learning_rate);
}

/* The value's fill_constant in block 0 (1.8), or NULL (2.0-2.4). */
static const char *piece_value(lr_build *s, double value)
{
    return s->fill_in_case ? NULL : layer_fill(s, value, false);
}

/* A case's body: assign the value's var (1.8), or fill lr itself. */
static void piece_body(lr_build *s, const char *v, double value, const char *lr)
{
    if (v)
        lr_assign(s, v, lr);
    else
        opt_ops_push(s->out, opt_fill_constant_op(s->ctx->main, lr, IR_FP32, value, false, true,
                                                  IR_ROLE_LRSCHED, "/", NULL, NULL));
}

/* piecewise_decay (1.8): per boundary a CPU fill_constant for the
 * boundary and one for the value in block 0, then a case assigning the
 * value to the persistable "learning_rate"; the default assigns the last
 * value.  For a 2.0-2.4 target (s->fill_in_case, lr_schedule_2x.c) each
 * case and the default fill "learning_rate" themselves instead:
 * tensor.fill_constant(..., out=lr) inside the case, nothing in block 0
 * but the boundary. */
static const char *piecewise(lr_build *s, const lr_cfg *c)
{
    const char *step = step_counter(s, 0);
    const char *lr = ir_intern("learning_rate");
    const int64_t one = 1;
    opt_global_var(s->ctx, &s->inits, lr, IR_FP32, &one, 1, 0.0, false, NULL);
    const char *pre_not = NULL;
    lr_case k;
    for (size_t i = 0; i < c->n_boundaries; i++) {
        const char *bound = layer_fill(s, c->boundaries[i], true);
        const char *v = piece_value(s, c->values[i]);
        case_open(s, &k, &pre_not, binary(s, "less_than", step, bound));
        piece_body(s, v, c->values[i], lr);
        lr_block_close(s, &k);
    }
    const char *last = piece_value(s, c->values[c->n_values - 1]);
    case_open(s, &k, &pre_not, NULL);
    piece_body(s, last, c->values[c->n_values - 1], lr);
    lr_block_close(s, &k);
    return lr;
}

/* noam_decay (counter from 1): learning_rate * d_model ** -0.5 *
 * elementwise_min(global_step ** -0.5, warmup_steps ** -1.5 * global_step). */
static const char *noam(lr_build *s, const lr_cfg *c)
{
    const char *step = step_counter(s, 1);
    const char *a = binary(s, "elementwise_pow", step, const_var(s, -0.5));
    const char *b = lr_math(s, LR_MUL, step, pow(c->warmup_steps, -1.5));
    const char *m = layer2(s, "elementwise_min", a, b);
    return lr_math(s, LR_MUL, m, c->learning_rate * pow(c->d_model, -0.5));
}

/* cosine_decay: learning_rate * 0.5 * (ops.cos(floor(global_step /
 * step_each_epoch) * math.pi / epochs) + 1). */
static const char *cosine(lr_build *s, const lr_cfg *c)
{
    const char *step = step_counter(s, 0);
    const char *epoch = lr_layer1(s, "floor", lr_math(s, LR_DIV, step, c->step_each_epoch),
                                  IR_FP32);
    const char *arg = lr_math(s, LR_DIV, lr_math(s, LR_MUL, epoch, M_PI), c->epochs);
    const char *cs = lr_math(s, LR_ADD, lr_layer1(s, "cos", arg, IR_FP32), 1.0);
    return lr_math(s, LR_MUL, cs, c->learning_rate * 0.5);
}

/* The warm-up value start_lr + linear_step * (global_step / float(
 * warmup_steps)): three math_op_patch scales in the current block. */
static const char *warm_value(lr_build *s, const lr_cfg *c, const char *step)
{
    const char *d = lr_math(s, LR_DIV, step, c->wu_steps);
    const char *m = lr_math(s, LR_MUL, d, c->wu_end - c->wu_start);
    return lr_math(s, LR_ADD, m, c->wu_start);
}

typedef struct {
    const lr_cfg *c;
    const char *step;
} warm_arg;

static const char *warm_branch(lr_build *s, const void *arg)
{
    const warm_arg *w = arg;
    return warm_value(s, w->c, w->step);
}

/* linear_lr_warmup (2.5): a constant rate is filled in block 0 first, then
 *     lr_val = paddle.static.nn.case(
 *         pred_fn_pairs=[(global_step < warmup_steps, lambda: start_lr + ...)],
 *         default=lambda: learning_rate)
 *     paddle.assign(lr_val, lr)
 * where case() with one pair is cond(pred, fn, default). */
static void warmup_case(lr_build *s, const lr_cfg *c, const char *rate, const char *step,
                        const char *lr)
{
    if (!rate)
        rate = layer_fill(s, c->wu_rate, false);
    const char *pred = binary(s, "less_than", step, const_var(s, c->wu_steps));
    warm_arg w = {c, step};
    lr_branch t = {warm_branch, &w, NULL}, f = {NULL, NULL, rate};
    lr_assign(s, lr_cond(s, pred, t, f), lr);
}

/* linear_lr_warmup (1.8): the persistable "learning_rate_warmup", then a
 * Switch: while global_step < warmup_steps it is start_lr + (end_lr -
 * start_lr) * (global_step / warmup_steps); by default the wrapped rate
 * (a constant rate is a fill_constant inside the default block). */
static const char *warmup(lr_build *s, const lr_cfg *c, const char *rate)
{
    const char *lr = ir_intern("learning_rate_warmup");
    const int64_t one = 1;
    opt_global_var(s->ctx, &s->inits, lr, IR_FP32, &one, 1, 0.0, false, NULL);
    const char *step = step_counter(s, 0);
    if (s->cond_forms) {
        warmup_case(s, c, rate, step, lr);
        return lr;
    }
    const char *pre_not = NULL;
    lr_case k;
    case_open(s, &k, &pre_not, binary(s, "less_than", step, const_var(s, c->wu_steps)));
    const char *value;
    if (s->var_block) {
        /* 1.4-1.6: the arithmetic goes to step's block, block 0, between
         * the case's logical_not and its conditional_block; only the
         * assign is in the case's sub-block. */
        s->cur = k.parent;
        s->out = k.parent_out;
        value = warm_value(s, c, step);
        s->cur = k.sub;
        s->out = &k.ops;
    } else {
        value = warm_value(s, c, step);
    }
    lr_assign(s, value, lr);
    lr_block_close(s, &k);
    case_open(s, &k, &pre_not, NULL);
    lr_assign(s, rate ? rate : layer_fill(s, c->wu_rate, false), lr);
    lr_block_close(s, &k);
    return lr;
}

const char *lr_build_all(lr_build *s, const lr_cfg *c)
{
    static const char *(*const build[])(lr_build *, const lr_cfg *) = {
        [LR_EXPONENTIAL] = exponential, [LR_NATURAL_EXP] = natural_exp,
        [LR_INVERSE_TIME] = inverse_time, [LR_POLYNOMIAL] = polynomial,
        [LR_PIECEWISE] = piecewise, [LR_NOAM] = noam, [LR_COSINE] = cosine,
    };
    s->cur = s->b;
    s->out = &s->ops;
    const char *lr = c->kind == LR_NONE ? NULL : build[c->kind](s, c);
    return c->warmup ? warmup(s, c, lr) : lr;
}
