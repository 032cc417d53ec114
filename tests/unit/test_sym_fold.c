/* test_sym_fold.c - verify job's exact int64 [1] values (src/sym/intfold.c:
 * a step counter's fill_constant, increment and sum, ref_by_trainer_id by
 * a known id) and the elementwise pull out of a concat (term.c, DC-ASGD's
 * correction), each on terms and on concrete tensors by the reference
 * executor. */
#include <math.h>

#include "exec/exec.h"
#include "exec_fixture.h"
#include "sym/run.h"
#include "unit.h"

static sym_store *st;

static void setup(void)
{
    st = sym_store_new();
}

static void teardown(void)
{
    sym_store_free(st);
}

START_TEST(int_values_are_their_own_leaves)
{
    ck_assert_ptr_eq(sym_int(st, 3), sym_int(st, 3));
    ck_assert_ptr_ne(sym_int(st, 3), sym_int(st, 4));
    /* a var named "3" is no number */
    ck_assert_ptr_ne(sym_int(st, 3), sym_leaf(st, "3", 1));
    int64_t v = 0;
    ck_assert(sym_int_value(sym_int(st, -2), &v));
    ck_assert_int_eq(v, -2);
    ck_assert(!sym_int_value(sym_leaf(st, "3", 1), &v));
}
END_TEST

static ir_op *fill(const char *out, int dtype, int32_t rows, const char *str_value, float value)
{
    ir_op *op = net_op("fill_constant", "", out);
    ir_op_set_int(op, "dtype", dtype);
    ir_op_set_ints(op, "shape", &rows, 1);
    ir_op_set_string(op, "str_value", str_value);
    ir_op_set_float(op, "value", value);
    return op;
}

/* Runs net_prog symbolically in p. */
static void run_sym(sym_ctx *c, sym_proc *p)
{
    memset(c, 0, sizeof *c);
    memset(p, 0, sizeof *p);
    c->st = st;
    p->label = "net";
    p->main = net_prog;
    p->trainer = p->emulate_from = -1;
    ck_assert_msg(sym_run_block(c, p, net_prog, "net", 0), "%s", c->err);
}

static sym_term *val(sym_proc *p, const char *name)
{
    sym_term *t = pmap_get(&p->vals, ir_intern(name));
    ck_assert_msg(t, "no %s", name);
    return t;
}

static double num(ex_scope *xs, const char *name)
{
    const ex_tensor *t = ex_scope_get(xs, ir_intern(name));
    ck_assert_msg(t && t->numel == 1, "no %s", name);
    return t->data[0];
}

/* The async LR counter: -n filled, per-trainer counters of 1 summed, a
 * step counter incremented; the folded values are the kernels'. */
START_TEST(counters_fold_as_the_kernels_compute)
{
    net_new();
    const char *names[] = {"c", "a", "b", "s", "f", "wide"};
    for (int i = 0; i < 6; i++)
        net_var(names[i], i == 4 ? IR_FP32 : IR_INT64, i == 5 ? "2" : "1", PERSIST);
    fill("Out=c", IR_INT64, 1, "", -1.0f);
    ir_op_set_float(net_op("increment", "X=c", "Out=c"), "step", 1.0f);
    fill("Out=a", IR_INT64, 1, "1.0", 1.0f);
    fill("Out=b", IR_INT64, 1, "", 1.0f);
    net_op("sum", "X=a,b,c", "Out=s");
    fill("Out=f", IR_FP32, 1, "", 2.0f);      /* not int64: an op like any other */
    fill("Out=wide", IR_INT64, 2, "", 2.0f);  /* not [1] */
    sym_ctx c;
    sym_proc p;
    run_sym(&c, &p);
    ck_assert_ptr_eq(val(&p, "c"), sym_int(st, 0));
    ck_assert_ptr_eq(val(&p, "a"), sym_int(st, 1));
    ck_assert_ptr_eq(val(&p, "b"), sym_int(st, 1));
    ck_assert_ptr_eq(val(&p, "s"), sym_int(st, 2));
    int64_t v;
    ck_assert(!sym_int_value(val(&p, "f"), &v));
    ck_assert(!sym_int_value(val(&p, "wide"), &v));
    sym_proc_clear(&p);
    ex_scope *xs = ex_scope_new();
    ex_ctx xc;
    ex_ctx_init(&xc, net_prog, xs, 7);
    ck_assert_msg(ex_run_block(&xc, 0, NULL), "%s", xc.err);
    ck_assert(num(xs, "c") == 0 && num(xs, "a") == 1 && num(xs, "b") == 1 && num(xs, "s") == 2);
    ex_scope_free(xs);
    net_free();
}
END_TEST

