/* test_sym_coll.c - what verify job assumes of collective local_sgd and
 * single_process_multi_thread jobs (src/sym/local_sgd.c, spmt.c), on terms
 * and on concrete tensors by the reference executor:
 * - the reference's `elementwise_sub` (dcasgd.c's sym_ew) is the term the
 *   transpiler's attr-less op makes (else no local_sgd job could be equal);
 * - `assign` copies (local_sgd's snapshot is the param);
 * - coalesce_tensor with copy_data leaves each Output its Input, and an
 *   elementwise op on the fused buffer (the allreduce) reaches every member,
 *   so the buffer's allreduce is each member's. */
#include <math.h>

#include "exec/exec.h"
#include "exec_fixture.h"
#include "sym/job.h"
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

static void start_sym(sym_ctx *c, sym_proc *p)
{
    memset(c, 0, sizeof *c);
    memset(p, 0, sizeof *p);
    c->st = st;
    p->label = "net";
    p->main = net_prog;
    p->trainer = p->emulate_from = -1;
}

static sym_term *val(sym_proc *p, const char *name)
{
    sym_term *t = pmap_get(&p->vals, ir_intern(name));
    ck_assert_msg(t, "no %s", name);
    return t;
}

START_TEST(reference_sub_is_the_transpilers)
{
    net_new();
    net_var("s", IR_FP32, "4,3", PERSIST);
    net_var("p", IR_FP32, "4,3", PERSIST);
    net_var("d", IR_FP32, "4,3", TMP);
    ir_op_set_role(net_op("elementwise_sub", "X=s Y=p", "Out=d"), IR_ROLE_OPTIMIZE);
    ir_op_set_role(net_op("elementwise_sub", "X=p Y=s", "Out=e"), IR_ROLE_OPTIMIZE);
    sym_ctx c;
    sym_proc p;
    start_sym(&c, &p);
    ck_assert_msg(sym_run_block(&c, &p, net_prog, "net", 0), "%s", c.err);
    ir_block *b = net_prog->blocks[0];
    sym_term *s = sym_read(&c, &p, b, ir_intern("s")), *pv = sym_read(&c, &p, b, ir_intern("p"));
    ck_assert_ptr_eq(val(&p, "d"), sym_ew(st, "elementwise_sub", s, pv, 4));
    /* the operands' order counts */
    ck_assert_ptr_eq(val(&p, "e"), sym_ew(st, "elementwise_sub", pv, s, 4));
    ck_assert_ptr_ne(val(&p, "d"), val(&p, "e"));
    sym_proc_clear(&p);
    net_free();
}
END_TEST

START_TEST(coalesce_outputs_are_its_inputs)
{
    net_new();
    net_var("g", IR_FP32, "4,3", TMP);
    net_var("h", IR_FP32, "2", TMP);
    ir_op *op = net_op("coalesce_tensor", "Input=g,h", "Output=g,h FusedOutput=f");
    ir_op_set_bool(op, "copy_data", true);
    ir_op_set_bool(op, "set_constant", false);
    sym_ctx c;
    sym_proc p;
    start_sym(&c, &p);
    ir_block *b = net_prog->blocks[0];
    sym_term *g = sym_read(&c, &p, b, ir_intern("g")), *h = sym_read(&c, &p, b, ir_intern("h"));
    ck_assert_int_eq(sym_spmt_op(&c, &p, net_prog, 0, 0, op), 1);
    ck_assert_ptr_eq(val(&p, "g"), g);
    ck_assert_ptr_eq(val(&p, "h"), h);
    ck_assert_ptr_ne(val(&p, "f"), g);   /* the buffer: an uninterpreted pack */
    /* without copy_data the outputs are not the inputs: not this model */
    ir_op_set_bool(op, "copy_data", false);
    ck_assert_int_eq(sym_spmt_op(&c, &p, net_prog, 0, 0, op), 0);
    sym_proc_clear(&p);
    net_free();
}
END_TEST

static ex_scope *xs;

static void put_random(const char *name, int64_t rows, int64_t cols, ex_rng *r)
{
    int64_t d[2] = {rows, cols};
    ex_tensor *t = ex_tensor_new(IR_FP64, cols ? 2 : 1, d);
    for (size_t i = 0; i < t->numel; i++)
        t->data[i] = ex_rng_uniform(r) * 2 - 1;
    ex_scope_put(xs, name, t);
}

static void same(const char *a, const char *b)
{
    const ex_tensor *x = ex_scope_get(xs, ir_intern(a)), *y = ex_scope_get(xs, ir_intern(b));
    ck_assert_msg(x && y, "%s or %s missing", a, b);
    ck_assert_msg(ex_same_shape(x, y), "%s and %s differ in shape", a, b);
    for (size_t i = 0; i < x->numel; i++)
        ck_assert_msg(fabs(x->data[i] - y->data[i]) <= 1e-12, "%s[%zu] %g != %s %g", a, i,
                      x->data[i], b, y->data[i]);
}

START_TEST(assign_copies_and_the_buffer_reaches_members)
{
    net_new();
    xs = ex_scope_new();
    ex_ctx xc;
    ex_ctx_init(&xc, net_prog, xs, 7);
    ex_rng r;
    ex_rng_seed(&r, 7);
    put_random("w", 4, 3, &r);
    put_random("g", 4, 3, &r);
    put_random("h", 5, 0, &r);
    net_op("assign", "X=w", "Out=wa");
    net_op("assign", "X=g", "Out=g0");
    net_op("assign", "X=h", "Out=h0");
    ir_op *op = net_op("coalesce_tensor", "Input=g,h", "Output=g,h FusedOutput=f");
    ir_op_set_bool(op, "copy_data", true);
    ir_op_set_bool(op, "set_constant", false);
    ir_op_set_int(op, "dtype", IR_FP64);
    net_op("assign", "X=g", "Out=g1");   /* Output is Input */
    net_op("assign", "X=h", "Out=h1");
    /* an elementwise op on the buffer (an allreduce of three equal
     * devices) reaches each member as that op on the member */
    ir_op_set_float(net_op("scale", "X=f", "Out=f"), "scale", 3.0f);
    ir_op_set_float(net_op("scale", "X=g0", "Out=g3"), "scale", 3.0f);
    ir_op_set_float(net_op("scale", "X=h0", "Out=h3"), "scale", 3.0f);
    ck_assert_msg(ex_run_block(&xc, 0, NULL), "%s", xc.err);
    same("wa", "w");
    same("g1", "g0");
    same("h1", "h0");
    same("g", "g3");
    same("h", "h3");
    ex_scope_free(xs);
    net_free();
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("sym_coll");
    TCase *tc = tcase_create("collective modes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, reference_sub_is_the_transpilers);
    tcase_add_test(tc, coalesce_outputs_are_its_inputs);
    tcase_add_test(tc, assign_copies_and_the_buffer_reaches_members);
    suite_add_tcase(s, tc);
    return s;
}
