/* test_exec_coalesce.c - coalesce_tensor against hand-computed values: the
 * fused buffer's 4 KiB-aligned slots, copy_data, set_constant, check_name,
 * and the Outputs staying views of the buffer (an allreduce of the buffer
 * reaches the grads), in a scope and in its clone. */
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

static void put(ex_scope *s, const char *name, int nd, const int64_t *dims, const double *v)
{
    ex_tensor *t = ex_tensor_new(IR_FP32, nd, dims);
    memcpy(t->data, v, t->numel * sizeof *v);
    ex_scope_put(s, name, t);
}

/* a [2, 3] = 1..6 and b [2] = 7, 8 */
static void two_grads(void)
{
    put(S, "a", 2, (const int64_t[]){2, 3}, (const double[]){1, 2, 3, 4, 5, 6});
    put(S, "b", 1, (const int64_t[]){2}, (const double[]){7, 8});
}

static ir_op *coalesce(int dtype, bool copy, bool set_constant)
{
    ir_op *op = net_op("coalesce_tensor", "Input=a,b", "Output=a,b FusedOutput=fused");
    ir_op_set_int(op, "dtype", dtype);
    ir_op_set_bool(op, "copy_data", copy);
    ir_op_set_bool(op, "set_constant", set_constant);
    ir_op_set_float(op, "constant", 0.5f);
    return op;
}

static void run(ir_op *op)
{
    ck_assert_msg(ex_run_op(&X, op), "%s", X.err);
}

static const ex_tensor *get(ex_scope *s, const char *name)
{
    const ex_tensor *t = ex_scope_get(s, name);
    ck_assert_msg(t != NULL, "no '%s'", name);
    return t;
}

/* FP32: a slot of n floats takes ceil(4n / 4096) * 1024 elements, so a
 * (6 elements) at 0 and b at 1024, 2048 in all; the padding is 0 here
 * (Paddle leaves it unset). */
START_TEST(copy_data_places_each_input_in_an_aligned_slot)
{
    fresh();
    two_grads();
    run(coalesce(IR_FP32, true, false));
    const ex_tensor *f = get(S, "fused");
    ck_assert_int_eq(f->nd, 1);
    ck_assert_uint_eq(f->numel, 2048);
    for (size_t i = 0; i < 6; i++)
        ck_assert_double_eq(f->data[i], (double)(i + 1));
    ck_assert_double_eq(f->data[6], 0);
    ck_assert_double_eq(f->data[1024], 7);
    ck_assert_double_eq(f->data[1025], 8);
    ck_assert_double_eq(f->data[2047], 0);
    const ex_tensor *a = get(S, "a");
    ck_assert_int_eq(a->nd, 2);
    ck_assert_int_eq(a->dims[0], 2);
    ck_assert_int_eq(a->dims[1], 3);
    ck_assert_double_eq(a->data[5], 6);
    ck_assert_double_eq(get(S, "b")->data[1], 8);
}
END_TEST

/* FP64: 8-byte elements, so a slot is 512 elements. */
START_TEST(slots_follow_the_dtype_size)
{
    fresh();
    two_grads();
    run(coalesce(IR_FP64, true, false));
    const ex_tensor *f = get(S, "fused");
    ck_assert_uint_eq(f->numel, 1024);
    ck_assert_double_eq(f->data[512], 7);
    ck_assert_double_eq(f->data[513], 8);
}
END_TEST

START_TEST(set_constant_fills_buffer_and_outputs)
{
    fresh();
    two_grads();
    run(coalesce(IR_FP32, false, true));
    const ex_tensor *f = get(S, "fused");
    ck_assert_double_eq(f->data[0], 0.5);
    ck_assert_double_eq(f->data[2047], 0.5);
    ck_assert_double_eq(get(S, "a")->data[3], 0.5);
    ck_assert_double_eq(get(S, "b")->data[0], 0.5);
}
END_TEST

/* What c_allreduce_sum does to the buffer reaches the grads, and a grad
 * written later reaches its slot of the buffer. */
START_TEST(outputs_are_views_of_the_buffer)
{
    fresh();
    two_grads();
    run(coalesce(IR_FP32, true, false));
    ex_tensor *sum = ex_tensor_copy(get(S, "fused"));
    for (size_t i = 0; i < sum->numel; i++)
        sum->data[i] *= 2;
    ex_scope_put(S, "fused", sum);
    ck_assert_double_eq(get(S, "a")->data[0], 2);
    ck_assert_double_eq(get(S, "a")->data[5], 12);
    ck_assert_double_eq(get(S, "b")->data[0], 14);
    ck_assert_double_eq(get(S, "b")->data[1], 16);
    put(S, "b", 1, (const int64_t[]){2}, (const double[]){-1, -2});
    ck_assert_double_eq(get(S, "fused")->data[1024], -1);
    ck_assert_double_eq(get(S, "fused")->data[1025], -2);
    ck_assert_double_eq(get(S, "fused")->data[5], 12);
    /* a clone keeps the views, apart from the original */
    ex_scope *c = ex_scope_clone(S);
    ex_tensor *z = ex_tensor_like(get(c, "fused"));
    ex_scope_put(c, "fused", z);
    ck_assert_double_eq(get(c, "a")->data[0], 0);
    ck_assert_double_eq(get(S, "a")->data[0], 2);
    ex_scope_free(c);
    /* a member resized leaves the buffer */
    put(S, "a", 1, (const int64_t[]){2000}, (const double[2000]){9});
    ck_assert_double_eq(get(S, "fused")->data[0], 2);
}
END_TEST

START_TEST(bad_inputs_are_named)
{
    fresh();
    two_grads();
    ir_op *op = net_op("coalesce_tensor", "Input=a,b", "Output=a,c FusedOutput=fused");
    ir_op_set_int(op, "dtype", IR_FP32);
    ir_op_set_bool(op, "check_name", true);
    ck_assert(!ex_run_op(&X, op));
    ck_assert_msg(strstr(X.err, "'b'") && strstr(X.err, "'c'"), "%s", X.err);
    op = net_op("coalesce_tensor", "Input=a,nosuch", "Output=a,nosuch FusedOutput=fused");
    ck_assert(!ex_run_op(&X, op));
    ck_assert_msg(strstr(X.err, "nosuch") != NULL, "%s", X.err);
    op = net_op("coalesce_tensor", "Input=a", "Output=a FusedOutput=fused");
    ir_op_set_int(op, "dtype", 99);
    ck_assert(!ex_run_op(&X, op));
    ck_assert_msg(strstr(X.err, "dtype") != NULL, "%s", X.err);
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
    Suite *s = suite_create("exec_coalesce");
    TCase *tc = tcase_create("coalesce");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, copy_data_places_each_input_in_an_aligned_slot);
    tcase_add_test(tc, slots_follow_the_dtype_size);
    tcase_add_test(tc, set_constant_fills_buffer_and_outputs);
    tcase_add_test(tc, outputs_are_views_of_the_buffer);
    tcase_add_test(tc, bad_inputs_are_named);
    suite_add_tcase(s, tc);
    return s;
}
