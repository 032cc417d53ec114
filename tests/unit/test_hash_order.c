/* test_hash_order.c - the libstdc++ hash order Paddle <= 2.3 writes attrs
 * in (src/passes/era/hash_order.c, research-2x-3x.md 4o). */
#include "unit.h"

#include "io/pdio.h"
#include "passes/era/era.h"
#include "passes/era/hash_table.h"

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
    unit_assert_attr_order(g, relu, 7);
    unit_assert_attr_order(c, fill, 5);
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
    unit_assert_attr_order(a, want, 8);
    pdt_hash_order_program(p, 108); /* 2.4 on: not this step's */
    unit_assert_attr_order(a, want, 8);
    ir_program_free(p);
}
END_TEST

/* The gcc 7+ policy against g++ 12's own std::unordered_map<std::string,
 * int>: the expected lists were printed by a C++ program (operator[] of
 * each key in order, then a range-for over the map; bucket_count() in the
 * comments), built with the machine's g++ 12.2 (research 4r). */
static const char conv_history[] =
    "fuse_residual_connection use_addto fuse_activation fuse_alpha op_device "
    "fuse_brelu_threshold fuse_brelu Scale_in fuse_relu use_cudnn workspace_size_MB "
    "use_quantizer force_fp32_output Scale_out strides dilations mkldnn_data_type "
    "use_mkldnn exhaustive_search Scale_in_eltwise with_quant_attr op_namescope "
    "fuse_relu_before_depthwise_conv op_role_var is_test op_role data_format "
    "fuse_beta paddings padding_algorithm Scale_weights groups op_callstack";

/* Inserts the first N names of the space-separated LIST into T. */
static void insert_words(ht *t, const char *list, size_t n)
{
    gchar **w = g_strsplit(list, " ", -1);
    for (size_t i = 0; w[i] && i < n; i++)
        ck_assert(ht_insert(t, ir_intern(w[i])));
    g_strfreev(w);
}

static void expect_list(const ht *t, const char *list)
{
    gchar *got = g_strdup("");
    for (size_t i = 0; i < t->n; i++) {
        gchar *next = g_strconcat(got, i ? " " : "", t->keys[i], NULL);
        g_free(got);
        got = next;
    }
    ck_assert_str_eq(got, list);
    g_free(got);
}

START_TEST(gcc7_policy_is_gpp12)
{
    ht t = {.policy = HT_GCC7};
    ht_init(&t);
    ck_assert_uint_eq(t.nb, 1);
    insert_words(&t, "col op_role op_namescope op_callstack op_role_var op_device with_quant_attr", 99);
    ck_assert_uint_eq(t.nb, 13);
    expect_list(&t, "with_quant_attr op_device op_role_var op_namescope op_role op_callstack col");
    ht_init(&t);
    insert_words(&t, conv_history, 13); /* 13 keys: still 13 buckets */
    ck_assert_uint_eq(t.nb, 13);
    expect_list(&t,
                "force_fp32_output use_cudnn fuse_brelu fuse_relu fuse_brelu_threshold op_device "
                "workspace_size_MB Scale_in fuse_alpha fuse_activation use_quantizer use_addto "
                "fuse_residual_connection");
    ht_init(&t);
    insert_words(&t, conv_history, 14); /* the 14th rehashes to 29 */
    ck_assert_uint_eq(t.nb, 29);
    expect_list(&t,
                "Scale_out fuse_residual_connection use_addto fuse_activation fuse_alpha Scale_in "
                "workspace_size_MB fuse_brelu_threshold op_device fuse_relu use_quantizer "
                "fuse_brelu use_cudnn force_fp32_output");
    ht_init(&t);
    insert_words(&t, conv_history, 99); /* 33 keys: 59 buckets */
    ck_assert_uint_eq(t.nb, 59);
    expect_list(&t,
                "Scale_weights padding_algorithm force_fp32_output fuse_brelu use_quantizer "
                "use_mkldnn Scale_in_eltwise op_callstack fuse_relu op_device mkldnn_data_type "
                "groups fuse_brelu_threshold fuse_beta workspace_size_MB strides Scale_in "
                "fuse_alpha fuse_activation use_addto fuse_residual_connection Scale_out "
                "dilations exhaustive_search with_quant_attr use_cudnn paddings op_namescope "
                "op_role_var is_test fuse_relu_before_depthwise_conv op_role data_format");
}
END_TEST

