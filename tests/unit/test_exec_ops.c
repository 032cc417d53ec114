/* test_exec_ops.c - each executor kernel's forward (and the optimizers'
 * update) against values computed by hand. */
#include <glib.h>
#include <math.h>

#include "exec/exec.h"
#include "exec_fixture.h"
#include "unit.h"

static ex_scope *S;
static ex_ctx X;

static void fresh(void)
{
    net_new();
    ex_scope_free(S);
    S = ex_scope_new();
    ex_ctx_init(&X, net_prog, S, 42);
}

/* put("x", "2,3", (double[]){...}) */
static ex_tensor *put(const char *name, const char *dims, const double *v, size_t nv)
{
    int64_t d[8];
    int n = 0;
    for (const char *s = dims; *s && n < 8;) {
        char *end;
        d[n++] = strtoll(s, &end, 10);
        s = *end ? end + 1 : end;
    }
    ex_tensor *t = ex_tensor_new(IR_FP32, n, d);
    memcpy(t->data, v, (nv < t->numel ? nv : t->numel) * sizeof *v);
    ex_scope_put(S, name, t);
    return t;
}

static void run(ir_op *op)
{
    bool ok = ex_run_op(&X, op);
    ck_assert_msg(ok, "%s: %s", op->type, X.err);
}

