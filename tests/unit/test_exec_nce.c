/* test_exec_nce.c - the nce kernel's forward and grad against values
 * worked out by hand, and nce's gradient maker checked as `pdtrans verify
 * grad` does it (append_backward, then finite differences), with fixed
 * negatives (custom_neg_classes) and with the seeded samplers. */
#include <glib.h>
#include <math.h>

#include "exec/gradcheck.h"
#include "exec_fixture.h"
#include "passes/pass.h"
#include "unit.h"

static ex_tensor *put(ex_scope *S, const char *name, int dtype, int64_t r, int64_t c,
                      const double *v)
{
    int64_t d[2] = {r, c};
    ex_tensor *t = ex_tensor_new(dtype, 2, d);
    memcpy(t->data, v, t->numel * sizeof *v);
    ex_scope_put(S, name, t);
    return t;
}

static double sig(double z) { return 1 / (1 + exp(-z)); }

/* x = [[1, 0], [0, 1]], classes 0-3 (uniform: P = 1/4, so q = 2 * 1/4),
 * labels 1 and 2, negatives 0 and 3 for both rows. */
START_TEST(nce_forward_and_grad_by_hand)
{
    net_new();
    ex_scope *S = ex_scope_new();
    ex_ctx x;
    ex_ctx_init(&x, net_prog, S, 1);
    put(S, "x", IR_FP32, 2, 2, (const double[]){1, 0, 0, 1});
    put(S, "w", IR_FP32, 4, 2, (const double[]){0, 0, 1, 1, 2, 0, 0, -1});
    put(S, "b", IR_FP32, 4, 1, (const double[]){0, 0.5, 0, 0});
    put(S, "label", IR_INT64, 2, 1, (const double[]){1, 2});
    ir_op *op = net_op("nce", "Input=x Weight=w Bias=b Label=label",
                       "Cost=cost SampleLogits=logits SampleLabels=labels");
    ir_op_set_int(op, "num_total_classes", 4);
    ir_op_set_int(op, "num_neg_samples", 2);
    int32_t neg[] = {0, 3};
    ir_op_set_ints(op, "custom_neg_classes", neg, 2);
    ck_assert_msg(ex_run_op(&x, op), "%s", x.err);
    const double q = 0.5, o1 = sig(1.5), o3 = sig(-1);
    const double want_labels[] = {1, 0, 3, 2, 0, 3};
    const double want_logits[] = {o1, 0.5, 0.5, 0.5, 0.5, o3};
    const double want_cost[] = {-log(o1 / (o1 + q)) + 2 * log(2), 2 * log(2) + log((o3 + q) / q)};
    const ex_tensor *t = ex_scope_get(S, "labels");
    for (size_t i = 0; i < 6; i++)
        ck_assert(t->data[i] == want_labels[i]);
    t = ex_scope_get(S, "logits");
    for (size_t i = 0; i < 6; i++)
        ck_assert_msg(fabs(t->data[i] - want_logits[i]) < 1e-12, "logits[%zu] %g", i, t->data[i]);
    t = ex_scope_get(S, "cost");
    for (size_t i = 0; i < 2; i++)
        ck_assert_msg(fabs(t->data[i] - want_cost[i]) < 1e-12, "cost[%zu] %g", i, t->data[i]);
    /* grad with Cost@GRAD = [1, 2]: per sample d cost/d z is
     * q/(o+q)*(o-1) for the label, o(1-o)/(o+q) for a negative */
    put(S, "dcost", IR_FP32, 2, 1, (const double[]){1, 2});
    ir_op *g = net_op("nce_grad", "Input=x Weight=w Bias=b Label=label SampleLogits=logits "
                      "SampleLabels=labels Cost@GRAD=dcost",
                      "Input@GRAD=dx Weight@GRAD=dw Bias@GRAD=db");
    ir_op_set_int(g, "num_total_classes", 4);
    ir_op_set_int(g, "num_neg_samples", 2);
    ck_assert_msg(ex_run_op(&x, g), "%s", x.err);
    double gl1 = q / (o1 + q) * (o1 - 1), gn = 0.25 / 1.0, gl2 = 2 * (q / (0.5 + q) * (0.5 - 1));
    double gn0 = 2 * gn, gn3 = 2 * (o3 * (1 - o3) / (o3 + q));
    const double want_db[] = {gn + gn0, gl1, gl2, gn + gn3};
    /* dw row c = sum of x rows that sampled c, times their grads */
    const double want_dw[] = {gn, gn0, gl1, 0, 0, gl2, gn, gn3};
    /* dx row i = sum over its samples of w[c] * grad */
    const double want_dx[] = {gl1 * 1 + gn * 0 + gn * 0, gl1 * 1 + gn * 0 + gn * -1,
                              gl2 * 2 + gn0 * 0 + gn3 * 0, gl2 * 0 + gn0 * 0 + gn3 * -1};
    const struct { const char *n; const double *v; size_t k; } want[] = {
        {"db", want_db, 4}, {"dw", want_dw, 8}, {"dx", want_dx, 4}};
    for (size_t k = 0; k < 3; k++) {
        t = ex_scope_get(S, want[k].n);
        ck_assert_uint_eq(t->numel, want[k].k);
        for (size_t i = 0; i < want[k].k; i++)
            ck_assert_msg(fabs(t->data[i] - want[k].v[i]) < 1e-12, "%s[%zu] = %.15g, want %.15g",
                          want[k].n, i, t->data[i], want[k].v[i]);
    }
    ex_scope_free(S);
    net_free();
}
END_TEST