/* The 20 keys' list after 20 inserts, then: a copy (unordered_map copy
 * ctor) takes 13 more, and a re-read (a fresh map filled in this list
 * order, Paddle's OpDesc(proto)) takes the same 13; g++ 12's lists. */
static const char list20[] =
    "exhaustive_search dilations Scale_out fuse_residual_connection use_addto "
    "fuse_activation fuse_alpha Scale_in strides workspace_size_MB "
    "fuse_brelu_threshold mkldnn_data_type op_device fuse_relu Scale_in_eltwise "
    "use_mkldnn use_quantizer fuse_brelu use_cudnn force_fp32_output";

START_TEST(gcc7_copy_and_reread_are_gpp12)
{
    gchar **w = g_strsplit(list20, " ", -1);
    ir_attr attrs[20];
    memset(attrs, 0, sizeof attrs);
    for (size_t i = 0; i < 20; i++)
        attrs[i].name = ir_intern(w[i]);
    g_strfreev(w);
    ht t = {.policy = HT_GCC7};
    ck_assert(ht_copy_of(&t, attrs, 20));
    ck_assert_uint_eq(t.nb, 29);
    insert_words(&t,
                 "with_quant_attr op_namescope fuse_relu_before_depthwise_conv op_role_var is_test "
                 "op_role data_format fuse_beta paddings padding_algorithm Scale_weights groups "
                 "op_callstack",
                 99);
    expect_list(&t,
                "Scale_weights padding_algorithm force_fp32_output fuse_brelu use_quantizer "
                "use_mkldnn Scale_in_eltwise op_callstack fuse_relu op_device mkldnn_data_type "
                "groups fuse_brelu_threshold fuse_beta workspace_size_MB strides Scale_in "
                "fuse_alpha fuse_activation use_addto fuse_residual_connection Scale_out "
                "dilations exhaustive_search with_quant_attr use_cudnn paddings op_namescope "
                "op_role_var is_test fuse_relu_before_depthwise_conv op_role data_format");
    ht_init(&t);
    insert_words(&t, list20, 99);
    insert_words(&t,
                 "with_quant_attr op_namescope fuse_relu_before_depthwise_conv op_role_var is_test "
                 "op_role data_format fuse_beta paddings padding_algorithm Scale_weights groups "
                 "op_callstack",
                 99);
    expect_list(&t,
                "Scale_weights padding_algorithm op_device mkldnn_data_type op_callstack "
                "fuse_relu strides groups fuse_brelu_threshold fuse_beta workspace_size_MB "
                "fuse_activation use_addto fuse_residual_connection Scale_out Scale_in fuse_alpha "
                "dilations exhaustive_search Scale_in_eltwise use_mkldnn use_quantizer fuse_brelu "
                "force_fp32_output with_quant_attr paddings use_cudnn op_namescope op_role_var "
                "is_test fuse_relu_before_depthwise_conv op_role data_format");
}
END_TEST

/* gcc 4.8's bucket counts: 11 at construction, 23 at the 11th key, then
 * 47, 97, and 199 (libstdc++'s __prime_list has no 197). */
START_TEST(gcc48_bucket_counts)
{
    ht t = {.policy = HT_GCC48};
    ht_init(&t);
    ck_assert_uint_eq(t.nb, 11);
    static const size_t at[][2] = {{10, 11}, {11, 23}, {22, 23}, {23, 47}, {47, 97}, {97, 199}};
    size_t done = 0;
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
        for (; done < at[k][0]; done++) {
            char name[16];
            snprintf(name, sizeof name, "k%zu", done);
            ck_assert(ht_insert(&t, ir_intern(name)));
        }
        ck_assert_uint_eq(t.nb, at[k][1]);
    }
    ck_assert_int_eq(ht_policy_of(200), HT_GCC48);
    ck_assert_int_eq(ht_policy_of(202), HT_GCC48);
}
END_TEST

