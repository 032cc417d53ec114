/* test_exec_grad.c - every gradient maker the executor has kernels for,
 * checked as `pdtrans backward` + `pdtrans verify grad` do it: build a small
 * forward net, run the append_backward pass, compare each parameter's
 * gradient with central finite differences.  Also: hand-broken grad ops are
 * caught. */
#include <glib.h>
#include <math.h>

#include "exec/gradcheck.h"
#include "exec_fixture.h"
#include "passes/pass.h"
#include "unit.h"

/* Set while a test breaks grad ops on purpose: their errors are expected. */
static bool expect_errors;

/* Runs append_backward on net_prog (taking it), then the check.  Returns
 * the worst relative error over all parameters; *n_params receives how
 * many were checked.  `edit` may break the backward program first. */
static double check_net(const char *loss, size_t *n_params, void (*edit)(ir_program *))
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = net_prog;
    net_prog = NULL;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = loss;
    const char *pass = "append_backward";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), 0);
    if (edit)
        edit(ctx.main);
    ex_gradcheck_opts o = {.seed = 7, .batch = 3, .delta = 1e-5, .max_samples = 0};
    ex_grad_result *res = NULL;
    size_t n = 0;
    char err[600] = "";
    bool ok = ex_grad_check(ctx.main, NULL, loss, &o, &res, &n, err, sizeof err);
    if (!ok)
        fprintf(stderr, "grad check: %s\n", err);
    ck_assert_msg(ok, "%s", err);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_gt(res[i].n_checked, 0);
        if (res[i].worst_rel > 1e-6 && !expect_errors)
            fprintf(stderr, "  %s: rel %g at %zu (analytic %g numeric %g)\n", res[i].param,
                    res[i].worst_rel, res[i].worst_index, res[i].analytic, res[i].numeric);
        worst = res[i].worst_rel > worst ? res[i].worst_rel : worst;
    }
    *n_params = n;
    free(res);
    pdt_ctx_free(&ctx);
    return worst;
}

#define ASSERT_GRADS(loss, expect_params)                              \
    do {                                                               \
        size_t np_;                                                    \
        double w_ = check_net(loss, &np_, NULL);                       \
        ck_assert_uint_eq(np_, expect_params);                         \
        ck_assert_msg(w_ < 1e-6, "worst relative error %g", w_);       \
    } while (0)