START_TEST(nce_sampler_is_seeded)
{
    net_new();
    ex_scope *S = ex_scope_new();
    ex_ctx x;
    ex_ctx_init(&x, net_prog, S, 1);
    put(S, "x", IR_FP32, 3, 2, (const double[]){1, 0, 0, 1, 1, 1});
    put(S, "w", IR_FP32, 50, 2, (const double[100]){0});
    put(S, "label", IR_INT64, 3, 1, (const double[]){1, 2, 3});
    double first[3 * 6];
    for (int run = 0; run < 2; run++) {
        ir_op *op = net_op("nce", "Input=x Weight=w Label=label",
                           "Cost=cost SampleLogits=logits SampleLabels=labels");
        ir_op_set_int(op, "num_total_classes", 50);
        ir_op_set_int(op, "num_neg_samples", 5);
        ir_op_set_int(op, "sampler", 1);
        ir_op_set_int(op, "seed", 9);
        ck_assert_msg(ex_run_op(&x, op), "%s", x.err);
        const ex_tensor *l = ex_scope_get(S, "labels");
        ck_assert_uint_eq(l->numel, 18);
        for (size_t i = 0; i < 18; i++) {
            ck_assert(l->data[i] >= 0 && l->data[i] < 49);
            if (run)
                ck_assert(l->data[i] == first[i]);
            else
                first[i] = l->data[i];
        }
    }
    /* log-uniform: small classes are drawn far more often than large ones */
    size_t small = 0;
    for (size_t i = 0; i < 18; i++)
        small += i % 6 && first[i] < 10;
    ck_assert_uint_ge(small, 7);   /* uniform: about 3 */
    ir_op *bad =
        net_op("nce", "Input=x Weight=w Label=label", "Cost=c2 SampleLogits=l2 SampleLabels=s2");
    ir_op_set_int(bad, "num_total_classes", 50);
    ir_op_set_int(bad, "sampler", 2);
    ck_assert(!ex_run_op(&x, bad));
    ck_assert_msg(strstr(x.err, "sampler 2 is not simulated"), "%s", x.err);
    ex_scope_free(S);
    net_free();
}
END_TEST

/* x[N,4] -> nce(w[6,4], b[6,1]) -> mean; append_backward; verify grad. */
static double check_nce(int sampler, bool custom, bool sparse, size_t *np)
{
    net_new();
    net_var("x", IR_FP32, "-1,4", DATA);
    net_var("label", IR_INT64, "-1,1", DATA);
    net_var("w", IR_FP32, "6,4", PARAM);
    net_var("b", IR_FP32, "6,1", PARAM);
    net_var("cost", IR_FP32, "-1,1", TMP);
    net_var("logits", IR_FP32, "-1,-1", TMP);
    net_var("labels", IR_INT64, "-1,-1", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    ir_op *op = net_op("nce", "Input=x Weight=w Bias=b Label=label",
                       "Cost=cost SampleLogits=logits SampleLabels=labels");
    ir_op_set_int(op, "num_total_classes", 6);
    ir_op_set_int(op, "num_neg_samples", 3);
    ir_op_set_int(op, "sampler", sampler);
    ir_op_set_int(op, "seed", 11);
    ir_op_set_bool(op, "is_sparse", sparse);
    int32_t neg[] = {0, 5, 3};
    if (custom)
        ir_op_set_ints(op, "custom_neg_classes", neg, 3);
    net_op("mean", "X=cost", "Out=loss");
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = net_prog;
    net_prog = NULL;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = "loss";
    const char *pass = "append_backward";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), 0);
    bool has_grad = false;
    for (size_t i = 0; i < ctx.main->blocks[0]->n_ops; i++)
        has_grad |= !strcmp(ctx.main->blocks[0]->ops[i]->type, "nce_grad");
    ck_assert(has_grad);
    ex_gradcheck_opts o = {.seed = 7, .batch = 3, .delta = 1e-5, .max_samples = 0};
    ex_grad_result *res = NULL;
    char err[600] = "";
    ck_assert_msg(ex_grad_check(ctx.main, NULL, "loss", &o, &res, np, err, sizeof err), "%s", err);
    double worst = 0;
    for (size_t i = 0; i < *np; i++)
        worst = fmax(worst, res[i].worst_rel);
    free(res);
    pdt_ctx_free(&ctx);
    return worst;
}

START_TEST(nce_grad_by_finite_differences)
{
    const struct { int sampler; bool custom, sparse; } v[] = {
        {0, true, false}, {0, false, false}, {1, false, true}, {1, true, true}};
    for (size_t i = 0; i < G_N_ELEMENTS(v); i++) {
        size_t np = 0;
        double w = check_nce(v[i].sampler, v[i].custom, v[i].sparse, &np);
        ck_assert_uint_eq(np, 2);
        ck_assert_msg(w < 1e-6, "variant %zu: worst relative error %g", i, w);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("exec_nce");
    TCase *tc = tcase_create("nce");
    tcase_add_test(tc, nce_forward_and_grad_by_hand);
    tcase_add_test(tc, nce_sampler_is_seeded);
    tcase_add_test(tc, nce_grad_by_finite_differences);
    suite_add_tcase(s, tc);
    return s;
}
