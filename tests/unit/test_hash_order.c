/* test_hash_order.c - the libstdc++ hash order Paddle <= 2.3 writes attrs
 * in (src/passes/era/hash_order.c, research-2x-3x.md 4o). */
#include "unit.h"

#include "passes/era/era.h"

/* std::hash<std::string> as g++ 12's libstdc++ computes it (printed by a
 * C++ program; _Hash_bytes is unchanged since gcc 4.6). */
START_TEST(hash_bytes_is_libstdcxx)
{
    ck_assert_uint_eq(pdt_hash_bytes("", 0), 0x553e93901e462a6eull);
    ck_assert_uint_eq(pdt_hash_bytes("op_role", 7), 0x814ea0d513813f93ull);
    ck_assert_uint_eq(pdt_hash_bytes("op_role_var", 11), 0x7c8d6ba7a871cdfbull);
    ck_assert_uint_eq(pdt_hash_bytes("use_mkldnn", 10), 0x07466131aa797283ull);
    ck_assert_uint_eq(pdt_hash_bytes("min_row_size_to_use_multithread", 31),
                      0xae69b8ffbe54c8dfull);
}
END_TEST

static void expect_order(const ir_op *op, const char *const *names, size_t n)
{
    const ir_attr *a = ir_op_attrs(op);
    ck_assert_uint_eq(op->n_attrs, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(a[i].name, names[i]);
}

/* As paddleocr_rec_crnn_lstm_adam_train.pdmodel (1.7.1) has them: a
 * relu_grad lists its forward relu's order (the maker copies the map),
 * the loss fill_constant the order its insertion history gives. */
START_TEST(made_ops_take_paddle_1x_order)
{
    static const char *const relu[] = {"is_test",      "use_mkldnn",    "op_role_var", "op_callstack",
                                       "op_namescope", "op_role",       "use_cudnn"};
    static const char *const fill[] = {"op_role", "force_cpu", "dtype", "value", "shape"};
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *f = ir_block_append_op(b, "relu");
    f->made = false;  /* the input's forward op */
    ir_op_set_input1(f, "X", "x");
    ir_op_set_output1(f, "Out", "y");
    for (size_t i = 0; i < 7; i++)
        ir_op_set_int(f, relu[i], 0);
    ir_op *g = ir_block_append_op(b, "relu_grad");
    g->made = true;
    ir_op_set_input1(g, "Out@GRAD", "y@GRAD");
    ir_op_set_output1(g, "X@GRAD", "x@GRAD");
    static const char *const sorted[] = {"is_test", "op_callstack", "op_namescope", "op_role",
                                         "op_role_var", "use_cudnn", "use_mkldnn"};
    for (size_t i = 0; i < 7; i++)
        ir_op_set_int(g, sorted[i], i == 3 ? 1 : 0);
    ir_op *c = ir_block_append_op(b, "fill_constant");
    c->made = true;
    static const char *const csorted[] = {"dtype", "force_cpu", "op_role", "shape", "value"};
    for (size_t i = 0; i < 5; i++)
        ir_op_set_int(c, csorted[i], i == 2 ? 257 : 0);
    pdt_hash_order_program(p, 107);
    expect_order(g, relu, 7);
    expect_order(c, fill, 5);
    ir_program_free(p);
}
END_TEST

/* paddleocr_rec_crnn_lstm_adam_train.pdmodel (1.7.1)'s adam, which
 * optimizer.py builds after the backward: given attrs in proto order, the
 * framework attrs, op_callstack counted though pdtrans writes none. */
START_TEST(minimize_adam_takes_paddle_1x_order)
{
    static const char *const want[] = {"op_namescope", "op_role_var", "min_row_size_to_use_multithread",
                                       "op_role", "lazy_mode", "epsilon", "beta2", "beta1"};
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *g = ir_block_append_op(b, "mean_grad");
    ir_op_set_int(g, "op_role", 1);
    ir_op *a = ir_block_append_op(b, "adam");
    static const char *const sorted[] = {"beta1", "beta2", "epsilon", "lazy_mode",
                                         "min_row_size_to_use_multithread", "op_namescope",
                                         "op_role", "op_role_var"};
    static const char *const rv[] = {"w", "w@GRAD"};
    for (size_t i = 0; i < 8; i++)
        if (i == 5)
            ir_op_set_string(a, sorted[i], "/optimizer/");
        else if (i == 7)
            ir_op_set_strings(a, sorted[i], rv, 2);
        else
            ir_op_set_int(a, sorted[i], i == 6 ? 2 : 0);
    pdt_hash_order_program(p, 107);
    expect_order(a, want, 8);
    pdt_hash_order_program(p, 204); /* 2.4 on: not this step's */
    expect_order(a, want, 8);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hash_bytes_is_libstdcxx);
    tcase_add_test(tc, made_ops_take_paddle_1x_order);
    tcase_add_test(tc, minimize_adam_takes_paddle_1x_order);
    suite_add_tcase(s, tc);
    return s;
}
