/* test_memory.c - memory_optimize and release_memory on programs built in
 * memory: what the golden cases cannot see (which ops are marked changed,
 * the exact shape of delete_var, long rename chains). */
#include "ir/ir_codec.h"
#include "passes/pass.h"
#include "unit.h"

static void tensor(ir_block *b, const char *name, int64_t d0, int64_t d1, bool persistable)
{
    ir_var *v = ir_block_var(b, name);
    int64_t dims[] = {d0, d1};
    ir_var_set_dims(b->program, v, dims, 2);
    v->persistable = persistable;
}

static void unary(ir_block *b, const char *type, const char *x, const char *y, const char *out)
{
    ir_op *op = ir_block_append_op(b, type);
    ir_op_set_input1(op, "X", x);
    if (y)
        ir_op_set_input1(op, "Y", y);
    ir_op_set_output1(op, "Out", out);
    op->enc_dirty_ = false;      /* as if read from a file */
}

/* memory-passes.md §5.4: mul(x,w1)->t0; relu->t1; mul(t1,w2)->t2; relu->t3. */
static pdt_ctx example(void)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = ir_program_new();
    ir_block *b = ir_program_add_block(ctx.main, -1);
    const char *t[] = {"t0", "t1", "t2", "t3", "x"};
    for (int i = 0; i < 5; i++)
        tensor(b, t[i], -1, 100, false);
    tensor(b, "w1", 100, 100, true);
    tensor(b, "w2", 100, 100, true);
    unary(b, "mul", "x", "w1", "t0");
    unary(b, "relu", "t0", NULL, "t1");
    unary(b, "mul", "t1", "w2", "t2");
    unary(b, "relu", "t2", NULL, "t3");
    return ctx;
}

static const char *out_of(const ir_block *b, size_t k)
{
    return ir_op_output1(b->ops[k], "Out");
}

START_TEST(paddle_example_renames_from_the_first_reuse_on)
{
    pdt_ctx ctx = example();
    ctx.memory.print_log = true;
    const char *pass = "memory_optimize";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    ir_block *b = ctx.main->blocks[0];
    ck_assert_str_eq(out_of(b, 2), "t0");
    ck_assert_str_eq(ir_op_input1(b->ops[3], "X"), "t0");
    ck_assert_str_eq(out_of(b, 3), "t1");
    /* Paddle's RenameInput marks every op from the first rename on as
     * changed (written with sorted slots), and none before it. */
    ck_assert(!b->ops[0]->enc_dirty_ && !b->ops[1]->enc_dirty_);
    ck_assert(b->ops[2]->enc_dirty_ && b->ops[3]->enc_dirty_);
    /* VarDescs stay (§5.3). */
    ck_assert_ptr_nonnull(ir_block_find_var(b, "t2"));
    ck_assert_ptr_nonnull(ir_block_find_var(b, "t3"));
    ck_assert_str_eq(ctx.memory.log,
                     "!!! 0,  t2[-1, 100] => t0[-1, 100], cache idx 0, pool size 1\n"
                     "!!! 1,  t3[-1, 100] => t1[-1, 100], cache idx 0, pool size 1\n");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(delete_var_has_one_input_slot_and_nothing_else)
{
    pdt_ctx ctx = example();
    const char *pass = "release_memory";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    ir_block *b = ctx.main->blocks[0];
    ck_assert_uint_eq(b->n_ops, 8);
    const char *deleted[] = {"x", "t0", "t1", "t2"};
    for (size_t k = 0; k < 4; k++) {
        const ir_op *op = b->ops[2 * k + 1];
        ck_assert_str_eq(op->type, "delete_var");
        ck_assert_uint_eq(op->n_inputs, 1);
        ck_assert_str_eq(ir_op_ins(op)[0].name, "X");
        ck_assert_uint_eq(ir_op_ins(op)[0].n_args, 1);
        ck_assert_str_eq(ir_op_ins(op)[0].args[0], deleted[k]);
        ck_assert_uint_eq(op->n_outputs, 0);
        ck_assert_uint_eq(op->n_attrs, 0);
    }
    pdt_ctx_free(&ctx);
}
END_TEST

/* A chain of 20000 relus over same-shaped temporaries: at level 0 every
 * output from the third on takes the buffer that died just before, so the
 * whole chain ends up on two names, and one class grows to half the ops
 * (the small-into-large merging keeps that linear-logarithmic). */
START_TEST(long_chain_alternates_two_buffers)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = ir_program_new();
    ir_block *b = ir_program_add_block(ctx.main, -1);
    enum { N = 20000 };
    tensor(b, "in", -1, 8, false);
    for (int i = 0; i < N; i++)
        tensor(b, ir_internf("t%d", i), -1, 8, false);
    for (int i = 0; i < N; i++)
        unary(b, "relu", i ? ir_internf("t%d", i - 1) : "in", NULL, ir_internf("t%d", i));
    const char *pass = "memory_optimize";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    for (int i = 0; i < N; i++) {
        ck_assert_str_eq(out_of(b, (size_t)i), i % 2 ? "t1" : "t0");
        if (i)
            ck_assert_str_eq(ir_op_input1(b->ops[i], "X"), i % 2 ? "t0" : "t1");
    }
    pdt_ctx_free(&ctx);
}
END_TEST

/* --skip-grads reads op_role_var[1] of Optimize ops; the grad it names is
 * then neither renamed nor reused, while the op_role_var of a renamed var
 * follows the rename (§10.1). */
START_TEST(skip_grads_and_op_role_var)
{
    pdt_ctx ctx = example();
    ir_block *b = ctx.main->blocks[0];
    const char *rv[] = {"w2", "t2"};
    ir_op_set_strings(b->ops[2], "op_role_var", rv, 2);
    b->ops[2]->enc_dirty_ = false;
    const char *pass = "memory_optimize";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    const ir_attr *a = ir_op_attr(b->ops[2], "op_role_var");
    ck_assert_uint_eq(a->n_strings, 2);
    unit_assert_bytes_eq(a->strings[1].data, a->strings[1].len, "t0");
    pdt_ctx_free(&ctx);

    ctx = example();
    b = ctx.main->blocks[0];
    ir_op *sgd = ir_block_append_op(b, "sgd");
    ir_op_set_input1(sgd, "Grad", "t2");
    ir_op_set_role(sgd, IR_ROLE_OPTIMIZE);
    ir_op_set_strings(sgd, "op_role_var", rv, 2);
    ctx.memory.skip_grads = true;
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    ck_assert_str_eq(out_of(b, 2), "t2");
    ck_assert_str_eq(ir_op_input1(b->ops[4], "Grad"), "t2");
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, paddle_example_renames_from_the_first_reuse_on);
    tcase_add_test(tc, delete_var_has_one_input_slot_and_nothing_else);
    tcase_add_test(tc, long_chain_alternates_two_buffers);
    tcase_add_test(tc, skip_grads_and_op_role_var);
    suite_add_tcase(s, tc);
    return s;
}
