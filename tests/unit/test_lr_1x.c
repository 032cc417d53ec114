/* test_lr_1x.c - --lr-schedule / --lr-warmup for a 1.4-1.5 target
 * (helper lr15, research 4y).  What the assertions hold, read in Paddle's
 * python/paddle/fluid/layers at v1.5.2 (v1.4.1 the same):
 *
 *   math_op_patch.py _elemwise_method_creator_ has no scalar shortcut (the
 *   scale came with v1.6.0): `var OP c` for a Python number c runs
 *       other_var = create_scalar(self.block, value=c, dtype=lhs_dtype)
 *   i.e. create_tensor: block.create_var(name=unique_name("tmp"),
 *   shape=[1]) and a fill_constant {dtype, shape, value: float(c),
 *   force_cpu: force_init_on_cpu() = False}; then
 *       out = self.block.create_var(name=unique_tmp_name(), dtype=lhs_dtype)
 *       append_op(type=op_type, X=[self], Y=[other_var], attrs={'axis': -1})
 *   so the constant is tmp_N and the result tmp_N+1; a reversed op
 *   (`c - var`, __rsub__) swaps X and Y: X is the constant.
 *   learning_rate_scheduler.py exponential_decay:
 *       div_res = global_step / decay_steps; div_res = ops.floor(div_res)
 *       decayed_lr = learning_rate * (decay_rate ** div_res)
 *   polynomial_decay (no cycle):
 *       global_step = nn.elementwise_min(x=global_step, y=decay_steps_var)
 *       (learning_rate - end_learning_rate) *
 *           ((1 - global_step / decay_steps) ** power) + end_learning_rate
 *   linear_lr_warmup: inside `with switch.case(global_step < warmup_steps)`
 *       decayed_lr = start_lr + linear_step * (global_step / float(warmup_steps))
 *   appends to global_step's block (self.block: block 0), only the
 *   tensor.assign goes to the case's sub-block; its switch.default() hands a
 *   float learning_rate to tensor.assign, which raises. */
#include "unit.h"

#include "passes/era/era.h"
#include "passes/optimizer/optimizer_util.h"
#include "passes/pass.h"
#include "passes/verify.h"

/* A forward op, the loss, one param w with its grad (backward role). */
static void ctx_net(pdt_ctx *ctx, int era, const char *version)
{
    pdt_ctx_init(ctx);
    ctx->settings.era = era;
    ctx->settings.paddle_version = version;
    ctx->main = ir_program_new();
    ir_block *b = ir_program_add_block(ctx->main, -1);
    const int64_t d[2] = {4, 3};
    const char *names[] = {"x", "w", "loss", "w@GRAD"};
    for (size_t i = 0; i < 4; i++) {
        ir_var *v = ir_block_var(b, names[i]);
        ir_var_set_dims(ctx->main, v, d, 2);
        v->persistable = i == 1;
    }
    ir_op *mul = ir_block_append_op(b, "mul");
    ir_op_set_role(mul, 0);
    ir_op_set_input1(mul, "X", "x");
    ir_op_set_input1(mul, "Y", "w");
    ir_op_set_output1(mul, "Out", "loss");
    ir_op *g = ir_block_append_op(b, "mul_grad");
    ir_op_set_role(g, 1);
    const char *rv[2] = {"w", "w@GRAD"};
    ir_op_set_strings(g, "op_role_var", rv, 2);
    ir_op_set_input1(g, "Out@GRAD", "loss");
    ir_op_set_output1(g, "Y@GRAD", "w@GRAD");
    ctx->startup = ir_program_new();
    ir_program_add_block(ctx->startup, -1);
    ctx->backward.loss = "loss";
    ctx->optim.optimizer = "sgd:lr=0.1";
}

/* Block B's op K is TYPE with X (NULL: none), Y and Out as given. */
static const ir_op *expect(const pdt_ctx *ctx, int blk, size_t k, const char *type,
                           const char *x, const char *y, const char *out)
{
    const ir_block *b = ir_program_block(ctx->main, blk);
    ck_assert_uint_lt(k, b->n_ops);
    const ir_op *op = b->ops[k];
    ck_assert_str_eq(op->type, type);
    ck_assert_int_eq(ir_op_role(op), IR_ROLE_LRSCHED);
    if (x)
        ck_assert_str_eq(ir_op_input1(op, "X"), x);
    if (y)
        ck_assert_str_eq(ir_op_input1(op, "Y"), y);
    ck_assert_str_eq(ir_op_output1(op, "Out"), out);
    return op;
}

/* create_scalar's fill_constant of VALUE into NAME, a non-persistable
 * FP32 [1] var of block 0. */
