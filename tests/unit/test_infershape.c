/* test_infershape.c - issue 30 point 3: the SetOutputDim and var type
 * rows of the InferShape table (ir/infershape.c, infershape_rows.c).
 * Each expectation is what Paddle 1.8's compile-time InferShape and
 * VarTypeInference write for the op (the source named in each comment). */
#include "unit.h"

#include "ir/infershape.h"

static ir_var *tvar(ir_block *b, const char *name, int type, const int64_t *d, size_t n)
{
    ir_var *v = ir_block_var(b, name);
    v->type = type;
    v->tensor_slot = type == IR_SELECTED_ROWS ? IR_TD_SELECTED_ROWS : IR_TD_LOD_TENSOR;
    v->dtype = IR_FP32;
    ir_var_set_dims(b->program, v, d, n);
    return v;
}

static ir_op *op1(ir_block *b, const char *type, const char *x, const char *out)
{
    ir_op *op = ir_block_append_op(b, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_output1(op, "Out", out);
    return op;
}

static void dims_are(const ir_var *v, const int64_t *d, size_t n)
{
    ck_assert_uint_eq(v->n_dims, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(v->dims[i], d[i]);
}

/* scale_op.cc ScaleOp::InferShape: SetOutputDim(Out, GetInputDim(X)), and
 * GetDim of a var without dims reads [0] (op_desc.cc) */
START_TEST(scale_copies_x_dims)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    static const int64_t xd[] = {-1, 8};
    tvar(b, "x", IR_LOD_TENSOR, xd, 2);
    tvar(b, "nodims", IR_LOD_TENSOR, NULL, 0);
    ir_var *out = tvar(b, "out", IR_LOD_TENSOR, NULL, 0);
    ir_var *out2 = tvar(b, "out2", IR_LOD_TENSOR, xd, 2);
    ir_infer_apply(b, op1(b, "scale", "x", "out"));
    dims_are(out, xd, 2);
    ir_infer_apply(b, op1(b, "scale", "nodims", "out2"));
    static const int64_t zero[] = {0};
    dims_are(out2, zero, 1);
    ir_program_free(p);
}
END_TEST

/* sum_op.cc SumOp::InferShape: the first X whose product is not 0;
 * SumOpVarTypeInference: LOD_TENSOR when one input is, X[0]'s dtype */
START_TEST(sum_takes_first_nonempty_and_type)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    static const int64_t empty[] = {0, 3}, full[] = {4, 5};
    tvar(b, "a", IR_LOD_TENSOR, empty, 2)->dtype = IR_FP64;
    tvar(b, "c", IR_LOD_TENSOR, full, 2);
    ir_var *out = tvar(b, "out", IR_LOD_TENSOR, NULL, 0);
    ir_op *sum = ir_block_append_op(b, "sum");
    const char *xs[2] = {"a", "c"};
    ir_op_set_input(sum, "X", xs, 2);
    ir_op_set_output1(sum, "Out", "out");
    ir_infer_apply(b, sum);
    dims_are(out, full, 2);
    ck_assert_int_eq(out->type, IR_LOD_TENSOR);
    ck_assert_int_eq(out->dtype, IR_FP64);
    /* SELECTED_ROWS inputs make a SELECTED_ROWS out: a LoD tensor out
     * would move its tensor desc to another field, which is not played */
    tvar(b, "r1", IR_SELECTED_ROWS, full, 2);
    ir_var *o2 = tvar(b, "o2", IR_LOD_TENSOR, NULL, 0);
    ir_var *o3 = tvar(b, "o3", IR_SELECTED_ROWS, NULL, 0);
    o3->dtype = IR_FP64;
    ir_infer_apply(b, op1(b, "sum", "r1", "o2"));
    ck_assert_int_eq(o2->type, IR_LOD_TENSOR);
    ir_infer_apply(b, op1(b, "sum", "r1", "o3"));
    ck_assert_int_eq(o3->type, IR_SELECTED_ROWS);
    ck_assert_int_eq(o3->dtype, IR_FP32);
    dims_are(o3, full, 2);
    ck_assert(!o3->has_lod_level);   /* ShareLoD: not a LoD tensor input */
    ir_program_free(p);
}
END_TEST

static ir_op *elem(ir_block *b, const char *x, const char *y, const char *out, int axis)
{
    ir_op *op = op1(b, "elementwise_add", x, out);
    ir_op_set_input1(op, "Y", y);
    ir_op_set_int(op, "axis", axis);
    return op;
}

/* elementwise_op.h ElementwiseOp::InferShape and
 * elementwise_op_function.h GetBroadcastDimsArrays: max where one side is
 * above 1 or both are 1, else -1 */