/* The attr list of a map that held T's keys re-inserted in T's list order
 * (ProgramDesc(proto)'s OpDesc(proto): core.prune's re-read in
 * save_inference_model, research 4q, 4z8). */
static void reread_into(ht *out, const ht *t)
{
    ht_init(out);
    for (size_t i = 0; i < t->n; i++)
        ck_assert(ht_insert(out, t->keys[i]));
}

/* picodet_v2_s_320_pedestrian.pdmodel (2.3.0, PaddleDetection's export
 * through paddle.jit.save) lists its ops' attrs as HT_GCC8_LIB5 orders
 * them (3 -> 7 -> 17 -> 37 buckets), and no other policy: its first conv2d
 * (op 4) and batch_norm (op 5) from the Operator.__init__ history (the
 * given attrs of nn/functional/conv.py _conv_nd and batch_norm in proto
 * order, then check_attrs's defaults in proto order; v2.3.0) re-read once
 * by the prune, its feed (op 0, prepended after the prune) as built. */
START_TEST(gcc8_lib5_takes_picodet_230_order)
{
    static const char *const conv =
        "strides paddings padding_algorithm groups dilations use_cudnn "
        "fuse_relu_before_depthwise_conv use_mkldnn data_format op_role op_namescope "
        "op_callstack is_test use_quantizer mkldnn_data_type fuse_relu fuse_brelu "
        "fuse_brelu_threshold fuse_activation fuse_alpha fuse_beta use_addto "
        "fuse_residual_connection Scale_in Scale_out Scale_in_eltwise Scale_weights "
        "force_fp32_output workspace_size_MB exhaustive_search op_role_var op_device "
        "with_quant_attr";
    static const char *const bn =
        "is_test momentum epsilon data_layout use_mkldnn fuse_with_relu use_global_stats "
        "trainable_statistics op_role op_namescope op_callstack op_role_var op_device "
        "with_quant_attr";
    ck_assert_int_eq(ht_policy_of(203), HT_GCC8_LIB5);
    ht t = {.policy = HT_GCC8_LIB5}, r = {.policy = HT_GCC8_LIB5};
    ht_init(&t);
    ck_assert_uint_eq(t.nb, 1);
    insert_words(&t, conv, 1);
    ck_assert_uint_eq(t.nb, 3);
    insert_words(&t, conv, 99);
    ck_assert_uint_eq(t.nb, 37);
    reread_into(&r, &t);
    expect_list(&r, "fuse_relu mkldnn_data_type fuse_activation op_callstack op_namescope "
                    "paddings op_role dilations data_format fuse_relu_before_depthwise_conv "
                    "fuse_residual_connection use_cudnn padding_algorithm with_quant_attr "
                    "strides use_quantizer fuse_alpha Scale_out op_role_var Scale_weights "
                    "op_device fuse_beta workspace_size_MB exhaustive_search Scale_in use_addto "
                    "fuse_brelu_threshold fuse_brelu groups force_fp32_output use_mkldnn "
                    "is_test Scale_in_eltwise");
    ht_init(&t);
    insert_words(&t, bn, 99);
    ck_assert_uint_eq(t.nb, 17);
    reread_into(&r, &t);
    expect_list(&r, "fuse_with_relu data_layout trainable_statistics op_role_var use_mkldnn "
                    "epsilon is_test op_device with_quant_attr op_callstack op_namescope "
                    "use_global_stats momentum op_role");
    ht_init(&t);
    insert_words(&t, "col op_role op_namescope op_callstack op_role_var op_device with_quant_attr",
                 99);
    expect_list(&t, "with_quant_attr op_role col op_namescope op_callstack op_role_var op_device");
    /* gcc 4.8's and gcc 7+'s maps give other orders for the same history. */
    ht g = {.policy = HT_GCC48};
    ht_init(&g);
    insert_words(&g, "col op_role op_namescope op_callstack op_role_var op_device with_quant_attr",
                 99);
    ck_assert_str_ne(g.keys[0], "with_quant_attr");
}
END_TEST