/* ref_by_trainer_id with a known id is that X; with an unknown one, an op. */
START_TEST(ref_by_trainer_id_picks_the_known_trainer)
{
    net_new();
    net_var("p0", IR_FP32, "3", PERSIST);
    net_var("p1", IR_FP32, "3", PERSIST);
    net_var("id", IR_INT64, "1", PERSIST);
    net_var("other", IR_INT64, "1", PERSIST);
    fill("Out=id", IR_INT64, 1, "", 1.0f);
    net_op("ref_by_trainer_id", "X=p0,p1 TrainerId=id", "Out=bak");
    net_op("ref_by_trainer_id", "X=p0,p1 TrainerId=other", "Out=unknown");
    sym_ctx c;
    sym_proc p;
    run_sym(&c, &p);
    ck_assert_ptr_eq(val(&p, "bak"), sym_leaf(st, "p1", 3));
    ck_assert_int_eq(val(&p, "unknown")->kind, SYM_PROJ);
    sym_proc_clear(&p);
    ex_scope *xs = ex_scope_new();
    int64_t d[1] = {3};
    for (int k = 0; k < 2; k++) {
        ex_tensor *t = ex_tensor_new(IR_FP64, 1, d);
        for (int i = 0; i < 3; i++)
            t->data[i] = 10 * k + i;
        ex_scope_put(xs, k ? "p1" : "p0", t);
    }
    int64_t one = 1;
    ex_tensor *o = ex_tensor_new(IR_INT64, 1, &one);
    o->data[0] = 0;
    ex_scope_put(xs, "other", o);
    ex_ctx xc;
    ex_ctx_init(&xc, net_prog, xs, 7);
    ck_assert_msg(ex_run_block(&xc, 0, NULL), "%s", xc.err);
    const ex_tensor *b = ex_scope_get(xs, ir_intern("bak"));
    ck_assert(b && b->numel == 3 && b->data[2] == 12);
    ex_scope_free(xs);
    net_free();
}
END_TEST

static sym_term *ew(const char *type, sym_term *x, sym_term *y, int64_t rows)
{
    sym_term *args[] = {x, y};
    const char *slots[] = {ir_intern("X"), ir_intern("Y")};
    sym_term *app = sym_app(st, ir_intern(type), ir_intern("X:1,Y:1 | "), args, slots, 2, -1);
    return sym_proj(st, app, "Out", 0, rows);
}

/* DC-ASGD's g + ((p - b) * g) * g on a slice: the concat of the slices'
 * corrections is the whole's; an operand that broadcasts stays apart. */
