/* test_hash_order_export.c - `pdtrans inference`'s attr order up to 2.3:
 * load_inference_model -> InferenceTranspiler -> save_inference_model
 * (src/passes/era/hash_export.c, research-2x-3x.md 4z12).  Every expected
 * order below was computed by a separate Python model of libstdc++'s
 * unordered_map (tests/era/export_order.py's table: gcc 4.8's policy and
 * HT_GCC8_LIB5's, written from the libstdc++ code, not from pdtrans's C)
 * fed the same histories: an input op's attrs (file order, is_test added
 * after) re-read twice, BLOCK attrs last at each read; the made
 * elementwise_add's Operator.__init__ history (axis given; op_role,
 * op_namescope, op_callstack; the maker's other attrs; op_role_var;
 * op_device, which era.def adds from 1.8; with_quant_attr) re-read once; feed and fetch their history ({col}),
 * not re-read. */
#include "unit.h"

#include "passes/era/era.h"
#include "passes/pass.h"

#include <string.h>

typedef struct {
    const char *const *names;
    size_t n;
} order_ctx;

static int rank_in(const ir_attr *attr, void *ctx)
{
    const order_ctx *o = ctx;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->names[i], attr->name))
            return (int)i;
    return (int)o->n;
}

/* An op as read from a file: NAMES in this order (INT 0 each, but
 * op_role_var and op_callstack empty lists, BLOCK sub_block 1), clean. */
static ir_op *read_op(ir_block *b, const char *type, const char *const *names, size_t n)
{
    ir_op *op = ir_block_append_op(b, type);
    op->made = false;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(names[i], "sub_block"))
            ir_op_set_block(op, names[i], 1);
        else if (!strcmp(names[i], "op_role_var") || !strcmp(names[i], "op_callstack"))
            ir_op_set_strings(op, names[i], NULL, 0);
        else
            ir_op_set_int(op, names[i], 0);
    }
    order_ctx o = {names, n};
    ir_op_settle_ranked(op, rank_in, &o);
    return op;
}

static const char *const feed_file[] = {"col", "op_callstack", "op_namescope", "op_role",
                                        "op_role_var"};
static const char *const conv_file[] = {"strides",      "paddings",   "dilations",
                                        "groups",       "op_role",    "op_namescope",
                                        "op_callstack", "use_mkldnn", "op_role_var"};
static const char *const relu_file[] = {"op_role", "op_namescope", "use_cudnn"};
static const char *const cond_file[] = {"op_role", "op_namescope", "is_scalar_condition",
                                        "sub_block"};
static const char *const add15[] = {"axis",         "use_mkldnn",  "x_data_format",
                                    "y_data_format", "op_role",    "op_role_var",
                                    "op_namescope", "op_callstack"};
static const char *const add23_more[] = {"use_quantizer", "mkldnn_data_type", "Scale_x",
                                         "Scale_y",       "Scale_out",        "with_quant_attr"};

typedef struct {
    ir_op *feed, *conv, *relu, *cond, *add;
} net;

/* feed, conv2d (unchanged), relu (is_test added by the pass), a
 * conditional_block, the made elementwise_add (with 2.x's attrs when
 * TWO_X), in a program run as `pdtrans inference` for ERA. */
static ir_program *build(net *n, bool two_x)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_program_add_block(p, 0);
    n->feed = read_op(b, "feed", feed_file, 5);
    n->conv = read_op(b, "conv2d", conv_file, 9);
    n->relu = read_op(b, "relu", relu_file, 3);
    ir_op_set_bool(n->relu, "is_test", true);
    n->cond = read_op(b, "conditional_block", cond_file, 4);
    n->add = ir_block_append_op(b, "elementwise_add");
    for (size_t i = 0; i < 8; i++)
        if (!strcmp(add15[i], "op_role_var") || !strcmp(add15[i], "op_callstack"))
            ir_op_set_strings(n->add, add15[i], NULL, 0);
        else
            ir_op_set_int(n->add, add15[i], 0);
    for (size_t i = 0; two_x && i < 6; i++)
        ir_op_set_int(n->add, add23_more[i], 0);
    return p;
}

static void run(ir_program *p, int era)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = p;
    ctx.settings.saved_inference = true;
    pdt_era_apply_program(&ctx, p, era);
    ctx.main = NULL;
    pdt_ctx_free(&ctx);
}

START_TEST(export_takes_gcc48_history)
{
    net n;
    ir_program *p = build(&n, false);
    run(p, 105);
    unit_assert_attr_order(n.feed, (const char *const[]){"op_role_var", "op_callstack",
                                                         "op_namescope", "op_role", "col"}, 5);
    unit_assert_attr_order(n.conv, (const char *const[]){"strides", "op_role", "paddings",
                                                         "op_namescope", "op_callstack",
                                                         "op_role_var", "dilations", "groups",
                                                         "use_mkldnn"}, 9);
    unit_assert_attr_order(n.relu, (const char *const[]){"op_role", "op_namescope", "use_cudnn",
                                                         "is_test"}, 4);
    unit_assert_attr_order(n.cond, (const char *const[]){"sub_block", "op_role", "op_namescope",
                                                         "is_scalar_condition"}, 4);
    unit_assert_attr_order(n.add, (const char *const[]){"axis", "op_role", "op_namescope",
                                                        "op_callstack", "op_role_var",
                                                        "use_mkldnn", "x_data_format",
                                                        "y_data_format"}, 8);
    ir_program_free(p);
}
END_TEST

START_TEST(export_takes_lib5_history)
{
    net n;
    ir_program *p = build(&n, true);
    run(p, 203);
    unit_assert_attr_order(n.feed, (const char *const[]){"op_role_var", "op_callstack",
                                                         "op_namescope", "col", "op_role"}, 5);
    unit_assert_attr_order(n.conv, (const char *const[]){"op_role", "op_namescope", "op_callstack",
                                                         "groups", "use_mkldnn", "op_role_var",
                                                         "paddings", "dilations", "strides"}, 9);
    unit_assert_attr_order(n.relu, (const char *const[]){"op_namescope", "use_cudnn", "op_role",
                                                         "is_test"}, 4);
    unit_assert_attr_order(n.cond, (const char *const[]){"sub_block", "op_namescope",
                                                         "is_scalar_condition", "op_role"}, 4);
    unit_assert_attr_order(
        n.add,
        (const char *const[]){"x_data_format", "use_mkldnn", "op_callstack", "op_namescope",
                              "mkldnn_data_type", "axis", "Scale_out", "op_role_var", "op_role",
                              "Scale_y", "op_device", "with_quant_attr", "Scale_x",
                              "use_quantizer", "y_data_format"},
        15);
    ir_program_free(p);
}
END_TEST

/* Without the setting (every other command), and for 2.4, the input ops
 * a pass left alone keep their order. */
START_TEST(export_only_for_inference_up_to_23)
{
    net n;
    ir_program *p = build(&n, false);
    pdt_era_apply_program(NULL, p, 105);
    unit_assert_attr_order(n.conv, conv_file, 9);
    unit_assert_attr_order(n.feed, feed_file, 5);
    ir_program_free(p);
    p = build(&n, true);
    run(p, 204);
    unit_assert_attr_order(n.conv, conv_file, 9);
    ir_program_free(p);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order_export");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, export_takes_gcc48_history);
    tcase_add_test(tc, export_takes_lib5_history);
    tcase_add_test(tc, export_only_for_inference_up_to_23);
    suite_add_tcase(s, tc);
    return s;
}
