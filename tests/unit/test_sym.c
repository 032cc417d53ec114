/* test_sym.c - verify job's terms (src/sym/term.c): hash-consing and each
 * axiom of the normal form, on both sides of the equation. */
#include <math.h>

#include "exec/exec.h"
#include "exec_fixture.h"
#include "sym/term.h"
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

static sym_term *leaf(const char *n, int64_t rows)
{
    return sym_leaf(st, n, rows);
}

/* An op of one input; its output has `rows` rows. */
static sym_term *op1(const char *type, sym_term *x, int64_t rows)
{
    const char *slots[] = {ir_intern("X")};
    sym_term *app = sym_app(st, ir_intern(type), ir_intern("X:1 | "), &x, slots, 1, -1);
    return sym_proj(st, app, "Out", 0, rows);
}

/* sgd(Param, Grad, LearningRate) (slots in name order: Grad, LearningRate, Param). */
static sym_term *sgd_app(const char *type, sym_term *p, sym_term *g, sym_term *lr)
{
    sym_term *args[] = {g, lr, p};
    const char *slots[] = {ir_intern("Grad"), ir_intern("LearningRate"), ir_intern("Param")};
    return sym_app(st, ir_intern(type), ir_intern("Grad:1,LearningRate:1,Param:1 | "), args,
                   slots, 3, -1);
}

static sym_term *sgd(sym_term *p, sym_term *g, sym_term *lr)
{
    return sym_proj(st, sgd_app("sgd", p, g, lr), "ParamOut", 0, p->rows);
}

static sym_term *fill(int64_t rows, const char *value)
{
    return sym_app(st, ir_intern("fill_constant"), ir_internf("| value=%s", value), NULL, NULL,
                   0, rows);
}

START_TEST(hash_consing)
{
    ck_assert_ptr_eq(leaf("a", 4), leaf("a", 4));
    ck_assert_ptr_ne(leaf("a", 4), leaf("b", 4));
    sym_term *a = leaf("a", 4);
    ck_assert_ptr_eq(op1("relu", a, 4), op1("relu", a, 4));
    ck_assert_ptr_ne(op1("relu", a, 4), op1("tanh", a, 4));
    /* the key (semantic attrs) is part of the identity */
    const char *slots[] = {ir_intern("X")};
    sym_term *x = sym_app(st, ir_intern("scale2"), ir_intern("X:1 | s=1"), &a, slots, 1, -1);
    sym_term *y = sym_app(st, ir_intern("scale2"), ir_intern("X:1 | s=2"), &a, slots, 1, -1);
    ck_assert_ptr_ne(x, y);
    ck_assert_uint_gt(sym_store_size(st), 4);
}
END_TEST

START_TEST(sum_is_associative_and_commutative)
{
    sym_term *a = leaf("a", 4), *b = leaf("b", 4), *c = leaf("c", 4);
    sym_term *ab[] = {a, b}, *ba[] = {b, a};
    ck_assert_ptr_eq(sym_sum(st, ab, 2), sym_sum(st, ba, 2));
    sym_term *l[] = {sym_sum(st, ab, 2), c}, *bc[] = {b, c};
    sym_term *r[] = {a, sym_sum(st, bc, 2)}, *abc[] = {c, a, b};
    sym_term *s1 = sym_sum(st, l, 2);
    ck_assert_ptr_eq(s1, sym_sum(st, r, 2));
    ck_assert_ptr_eq(s1, sym_sum(st, abc, 3));
    ck_assert_int_eq(s1->kind, SYM_SUM);
    ck_assert_uint_eq(s1->n, 3);
    /* a sum of one is that term; a dropped operand is another sum */
    ck_assert_ptr_eq(sym_sum(st, &a, 1), a);
    ck_assert_ptr_ne(sym_sum(st, ab, 2), s1);
}
END_TEST