START_TEST(elementwise_pulls_out_of_concat)
{
    sym_term *p = sym_leaf(st, "p", 10), *b = sym_leaf(st, "b", 10), *g = sym_leaf(st, "g", 10);
    sym_term *part[2];
    for (int k = 0; k < 2; k++) {
        int64_t off = k ? 4 : 0, rows = k ? 6 : 4;
        sym_term *gs = sym_slice(st, g, off, rows);
        sym_term *d = ew("elementwise_sub", sym_slice(st, p, off, rows),
                         sym_slice(st, b, off, rows), rows);
        part[k] = ew("elementwise_add", gs,
                     ew("elementwise_mul", ew("elementwise_mul", d, gs, rows), gs, rows), rows);
    }
    sym_term *whole = ew("elementwise_add", g,
                         ew("elementwise_mul",
                            ew("elementwise_mul", ew("elementwise_sub", p, b, 10), g, 10), g, 10),
                         10);
    ck_assert_ptr_eq(sym_concat(st, part, 2), whole);
    /* a [1]-row bias added to each part: not row by row */
    sym_term *bias = sym_leaf(st, "bias", 1);
    sym_term *bparts[] = {ew("elementwise_add", sym_slice(st, g, 0, 4), bias, 4),
                          ew("elementwise_add", sym_slice(st, g, 4, 6), bias, 6)};
    ck_assert_int_eq(sym_concat(st, bparts, 2)->kind, SYM_CONCAT);
    /* other op types are not pulled */
    sym_term *dparts[] = {ew("elementwise_div", sym_slice(st, g, 0, 4), sym_slice(st, p, 0, 4), 4),
                          ew("elementwise_div", sym_slice(st, g, 4, 6), sym_slice(st, p, 4, 6), 6)};
    ck_assert_int_eq(sym_concat(st, dparts, 2)->kind, SYM_CONCAT);
}
END_TEST

START_TEST(elementwise_pull_holds_on_concrete_tensors)
{
    net_new();
    ex_scope *xs = ex_scope_new();
    ex_rng r;
    ex_rng_seed(&r, 11);
    const char *in[] = {"p", "b", "g"};
    int64_t d[2] = {10, 3};
    for (int k = 0; k < 3; k++) {
        ex_tensor *t = ex_tensor_new(IR_FP64, 2, d);
        for (size_t i = 0; i < t->numel; i++)
            t->data[i] = ex_rng_uniform(&r) * 2 - 1;
        ex_scope_put(xs, in[k], t);
    }
    int32_t sec[] = {4, 6};
    for (int k = 0; k < 3; k++)
        ir_op_set_ints(net_op("split_byref", ir_internf("X=%s", in[k]),
                              ir_internf("Out=%s0,%s1", in[k], in[k])), "sections", sec, 2);
    for (int k = 0; k < 2; k++) {
        net_op("elementwise_sub", ir_internf("X=p%d Y=b%d", k, k), ir_internf("Out=d%d", k));
        net_op("elementwise_mul", ir_internf("X=d%d Y=g%d", k, k), ir_internf("Out=e%d", k));
        net_op("elementwise_mul", ir_internf("X=e%d Y=g%d", k, k), ir_internf("Out=f%d", k));
        net_op("elementwise_add", ir_internf("X=g%d Y=f%d", k, k), ir_internf("Out=o%d", k));
    }
    net_op("concat", "X=o0,o1", "Out=parts");
    net_op("elementwise_sub", "X=p Y=b", "Out=d");
    net_op("elementwise_mul", "X=d Y=g", "Out=e");
    net_op("elementwise_mul", "X=e Y=g", "Out=f");
    net_op("elementwise_add", "X=g Y=f", "Out=whole");
    ex_ctx xc;
    ex_ctx_init(&xc, net_prog, xs, 7);
    ck_assert_msg(ex_run_block(&xc, 0, NULL), "%s", xc.err);
    const ex_tensor *x = ex_scope_get(xs, ir_intern("parts")), *y = ex_scope_get(xs, ir_intern("whole"));
    ck_assert(x && y && ex_same_shape(x, y));
    for (size_t i = 0; i < x->numel; i++)
        ck_assert(fabs(x->data[i] - y->data[i]) <= 1e-12);
    ex_scope_free(xs);
    net_free();
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym_fold");
    TCase *tc = tcase_create("fold");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, int_values_are_their_own_leaves);
    tcase_add_test(tc, counters_fold_as_the_kernels_compute);
    tcase_add_test(tc, ref_by_trainer_id_picks_the_known_trainer);
    tcase_add_test(tc, elementwise_pulls_out_of_concat);
    tcase_add_test(tc, elementwise_pull_holds_on_concrete_tensors);
    suite_add_tcase(s, tc);
    return s;
}