/* An op read from the input and changed by a pass since is re-flushed,
 * up to 2.3, from the map OpDesc(proto) filled in file order (BLOCK attrs
 * last, ProgramDesc::InitFromProto), attrs the pass added after; one left
 * alone keeps its order.  The expected orders are g++ 12's
 * std::unordered_map<std::string, int> m(11) after those inserts (11
 * buckets and no rehash under 11 keys, as gcc 4.8's default map). */
START_TEST(changed_input_ops_take_the_reread_order)
{
    static const char *const file[] = {"axis", "op_namescope", "op_role", "op_role_var"};
    static const char *const reread[] = {"op_role", "op_role_var", "op_namescope", "axis"};
    static const char *const cond_want[] = {"op_namescope", "sub_block", "op_role",
                                            "is_scalar_condition"};
    static const char *const mul_want[] = {"use_mkldnn",   "op_role_var", "op_callstack",
                                           "op_namescope", "op_role",     "y_num_col_dims",
                                           "x_num_col_dims"};
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_program_add_block(p, 0);
    ir_op *ops[2];
    for (int k = 0; k < 2; k++) {
        ops[k] = ir_block_append_op(b, "elementwise_add_grad");
        ops[k]->made = false;
        for (size_t i = 0; i < 4; i++)
            ir_op_set_int(ops[k], file[i], 0);
    }
    /* ops[0] as read and left alone: clean, its order kept */
    ir_op_settle_ranked(ops[0], NULL, NULL);
    ir_op *cond = ir_block_append_op(b, "conditional_block");
    cond->made = false;
    ir_op_set_block(cond, "sub_block", 1);
    ir_op_set_bool(cond, "is_scalar_condition", true);
    ir_op_set_int(cond, "op_role", 0);
    ir_op_set_string(cond, "op_namescope", "/");
    /* mul: the file's order, then op_role_var a pass added */
    static const char *const mul_file[] = {"x_num_col_dims", "y_num_col_dims", "op_role",
                                           "op_namescope", "op_callstack", "use_mkldnn"};
    ir_op *mul = ir_block_append_op(b, "mul");
    mul->made = false;
    for (size_t i = 0; i < 6; i++)
        ir_op_set_int(mul, mul_file[i], 0);
    static const char *const rv[] = {"w", "w@GRAD"};
    ir_op_set_strings(mul, "op_role_var", rv, 2);
    pdt_hash_order_program(p, 205); /* 2.5: not this step's */
    unit_assert_attr_order(ops[1], file, 4);
    pdt_hash_order_program(p, 108);
    unit_assert_attr_order(ops[0], (const char *const[]){"axis", "op_namescope", "op_role", "op_role_var"},
                 4);
    unit_assert_attr_order(ops[1], reread, 4);
    unit_assert_attr_order(cond, cond_want, 4);
    unit_assert_attr_order(mul, mul_want, 7);
    ck_assert(!ir_op_changed(ops[1]));
    pdt_hash_order_program(p, 108); /* again: the op is settled, nothing moves */
    unit_assert_attr_order(ops[1], reread, 4);
    ir_program_free(p);
}
END_TEST

/* PaddleFL 1.8.4's server sum and trainer concat (the 1.8 pserver
 * transpiler's Operator.__init__ histories; hash_order_dist.c), without
 * the op_callstack pdtrans does not write. */