START_TEST(elementwise_broadcasts)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    static const int64_t x3[] = {-1, 8, 4}, y1[] = {8}, xb[] = {-1, 1}, yb[] = {1, 5};
    tvar(b, "x3", IR_LOD_TENSOR, x3, 3);
    tvar(b, "y1", IR_LOD_TENSOR, y1, 1);
    tvar(b, "xb", IR_LOD_TENSOR, xb, 2);
    tvar(b, "yb", IR_LOD_TENSOR, yb, 2);
    ir_var *o1 = tvar(b, "o1", IR_LOD_TENSOR, NULL, 0);
    ir_var *o2 = tvar(b, "o2", IR_LOD_TENSOR, NULL, 0);
    ir_var *o3 = tvar(b, "o3", IR_LOD_TENSOR, NULL, 0);
    ir_infer_apply(b, elem(b, "x3", "y1", "o1", 1));
    dims_are(o1, x3, 3);
    ir_infer_apply(b, elem(b, "xb", "yb", "o2", -1));
    static const int64_t want[] = {-1, 5};
    dims_are(o2, want, 2);
    /* dims no broadcast allows: Paddle throws, nothing changes here */
    static const int64_t bad[] = {3, 4};
    tvar(b, "bad", IR_LOD_TENSOR, bad, 2);
    ir_infer_apply(b, elem(b, "x3", "bad", "o3", -1));
    ck_assert_uint_eq(o3->n_dims, 0);
    ir_program_free(p);
}
END_TEST

/* fill_constant_op.cc: SetOutputDim(Out, attr shape);
 * FillConstantOpVarTypeInference: SetOutputDataType(Out, attr dtype) */
START_TEST(fill_constant_shape_and_dtype)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_var *out = tvar(b, "out", IR_LOD_TENSOR, NULL, 0);
    ir_op *f = ir_block_append_op(b, "fill_constant");
    static const int64_t shape[] = {2, 3};
    ir_op_set_longs(f, "shape", shape, 2);
    ir_op_set_int(f, "dtype", IR_INT64);
    ir_op_set_output1(f, "Out", "out");
    ir_infer_apply(b, f);
    dims_are(out, shape, 2);
    ck_assert_int_eq(out->dtype, IR_INT64);
    ck_assert(!out->has_lod_level);   /* no ShareLoD */
    /* a ShapeTensor with an empty shape: Paddle writes -1s, not modelled */
    ir_var *o2 = tvar(b, "o2", IR_LOD_TENSOR, shape, 2);
    tvar(b, "st", IR_LOD_TENSOR, shape, 1);
    ir_op *g = ir_block_append_op(b, "fill_constant");
    ir_op_set_longs(g, "shape", NULL, 0);
    ir_op_set_input1(g, "ShapeTensor", "st");
    ir_op_set_output1(g, "Out", "o2");
    ir_infer_apply(b, g);
    dims_are(o2, shape, 2);
    ir_program_free(p);
}
END_TEST

/* adam_op.cc AdamOp::InferShape: ParamOut, Moment1Out, Moment2Out get
 * Param's dims, Beta1PowOut Beta1Pow's; played only by ir_infer_apply_made
 * on made ops */
START_TEST(adam_outputs_take_param_dims)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    static const int64_t pd[] = {10, 20}, bd[] = {1};
    tvar(b, "w", IR_LOD_TENSOR, pd, 2);
    tvar(b, "b1", IR_LOD_TENSOR, bd, 1);
    ir_var *m1 = tvar(b, "m1", IR_LOD_TENSOR, NULL, 0);
    ir_var *b1o = tvar(b, "b1o", IR_LOD_TENSOR, NULL, 0);
    ir_var *keep = tvar(b, "keep", IR_LOD_TENSOR, NULL, 0);
    ir_op *read = ir_block_append_op(b, "scale");   /* as read: not made */
    ir_op_set_input1(read, "X", "w");
    ir_op_set_output1(read, "Out", "keep");
    read->made = false;
    ir_op *a = ir_block_append_op(b, "adam");
    a->made = true;
    ir_op_set_input1(a, "Param", "w");
    ir_op_set_input1(a, "Beta1Pow", "b1");
    ir_op_set_output1(a, "ParamOut", "w");
    ir_op_set_output1(a, "Moment1Out", "m1");
    ir_op_set_output1(a, "Beta1PowOut", "b1o");
    ir_infer_apply_made(b, 0);
    dims_are(m1, pd, 2);
    dims_are(b1o, bd, 1);
    ck_assert_uint_eq(keep->n_dims, 0);
    ck_assert(!m1->has_lod_level);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("infershape");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, scale_copies_x_dims);
    tcase_add_test(tc, sum_takes_first_nonempty_and_type);
    tcase_add_test(tc, elementwise_broadcasts);
    tcase_add_test(tc, fill_constant_shape_and_dtype);
    tcase_add_test(tc, adam_outputs_take_param_dims);
    suite_add_tcase(s, tc);
    return s;
}
