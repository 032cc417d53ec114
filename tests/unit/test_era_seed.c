/* test_era_seed.c - the runtime (extra) attrs a 2.4+ grad op carries
 * (src/passes/era/era_order.c seed_rows, era.def's ERA_RUNTIME_* rows;
 * research-2x-3x.md 4s).  The expected names, types and defaults are
 * copied from op_compat.yaml at the tags (`git show TAG:PATH`), not from
 * pdtrans: v2.4.2 paddle/phi/api/yaml/op_compat.yaml lines 106-114
 * (conv2d), 633-635 (scale); v2.5.2 the same path lines 849-859
 * (embedding (lookup_table_v2)), 2305-2315 (softmax); develop 7cb207cb
 * paddle/phi/ops/yaml/op_compat.yaml lines 3536-3546 (softmax), 538-544
 * (cast). */
#include <glib.h>

#include "unit.h"

#include <string.h>

#include "passes/era/era.h"

static ir_op *made_op(ir_block *b, const char *type, int role)
{
    ir_op *op = ir_block_append_op(b, type);
    ir_op_set_role(op, role);
    op->made = true;
    return op;
}

static const ir_attr *has(const ir_op *op, const char *name, ir_attr_type type)
{
    const ir_attr *a = ir_op_attr(op, name);
    ck_assert_msg(a != NULL, "%s lacks %s", op->type, name);
    ck_assert_int_eq(a->type, type);
    return a;
}

START_TEST(conv2d_grad_2_4)
{
    /* v2.4.2: [bool is_test = false, bool use_cudnn = true, ... str
     * fuse_activation = "", float fuse_alpha = 0.0f, ... float Scale_in =
     * 1.0f, ..., 'float[] Scale_weights = {1.0f}', ..., int
     * workspace_size_MB = platform::GetDefaultConvWorkspaceSizeLimitMB()
     * (kDefaultConvWorkspaceSizeLimitMB = 512), bool exhaustive_search =
     * false] */
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *g = made_op(b, "conv2d_grad", IR_ROLE_BACKWARD);
    ir_op_set_bool(g, "use_cudnn", false); /* the forward op's value stays */
    pdt_era_apply_program(NULL, p, 204);
    ck_assert(!has(g, "is_test", IR_ATTR_BOOLEAN)->b);
    ck_assert(!has(g, "use_cudnn", IR_ATTR_BOOLEAN)->b);
    ck_assert(!has(g, "exhaustive_search", IR_ATTR_BOOLEAN)->b);
    ck_assert_int_eq(has(g, "fuse_activation", IR_ATTR_STRING)->s.len, 0);
    ck_assert(has(g, "fuse_alpha", IR_ATTR_FLOAT)->f == 0.0f);
    ck_assert(has(g, "Scale_in", IR_ATTR_FLOAT)->f == 1.0f);
    ck_assert_int_eq(has(g, "workspace_size_MB", IR_ATTR_INT)->i, 512);
    const ir_attr *w = has(g, "Scale_weights", IR_ATTR_FLOATS);
    ck_assert_int_eq(w->n_floats, 1);
    ck_assert(w->floats[0] == 1.0f);
    ck_assert_str_eq(ir_op_get_string(g, "mkldnn_data_type"), "float32");
    ir_program_free(p);
}
END_TEST

START_TEST(grad_ops_per_version)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *sm = made_op(b, "softmax_grad", IR_ROLE_BACKWARD);
    ir_op *emb = made_op(b, "lookup_table_v2_grad", IR_ROLE_BACKWARD);
    pdt_era_apply_program(NULL, p, 205);
    /* v2.5.2 softmax: str data_format = "AnyLayout", bool use_cudnn=false */
    ck_assert_str_eq(ir_op_get_string(sm, "data_format"), "AnyLayout");
    ck_assert(!has(sm, "use_cudnn", IR_ATTR_BOOLEAN)->b);
    /* v2.5.2 embedding: int slot = 0, 'int64_t[] height_sections = {}',
     * 'str[] epmap = {}' */
    ck_assert_int_eq(has(emb, "slot", IR_ATTR_INT)->i, 0);
    ck_assert_int_eq(has(emb, "height_sections", IR_ATTR_LONGS)->n_longs, 0);
    ck_assert_int_eq(has(emb, "epmap", IR_ATTR_STRINGS)->n_strings, 0);
    ir_program_free(p);

    p = ir_program_new();
    b = ir_program_add_block(p, -1);
    sm = made_op(b, "softmax_grad", IR_ROLE_BACKWARD);
    pdt_era_apply_program(NULL, p, 300);
    /* develop 7cb207cb softmax: bool use_cudnn = true */
    ck_assert(has(sm, "use_cudnn", IR_ATTR_BOOLEAN)->b);
    ir_program_free(p);
}
END_TEST