static void expect(const char *name, const double *v, size_t n)
{
    const ex_tensor *t = ex_scope_get(S, name);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->numel, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(t->data[i] - v[i]) < 1e-9 * (1 + fabs(v[i])), "%s[%zu] = %.12g, want %.12g",
                      name, i, t->data[i], v[i]);
}
#define EXPECT(name, ...) do { const double e_[] = {__VA_ARGS__}; expect(name, e_, G_N_ELEMENTS(e_)); } while (0)
#define PUT(name, dims, ...) \
    put(name, dims, (const double[]){__VA_ARGS__}, sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

START_TEST(math_ops)
{
    fresh();
    PUT("x", "2,3", 1, 2, 3, 4, 5, 6);
    PUT("w", "3,2", 1, 0, 0, 1, 1, 1);
    run(net_op("mul", "X=x Y=w", "Out=o"));
    EXPECT("o", 4, 5, 10, 11);
    ir_op *m = net_op("matmul", "X=x Y=x", "Out=mm");
    ir_op_set_bool(m, "transpose_Y", true);
    ir_op_set_float(m, "alpha", 2.0f);
    run(m);
    EXPECT("mm", 28, 64, 64, 154);
    run(net_op("matmul_v2", "X=x Y=w", "Out=m2"));
    EXPECT("m2", 4, 5, 10, 11);
    PUT("b", "3", 10, 20, 30);
    ir_op_set_int(net_op("elementwise_add", "X=x Y=b", "Out=a"), "axis", 1);
    run(net_prog->blocks[0]->ops[3]);
    EXPECT("a", 11, 22, 33, 14, 25, 36);
    PUT("c", "2", 1, 2);
    ir_op *sub = net_op("elementwise_sub", "X=x Y=c", "Out=s");
    ir_op_set_int(sub, "axis", 0);
    run(sub);
    EXPECT("s", 0, 1, 2, 2, 3, 4);
    run(net_op("elementwise_mul", "X=x Y=b", "Out=p"));
    EXPECT("p", 10, 40, 90, 40, 100, 180);
    run(net_op("elementwise_div", "X=x Y=b", "Out=d"));
    EXPECT("d", 0.1, 0.1, 0.1, 0.4, 0.25, 0.2);
    PUT("t", "3", 3, 3, 3);
    run(net_op("elementwise_max", "X=x Y=t", "Out=mx"));
    EXPECT("mx", 3, 3, 3, 4, 5, 6);
    run(net_op("elementwise_min", "X=x Y=t", "Out=mn"));
    EXPECT("mn", 1, 2, 3, 3, 3, 3);
    PUT("two", "1", 2);
    run(net_op("elementwise_pow", "X=x Y=two", "Out=pw"));
    EXPECT("pw", 1, 4, 9, 16, 25, 36);
    run(net_op("less_than", "X=x Y=t", "Out=lt"));
    EXPECT("lt", 1, 1, 0, 0, 0, 0);
    run(net_op("logical_not", "X=lt", "Out=nl"));
    EXPECT("nl", 0, 0, 1, 1, 1, 1);
}
END_TEST

START_TEST(activation_ops)
{
    fresh();
    PUT("x", "1,3", -1, 0, 2);
    run(net_op("relu", "X=x", "Out=r"));
    EXPECT("r", 0, 0, 2);
    run(net_op("sigmoid", "X=x", "Out=s"));
    EXPECT("s", 1 / (1 + exp(1)), 0.5, 1 / (1 + exp(-2)));
    run(net_op("tanh", "X=x", "Out=t"));
    EXPECT("t", tanh(-1), 0, tanh(2));
    run(net_op("square", "X=x", "Out=q"));
    EXPECT("q", 1, 0, 4);
    run(net_op("softmax", "X=x", "Out=sm"));
    double z = exp(-1) + 1 + exp(2);
    EXPECT("sm", exp(-1) / z, 1 / z, exp(2) / z);
    ir_op *c = net_op("clip", "X=x", "Out=c");
    ir_op_set_float(c, "min", -0.5f);
    ir_op_set_float(c, "max", 1.0f);
    run(c);
    EXPECT("c", -0.5, 0, 1);
}
END_TEST

START_TEST(loss_and_reduce_ops)
{
    fresh();
    PUT("p", "2,3", 0.2, 0.3, 0.5, 0.1, 0.1, 0.8);
    ex_tensor *l = PUT("label", "2,1", 2, 0);
    l->dtype = IR_INT64;
    run(net_op("cross_entropy", "X=p Label=label", "Y=ce"));
    EXPECT("ce", -log(0.5), -log(0.1));
    run(net_op("cross_entropy2", "X=p Label=label", "Y=ce2 XShape=xs MatchX=mx"));
    EXPECT("ce2", -log(0.5), -log(0.1));
    EXPECT("mx", 0.5, 0.1);
    PUT("logits", "2,3", 1, 2, 3, 0, 0, 0);
    run(net_op("softmax_with_cross_entropy", "Logits=logits Label=label", "Softmax=sm Loss=lo"));
    double z = exp(1) + exp(2) + exp(3);
    EXPECT("lo", log(z) - 3, log(3.0));
    EXPECT("sm", exp(1) / z, exp(2) / z, exp(3) / z, 1 / 3.0, 1 / 3.0, 1 / 3.0);
    run(net_op("mean", "X=p", "Out=m"));
    EXPECT("m", 2.0 / 6);
    int32_t d1[] = {1};
    ir_op *rs = net_op("reduce_sum", "X=logits", "Out=rs");
    ir_op_set_ints(rs, "dim", d1, 1);
    run(rs);
    EXPECT("rs", 6, 0);
    ir_op *rm = net_op("reduce_mean", "X=logits", "Out=rm");
    ir_op_set_bool(rm, "reduce_all", true);
    run(rm);
    EXPECT("rm", 1);
    PUT("pr", "3,1", 0.5, 0.25, 0.75);
    PUT("lb", "3,1", 1, 0, 1);
    ir_op *ll = net_op("log_loss", "Predicted=pr Labels=lb", "Loss=ll");
    ir_op_set_float(ll, "epsilon", 0);
    run(ll);
    EXPECT("ll", -log(0.5), -log(0.75), -log(0.75));
    PUT("ll@g", "3,1", 1, 2, 1);
    ir_op *llg = net_op("log_loss_grad", "Predicted=pr Labels=lb Loss@GRAD=ll@g", "Predicted@GRAD=gp");
    ir_op_set_float(llg, "epsilon", 0);
    run(llg);
    EXPECT("gp", -2, 2 / 0.75, -1 / 0.75);
}
END_TEST

START_TEST(metric_ops)
{
    fresh();
    PUT("x", "2,3", 0.1, 0.7, 0.2, 0.5, 0.5, 0.0);
    ir_op *tk = net_op("top_k", "X=x", "Out=v Indices=i");
    ir_op_set_int(tk, "k", 2);
    run(tk);
    EXPECT("v", 0.7, 0.2, 0.5, 0.5);
    EXPECT("i", 1, 2, 0, 1);
    PUT("label", "2,1", 2, 2);
    run(net_op("accuracy", "Out=v Indices=i Label=label", "Accuracy=acc Correct=c Total=t"));
    EXPECT("acc", 0.5);
    EXPECT("c", 1);
    EXPECT("t", 2);
}
END_TEST

START_TEST(plumbing_ops)
{
    fresh();
    PUT("a", "2", 1, 2);
    PUT("b", "2", 10, 20);
    run(net_op("sum", "X=a,b,a", "Out=s"));
    EXPECT("s", 12, 24);
    ir_op *sc = net_op("scale", "X=a", "Out=sc");
    ir_op_set_float(sc, "scale", 3);
    ir_op_set_float(sc, "bias", 1);
    ir_op_set_bool(sc, "bias_after_scale", false);
    run(sc);
    EXPECT("sc", 6, 9);
    PUT("f", "3", -1.5, 2.7, 0);
    ir_op *c = net_op("cast", "X=f", "Out=ci");
    ir_op_set_int(c, "out_dtype", IR_INT32);
    run(c);
    EXPECT("ci", -1, 2, 0);
    ir_op *fc = net_op("fill_constant", "", "Out=k");
    int32_t shape[] = {2, 2};
    ir_op_set_ints(fc, "shape", shape, 2);
    ir_op_set_float(fc, "value", 0.5f);
    ir_op_set_string(fc, "str_value", "0.1");
    run(fc);
    EXPECT("k", 0.1, 0.1, 0.1, 0.1);
    ir_op *fl = net_op("fill_any_like", "X=f", "Out=z");
    ir_op_set_float(fl, "value", 0);
    run(fl);
    EXPECT("z", 0, 0, 0);
    run(net_op("assign", "X=b", "Out=as"));
    EXPECT("as", 10, 20);
    ir_op *inc = net_op("increment", "X=a", "Out=a");
    ir_op_set_float(inc, "step", 2);
    run(inc);
    EXPECT("a", 3, 4);
}
END_TEST

START_TEST(random_ops_are_seeded)
{
    fresh();
    int32_t shape[] = {1000};
    ir_op *u = net_op("uniform_random", "", "Out=u");
    ir_op_set_ints(u, "shape", shape, 1);
    ir_op_set_float(u, "min", -2);
    ir_op_set_float(u, "max", 3);
    ir_op_set_int(u, "seed", 5);
    run(u);
    ex_tensor *a = ex_tensor_copy(ex_scope_get(S, "u"));
    double lo = 1e9, hi = -1e9, mean = 0;
    for (size_t i = 0; i < a->numel; i++) {
        lo = fmin(lo, a->data[i]);
        hi = fmax(hi, a->data[i]);
        mean += a->data[i] / 1000;
    }
    ck_assert(lo >= -2 && hi < 3 && fabs(mean - 0.5) < 0.2);
    run(u); /* a fixed seed gives the same values again */
    ck_assert_mem_eq(a->data, ex_scope_get(S, "u")->data, 1000 * sizeof(double));
    ex_tensor_free(a);
    ir_op *g = net_op("gaussian_random", "", "Out=g");
    ir_op_set_ints(g, "shape", shape, 1);
    ir_op_set_float(g, "mean", 1);
    ir_op_set_float(g, "std", 2);
    run(g);
    const ex_tensor *t = ex_scope_get(S, "g");
    double m = 0, v = 0;
    for (size_t i = 0; i < t->numel; i++)
        m += t->data[i] / 1000;
    for (size_t i = 0; i < t->numel; i++)
        v += (t->data[i] - m) * (t->data[i] - m) / 1000;
    ck_assert(fabs(m - 1) < 0.3 && fabs(sqrt(v) - 2) < 0.3);
    /* dropout keeps about 1-p, and the mask matches Out */
    PUT("ones", "1000", 0);
    for (size_t i = 0; i < 1000; i++)
        ex_scope_get(S, "ones")->data[i] = 1;
    ir_op *d = net_op("dropout", "X=ones", "Out=dr Mask=mask");
    ir_op_set_float(d, "dropout_prob", 0.3f);
    run(d);
    double kept = 0;
    for (size_t i = 0; i < 1000; i++) {
        kept += ex_scope_get(S, "mask")->data[i];
        ck_assert(ex_scope_get(S, "dr")->data[i] == ex_scope_get(S, "mask")->data[i]);
    }
    ck_assert(kept > 600 && kept < 800);
}
END_TEST

START_TEST(table_ops)
{
    fresh();
    PUT("w", "4,2", 0, 1, 10, 11, 20, 21, 30, 31);
    ex_tensor *ids = PUT("ids", "3,1", 3, 1, 3);
    int64_t lod[] = {0, 2, 3};
    ex_tensor_set_lod(ids, lod, 3);
    ir_op *lk = net_op("lookup_table", "W=w Ids=ids", "Out=e");
    ir_op_set_long(lk, "padding_idx", 1);
    run(lk);
    EXPECT("e", 30, 31, 0, 0, 30, 31);
    ck_assert_uint_eq(ex_scope_get(S, "e")->n_lod, 3);
    PUT("de", "3,2", 1, 2, 3, 4, 5, 6);
    ir_op *g = net_op("lookup_table_grad", "W=w Ids=ids Out@GRAD=de", "W@GRAD=dw");
    ir_op_set_bool(g, "is_sparse", true);
    ir_op_set_long(g, "padding_idx", 1);
    run(g);
    const ex_tensor *dw = ex_scope_get(S, "dw");
    ck_assert_int_eq(dw->kind, EX_ROWS);
    ck_assert_int_eq(dw->height, 4);
    ck_assert(dw->rows[0] == 3 && dw->rows[1] == 1 && dw->rows[2] == 3);
    EXPECT("dw", 1, 2, 0, 0, 5, 6);
    ir_op *sp = net_op("sequence_pool", "X=e", "Out=pool MaxIndex=mi");
    ir_op_set_string(sp, "pooltype", "AVERAGE");
    run(sp);
    EXPECT("pool", 15, 15.5, 30, 31);
    PUT("m", "2,3", 1, 2, 3, 4, 5, 6);
    PUT("n", "2,1", 7, 8);
    ir_op_set_int(net_op("concat", "X=m,n", "Out=cat"), "axis", 1);
    run(net_prog->blocks[0]->ops[net_prog->blocks[0]->n_ops - 1]);
    EXPECT("cat", 1, 2, 3, 7, 4, 5, 6, 8);
    ir_op *s = net_op("split", "X=cat", "Out=s1,s2");
    int32_t sec[] = {1, -1};
    ir_op_set_ints(s, "sections", sec, 2);
    ir_op_set_int(s, "axis", 1);
    run(s);
    EXPECT("s1", 1, 4);
    EXPECT("s2", 2, 3, 7, 5, 6, 8);
    ir_op *br = net_op("split_byref", "X=w", "Out=r1,r2");
    int32_t sec2[] = {3, 1};
    ir_op_set_ints(br, "sections", sec2, 2);
    run(br);
    EXPECT("r2", 30, 31);
    ir_op *ssr = net_op("split_selected_rows", "X=dw", "Out=h1,h2");
    int64_t hs[] = {2, 2};
    ir_op_set_longs(ssr, "height_sections", hs, 2);
    run(ssr);
    const ex_tensor *h1 = ex_scope_get(S, "h1"), *h2 = ex_scope_get(S, "h2");
    ck_assert(h1->dims[0] == 1 && h1->rows[0] == 1 && h2->dims[0] == 2 && h2->rows[0] == 1);
    EXPECT("h2", 1, 2, 5, 6);
    run(net_op("split_ids", "Ids=ids", "Out=i0,i1"));
    ck_assert_uint_eq(ex_scope_get(S, "i0")->numel, 0); /* no even ids */
    ck_assert_uint_eq(ex_scope_get(S, "i1")->numel, 2);
    EXPECT("i1", 1, 3);
    PUT("rows0", "0", 0);
    PUT("x0", "0,2", 0);
    PUT("rows1", "2", 1, 3);
    PUT("x1", "2,2", 100, 101, 300, 301);
    run(net_op("merge_ids", "Ids=ids Rows=rows0,rows1 X=x0,x1", "Out=merged"));
    EXPECT("merged", 300, 301, 100, 101, 300, 301);
}
END_TEST

START_TEST(nn_ops)
{
    fresh();
    PUT("img", "1,1,3,3", 1, 2, 3, 4, 5, 6, 7, 8, 9);
    PUT("f", "1,1,2,2", 1, 0, 0, 1);
    run(net_op("conv2d", "Input=img Filter=f", "Output=c"));
    EXPECT("c", 6, 8, 12, 14);
    ir_op *p = net_op("pool2d", "X=img", "Out=mp");
    int32_t two[] = {2, 2}, one[] = {1, 1};
    ir_op_set_string(p, "pooling_type", "max");
    ir_op_set_ints(p, "ksize", two, 2);
    ir_op_set_ints(p, "strides", one, 2);
    run(p);
    EXPECT("mp", 5, 6, 8, 9);
    ir_op *ap = net_op("pool2d", "X=img", "Out=ap");
    ir_op_set_string(ap, "pooling_type", "avg");
    ir_op_set_ints(ap, "ksize", two, 2);
    ir_op_set_ints(ap, "strides", two, 2);
    ir_op_set_ints(ap, "paddings", (int32_t[]){0, 0}, 2);
    ir_op_set_bool(ap, "ceil_mode", true);
    run(ap);
    EXPECT("ap", 3, 4.5, 7.5, 9);
    PUT("bx", "2,2", 1, 10, 3, 30);
    PUT("sc", "2", 1, 2);
    PUT("bi", "2", 0, 1);
    PUT("mean", "2", 0, 0);
    PUT("var", "2", 1, 1);
    ir_op *bn = net_op("batch_norm", "X=bx Scale=sc Bias=bi Mean=mean Variance=var",
                       "Y=y MeanOut=mean VarianceOut=var SavedMean=sm SavedVariance=sv");
    ir_op_set_float(bn, "epsilon", 0);
    ir_op_set_float(bn, "momentum", 0.5f);
    run(bn);
    EXPECT("y", -1, -1, 1, 3);
    EXPECT("mean", 1, 10);
    EXPECT("var", 1, 50.5);
}
END_TEST

/* data_norm from running statistics, and its grad's batch summaries. */
START_TEST(data_norm_op)
{
    fresh();
    PUT("dx", "2,2", 1, 4, 3, 8);
    PUT("bsize", "2", 2, 4);
    PUT("bsum", "2", 2, 8);         /* means 1, 2 */
    PUT("bsq", "2", 8, 1);          /* scales sqrt(2 / 8) = 0.5, sqrt(4) = 2 */
    ir_op *dn = net_op("data_norm", "X=dx BatchSize=bsize BatchSum=bsum BatchSquareSum=bsq",
                       "Y=dy Means=dm Scales=ds");
    ir_op_set_float(dn, "epsilon", 0.25f);
    run(dn);
    EXPECT("dy", 0, 4, 1, 12);
    EXPECT("dm", 1, 2);
    EXPECT("ds", 0.5, 2);
    PUT("dy@g", "2,2", 1, 1, 2, -1);
    ir_op *g = net_op("data_norm_grad",
                      "X=dx Y@GRAD=dy@g BatchSize=bsize BatchSum=bsum BatchSquareSum=bsq "
                      "Means=dm Scales=ds",
                      "X@GRAD=gx BatchSize@GRAD=gn BatchSum@GRAD=gs BatchSquareSum@GRAD=gq");
    ir_op_set_float(g, "epsilon", 0.25f);
    run(g);
    EXPECT("gx", 0.5, 2, 1, -2);
    EXPECT("gn", 2, 2);
    EXPECT("gs", 4, 12);
    /* (1-1)^2 + (3-1)^2 + 2 * 0.25; (4-2)^2 + (8-2)^2 + 2 * 0.25 */
    EXPECT("gq", 4.5, 40.5);
    PUT("bad", "3", 1, 2, 3);
    ck_assert(!ex_run_op(&X, net_op("data_norm", "X=dx BatchSize=bad BatchSum=bsum BatchSquareSum=bsq",
                                    "Y=dy Means=dm Scales=ds")));
    ck_assert_ptr_nonnull(strstr(X.err, "BatchSize has 3 values for 2 columns"));
}
END_TEST

/* One step of each optimizer on p = [1, -2], g = [0.5, 0.25], lr 0.1. */
static void opt_setup(void)
{
    fresh();
    PUT("p", "2", 1, -2);
    PUT("g", "2", 0.5, 0.25);
    PUT("lr", "1", 0.1);
}

START_TEST(optimizer_ops)
{
    opt_setup();
    run(net_op("sgd", "Param=p Grad=g LearningRate=lr", "ParamOut=p"));
    EXPECT("p", 0.95, -2.025);

    opt_setup();
    PUT("v", "2", 1, 1);
    ir_op *m = net_op("momentum", "Param=p Grad=g Velocity=v LearningRate=lr", "ParamOut=p VelocityOut=v");
    ir_op_set_float(m, "mu", 0.5f);
    run(m);
    EXPECT("v", 1.0, 0.75);
    EXPECT("p", 0.9, -2.075);

    opt_setup();
    PUT("m1", "2", 0, 0);
    PUT("m2", "2", 0, 0);
    PUT("b1p", "1", 0.5);
    PUT("b2p", "1", 0.75);
    ir_op *a = net_op("adam", "Param=p Grad=g LearningRate=lr Moment1=m1 Moment2=m2 Beta1Pow=b1p Beta2Pow=b2p",
                      "ParamOut=p Moment1Out=m1 Moment2Out=m2 Beta1PowOut=b1p Beta2PowOut=b2p");
    ir_op_set_float(a, "beta1", 0.5f);
    ir_op_set_float(a, "beta2", 0.75f);
    ir_op_set_float(a, "epsilon", 0);
    run(a);
    /* lr_t = 0.1 * sqrt(0.25) / 0.5 = 0.1; m1 = g/2; m2 = g^2/4 */
    EXPECT("m1", 0.25, 0.125);
    EXPECT("m2", 0.0625, 0.015625);
    EXPECT("p", 0.9, -2.1);
    EXPECT("b1p", 0.25);

    opt_setup();
    PUT("mo", "2", 1, 1);
    ir_op *ag = net_op("adagrad", "Param=p Grad=g Moment=mo LearningRate=lr", "ParamOut=p MomentOut=mo");
    ir_op_set_float(ag, "epsilon", 0);
    run(ag);
    EXPECT("mo", 1.25, 1.0625);
    EXPECT("p", 1 - 0.05 / sqrt(1.25), -2 - 0.025 / sqrt(1.0625));

    opt_setup();
    PUT("mo", "2", 1, 1);
    ir_op *da = net_op("decayed_adagrad", "Param=p Grad=g Moment=mo LearningRate=lr", "ParamOut=p MomentOut=mo");
    ir_op_set_float(da, "epsilon", 0);
    ir_op_set_float(da, "decay", 0.5f);
    run(da);
    EXPECT("mo", 0.625, 0.53125);

    opt_setup();
    PUT("mom", "2", 0, 0);
    PUT("ms", "2", 0, 0);
    PUT("mg", "2", 0, 0);
    ir_op *rp = net_op("rmsprop", "Param=p Grad=g Moment=mom MeanSquare=ms MeanGrad=mg LearningRate=lr",
                       "ParamOut=p MomentOut=mom MeanSquareOut=ms MeanGradOut=mg");
    ir_op_set_float(rp, "decay", 0.5f);
    ir_op_set_float(rp, "epsilon", 0);
    ir_op_set_float(rp, "momentum", 0);
    run(rp);
    EXPECT("ms", 0.125, 0.03125);
    EXPECT("p", 1 - 0.05 / sqrt(0.125), -2 - 0.025 / sqrt(0.03125));

    opt_setup();
    PUT("mo", "2", 0, 0);
    PUT("inf", "2", 0, 0);
    PUT("b1p", "1", 0.5);
    ir_op *ax = net_op("adamax", "Param=p Grad=g LearningRate=lr Moment=mo InfNorm=inf Beta1Pow=b1p",
                       "ParamOut=p MomentOut=mo InfNormOut=inf");
    ir_op_set_float(ax, "beta1", 0.5f);
    ir_op_set_float(ax, "epsilon", 0);
    run(ax);
    /* m = g/2, inf = |g|, lr_t = 0.2: p -= 0.2 * 0.5 */
    EXPECT("p", 0.9, -2.1);

    opt_setup();
    PUT("sq", "2", 0, 0);
    PUT("lin", "2", 0, 0);
    ir_op *ft = net_op("ftrl", "Param=p Grad=g SquaredAccumulator=sq LinearAccumulator=lin LearningRate=lr",
                       "ParamOut=p SquaredAccumOut=sq LinearAccumOut=lin");
    ir_op_set_float(ft, "l1", 0);
    ir_op_set_float(ft, "l2", 0);
    ir_op_set_float(ft, "lr_power", -0.5f);
    run(ft);
    /* lin = g - sqrt(g^2)/lr * p; p = -lin / (|g| / lr) */
    EXPECT("lin", 0.5 - 5 * 1, 0.25 - 2.5 * -2);
    EXPECT("p", 4.5 / 5, -5.25 / 2.5);

    opt_setup();
    PUT("v", "2", 0, 0);
    ir_op *lm = net_op("lars_momentum", "Param=p Grad=g Velocity=v LearningRate=lr", "ParamOut=p VelocityOut=v");
    ir_op_set_float(lm, "mu", 0.9f);
    ir_op_set_float(lm, "lars_coeff", 1);
    ir_op_set_float(lm, "lars_weight_decay", 0);
    run(lm);
    /* local lr = 0.1 * |p| / |g| = 0.1 * sqrt(5) / sqrt(0.3125) = 0.4 */
    EXPECT("p", 1 - 0.2, -2 - 0.1);
}
END_TEST

START_TEST(control_flow)
{
    fresh();
    ir_block *sub = ir_program_add_block(net_prog, 0);
    ir_op *inner = ir_block_append_op(sub, "assign");
    ir_op_set_input1(inner, "X", "one");
    ir_op_set_output1(inner, "Out", "lr");
    PUT("one", "1", 1);
    PUT("lr", "1", 0.5);
    PUT("yes", "1", 1);
    PUT("no", "1", 0);
    ir_op *cb = net_op("conditional_block", "Cond=no Input=one", "Out=lr");
    ir_op_set_block(cb, "sub_block", 1);
    ir_op_set_bool(cb, "is_scalar_condition", true);
    run(cb);
    EXPECT("lr", 0.5);
    ir_op_set_input1(cb, "Cond", "yes");
    run(cb);
    EXPECT("lr", 1);
}
END_TEST

START_TEST(errors_name_block_op_and_var)
{
    fresh();
    net_op("relu", "X=ghost", "Out=o");
    ck_assert(!ex_run_block(&X, 0, NULL));
    ck_assert_str_eq(X.err, "block 0, op 0 'relu': input 'X' reads var 'ghost', which holds no value");
    fresh();
    net_op("no_such_op", "", "");
    ck_assert(!ex_run_block(&X, 0, NULL));
    ck_assert_str_eq(X.err, "block 0, op 0 'no_such_op': the executor has no kernel for this op");
    fresh();
    PUT("x", "2,3", 0);
    PUT("w", "2,3", 0);
    net_op("mul", "X=x Y=w", "Out=o");
    ck_assert(!ex_run_block(&X, 0, NULL));
    ck_assert_str_eq(X.err, "block 0, op 0 'mul': X's width 3 differs from Y's height 2");
}
END_TEST

START_TEST(every_kernel_of_the_issue_is_registered)
{
    const char *ops[] = {"mul", "matmul", "matmul_v2", "elementwise_add", "relu", "sigmoid", "tanh",
                         "softmax", "softmax_with_cross_entropy", "cross_entropy", "cross_entropy2",
                         "square", "mean", "reduce_sum", "reduce_mean", "sum", "scale", "cast",
                         "fill_constant", "fill_any_like", "assign", "increment", "less_than",
                         "logical_not", "conditional_block", "uniform_random", "gaussian_random",
                         "lookup_table", "lookup_table_v2", "sequence_pool", "concat", "split",
                         "split_byref", "split_selected_rows", "split_ids", "merge_ids", "conv2d",
                         "depthwise_conv2d", "batch_norm", "pool2d", "dropout", "sgd", "momentum",
                         "adam", "adagrad", "rmsprop", "decayed_adagrad", "adamax", "ftrl",
                         "lars_momentum", "mul_grad", "matmul_grad", "matmul_v2_grad",
                         "elementwise_add_grad", "relu_grad", "sigmoid_grad", "tanh_grad",
                         "softmax_grad", "softmax_with_cross_entropy_grad", "cross_entropy_grad",
                         "cross_entropy_grad2", "square_grad", "mean_grad", "reduce_sum_grad",
                         "reduce_mean_grad", "lookup_table_grad", "lookup_table_v2_grad",
                         "sequence_pool_grad", "concat_grad", "conv2d_grad",
                         "depthwise_conv2d_grad", "batch_norm_grad", "pool2d_grad", "dropout_grad",
                         "conditional_block_grad"};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
        ck_assert_msg(ex_kernel_find(ops[i]) != NULL, "%s", ops[i]);
}
END_TEST

static void teardown(void)
{
    ex_scope_free(S);
    S = NULL;
    net_free();
}

Suite *make_suite(void)
{
    Suite *s = suite_create("exec_ops");
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, math_ops);
    tcase_add_test(tc, activation_ops);
    tcase_add_test(tc, loss_and_reduce_ops);
    tcase_add_test(tc, plumbing_ops);
    tcase_add_test(tc, metric_ops);
    tcase_add_test(tc, random_ops_are_seeded);
    tcase_add_test(tc, table_ops);
    tcase_add_test(tc, nn_ops);
    tcase_add_test(tc, data_norm_op);
    tcase_add_test(tc, optimizer_ops);
    tcase_add_test(tc, control_flow);
    tcase_add_test(tc, errors_name_block_op_and_var);
    tcase_add_test(tc, every_kernel_of_the_issue_is_registered);
    suite_add_tcase(s, tc);
    return s;
}
