/* test_hash_order_2x.c - the hash attr order of the ops minimize appends for
 * a 2.0-2.3 target (src/passes/era/hash_order.c python_built, py_order.def's
 * 2.0-2.3 block, research-2x-3x.md 4v).
 *
 * No real 2.0-2.3 training program exists here, so the truth is g++ 12.2's
 * own std::unordered_map<std::string, int> fed each op's insertion history
 * as read in Paddle's sources (framework.py Operator.__init__ and
 * OpAttrChecker::Check, v2.0.2-v2.3.2: the given attrs in proto order,
 * op_role, op_role_var when not empty, op_namescope, op_callstack, then
 * check_attrs's defaults in proto order: the op's own, op_role_var when
 * empty, op_device, with_quant_attr from 2.2).  The C++ program constructs
 * the map with 11 buckets and, before an insert with n_elt + 1 >=
 * bucket_count(), calls rehash(max(n_elt + 2, 2 * bucket_count())): gcc
 * 4.8's schedule (research 4r), which pdtrans keeps for 2.0-2.3; the
 * list order is then libstdc++'s own insert and rehash.  The printed
 * range-for orders are the expected lists below (bucket counts in the
 * comments).  The same program gives the 1.7.1 PaddleOCR adam's file order
 * for its history (test_hash_order.c minimize_adam_takes_paddle_1x_order). */
#include "unit.h"

#include "passes/era/era.h"

#include <glib.h>
#include <string.h>

/* A trainer program (a backward op first) holding one made op of TYPE with
 * the attrs WANT names, set in name order; op_role ROLE, op_namescope NS,
 * op_role_var [w, w@GRAD] when RV (else empty).  Ordered for ERA, the op
 * must list WANT. */
static void expect_made_order(const char *type, int era, int role, const char *ns, bool rv,
                              const char *const *want, size_t n)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *g = ir_block_append_op(b, "mean_grad");
    ir_op_set_int(g, "op_role", 1);
    ir_op *op = ir_block_append_op(b, type);
    op->made = true;
    const char **names = g_new(const char *, n);
    memcpy(names, want, n * sizeof *names);
    qsort(names, n, sizeof *names, unit_by_str);
    static const char *const vars[] = {"w", "w@GRAD"};
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], "op_namescope"))
            ir_op_set_string(op, names[i], ns);
        else if (!strcmp(names[i], "op_role_var"))
            ir_op_set_strings(op, names[i], vars, rv ? 2 : 0);
        else
            ir_op_set_int(op, names[i], !strcmp(names[i], "op_role") ? role : 0);
    g_free(names);
    pdt_hash_order_program(p, era);
    const ir_attr *a = ir_op_attrs(op);
    ck_assert_uint_eq(op->n_attrs, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(a[i].name, want[i]);
    ir_program_free(p);
}

/* 2.2's adam (optimizer.py v2.2.2 passes use_global_beta_pow; 13 keys: the
 * rehash to 23 buckets) and L2 decay's scale (regularizer.py {scale};
 * use_mkldnn a proto attr from v2.2.0). */
START_TEST(adam_and_l2_scale_22_are_gpp12)
{
    static const char *const adam[] = {
        "with_quant_attr", "op_device",    "multi_precision", "beta1",       "epsilon",
        "beta2",           "lazy_mode",    "op_role",         "min_row_size_to_use_multithread",
        "op_role_var",     "op_namescope", "use_global_beta_pow", "op_callstack"}; /* 23 buckets */
    expect_made_order("adam", 202, 2, "/optimizer/", true, adam, 13);
    static const char *const scale[] = {"op_device",    "use_mkldnn",   "bias_after_scale",
                                        "bias",         "with_quant_attr", "op_callstack",
                                        "op_namescope", "op_role_var",  "op_role",
                                        "scale"}; /* 11 buckets */
    expect_made_order("scale", 202, 2, "/regularization/", true, scale, 10);
}
END_TEST

/* 2.2's global-norm clip: the in-place elementwise_mul clip.py appends with
 * no attrs (every ElementwiseOpMaker attr a default; 15 keys). */
START_TEST(clip_mul_22_is_gpp12)
{
    static const char *const mul[] = {
        "with_quant_attr", "op_device", "Scale_y",       "Scale_x",       "op_role",
        "op_role_var",     "op_namescope", "axis",       "op_callstack",  "use_mkldnn",
        "y_data_format",   "x_data_format", "use_quantizer", "Scale_out", "mkldnn_data_type"}; /* 23 */
    expect_made_order("elementwise_mul", 202, 2, "/gradient_clip/", true, mul, 15);
}
END_TEST

/* 2.0's momentum (optimizer.py passes mu, use_nesterov; momentum_op.cc's
 * four 2.0 attrs are defaults; no with_quant_attr: 11 keys, the rehash at
 * the eleventh). */