START_TEST(sum_of_slices_is_slice_of_sum)
{
    sym_term *a = leaf("a", 10), *b = leaf("b", 10);
    sym_term *sl[] = {sym_slice(st, a, 4, 6), sym_slice(st, b, 4, 6)}, *ab[] = {a, b};
    ck_assert_ptr_eq(sym_sum(st, sl, 2), sym_slice(st, sym_sum(st, ab, 2), 4, 6));
    /* not at the same rows: stays a sum */
    sym_term *mixed[] = {sym_slice(st, a, 0, 5), sym_slice(st, b, 5, 5)};
    ck_assert_int_eq(sym_sum(st, mixed, 2)->kind, SYM_SUM);
}
END_TEST

START_TEST(scale_composes)
{
    sym_term *a = leaf("a", 4);
    ck_assert_ptr_eq(sym_scale(st, a, 1.0, 0, true), a);
    ck_assert_ptr_eq(sym_scale(st, sym_scale(st, a, 0.5, 0, true), 0.25, 0, true),
                     sym_scale(st, a, 0.125, 0, true));
    ck_assert_ptr_ne(sym_scale(st, a, 0.5, 0, true), a);
    /* a bias does not compose, and its place (before or after) counts */
    sym_term *b1 = sym_scale(st, sym_scale(st, a, 0.5, 1.0, true), 2.0, 0, true);
    ck_assert_int_eq(b1->kind, SYM_SCALE);
    ck_assert_ptr_eq(b1->args[0], sym_scale(st, a, 0.5, 1.0, true));
    ck_assert_ptr_ne(sym_scale(st, a, 0.5, 1.0, true), sym_scale(st, a, 0.5, 1.0, false));
    /* the scale of a slice is the slice of the scale */
    sym_term *big = leaf("big", 10);
    ck_assert_ptr_eq(sym_scale(st, sym_slice(st, big, 2, 3), 0.5, 0, true),
                     sym_slice(st, sym_scale(st, big, 0.5, 0, true), 2, 3));
}
END_TEST

START_TEST(concat_of_split_is_the_whole)
{
    sym_term *w = leaf("w", 10);
    sym_term *parts[] = {sym_slice(st, w, 0, 3), sym_slice(st, w, 3, 3), sym_slice(st, w, 6, 4)};
    ck_assert_ptr_eq(sym_concat(st, parts, 3), w);
    /* two slices swapped: not the whole */
    sym_term *swapped[] = {parts[1], parts[0], parts[2]};
    sym_term *c = sym_concat(st, swapped, 3);
    ck_assert_ptr_ne(c, w);
    ck_assert_int_eq(c->kind, SYM_CONCAT);
    /* a missing slice: a slice of the whole, not the whole */
    sym_term *two[] = {parts[0], parts[1]};
    ck_assert_ptr_eq(sym_concat(st, two, 2), sym_slice(st, w, 0, 6));
    /* nested concats flatten */
    sym_term *in[] = {sym_concat(st, swapped, 2), parts[2]};
    ck_assert_ptr_eq(sym_concat(st, in, 2), c);
}
END_TEST

START_TEST(slice_axioms)
{
    sym_term *w = leaf("w", 10), *u = leaf("u", 4), *v = leaf("v", 6);
    ck_assert_ptr_eq(sym_slice(st, w, 0, 10), w);
    ck_assert_ptr_eq(sym_slice(st, sym_slice(st, w, 2, 6), 1, 3), sym_slice(st, w, 3, 3));
    sym_term *uv[] = {u, v};
    sym_term *c = sym_concat(st, uv, 2);
    ck_assert_int_eq(c->rows, 10);
    ck_assert_ptr_eq(sym_slice(st, c, 0, 4), u);
    ck_assert_ptr_eq(sym_slice(st, c, 4, 6), v);
    ck_assert_ptr_eq(sym_slice(st, c, 5, 2), sym_slice(st, v, 1, 2));
    /* across the boundary: a slice of the concat */
    ck_assert_int_eq(sym_slice(st, c, 2, 4)->kind, SYM_SLICE);
    /* fills: the slice of a fill is a fill; a concat of fills alike is one */
    ck_assert_ptr_eq(sym_slice(st, fill(10, "0"), 0, 4), fill(4, "0"));
    sym_term *ff[] = {fill(4, "0"), fill(6, "0")}, *fg[] = {fill(4, "0"), fill(6, "1")};
    ck_assert_ptr_eq(sym_concat(st, ff, 2), fill(10, "0"));
    ck_assert_int_eq(sym_concat(st, fg, 2)->kind, SYM_CONCAT);
}
END_TEST