START_TEST(what_is_not_seeded)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    /* SumGradDescMaker's scale: new OpDesc(), only `scale` set */
    ir_op *sum_scale = made_op(b, "scale", IR_ROLE_BACKWARD);
    ir_op_set_float(sum_scale, "scale", 1.0f);
    /* ScaleGradMaker's scale: the forward scale's map (v2.4.2 scale:
     * [bool use_mkldnn = false]) */
    ir_op *scale_scale = made_op(b, "scale", IR_ROLE_BACKWARD);
    ir_op_set_bool(scale_scale, "bias_after_scale", true);
    /* an input op left alone (clean: written as read) and a forward-role
     * made op are not seeded here */
    ir_op *input = ir_block_append_op(b, "softmax_grad");
    ir_op_set_role(input, IR_ROLE_BACKWARD);
    input->made = false;
    ir_op_settle(input);
    ir_op *fwd = made_op(b, "softmax", IR_ROLE_FORWARD);
    /* but one a pass changed is: Paddle re-flushes it from maps that
     * OpDesc(proto) seeded with its type's extras (v2.4.2 op_desc.cc
     * InitRuntimeAttributeMapByOpExtraInfo; research 4t, 4z4) */
    ir_op *changed = ir_block_append_op(b, "softmax_grad");
    ir_op_set_role(changed, IR_ROLE_BACKWARD);
    changed->made = false;
    pdt_era_apply_program(NULL, p, 204);
    ck_assert(ir_op_attr(sum_scale, "use_mkldnn") == NULL);
    ck_assert(!has(scale_scale, "use_mkldnn", IR_ATTR_BOOLEAN)->b);
    ck_assert(ir_op_attr(input, "use_mkldnn") == NULL);
    ck_assert(ir_op_attr(fwd, "is_test") == NULL);
    ck_assert(!has(changed, "use_mkldnn", IR_ATTR_BOOLEAN)->b);
    ck_assert_str_eq(ir_op_get_string(changed, "mkldnn_data_type"), "float32");
    ir_program_free(p);

    /* before 2.4 no runtime map exists */
    p = ir_program_new();
    b = ir_program_add_block(p, -1);
    ir_op *old = made_op(b, "softmax_grad", IR_ROLE_BACKWARD);
    pdt_era_apply_program(NULL, p, 203);
    ck_assert(ir_op_attr(old, "is_test") == NULL);
    ir_program_free(p);

    /* develop cast: [bool use_mkldnn = false, str mkldnn_data_type =
     * "float32"]: CastOpGradMaker's cast takes the forward cast's map */
    p = ir_program_new();
    b = ir_program_add_block(p, -1);
    ir_op *cast = made_op(b, "cast", IR_ROLE_BACKWARD);
    pdt_era_apply_program(NULL, p, 300);
    ck_assert_str_eq(ir_op_get_string(cast, "mkldnn_data_type"), "float32");
    ir_program_free(p);
}
END_TEST

/* The verifiers' test (src/sym): an extra at a runtime row's default is
 * what the op runs with without it (batch_norm fuse_with_relu false, 2.4
 * on; softmax use_cudnn false in 2.5, true in 3.0; a grad type takes its
 * forward type's rows); another value, or an attr no row names, is not. */
START_TEST(extra_at_default)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_op *bn = ir_block_append_op(b, "batch_norm_grad");
    ir_op_set_bool(bn, "fuse_with_relu", false);
    ir_op_set_bool(bn, "is_test", false);
    ir_op_set_float(bn, "epsilon", 1e-5f);
    ck_assert(pdt_era_extra_at_default("batch_norm", ir_op_attr(bn, "fuse_with_relu")));
    ck_assert(pdt_era_extra_at_default("batch_norm_grad", ir_op_attr(bn, "fuse_with_relu")));
    ck_assert(!pdt_era_extra_at_default("batch_norm", ir_op_attr(bn, "epsilon")));
    ir_op_set_bool(bn, "fuse_with_relu", true);
    ck_assert(!pdt_era_extra_at_default("batch_norm", ir_op_attr(bn, "fuse_with_relu")));
    ir_op *sm = ir_block_append_op(b, "softmax");
    ir_op_set_bool(sm, "use_cudnn", true);
    ck_assert(pdt_era_extra_at_default("softmax", ir_op_attr(sm, "use_cudnn")));
    ir_op_set_bool(sm, "use_cudnn", false);
    ck_assert(pdt_era_extra_at_default("softmax", ir_op_attr(sm, "use_cudnn")));
    ir_program_free(p);
}
END_TEST

START_TEST(multitrainer_devices)
{
    /* c_comm_init_multitrainer_op.cc from v2.2.0 (absent in v2.1.3):
     * AddAttr<std::vector<int>>("devices", ...).SetDefault({}); Python
     * passes ntrainers, trainer_id, ring_id, and check_attrs adds it */
    static const int eras[] = {202, 300, 201};
    for (size_t i = 0; i < 3; i++) {
        ir_program *p = ir_program_new();
        ir_block *b = ir_program_add_block(p, -1);
        ir_op *op = made_op(b, "c_comm_init_multitrainer", IR_ROLE_FORWARD);
        pdt_era_apply_program(NULL, p, eras[i]);
        if (eras[i] >= 202)
            ck_assert_int_eq(has(op, "devices", IR_ATTR_INTS)->n_ints, 0);
        else
            ck_assert(ir_op_attr(op, "devices") == NULL);
        ir_program_free(p);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("era_seed");
    TCase *tc = tcase_create("era_seed");
    tcase_add_test(tc, conv2d_grad_2_4);
    tcase_add_test(tc, grad_ops_per_version);
    tcase_add_test(tc, what_is_not_seeded);
    tcase_add_test(tc, multitrainer_devices);
    tcase_add_test(tc, extra_at_default);
    suite_add_tcase(s, tc);
    return s;
}