START_TEST(momentum_20_is_gpp12)
{
    static const char *const mom[] = {
        "mu",           "regularization_method", "op_role",         "op_role_var",
        "op_namescope", "use_nesterov",          "op_callstack",    "regularization_coeff",
        "multi_precision", "op_device",          "rescale_grad"}; /* 23 buckets */
    expect_made_order("momentum", 200, 2, "/optimizer/", true, mom, 11);
}
END_TEST

/* 2.2's momentum of a lars_momentum without weight decay (optimizer.py
 * v2.2.1, v2.2.2 LarsMomentumOptimizer: type 'momentum', lars's dict, of
 * which momentum's proto keeps mu, multi_precision, rescale_grad): told by
 * the lars_weight_decay the era step dropped (era.c's DROPPED map); with
 * with_quant_attr, 12 keys.  Without the note the op takes the plain
 * MomentumOptimizer row (mu, use_nesterov given). */
START_TEST(lars_momentum_22_is_gpp12)
{
    static const char *const mom[] = {
        "with_quant_attr", "mu",           "regularization_method", "op_device",
        "rescale_grad",    "op_role",      "op_role_var",           "op_namescope",
        "use_nesterov",    "op_callstack", "multi_precision",       "regularization_coeff"}; /* 23 */
    const char **names = g_new(const char *, 12);
    memcpy(names, mom, sizeof mom);
    qsort(names, 12, sizeof *names, unit_by_str);
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op_set_int(ir_block_append_op(b, "mean_grad"), "op_role", 1);
    ir_op *op = ir_block_append_op(b, "momentum");
    op->made = true;
    static const char *const vars[] = {"w", "w@GRAD"};
    for (size_t i = 0; i < 12; i++)
        if (!strcmp(names[i], "op_role_var"))
            ir_op_set_strings(op, names[i], vars, 2);
        else
            ir_op_set_int(op, names[i], !strcmp(names[i], "op_role") ? 2 : 0);
    g_free(names);
    GHashTable *dropped = g_hash_table_new(g_direct_hash, g_direct_equal);
    GString *note = g_string_new(" lars_coeff lars_weight_decay ");
    g_hash_table_insert(dropped, op, note);
    pdt_hash_order_dropped(p, 202, dropped);
    for (size_t i = 0; i < 12; i++)
        ck_assert_str_eq(ir_op_attrs(op)[i].name, mom[i]);
    ir_op_set_int(op, "mu", 1); /* dirty again: the plain row this time */
    pdt_hash_order_program(p, 202);
    static const char *const plain[] = {
        "with_quant_attr", "mu",           "regularization_method", "op_role",
        "op_role_var",     "op_namescope", "use_nesterov",          "op_callstack",
        "regularization_coeff", "multi_precision", "op_device",     "rescale_grad"}; /* 23 */
    for (size_t i = 0; i < 12; i++)
        ck_assert_str_eq(ir_op_attrs(op)[i].name, plain[i]);
    g_string_free(note, TRUE);
    g_hash_table_destroy(dropped);
    ir_program_free(p);
}
END_TEST

/* 2.3's learning-rate scale (math_op_patch {scale, bias}; the empty
 * op_role_var a default after the proto's own), in HT_GCC8_LIB5's map (3,
 * 7, then 17 buckets at the 7th key; research 4z8): the order a model of
 * that policy gives for this history, the model that reproduces the 2.3.0
 * picodet export's ops (gcc 4.8's 11 buckets gave op_device use_mkldnn
 * bias_after_scale with_quant_attr op_role_var op_callstack op_namescope
 * op_role bias scale, g++ 12's m(11)). */
START_TEST(lr_scale_23_takes_lib5_order)
{
    static const char *const scale[] = {"with_quant_attr", "op_device",        "op_role_var",
                                        "use_mkldnn",      "scale",            "op_role",
                                        "bias",            "bias_after_scale", "op_namescope",
                                        "op_callstack"}; /* 17 buckets */
    expect_made_order("scale", 203, 16, "/", false, scale, 10);
}
END_TEST

/* An attr no 2.x row names keeps the op sorted: AdamW's lr_ratio is not
 * adam's (adam_op.cc v2.2.2 AdamWOpMaker). */
START_TEST(unlisted_attr_stays_sorted)
{
    static const char *const sorted[] = {"beta1", "lr_ratio", "op_namescope", "op_role"};
    expect_made_order("adam", 202, 2, "/optimizer/", false, sorted, 4);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("hash_order_2x");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, adam_and_l2_scale_22_are_gpp12);
    tcase_add_test(tc, clip_mul_22_is_gpp12);
    tcase_add_test(tc, momentum_20_is_gpp12);
    tcase_add_test(tc, lars_momentum_22_is_gpp12);
    tcase_add_test(tc, lr_scale_23_takes_lib5_order);
    tcase_add_test(tc, unlisted_attr_stays_sorted);
    suite_add_tcase(s, tc);
    return s;
}