START_TEST(rowwise_optimizer_pulls_out_of_concat)
{
    sym_term *u0 = leaf("u0", 4), *u1 = leaf("u1", 6), *g = leaf("g", 10), *lr = leaf("lr", 1);
    sym_term *parts[] = {sgd(u0, sym_slice(st, g, 0, 4), lr), sgd(u1, sym_slice(st, g, 4, 6), lr)};
    sym_term *uu[] = {u0, u1};
    sym_term *whole = sgd(sym_concat(st, uu, 2), g, lr);
    ck_assert_ptr_eq(sym_concat(st, parts, 2), whole);
    /* and back: the rows of the whole pushed into it are the part */
    ck_assert_ptr_eq(sym_slice_in(st, whole, 4, 6), parts[1]);
    /* grads of the wrong rows: no pull to the whole */
    sym_term *bad[] = {sgd(u0, sym_slice(st, g, 6, 4), lr), sgd(u1, sym_slice(st, g, 0, 6), lr)};
    ck_assert_ptr_ne(sym_concat(st, bad, 2), whole);
    /* a different learning rate on one part: no pull */
    sym_term *lr2 = leaf("lr2", 1);
    sym_term *lrs[] = {parts[0], sgd(u1, sym_slice(st, g, 4, 6), lr2)};
    ck_assert_int_eq(sym_concat(st, lrs, 2)->kind, SYM_CONCAT);
    /* lars_momentum takes whole-param norms: never pulled */
    sym_term *lp[] = {sym_proj(st, sgd_app("lars_momentum", u0, sym_slice(st, g, 0, 4), lr),
                               "ParamOut", 0, 4),
                      sym_proj(st, sgd_app("lars_momentum", u1, sym_slice(st, g, 4, 6), lr),
                               "ParamOut", 0, 6)};
    ck_assert_int_eq(sym_concat(st, lp, 2)->kind, SYM_CONCAT);
}
END_TEST

START_TEST(scales_and_sums_pull_out_of_concat)
{
    sym_term *a = leaf("a", 10), *p0 = leaf("p0", 4), *p1 = leaf("p1", 6);
    sym_term *pp[] = {p0, p1};
    sym_term *sc[] = {sym_scale(st, p0, 0.5, 0, true), sym_scale(st, p1, 0.5, 0, true)};
    sym_term *whole_p = sym_concat(st, pp, 2);
    ck_assert_ptr_eq(sym_concat(st, sc, 2), sym_scale(st, whole_p, 0.5, 0, true));
    /* L2 regularization per slice: sum(slice(g), scale(p_k)) */
    sym_term *s0[] = {sym_slice(st, a, 0, 4), sc[0]}, *s1[] = {sc[1], sym_slice(st, a, 4, 6)};
    sym_term *parts[] = {sym_sum(st, s0, 2), sym_sum(st, s1, 2)};
    sym_term *want[] = {a, sym_scale(st, whole_p, 0.5, 0, true)};
    ck_assert_ptr_eq(sym_concat(st, parts, 2), sym_sum(st, want, 2));
}
END_TEST

