/* test_exec_while.c - while and while_grad: the loop's values worked out
 * by hand, the step values kept for while_grad, and the gradient through
 * the loop (tests/golden/backward_while's net, its backward made by the
 * append_backward pass) against finite differences, as `pdtrans verify
 * grad` checks it; a grad block reading the wrong step value is caught. */
#include <glib.h>
#include <math.h>

#include "exec/gradcheck.h"
#include "exec_fixture.h"
#include "io/pdio.h"
#include "passes/pass.h"
#include "unit.h"

#define WHILE_NET "tests/golden/backward_while/in/while.pbtxt"

static ir_op *sub_op(ir_block *b, const char *type, const char *ins, const char *outs)
{
    ir_op *op = ir_block_append_op(b, type);
    net_slots(op, ins, false);
    net_slots(op, outs, true);
    ir_op_set_role(op, IR_ROLE_FORWARD);
    return op;
}

static ex_tensor *scalar(ex_scope *S, const char *name, int dtype, double v)
{
    int64_t one = 1;
    ex_tensor *t = ex_tensor_new(dtype, 1, &one);
    t->data[0] = v;
    ex_scope_put(S, name, t);
    return t;
}

/* s = 2 s + 1 while i < 3: s 1 -> 3 -> 7 -> 15 */
START_TEST(while_runs_by_hand)
{
    ir_block *b0 = net_new();
    ir_block *b1 = ir_program_add_block(net_prog, 0);
    net_var("s", IR_FP32, "1", TMP);
    ir_block_var(b1, "s2");
    ir_block_var(b1, "s3");
    ir_op *w = net_op("while", "Condition=cond X=s,i,n", "Out=s,i,cond StepScopes=scopes");
    ir_op_set_block(w, "sub_block", b1->idx);
    sub_op(b1, "scale", "X=s", "Out=s2");
    ir_op_set_float(b1->ops[0], "scale", 2);
    sub_op(b1, "scale", "X=s2", "Out=s3");
    ir_op_set_float(b1->ops[1], "bias", 1);
    sub_op(b1, "assign", "X=s3", "Out=s");
    sub_op(b1, "increment", "X=i", "Out=i");
    ir_op_set_float(b1->ops[3], "step", 1);
    sub_op(b1, "less_than", "X=i Y=n", "Out=cond");
    ex_scope *S = ex_scope_new();
    ex_ctx x;
    ex_ctx_init(&x, net_prog, S, 1);
    scalar(S, "s", IR_FP32, 1);
    scalar(S, "i", IR_INT64, 0);
    scalar(S, "n", IR_INT64, 3);
    scalar(S, "cond", IR_BOOL, 1);
    ck_assert_msg(ex_run_op(&x, b0->ops[0]), "%s", x.err);
    ck_assert(ex_scope_get(S, "s")->data[0] == 15);
    ck_assert(ex_scope_get(S, "i")->data[0] == 3);
    ck_assert(ex_scope_get(S, "scopes@steps")->data[0] == 3);
    /* each step keeps s as it was before it (s is read and written by
     * different ops, so it is copied) and its own s2 */
    const double before[] = {1, 3, 7}, s2[] = {2, 6, 14};
    for (int t = 0; t < 3; t++) {
        char *k = g_strdup_printf("scopes@%d@s", t), *k2 = g_strdup_printf("scopes@%d@s2", t);
        ck_assert_msg(ex_scope_get(S, k) && ex_scope_get(S, k)->data[0] == before[t], "%s", k);
        ck_assert_msg(ex_scope_get(S, k2) && ex_scope_get(S, k2)->data[0] == s2[t], "%s", k2);
        g_free(k);
        g_free(k2);
        /* i is incremented in place: not copied */
        k = g_strdup_printf("scopes@%d@i", t);
        ck_assert_ptr_null(ex_scope_get(S, k));
        g_free(k);
    }
    /* a false condition runs nothing; a condition of two values is refused */
    scalar(S, "cond", IR_BOOL, 0);
    ck_assert(ex_run_op(&x, b0->ops[0]));
    ck_assert(ex_scope_get(S, "s")->data[0] == 15);
    int64_t two = 2;
    ex_scope_put(S, "cond", ex_tensor_new(IR_BOOL, 1, &two));
    ck_assert(!ex_run_op(&x, b0->ops[0]));
    ck_assert_msg(strstr(x.err, "Condition has 2 values"), "%s", x.err);
    ex_scope_free(S);
    net_free();
}
END_TEST

/* A loop that never ends is stopped. */
START_TEST(endless_while_is_refused)
{
    ir_block *b0 = net_new();
    ir_block *b1 = ir_program_add_block(net_prog, 0);
    ir_op *w = net_op("while", "Condition=cond X=cond", "Out=cond StepScopes=scopes");
    ir_op_set_block(w, "sub_block", b1->idx);
    sub_op(b1, "assign", "X=cond", "Out=cond");
    ex_scope *S = ex_scope_new();
    ex_ctx x;
    ex_ctx_init(&x, net_prog, S, 1);
    scalar(S, "cond", IR_BOOL, 1);
    ck_assert(!ex_run_op(&x, b0->ops[0]));
    ck_assert_msg(strstr(x.err, "more than 100000 steps"), "%s", x.err);
    ex_scope_free(S);
    net_free();
}
END_TEST

static double check_while(bool break_it)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = pdio_read(WHILE_NET);
    ck_assert_ptr_nonnull(ctx.main);
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = "loss";
    const char *pass = "append_backward";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), 0);
    ck_assert_uint_eq(ctx.main->n_blocks, 3);
    if (break_it) {
        /* the grad block's mul_grad reads the step's output t, not its input h */
        ir_block *gb = ctx.main->blocks[2];
        for (size_t i = 0; i < gb->n_ops; i++)
            if (!strcmp(gb->ops[i]->type, "mul_grad")) {
                const char *t = "t";
                ir_op_set_input(gb->ops[i], "X", &t, 1);
            }
    }
    ex_gradcheck_opts o = {.seed = 5, .batch = 3, .delta = 1e-5, .max_samples = 0};
    ex_grad_result *res = NULL;
    size_t n = 0;
    char err[600] = "";
    ck_assert_msg(ex_grad_check(ctx.main, NULL, "loss", &o, &res, &n, err, sizeof err), "%s", err);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(res[0].n_checked, 16);
    double w = res[0].worst_rel;
    free(res);
    pdt_ctx_free(&ctx);
    return w;
}

START_TEST(while_grad_by_finite_differences)
{
    double w = check_while(false);
    ck_assert_msg(w < 1e-6, "worst relative error %g", w);
    w = check_while(true);
    ck_assert_msg(w > 1e-3, "a grad block reading the wrong step value is not caught (%g)", w);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("exec_while");
    TCase *tc = tcase_create("while");
    tcase_add_test(tc, while_runs_by_hand);
    tcase_add_test(tc, endless_while_is_refused);
    tcase_add_test(tc, while_grad_by_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