START_TEST(pserver_transpiler_ops_take_paddle_18_order)
{
    static const char *const sum_want[] = {"op_device", "op_role_var", "op_namescope", "op_role",
                                           "use_mkldnn"};
    static const char *const cat_want[] = {"op_device",    "use_quantizer", "use_mkldnn", "op_role_var",
                                           "op_namescope", "op_role",       "axis"};
    static const char *const sum_sorted[] = {"op_device", "op_namescope", "op_role", "op_role_var",
                                             "use_mkldnn"};
    /* the merge sum sits in an optimize block of the pserver program, the
     * concat in the trainer's */
    ir_program *p = ir_program_new(), *tp = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_block_append_op(b, "listen_and_serv");
    ir_op *sum = ir_block_append_op(ir_program_add_block(p, 0), "sum");
    ir_op *cat = ir_block_append_op(ir_program_add_block(tp, -1), "concat");
    static const char *const cat_names[] = {"axis", "op_device", "op_namescope", "op_role",
                                            "op_role_var", "use_mkldnn", "use_quantizer"};
    for (size_t i = 0; i < 7; i++)
        if (!strcmp(cat_names[i], "op_role_var"))
            ir_op_set_strings(cat, cat_names[i], NULL, 0);
        else
            ir_op_set_int(cat, cat_names[i], !strcmp(cat_names[i], "op_role") ? 8 : 0);
    for (size_t i = 0; i < 5; i++)
        if (!strcmp(sum_sorted[i], "op_role_var"))
            ir_op_set_strings(sum, sum_sorted[i], NULL, 0);
        else
            ir_op_set_int(sum, sum_sorted[i], 0);
    pdt_hash_order_program(p, 204); /* 2.4: sorted groups, not hash order */
    unit_assert_attr_order(sum, sum_sorted, 5);
    pdt_hash_order_program(p, 108);
    pdt_hash_order_program(tp, 108);
    unit_assert_attr_order(sum, sum_want, 5);
    unit_assert_attr_order(cat, cat_want, 7);
    ir_program_free(p);
    ir_program_free(tp);
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
        unit_assert_attr_order(op, names, n);
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
    unit_assert_attr_order(sq, want, 7);
    ir_op_set_int(sq, "op_role", 2);
    ir_op_settle(sq);
    sq->made = true;
    pdt_hash_order_program(p, 105);
    unit_assert_attr_order(sq, want, 7);
    ir_program_free(p);
}
END_TEST

/* The same program's fc bias elementwise_add: LayerHelper.append_bias_op
 * (v1.5.2) gives {axis}, as 1.4-1.5's math_op_patch gives its LR
 * elementwise ops, so an LRSched elementwise_add (row elementwise_add@16,
 * 104-106) must come back in the file's order (research 4y). */
START_TEST(lr_15_elementwise_takes_rec_example_order)
{
    if (!unit_shared_dir())
        return;
    ir_program *p = pdio_read("../shared/testdata-real/train/rec_example_main_grad_train.pdmodel");
    ck_assert_ptr_nonnull(p);
    ir_op *ew = NULL;
    for (size_t k = 0; !ew && k < p->blocks[0]->n_ops; k++)
        if (!strcmp(p->blocks[0]->ops[k]->type, "elementwise_add"))
            ew = p->blocks[0]->ops[k];
    ck_assert_ptr_nonnull(ew);
    static const char *const want[] = {"y_data_format", "x_data_format", "use_mkldnn",
                                       "op_role_var",   "op_callstack",  "op_namescope",
                                       "op_role",       "axis"};
    unit_assert_attr_order(ew, want, 8);
    ir_op_set_int(ew, "op_role", 16);
    ir_op_settle(ew);
    ew->made = true;
    pdt_hash_order_program(p, 105);
    unit_assert_attr_order(ew, want, 8);
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
    tcase_add_test(tc, gcc7_policy_is_gpp12);
    tcase_add_test(tc, gcc7_copy_and_reread_are_gpp12);
    tcase_add_test(tc, gcc48_bucket_counts);
    tcase_add_test(tc, gcc8_lib5_takes_picodet_230_order);
    tcase_add_test(tc, changed_input_ops_take_the_reread_order);
    tcase_add_test(tc, pserver_transpiler_ops_take_paddle_18_order);
    tcase_add_test(tc, lr_schedule_takes_det_db_order);
    tcase_add_test(tc, clip_square_takes_rec_example_order);
    tcase_add_test(tc, lr_15_elementwise_takes_rec_example_order);
    suite_add_tcase(s, tc);
    return s;
}