static void expect_fill(const pdt_ctx *ctx, size_t k, const char *name, float value)
{
    const ir_op *op = expect(ctx, 0, k, "fill_constant", NULL, NULL, name);
    ck_assert(ir_op_get_float(op, "value", -1) == value);
    ck_assert(!ir_op_get_bool(op, "force_cpu", true));
    ck_assert_int_eq(ir_op_get_int(op, "dtype", -1), IR_FP32);
    const ir_var *v = ir_block_find_var(ir_program_block(ctx->main, 0), ir_intern(name));
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(v->dtype, IR_FP32);
    ck_assert_uint_eq(v->n_dims, 1);
    ck_assert_int_eq(v->dims[0], 1);
    ck_assert(!v->has_persistable);
}

/* An elementwise op of math_op_patch: {axis: -1}, FP32 out. */
static void expect_ew(const pdt_ctx *ctx, size_t k, const char *type, const char *x,
                      const char *y, const char *out)
{
    const ir_op *op = expect(ctx, 0, k, type, x, y, out);
    ck_assert_int_eq(ir_op_get_int(op, "axis", 0), -1);
    const ir_var *v = ir_block_find_var(ir_program_block(ctx->main, 0), ir_intern(out));
    ck_assert_int_eq(v->dtype, IR_FP32);
}

static const char *sgd_rate(const pdt_ctx *ctx)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    return ir_op_input1(b->ops[b->n_ops - 1], "LearningRate");
}

START_TEST(exponential_15_fills_and_elementwise)
{
    pdt_ctx ctx;
    ctx_net(&ctx, 105, "1.5");
    ctx.optim.lr_schedule = "exponential:decay_steps=100,decay_rate=0.5,staircase=true";
    ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_OK);
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    expect(&ctx, 0, 0, "increment", "@LR_DECAY_COUNTER@", NULL, "@LR_DECAY_COUNTER@");
    expect(&ctx, 0, 2, "cast", "@LR_DECAY_COUNTER@", NULL, "cast_0.tmp_0");
    expect_fill(&ctx, 3, "tmp_0", 100.0f);          /* global_step / decay_steps */
    expect_ew(&ctx, 4, "elementwise_div", "cast_0.tmp_0", "tmp_0", "tmp_1");
    expect(&ctx, 0, 5, "floor", "tmp_1", NULL, "floor_0.tmp_0");
    expect_fill(&ctx, 6, "tmp_2", 0.5f);            /* decay_rate ** div_res (reversed) */
    expect_ew(&ctx, 7, "elementwise_pow", "tmp_2", "floor_0.tmp_0", "tmp_3");
    expect_fill(&ctx, 8, "tmp_4", 0.1f);            /* learning_rate * (...) */
    expect_ew(&ctx, 9, "elementwise_mul", "tmp_3", "tmp_4", "tmp_5");
    ck_assert_str_eq(sgd_rate(&ctx), "tmp_5");
    for (size_t k = 0; k < ir_program_block(ctx.main, 0)->n_ops; k++)
        ck_assert_str_ne(ir_program_block(ctx.main, 0)->ops[k]->type, "scale");
    ck_assert_uint_eq(pdt_verify(ctx.main, "main", NULL), 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(polynomial_15_reversed_sub)
{
    pdt_ctx ctx;
    ctx_net(&ctx, 105, "1.5");
    ctx.optim.lr_schedule = "polynomial:decay_steps=10,end_learning_rate=0.01,power=2";
    ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_OK);
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    expect(&ctx, 0, 3, "fill_constant", NULL, NULL, "fill_constant_0.tmp_0");
    expect(&ctx, 0, 4, "elementwise_min", "cast_0.tmp_0", "fill_constant_0.tmp_0",
           "elementwise_min_0.tmp_0");
    expect_fill(&ctx, 5, "tmp_0", 10.0f);
    expect_ew(&ctx, 6, "elementwise_div", "elementwise_min_0.tmp_0", "tmp_0", "tmp_1");
    expect_fill(&ctx, 7, "tmp_2", 1.0f);            /* 1 - x: the constant is X */
    expect_ew(&ctx, 8, "elementwise_sub", "tmp_2", "tmp_1", "tmp_3");
    expect_fill(&ctx, 9, "tmp_4", 2.0f);
    expect_ew(&ctx, 10, "elementwise_pow", "tmp_3", "tmp_4", "tmp_5");
    expect_fill(&ctx, 11, "tmp_6", (float)(0.1 - 0.01));
    expect_ew(&ctx, 12, "elementwise_mul", "tmp_5", "tmp_6", "tmp_7");
    expect_fill(&ctx, 13, "tmp_8", 0.01f);
    expect_ew(&ctx, 14, "elementwise_add", "tmp_7", "tmp_8", "tmp_9");
    ck_assert_str_eq(sgd_rate(&ctx), "tmp_9");
    pdt_ctx_free(&ctx);
}
END_TEST