START_TEST(scalar_outputs_do_not_depend_on_the_slice)
{
    /* adam's Beta1PowOut: one term whichever slice's op makes it */
    sym_term *u0 = leaf("u0", 4), *u1 = leaf("u1", 6), *g = leaf("g", 10), *b = leaf("b1p", 1);
    sym_term *a0 = sgd_app("adam", u0, sym_slice(st, g, 0, 4), b);
    sym_term *a1 = sgd_app("adam", u1, sym_slice(st, g, 4, 6), b);
    ck_assert_ptr_eq(sym_proj(st, a0, "Beta1PowOut", 0, 1), sym_proj(st, a1, "Beta1PowOut", 0, 1));
    ck_assert_ptr_ne(sym_proj(st, a0, "ParamOut", 0, 4), sym_proj(st, a1, "ParamOut", 0, 6));
}
END_TEST

/* Issue 29 point 3, no startup program: each pserver's rows of a split
 * accumulator are the initial-value leaf of the whole var's name. */
START_TEST(initial_value_leaf_rows_join)
{
    sym_term *m = leaf("m_moment1", 4);     /* rows of the first slice that made it */
    sym_term *two[] = {m, m};
    ck_assert_ptr_eq(sym_concat(st, two, 2), m);
    /* two different leaves, feeds or unset vars stay a concat */
    sym_term *other[] = {m, leaf("n_moment1", 4)};
    ck_assert_int_eq(sym_concat(st, other, 2)->kind, SYM_CONCAT);
    sym_term *u = leaf("unset:m_moment1", 4);
    sym_term *unset[] = {u, u};
    ck_assert_int_eq(sym_concat(st, unset, 2)->kind, SYM_CONCAT);
    /* whole-param adam with that leaf (rows 4, param 10): the leaf is param-shaped, so the
     * scalar output is the slices' one term */
    sym_term *w = leaf("w10", 10), *g = leaf("g10", 10), *b = leaf("b1p", 1);
    sym_term *args[] = {g, b, m, w};
    const char *slots[] = {ir_intern("Grad"), ir_intern("LearningRate"), ir_intern("Moment1"),
                           ir_intern("Param")};
    const char *key = ir_intern("Grad:1,LearningRate:1,Moment1:1,Param:1 | ");
    sym_term *whole = sym_app(st, ir_intern("adam"), key, args, slots, 4, -1);
    sym_term *args0[] = {sym_slice(st, g, 0, 4), b, m, sym_slice(st, w, 0, 4)};
    sym_term *part = sym_app(st, ir_intern("adam"), key, args0, slots, 4, -1);
    ck_assert_ptr_eq(sym_proj(st, whole, "Beta1PowOut", 0, 1),
                     sym_proj(st, part, "Beta1PowOut", 0, 1));
}
END_TEST

/* ---- the axioms on concrete tensors (the reference executor) ----------- */

static ex_scope *xs;
static ex_ctx xc;

static void put_random(const char *name, int64_t rows, int64_t cols, ex_rng *r)
{
    int64_t d[2] = {rows, cols};
    ex_tensor *t = ex_tensor_new(IR_FP64, cols ? 2 : 1, d);
    for (size_t i = 0; i < t->numel; i++)
        t->data[i] = ex_rng_uniform(r) * 2 - 1;
    ex_scope_put(xs, name, t);
}

static ir_op *run_op(const char *type, const char *ins, const char *outs)
{
    ir_op *op = net_op(type, ins, outs);
    return op;
}

static void run_all(void)
{
    ck_assert_msg(ex_run_block(&xc, 0, NULL), "%s", xc.err);
}

/* |a - b| <= 1e-12 elementwise, same shape */
static void same(const char *a, const char *b)
{
    const ex_tensor *x = ex_scope_get(xs, ir_intern(a)), *y = ex_scope_get(xs, ir_intern(b));
    ck_assert_msg(x && y, "%s or %s missing", a, b);
    ck_assert_msg(ex_same_shape(x, y), "%s and %s differ in shape", a, b);
    for (size_t i = 0; i < x->numel; i++)
        ck_assert_msg(fabs(x->data[i] - y->data[i]) <= 1e-12, "%s[%zu] %g != %s %g", a, i,
                      x->data[i], b, y->data[i]);
}