/* x[N,5] -> mul(w[5,3]) -> +b (axis 1) -> relu -> square -> mean */
static void fc_net(void)
{
    net_new();
    net_var("x", IR_FP32, "-1,5", DATA);
    net_var("w", IR_FP32, "5,3", PARAM);
    net_var("b", IR_FP32, "3", PARAM);
    net_var("h", IR_FP32, "-1,3", TMP);
    net_var("a", IR_FP32, "-1,3", TMP);
    net_var("r", IR_FP32, "-1,3", TMP);
    net_var("s", IR_FP32, "-1,3", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    net_op("mul", "X=x Y=w", "Out=h");
    ir_op_set_int(net_op("elementwise_add", "X=h Y=b", "Out=a"), "axis", 1);
    net_op("relu", "X=a", "Out=r");
    net_op("square", "X=r", "Out=s");
    net_op("mean", "X=s", "Out=loss");
}

START_TEST(grad_mul_add_relu_square_mean)
{
    fc_net();
    ASSERT_GRADS("loss", 2);
}
END_TEST

START_TEST(grad_matmul)
{
    net_new();
    net_var("x", IR_FP32, "-1,4", DATA);
    net_var("w", IR_FP32, "3,4", PARAM);
    net_var("w2", IR_FP32, "2,3", PARAM);
    net_var("w3", IR_FP32, "2,3", PARAM);
    net_var("h", IR_FP32, "-1,3", TMP);
    net_var("h2", IR_FP32, "-1,2", TMP);
    net_var("h3", IR_FP32, "2,3", TMP);
    net_var("t", IR_FP32, "1", TMP);
    net_var("t2", IR_FP32, "1", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    ir_op *m = net_op("matmul", "X=x Y=w", "Out=h");
    ir_op_set_bool(m, "transpose_Y", true);
    ir_op_set_float(m, "alpha", 0.5f);
    ir_op_set_bool(net_op("matmul_v2", "X=h Y=w2", "Out=h2"), "trans_y", true);
    /* h3 = w2^T-shaped product exercising trans_x: (h2^T h) is [2,3] */
    ir_op_set_bool(net_op("matmul_v2", "X=h2 Y=h", "Out=h3"), "trans_x", true);
    net_op("elementwise_mul", "X=h3 Y=w3", "Out=h3m");
    net_var("h3m", IR_FP32, "2,3", TMP);
    net_op("mean", "X=h3m", "Out=t");
    net_op("mean", "X=h2", "Out=t2");
    net_op("elementwise_add", "X=t Y=t2", "Out=loss");
    ASSERT_GRADS("loss", 3);
}
END_TEST

START_TEST(grad_elementwise_broadcast)
{
    net_new();
    net_var("x", IR_FP32, "-1,3,4", DATA);
    net_var("p", IR_FP32, "3", PARAM);
    net_var("q", IR_FP32, "3,4", PARAM);
    net_var("e", IR_FP32, "3", TMP);
    const char *tmps[] = {"a", "b", "c", "d", "f", "g", "k", "m"};
    for (size_t i = 0; i < G_N_ELEMENTS(tmps); i++)
        net_var(tmps[i], IR_FP32, "-1,3,4", TMP);
    net_var("r1", IR_FP32, "-1,4", TMP);
    net_var("r2", IR_FP32, "-1,3", TMP);
    net_var("l1", IR_FP32, "1", TMP);
    net_var("l2", IR_FP32, "1", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    ir_op_set_int(net_op("elementwise_sub", "X=x Y=p", "Out=a"), "axis", 1);
    net_op("elementwise_mul", "X=a Y=q", "Out=b");
    net_op("exp", "X=p", "Out=e");
    ir_op_set_int(net_op("elementwise_div", "X=b Y=e", "Out=c"), "axis", 1);
    net_op("elementwise_max", "X=c Y=q", "Out=d");
    ir_op_set_int(net_op("elementwise_min", "X=d Y=p", "Out=f"), "axis", 1);
    net_op("sigmoid", "X=f", "Out=g");
    ir_op_set_int(net_op("elementwise_pow", "X=g Y=p", "Out=k"), "axis", 1);
    ir_op_set_int(net_op("elementwise_add", "X=k Y=e", "Out=m"), "axis", 1);
    int32_t dim1[] = {1}, dim2[] = {2};
    ir_op_set_ints(net_op("reduce_sum", "X=m", "Out=r1"), "dim", dim1, 1);
    ir_op_set_ints(net_op("reduce_mean", "X=m", "Out=r2"), "dim", dim2, 1);
    net_op("mean", "X=r1", "Out=l1");
    net_op("mean", "X=r2", "Out=l2");
    net_op("elementwise_add", "X=l1 Y=l2", "Out=loss");
    ASSERT_GRADS("loss", 2);
}
END_TEST

START_TEST(grad_activations)
{
    net_new();
    net_var("x", IR_FP32, "-1,6", DATA);
    net_var("w", IR_FP32, "6", PARAM);
    const char *t[] = {"a",  "s",  "th", "sq", "lg", "ab", "lr",
                       "cl", "sm", "ex", "s1", "s2", "s3", "s4"};
    for (size_t i = 0; i < G_N_ELEMENTS(t); i++)
        net_var(t[i], IR_FP32, "-1,6", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    net_op("elementwise_mul", "X=x Y=w", "Out=a");
    net_op("sigmoid", "X=a", "Out=s");
    net_op("tanh", "X=a", "Out=th");
    net_op("sqrt", "X=s", "Out=sq");
    net_op("log", "X=s", "Out=lg");
    net_op("abs", "X=a", "Out=ab");
    ir_op_set_float(net_op("leaky_relu", "X=a", "Out=lr"), "alpha", 0.1f);
    ir_op *c = net_op("clip", "X=a", "Out=cl");
    ir_op_set_float(c, "min", -0.3f);
    ir_op_set_float(c, "max", 0.3f);
    net_op("softmax", "X=a", "Out=sm");
    net_op("exp", "X=th", "Out=ex");
    net_op("sum", "X=sq,lg,ab,lr", "Out=s1");
    net_op("sum", "X=cl,sm,ex", "Out=s2");
    net_op("elementwise_mul", "X=s1 Y=s2", "Out=s3");
    net_op("square", "X=s3", "Out=s4");
    net_op("mean", "X=s4", "Out=loss");
    ASSERT_GRADS("loss", 1);
}
END_TEST

START_TEST(grad_losses)
{
    net_new();
    net_var("x", IR_FP32, "-1,4", DATA);
    net_var("label", IR_INT64, "-1,1", DATA);
    net_var("soft", IR_FP32, "-1,5", DATA);
    net_var("w", IR_FP32, "4,5", PARAM);
    net_var("h", IR_FP32, "-1,5", TMP);
    net_var("p", IR_FP32, "-1,5", TMP);
    net_var("sp", IR_FP32, "-1,5", TMP);
    net_var("ps", IR_FP32, "-1,5", TMP);
    net_var("smx", IR_FP32, "-1,5", TMP);
    net_var("smx2", IR_FP32, "-1,5", TMP);
    const char *one[] = {"c1", "c2", "c2s", "c2m", "c3", "c4", "c5"};
    for (size_t i = 0; i < G_N_ELEMENTS(one); i++)
        net_var(one[i], IR_FP32, "-1,1", TMP);
    net_var("c2x", IR_FP32, "0,-1,5", TMP);
    net_var("c2mx", IR_FP32, "-1,1", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    net_op("mul", "X=x Y=w", "Out=h");
    net_op("softmax", "X=h", "Out=p");
    net_op("cross_entropy", "X=p Label=label", "Y=c1");
    net_op("cross_entropy2", "X=p Label=label", "Y=c2 XShape=c2x MatchX=c2mx");
    net_op("softmax_with_cross_entropy", "Logits=h Label=label", "Softmax=smx Loss=c3");
    net_op("softmax", "X=soft", "Out=sp");
    ir_op_set_bool(net_op("cross_entropy", "X=p Label=sp", "Y=c4"), "soft_label", true);
    ir_op_set_bool(
        net_op("softmax_with_cross_entropy", "Logits=h Label=sp", "Softmax=smx2 Loss=c5"),
        "soft_label", true);
    net_op("sum", "X=c1,c2,c3,c4,c5", "Out=c2s");
    net_op("mean", "X=c2s", "Out=loss");
    ASSERT_GRADS("loss", 1);
}
END_TEST

START_TEST(grad_plumbing)
{
    net_new();
    net_var("x", IR_FP32, "-1,4", DATA);
    net_var("w", IR_FP32, "4,6", PARAM);
    net_var("v", IR_FP32, "-1,2", PARAM);
    net_var("h", IR_FP32, "-1,6", TMP);
    net_var("hs", IR_FP32, "-1,6", TMP);
    net_var("hc", IR_FP64, "-1,6", TMP);
    net_var("ha", IR_FP64, "-1,6", TMP);
    net_var("p1", IR_FP64, "-1,2", TMP);
    net_var("p2", IR_FP64, "-1,3", TMP);
    net_var("p3", IR_FP64, "-1,1", TMP);
    net_var("vv", IR_FP64, "-1,2", TMP);
    net_var("cat", IR_FP64, "-1,5", TMP);
    net_var("sq", IR_FP64, "-1,5", TMP);
    net_var("loss", IR_FP64, "1", TMP);
    net_op("mul", "X=x Y=w", "Out=h");
    ir_op *s = net_op("scale", "X=h", "Out=hs");
    ir_op_set_float(s, "scale", 1.5f);
    ir_op_set_float(s, "bias", 0.25f);
    ir_op *c = net_op("cast", "X=hs", "Out=hc");
    ir_op_set_int(c, "in_dtype", IR_FP32);
    ir_op_set_int(c, "out_dtype", IR_FP64);
    net_op("assign", "X=hc", "Out=ha");
    ir_op *sp = net_op("split", "X=ha", "Out=p1,p2,p3");
    int32_t sec[] = {2, 3, -1};
    ir_op_set_ints(sp, "sections", sec, 3);
    ir_op_set_int(sp, "axis", 1);
    ir_op *c2 = net_op("cast", "X=v", "Out=vv");
    ir_op_set_int(c2, "in_dtype", IR_FP32);
    ir_op_set_int(c2, "out_dtype", IR_FP64);
    ir_op_set_int(net_op("concat", "X=p1,vv,p3", "Out=cat"), "axis", 1); /* p2 unused */
    net_op("square", "X=cat", "Out=sq");
    net_op("mean", "X=sq", "Out=loss");
    ASSERT_GRADS("loss", 2);
}
END_TEST

static void embedding_net(bool sparse, const char *pooltype)
{
    net_new();
    net_var("ids", IR_INT64, "-1,1", DATA | LOD);
    net_var("emb", IR_FP32, "7,3", PARAM);
    net_var("e", IR_FP32, "-1,3", TMP);
    net_var("pool", IR_FP32, "-1,3", TMP);
    net_var("mi", IR_INT32, "-1,3", TMP);
    net_var("sq", IR_FP32, "-1,3", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    ir_op *lk = net_op("lookup_table", "W=emb Ids=ids", "Out=e");
    ir_op_set_bool(lk, "is_sparse", sparse);
    ir_op_set_long(lk, "padding_idx", sparse ? -1 : 2);
    ir_op *p = net_op("sequence_pool", "X=e", "Out=pool MaxIndex=mi");
    ir_op_set_string(p, "pooltype", pooltype);
    net_op("square", "X=pool", "Out=sq");
    net_op("mean", "X=sq", "Out=loss");
}

START_TEST(grad_lookup_sequence_pool)
{
    const char *types[] = {"SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST"};
    for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
        embedding_net(i % 2 == 0, types[i]);
        ASSERT_GRADS("loss", 1);
    }
}
END_TEST

START_TEST(grad_lookup_v2_padding)
{
    net_new();
    net_var("ids", IR_INT64, "-1,2", DATA);
    net_var("emb", IR_FP32, "3,4", PARAM);
    net_var("e", IR_FP32, "-1,2,4", TMP);
    net_var("sq", IR_FP32, "-1,2,4", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    ir_op_set_long(net_op("lookup_table_v2", "W=emb Ids=ids", "Out=e"), "padding_idx", 1);
    net_op("square", "X=e", "Out=sq");
    net_op("mean", "X=sq", "Out=loss");
    ASSERT_GRADS("loss", 1);
}
END_TEST

START_TEST(grad_conv_pool_batch_norm)
{
    net_new();
    net_var("img", IR_FP32, "-1,2,5,5", DATA);
    net_var("f", IR_FP32, "4,2,3,3", PARAM);
    net_var("df", IR_FP32, "4,1,2,2", PARAM);
    net_var("scale", IR_FP32, "4", PARAM);
    net_var("bias", IR_FP32, "4", PARAM);
    net_var("mean", IR_FP32, "4", PERSIST);
    net_var("var", IR_FP32, "4", PERSIST);
    net_var("c", IR_FP32, "-1,4,5,5", TMP);
    net_var("bn", IR_FP32, "-1,4,5,5", TMP);
    net_var("sm", IR_FP32, "4", TMP);
    net_var("sv", IR_FP32, "4", TMP);
    net_var("dc", IR_FP32, "-1,4,2,2", TMP);
    net_var("mp", IR_FP32, "-1,4,1,1", TMP);
    net_var("ap", IR_FP32, "-1,4,2,2", TMP);
    net_var("s1", IR_FP32, "1", TMP);
    net_var("s2", IR_FP32, "1", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    int32_t one[] = {1, 1}, two[] = {2, 2}, zero[] = {0, 0};
    ir_op *cv = net_op("conv2d", "Input=img Filter=f", "Output=c");
    ir_op_set_ints(cv, "strides", one, 2);
    ir_op_set_ints(cv, "paddings", one, 2);
    ir_op_set_ints(cv, "dilations", one, 2);
    ir_op_set_int(cv, "groups", 1);
    ir_op *bn = net_op("batch_norm", "X=c Scale=scale Bias=bias Mean=mean Variance=var",
                       "Y=bn MeanOut=mean VarianceOut=var SavedMean=sm SavedVariance=sv");
    ir_op_set_float(bn, "epsilon", 1e-5f);
    ir_op_set_float(bn, "momentum", 0.9f);
    ir_op *dw = net_op("depthwise_conv2d", "Input=bn Filter=df", "Output=dc");
    ir_op_set_ints(dw, "strides", two, 2);
    ir_op_set_ints(dw, "paddings", zero, 2);
    ir_op_set_ints(dw, "dilations", one, 2);
    ir_op_set_int(dw, "groups", 4);
    ir_op *mp = net_op("pool2d", "X=dc", "Out=mp");
    ir_op_set_string(mp, "pooling_type", "max");
    ir_op_set_ints(mp, "ksize", two, 2);
    ir_op_set_ints(mp, "strides", two, 2);
    ir_op_set_ints(mp, "paddings", zero, 2);
    ir_op *ap = net_op("pool2d", "X=bn", "Out=ap");
    ir_op_set_string(ap, "pooling_type", "avg");
    int32_t three[] = {3, 3};
    ir_op_set_ints(ap, "ksize", three, 2);
    ir_op_set_ints(ap, "strides", two, 2);
    ir_op_set_ints(ap, "paddings", zero, 2);
    net_op("mean", "X=mp", "Out=s1");
    net_var("apsq", IR_FP32, "-1,4,2,2", TMP);
    net_op("square", "X=ap", "Out=apsq");
    net_op("mean", "X=apsq", "Out=s2");
    net_op("elementwise_add", "X=s1 Y=s2", "Out=loss");
    ASSERT_GRADS("loss", 4);
}
END_TEST

/* data_norm (statistics from fill_constant, so only X's grad flows) and
 * log_loss on a sigmoid, as in PaddleRec's join net. */
START_TEST(grad_data_norm_log_loss)
{
    net_new();
    net_var("x", IR_FP32, "-1,4", DATA);
    net_var("label", IR_FP32, "-1,1", DATA);
    net_var("w", IR_FP32, "4,3", PARAM);
    net_var("w2", IR_FP32, "3,1", PARAM);
    const char *tmp3[] = {"h", "y"}, *stat[] = {"n", "s", "q", "m", "sc"};
    for (size_t i = 0; i < G_N_ELEMENTS(tmp3); i++)
        net_var(tmp3[i], IR_FP32, "-1,3", TMP);
    for (size_t i = 0; i < G_N_ELEMENTS(stat); i++)
        net_var(stat[i], IR_FP32, "3", TMP);
    net_var("z", IR_FP32, "-1,1", TMP);
    net_var("p", IR_FP32, "-1,1", TMP);
    net_var("ll", IR_FP32, "-1,1", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    const char *fills[] = {"n", "s", "q"};
    const double vals[] = {4, 1, 3};
    for (size_t i = 0; i < 3; i++) {
        ir_op *f = net_op("fill_constant", NULL, NULL);
        ir_op_set_output1(f, "Out", fills[i]);
        int64_t three = 3;
        ir_op_set_longs(f, "shape", &three, 1);
        ir_op_set_float(f, "value", (float)vals[i]);
        ir_op_set_int(f, "dtype", IR_FP32);
    }
    net_op("mul", "X=x Y=w", "Out=h");
    net_op("data_norm", "X=h BatchSize=n BatchSum=s BatchSquareSum=q", "Y=y Means=m Scales=sc");
    net_op("mul", "X=y Y=w2", "Out=z");
    net_op("sigmoid", "X=z", "Out=p");
    net_op("log_loss", "Predicted=p Labels=label", "Loss=ll");
    net_op("mean", "X=ll", "Out=loss");
    ASSERT_GRADS("loss", 2);
}
END_TEST

START_TEST(grad_dropout)
{
    const char *impl[] = {"downgrade_in_infer", "upscale_in_train"};
    for (size_t i = 0; i < 2; i++) {
        fc_net();
        net_var("dr", IR_FP32, "-1,3", TMP);
        net_var("mask", IR_UINT8, "-1,3", TMP);
        /* put dropout between relu and square */
        ir_block *b = net_prog->blocks[0];
        ir_op *d = ir_block_insert_op(b, 3, "dropout");
        ir_op_set_input1(d, "X", "r");
        ir_op_set_output1(d, "Out", "dr");
        ir_op_set_output1(d, "Mask", "mask");
        ir_op_set_float(d, "dropout_prob", 0.4f);
        ir_op_set_string(d, "dropout_implementation", impl[i]);
        ir_op_set_role(d, 0);
        ir_op_set_input1(b->ops[4], "X", "dr");
        ASSERT_GRADS("loss", 2);
    }
}
END_TEST

START_TEST(grad_top_k)
{
    net_new();
    net_var("x", IR_FP32, "-1,4", DATA);
    net_var("w", IR_FP32, "4,5", PARAM);
    net_var("h", IR_FP32, "-1,5", TMP);
    net_var("v", IR_FP32, "-1,2", TMP);
    net_var("i", IR_INT64, "-1,2", TMP);
    net_var("loss", IR_FP32, "1", TMP);
    net_op("mul", "X=x Y=w", "Out=h");
    ir_op_set_int(net_op("top_k", "X=h", "Out=v Indices=i"), "k", 2);
    net_op("mean", "X=v", "Out=loss");
    ASSERT_GRADS("loss", 1);
}
END_TEST

/* ---- broken backward programs are caught -------------------------------- */

static ir_op *find_op(ir_program *p, const char *type)
{
    for (size_t i = 0; i < p->blocks[0]->n_ops; i++)
        if (!strcmp(p->blocks[0]->ops[i]->type, type))
            return p->blocks[0]->ops[i];
    return NULL;
}

/* square_grad swapped for abs_grad: dX = dOut * sign(X) instead of 2X. */
static void swap_square_grad(ir_program *p)
{
    ir_op *g = find_op(p, "square_grad");
    ck_assert_ptr_nonnull(g);
    g->type = ir_intern("abs_grad");
}

/* A maker that forgets the bias axis: elementwise_add_grad with axis 0
 * would not even run; instead scale b's gradient by 1.01 after the fact. */
static void scale_bias_grad(ir_program *p)
{
    ir_op *s = ir_block_append_op(p->blocks[0], "scale");
    ir_op_set_input1(s, "X", "b@GRAD");
    ir_op_set_output1(s, "Out", "b@GRAD");
    ir_op_set_float(s, "scale", 1.01f);
    ir_op_set_role(s, IR_ROLE_BACKWARD);
}

/* elementwise_add_grad with the wrong broadcast axis: the batch (3 rows)
 * lines up with b's 3 elements, so it runs, and sums the wrong way. */
static void wrong_add_grad_axis(ir_program *p)
{
    ir_op *g = find_op(p, "elementwise_add_grad");
    ck_assert_ptr_nonnull(g);
    ir_op_set_int(g, "axis", 0);
}

START_TEST(broken_grad_ops_are_caught)
{
    void (*edits[])(ir_program *) = {swap_square_grad, scale_bias_grad, wrong_add_grad_axis};
    expect_errors = true;
    for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
        fc_net();
        size_t n;
        double worst = check_net("loss", &n, edits[i]);
        ck_assert_msg(worst > 1e-3, "edit %zu not caught (worst %g)", i, worst);
    }
    expect_errors = false;
}
END_TEST

START_TEST(rel_error_measure)
{
    ck_assert(ex_grad_rel_error(1.0, 1.0) == 0);
    ck_assert(fabs(ex_grad_rel_error(1.1, 1.0) - 0.1) < 1e-12);
    /* tiny numeric gradients are compared absolutely */
    ck_assert(fabs(ex_grad_rel_error(2e-4, 1e-4) - 1e-4) < 1e-15);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("exec_grad");
    TCase *tc = tcase_create("grad");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, grad_mul_add_relu_square_mean);
    tcase_add_test(tc, grad_matmul);
    tcase_add_test(tc, grad_elementwise_broadcast);
    tcase_add_test(tc, grad_activations);
    tcase_add_test(tc, grad_losses);
    tcase_add_test(tc, grad_plumbing);
    tcase_add_test(tc, grad_lookup_sequence_pool);
    tcase_add_test(tc, grad_lookup_v2_padding);
    tcase_add_test(tc, grad_conv_pool_batch_norm);
    tcase_add_test(tc, grad_dropout);
    tcase_add_test(tc, grad_data_norm_log_loss);
    tcase_add_test(tc, grad_top_k);
    tcase_add_test(tc, broken_grad_ops_are_caught);
    tcase_add_test(tc, rel_error_measure);
    suite_add_tcase(s, tc);
    return s;
}