/* Piecewise (no arithmetic: its ops are 1.6's) wrapped in the warm-up,
 * whose arithmetic lands in block 0 before the case's conditional_block. */
START_TEST(warmup_15_math_in_block_0)
{
    pdt_ctx ctx;
    ctx_net(&ctx, 105, "1.5");
    ctx.optim.lr_schedule = "piecewise:boundaries=10,values=1.0,0.5";
    ctx.optim.lr_warmup = "warmup_steps=5,start_lr=0.0,end_lr=1.0";
    ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_OK);
    ck_assert_uint_eq(ctx.main->n_blocks, 5);
    const ir_block *b = ir_program_block(ctx.main, 0);
    size_t k = 0;
    while (k < b->n_ops && strcmp(ir_op_output1(b->ops[k], "Out") ? ir_op_output1(b->ops[k], "Out")
                                                                   : "", "cast_1.tmp_0"))
        k++;
    /* piecewise's less_than (two Variables) took tmp_0 */
    expect_fill(&ctx, k + 1, "tmp_1", 5.0f);
    expect(&ctx, 0, k + 2, "less_than", "cast_1.tmp_0", "tmp_1", "tmp_2");
    expect(&ctx, 0, k + 3, "logical_not", "tmp_2", NULL, "logical_not_1.tmp_0");
    expect_fill(&ctx, k + 4, "tmp_3", 5.0f);        /* global_step / float(warmup_steps) */
    expect_ew(&ctx, k + 5, "elementwise_div", "cast_1.tmp_0", "tmp_3", "tmp_4");
    expect_fill(&ctx, k + 6, "tmp_5", 1.0f);        /* linear_step * ... */
    expect_ew(&ctx, k + 7, "elementwise_mul", "tmp_4", "tmp_5", "tmp_6");
    expect_fill(&ctx, k + 8, "tmp_7", 0.0f);        /* start_lr + ... */
    expect_ew(&ctx, k + 9, "elementwise_add", "tmp_6", "tmp_7", "tmp_8");
    const ir_op *cb = b->ops[k + 10];
    ck_assert_str_eq(cb->type, "conditional_block");
    ck_assert_str_eq(ir_op_input1(cb, "Input"), "tmp_8");
    const ir_block *sub = ir_program_block(ctx.main, (int32_t)ir_op_get_int(cb, "sub_block", -1));
    ck_assert_uint_eq(sub->n_ops, 1);
    expect(&ctx, sub->idx, 0, "assign", "tmp_8", NULL, "learning_rate_warmup");
    ck_assert_ptr_null(ir_block_find_var(sub, ir_intern("tmp_8")));
    ck_assert_uint_eq(pdt_verify(ctx.main, "main", NULL), 0);
    pdt_ctx_free(&ctx);
}
END_TEST

/* What 1.4-1.5 cannot write: refused for an explicit target, a warning
 * (and 1.6's form) when the version was read off the input. */
START_TEST(refusals_before_16)
{
    static const struct {
        const char *spec, *warmup, *version;
        int era, rc;
    } cases[] = {
        {NULL, "warmup_steps=5,start_lr=0.0,end_lr=1.0", "1.5", 105, PDT_EUSAGE},
        {NULL, "warmup_steps=5,start_lr=0.0,end_lr=1.0", "1.4", 104, PDT_EUSAGE},
        {NULL, "warmup_steps=5,start_lr=0.0,end_lr=1.0", "auto", 105, PDT_OK},
        {NULL, "warmup_steps=5,start_lr=0.0,end_lr=1.0", "1.6", 106, PDT_OK},
        {"noam:d_model=64,warmup_steps=10,learning_rate=0.5", NULL, "1.7", 107, PDT_EUSAGE},
        {"noam:d_model=64,warmup_steps=10", NULL, "1.5", 105, PDT_OK},
        {"noam:d_model=64,warmup_steps=10,learning_rate=0.5", NULL, "1.8", 108, PDT_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pdt_ctx ctx;
        ctx_net(&ctx, cases[i].era, cases[i].version);
        ctx.optim.lr_schedule = cases[i].spec;
        ctx.optim.lr_warmup = cases[i].warmup;
        ck_assert_msg(pass_lr_schedule(&ctx) == cases[i].rc, "case %zu", i);
        pdt_ctx_free(&ctx);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("lr_1x");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, exponential_15_fills_and_elementwise);
    tcase_add_test(tc, polynomial_15_reversed_sub);
    tcase_add_test(tc, warmup_15_math_in_block_0);
    tcase_add_test(tc, refusals_before_16);
    suite_add_tcase(s, tc);
    return s;
}