static void differ(const char *a, const char *b)
{
    const ex_tensor *x = ex_scope_get(xs, ir_intern(a)), *y = ex_scope_get(xs, ir_intern(b));
    bool d = !ex_same_shape(x, y);
    for (size_t i = 0; !d && i < x->numel; i++)
        d = fabs(x->data[i] - y->data[i]) > 1e-9;
    ck_assert_msg(d, "%s equals %s", a, b);
}

START_TEST(axioms_hold_on_concrete_tensors)
{
    net_new();
    xs = ex_scope_new();
    ex_ctx_init(&xc, net_prog, xs, 7);
    ex_rng r;
    ex_rng_seed(&r, 7);
    put_random("w", 10, 3, &r);
    put_random("g", 10, 3, &r);
    put_random("h", 10, 3, &r);
    put_random("k", 10, 3, &r);
    put_random("lr", 1, 0, &r);
    /* concat of the split is the whole (uneven sections); swapped is not */
    int32_t sec[] = {3, 3, 4};
    ir_op_set_ints(run_op("split_byref", "X=w", "Out=w0,w1,w2"), "sections", sec, 3);
    run_op("concat", "X=w0,w1,w2", "Out=wc");
    run_op("concat", "X=w1,w0,w2", "Out=wswap");
    /* sum: commutative and associative */
    run_op("sum", "X=g,h", "Out=gh");
    run_op("sum", "X=h,g", "Out=hg");
    run_op("sum", "X=gh,k", "Out=gh_k");
    run_op("sum", "X=g,h,k", "Out=ghk");
    /* scales compose */
    ir_op_set_float(run_op("scale", "X=g", "Out=g5"), "scale", 0.5f);
    ir_op_set_float(run_op("scale", "X=g5", "Out=g5_25"), "scale", 0.25f);
    ir_op_set_float(run_op("scale", "X=g", "Out=g125"), "scale", 0.125f);
    /* a sum of slices is the slice of the sum; sgd row by row */
    ir_op_set_ints(run_op("split_byref", "X=g", "Out=g0,g1,g2"), "sections", sec, 3);
    ir_op_set_ints(run_op("split_byref", "X=h", "Out=h0,h1,h2"), "sections", sec, 3);
    ir_op_set_ints(run_op("split_byref", "X=gh", "Out=gh0,gh1,gh2"), "sections", sec, 3);
    run_op("sum", "X=g1,h1", "Out=sum1");
    run_op("sgd", "Param=w0 Grad=g0 LearningRate=lr", "ParamOut=n0");
    run_op("sgd", "Param=w1 Grad=g1 LearningRate=lr", "ParamOut=n1");
    run_op("sgd", "Param=w2 Grad=g2 LearningRate=lr", "ParamOut=n2");
    run_op("concat", "X=n0,n1,n2", "Out=nc");
    run_op("assign", "X=w", "Out=wn");
    run_op("sgd", "Param=wn Grad=g LearningRate=lr", "ParamOut=wn");
    run_all();
    same("wc", "w");
    differ("wswap", "w");
    same("gh", "hg");
    same("gh_k", "ghk");
    same("g5_25", "g125");
    same("sum1", "gh1");
    same("nc", "wn");
    differ("nc", "w");
    ex_scope_free(xs);
    net_free();
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym");
    TCase *tc = tcase_create("terms");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hash_consing);
    tcase_add_test(tc, sum_is_associative_and_commutative);
    tcase_add_test(tc, sum_of_slices_is_slice_of_sum);
    tcase_add_test(tc, scale_composes);
    tcase_add_test(tc, concat_of_split_is_the_whole);
    tcase_add_test(tc, slice_axioms);
    tcase_add_test(tc, rowwise_optimizer_pulls_out_of_concat);
    tcase_add_test(tc, scales_and_sums_pull_out_of_concat);
    tcase_add_test(tc, scalar_outputs_do_not_depend_on_the_slice);
    tcase_add_test(tc, initial_value_leaf_rows_join);
    tcase_add_test(tc, axioms_hold_on_concrete_tensors);
    suite_add_tcase(s, tc);
    return s;
}
