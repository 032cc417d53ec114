/* test_hash_order.c - the libstdc++ hash order Paddle <= 2.3 writes attrs
 * in (src/passes/era/hash_order.c, research-2x-3x.md 4o). */
#include "unit.h"

#include "io/pdio.h"
#include "passes/era/era.h"

#include <glib.h>
#include <string.h>

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
    pdt_hash_order_program(p, 108); /* 2.4 on: not this step's */
    expect_order(a, want, 8);
    ir_program_free(p);
}
END_TEST

/* paddleocr_det_db_mv3_adam_train.pdmodel (1.8.2) holds a cosine schedule
 * with warmup that PaddleOCR's Python built with fluid.layers and
 * math_op_patch's operators: the step counter's increment, cast,
 * fill_constant, less_than, logical_not, two conditional_blocks (Switch),
 * and in their blocks scale {scale, bias}, elementwise_div and
 * elementwise_sub {axis}, cos and assign: the callers whose rows pdtrans's
 * own learning-rate ops take.  Each such op, sorted by name, marked made
 * and given the LRSched role (the file's are Forward: no guard), must come
 * back in the file's order. */
static bool lr_op(const ir_block *b, size_t k)
{
    static const char *const types[] = {"increment", "cast", "fill_constant", "less_than",
                                        "logical_not", "conditional_block", "scale",
                                        "elementwise_div", "elementwise_sub", "cos", "assign"};
    if (b->idx == 0 && k != 0 && k < 246)
        return false;  /* the model's forward ops */
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (!strcmp(b->ops[k]->type, types[i]))
            return b->idx != 0 || k < 252;
    return false;
}

START_TEST(lr_schedule_takes_det_db_order)
{
    if (!unit_shared_dir())
        return;
    ir_program *p = pdio_read("../shared/testdata-real/train/paddleocr_det_db_mv3_adam_train.pdmodel");
    ck_assert_ptr_nonnull(p);
    GPtrArray *want = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *ops = g_ptr_array_new();
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            if (!lr_op(p->blocks[bi], k))
                continue;
            const ir_attr *a = ir_op_attrs(op);
            const char **names = g_new0(const char *, op->n_attrs + 1);
            for (size_t i = 0; i < op->n_attrs; i++)
                names[i] = a[i].name;
            g_ptr_array_add(want, names);
            g_ptr_array_add(ops, op);
            ir_op_set_int(op, "op_role", 16);
            ir_op_settle(op);
            op->made = true;
        }
    ck_assert_uint_eq(ops->len, 18);  /* 7 in block 0, 4 in block 1, 7 in block 2 */
    pdt_hash_order_program(p, 108);
    for (size_t i = 0; i < ops->len; i++) {
        const ir_op *op = ops->pdata[i];
        const char **names = want->pdata[i];
        size_t n = 0;
        while (names[n])
            n++;
        expect_order(op, names, n);
    }
    g_ptr_array_free(ops, true);
    g_ptr_array_free(want, true);
    ir_program_free(p);
}
END_TEST

/* rec_example_main_grad_train.pdmodel (<= 1.5) has a forward square that
 * fluid.layers' generated function built (no attr given): the history of
 * clip.py's square (GradientClipByGlobalNorm), whose row holds from 1.4.
 * Given the Optimize role and sorted, it must come back in the file's
 * order for a 1.5 target (is_test from the 1.4-1.7 activation maker). */
START_TEST(clip_square_takes_rec_example_order)
{
    if (!unit_shared_dir())
        return;
    ir_program *p = pdio_read("../shared/testdata-real/train/rec_example_main_grad_train.pdmodel");
    ck_assert_ptr_nonnull(p);
    ir_op *sq = NULL;
    for (size_t k = 0; !sq && k < p->blocks[0]->n_ops; k++)
        if (!strcmp(p->blocks[0]->ops[k]->type, "square"))
            sq = p->blocks[0]->ops[k];
    ck_assert_ptr_nonnull(sq);
    static const char *const want[] = {"is_test",      "use_cudnn",    "use_mkldnn", "op_role_var",
                                       "op_callstack", "op_namescope", "op_role"};
    expect_order(sq, want, 7);
    ir_op_set_int(sq, "op_role", 2);
    ir_op_settle(sq);
    sq->made = true;
    pdt_hash_order_program(p, 105);
    expect_order(sq, want, 7);
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
    tcase_add_test(tc, lr_schedule_takes_det_db_order);
    tcase_add_test(tc, clip_square_takes_rec_example_order);
    suite_add_tcase(s, tc);
    return s;
}
