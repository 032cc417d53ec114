/* test_infer_names.c - issue 30 points 3 and 4: the InferShape field-effect
 * table (ir/infershape.c) and names that continue from the input
 * (ir/unique.c, and the optimizer's namer built on it). */
#include "unit.h"

#include "ir/infershape.h"
#include "ir/unique.h"
#include "passes/optimizer/optimizer_util.h"
#include "passes/pass.h"

static ir_var *lod_var(ir_block *b, const char *name, bool has, int level)
{
    ir_var *v = ir_block_var(b, name);
    v->has_lod_level = has;
    v->lod_level = level;
    return v;
}

START_TEST(share_lod_writes_the_input_level)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    lod_var(b, "x", true, 2);
    lod_var(b, "y", false, 0);
    ir_var *out = lod_var(b, "out", false, 0), *out2 = lod_var(b, "out2", false, 0);
    ir_op *scale = ir_block_append_op(b, "scale");
    ir_op_set_input1(scale, "X", "x");
    ir_op_set_output1(scale, "Out", "out");
    ir_infer_apply(b, scale);
    ck_assert(out->has_lod_level);
    ck_assert_int_eq(out->lod_level, 2);
    /* an input without the field reads 0, and the field is written */
    ir_op *sum = ir_block_append_op(b, "sum");
    const char *xs[2] = {"y", "x"};
    ir_op_set_input(sum, "X", xs, 2);
    ir_op_set_output1(sum, "Out", "out2");
    ir_infer_apply(b, sum);
    ck_assert(out2->has_lod_level);
    ck_assert_int_eq(out2->lod_level, 0);
    /* no row: fill_constant and reduce_sum (reduce_all) share nothing */
    ir_var *o3 = lod_var(b, "o3", false, 0);
    ir_op *fill = ir_block_append_op(b, "fill_constant");
    ir_op_set_output1(fill, "Out", "o3");
    ir_infer_apply(b, fill);
    ck_assert(!o3->has_lod_level);
    ck_assert_ptr_null(ir_infer_find("reduce_sum"));
    ck_assert_ptr_nonnull(ir_infer_find("increment"));
    /* a SELECTED_ROWS input is no LoD tensor: ShareLoD returns */
    ir_var *sr = lod_var(b, "sr", false, 0);
    sr->type = IR_SELECTED_ROWS;
    ir_var *o4 = lod_var(b, "o4", false, 0);
    ir_op *s2 = ir_block_append_op(b, "sum");
    ir_op_set_input1(s2, "X", "sr");
    ir_op_set_output1(s2, "Out", "o4");
    ir_infer_apply(b, s2);
    ck_assert(!o4->has_lod_level);
    ir_program_free(p);
}
END_TEST

START_TEST(every_row_names_its_source)
{
    static const char *const types[] = {"sum", "scale", "cast", "assign", "increment",
                                        "clip", "square", "elementwise_mul", "less_than"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        const ir_infer_row *r = ir_infer_find(types[i]);
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(strstr(r->source, ".cc") || strstr(r->source, ".h"), "%s", types[i]);
    }
}
END_TEST

START_TEST(unique_counters_of_names_and_scopes)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_block_var(b, "w@GRAD_3");
    ir_block_var(b, "nccl_id_1");
    ir_block_var(b, "_generated_var_7");
    ck_assert_uint_eq(ir_unique_next(p, "w@GRAD"), 4);
    ck_assert_uint_eq(ir_unique_next(p, "nccl_id"), 2);
    ck_assert_uint_eq(ir_unique_next(p, "tmp_dc_output"), 0);
    ir_op *a = ir_block_append_op(b, "scale");
    ir_op_set_string(a, "op_namescope", "/regularization/");
    ir_op *c = ir_block_append_op(b, "sum");
    ir_op_set_string(c, "op_namescope", "/optimizer_2/inner/");
    opt_namer *n = opt_namer_new(p, NULL);
    ck_assert_str_eq(opt_namer_scope(n, "regularization"), "/regularization_1/");
    ck_assert_str_eq(opt_namer_scope(n, "optimizer"), "/optimizer_3/");
    ck_assert_str_eq(opt_namer_scope(n, "gradient_clip"), "/gradient_clip/");
    ck_assert_str_eq(opt_namer_gen(n, "_generated_var"), "_generated_var_8");
    opt_namer_free(n);
    ir_program_free(p);
}
END_TEST

/* A grad var that exists already (an earlier backward's) makes
 * _rename_grad_ write NAME_<n>; n continues past the input's NAME_4. */
START_TEST(backward_rename_continues_past_input)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_var *x = ir_block_var(b, "x");
    x->has_stop_gradient = x->stop_gradient = true;
    ir_var *w = ir_block_var(b, "w");
    w->has_is_parameter = w->is_parameter = true;
    w->has_persistable = w->persistable = true;
    ir_block_var(b, "h");
    ir_block_var(b, "loss");
    ir_block_var(b, "w@GRAD");
    ir_block_var(b, "w@GRAD_4");
    ir_op *mul = ir_block_append_op(b, "mul");
    ir_op_set_input1(mul, "X", "x");
    ir_op_set_input1(mul, "Y", "w");
    ir_op_set_output1(mul, "Out", "h");
    ir_op_set_role(mul, 0);
    ir_op *mean = ir_block_append_op(b, "mean");
    ir_op_set_input1(mean, "X", "h");
    ir_op_set_output1(mean, "Out", "loss");
    ir_op_set_role(mean, 0);
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = p;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = "loss";
    const char *pass = "append_backward";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    bool renamed = false;
    for (size_t k = 0; k < b->n_ops; k++)
        if (!strcmp(b->ops[k]->type, "mul_grad")) {
            const ir_slot *yg = ir_op_output(b->ops[k], "Y@GRAD");
            ck_assert_ptr_nonnull(yg);
            ck_assert_str_eq(yg->args[0], "w@GRAD_5");
            renamed = true;
        }
    ck_assert(renamed);
    pdt_ctx_free(&ctx);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("infer_names");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, share_lod_writes_the_input_level);
    tcase_add_test(tc, every_row_names_its_source);
    tcase_add_test(tc, unique_counters_of_names_and_scopes);
    tcase_add_test(tc, backward_rename_continues_past_input);
    suite_add_tcase(s, tc);
    return s;
}
