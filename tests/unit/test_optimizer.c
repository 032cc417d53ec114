/* test_optimizer.c - SPEC parsing, unique names, float repr and the
 * optimizer-family passes on programs built through ir.h. */
#include "unit.h"

#include "passes/optimizer/optimizer_table.h"
#include "passes/optimizer/optimizer_util.h"
#include "passes/pass.h"
#include "passes/verify.h"


/* ---- a tiny program: params w [4,3], b [3] with backward ops ---------- */

static ir_var *tensor(ir_block *b, const char *name, int64_t d0, int64_t d1, bool persist)
{
    ir_var *v = ir_block_var(b, name);
    int64_t dims[2] = {d0, d1};
    ir_var_set_dims(b->program, v, dims, d1 ? 2 : 1);
    v->persistable = persist;
    return v;
}

static ir_op *role_op(ir_block *b, const char *type, int role, const char *p, const char *g)
{
    ir_op *op = ir_block_append_op(b, type);
    ir_op_set_role(op, role);
    if (p) {
        const char *rv[2] = {p, g};
        ir_op_set_strings(op, "op_role_var", rv, 2);
    }
    return op;
}

static void ctx_with_net(pdt_ctx *ctx)
{
    pdt_ctx_init(ctx);
    ctx->main = ir_program_new();
    ir_block *b = ir_program_add_block(ctx->main, -1);
    tensor(b, "x", -1, 4, false);
    tensor(b, "w", 4, 3, true);
    tensor(b, "b", 3, 0, true);
    tensor(b, "out", -1, 3, false);
    tensor(b, "loss", 1, 0, false);
    tensor(b, "w@GRAD", 4, 3, false);
    tensor(b, "b@GRAD", 3, 0, false);
    tensor(b, "out@GRAD", -1, 3, false);
    tensor(b, "loss@GRAD", 1, 0, false);
    ir_op *mul = role_op(b, "mul", 0, NULL, NULL);
    ir_op_set_input1(mul, "X", "x");
    ir_op_set_input1(mul, "Y", "w");
    ir_op_set_output1(mul, "Out", "out");
    ir_op *mean = role_op(b, "mean", 256, NULL, NULL);
    ir_op_set_input1(mean, "X", "out");
    ir_op_set_output1(mean, "Out", "loss");
    ir_op *fill = role_op(b, "fill_constant", 257, NULL, NULL);
    ir_op_set_output1(fill, "Out", "loss@GRAD");
    ir_op *mg = role_op(b, "mean_grad", 1, NULL, NULL);
    ir_op_set_input1(mg, "Out@GRAD", "loss@GRAD");
    ir_op_set_output1(mg, "X@GRAD", "out@GRAD");
    /* w's pair comes first in program order; the passes must sort. */
    ir_op *mulg = role_op(b, "mul_grad", 1, "w", "w@GRAD");
    ir_op_set_input1(mulg, "Out@GRAD", "out@GRAD");
    ir_op_set_output1(mulg, "Y@GRAD", "w@GRAD");
    ir_op *bg = role_op(b, "fake_bias_grad", 1, "b", "b@GRAD");
    ir_op_set_input1(bg, "Out@GRAD", "out@GRAD");
    ir_op_set_output1(bg, "X@GRAD", "b@GRAD");
    ctx->startup = ir_program_new();
    ir_program_add_block(ctx->startup, -1);
    ctx->backward.loss = "loss";
}

static const ir_op *op_at(const pdt_ctx *ctx, size_t k)
{
    const ir_block *b = ir_program_block(ctx->main, 0);
    ck_assert_uint_lt(k, b->n_ops);
    return b->ops[k];
}

static const char *in1(const ir_op *op, const char *slot)
{
    const char *a = ir_op_input1(op, slot);
    return a ? a : "(none)";
}

static const char *role_var(const ir_op *op, size_t i)
{
    const ir_attr *a = ir_op_attr(op, "op_role_var");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_gt(a->n_strings, i);
    return ir_intern_n((const char *)a->strings[i].data, a->strings[i].len);
}

/* ---- SPEC parsing ----------------------------------------------------- */

START_TEST(spec_defaults_alias_and_lists)
{
    opt_spec s;
    ck_assert_int_eq(opt_spec_parse(NULL, "--x", "adam:lr=0.5,b=1,2,3", &s), PDT_OK);
    ck_assert_str_eq(s.kind, "adam");
    double lr, beta;
    ck_assert_int_eq(opt_spec_double(&s, "learning_rate", "lr", 0.001, &lr), PDT_OK);
    ck_assert(lr == 0.5);
    ck_assert_int_eq(opt_spec_double(&s, "beta1", NULL, 0.9, &beta), PDT_OK);
    ck_assert(beta == 0.9);
    double *list;
    size_t n;
    ck_assert_int_eq(opt_spec_doubles(&s, "b", &list, &n), PDT_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(list[2] == 3.0);
    free(list);
    ck_assert_int_eq(opt_spec_finish(&s), PDT_OK);
    opt_spec_free(&s);
}
END_TEST

START_TEST(spec_errors_are_usage_errors)
{
    static const char *bad[] = {"", ":lr=1", "sgd:", "sgd:lr", "sgd:lr=", "sgd:=1",
                                "sgd:lr=1,,", "sgd:lr=1,lr=2", "sg d"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        opt_spec s;
        ck_assert_msg(opt_spec_parse(NULL, "--x", bad[i], &s) == PDT_EUSAGE, "%s", bad[i]);
    }
    opt_spec s;
    ck_assert_int_eq(opt_spec_parse(NULL, "--x", "sgd:lr=abc", &s), PDT_OK);
    double v;
    ck_assert_int_eq(opt_spec_double(&s, "learning_rate", "lr", 1, &v), PDT_EUSAGE);
    opt_spec_free(&s);
    ck_assert_int_eq(opt_spec_parse(NULL, "--x", "sgd:lr=1,learning_rate=2", &s), PDT_OK);
    ck_assert_int_eq(opt_spec_double(&s, "learning_rate", "lr", 1, &v), PDT_EUSAGE);
    opt_spec_free(&s);
}
END_TEST

START_TEST(optimizer_check_keys)
{
    double lr = 0;
    ck_assert_int_eq(opt_optimizer_check(NULL, "sgd", &lr), PDT_OK);
    ck_assert(lr == 0.001);
    ck_assert_int_eq(opt_optimizer_check(NULL, "momentum:learning_rate=0.1,momentum=0.9,"
                                               "use_nesterov=true", &lr), PDT_OK);
    ck_assert(lr == 0.1);
    ck_assert_int_eq(opt_optimizer_check(NULL, "sgd:momentum=0.9", NULL), PDT_EUSAGE);
    ck_assert_int_eq(opt_optimizer_check(NULL, "adamw", NULL), PDT_EUSAGE);
    ck_assert_int_eq(opt_optimizer_check(NULL, "rmsprop:centered=maybe", NULL), PDT_EUSAGE);
    ck_assert_int_eq(opt_optimizer_check(NULL, "ftrl:l1=0.1,l2=0.2,lr_power=-0.5", NULL),
                     PDT_OK);
}
END_TEST

START_TEST(clip_and_regularization_specs)
{
    opt_clip_kind k;
    double max, min, coeff;
    opt_reg_kind rk;
    ck_assert_int_eq(opt_parse_clip(NULL, "value:2", &k, &max, &min), PDT_OK);
    ck_assert(k == OPT_CLIP_VALUE && max == 2 && min == -2);
    ck_assert_int_eq(opt_parse_clip(NULL, "value:max=1,min=-0.5", &k, &max, &min), PDT_OK);
    ck_assert(min == -0.5);
    /* the help's value:MAX[,min=MIN]: the short first item before a key */
    ck_assert_int_eq(opt_parse_clip(NULL, "value:1.5,min=-0.5", &k, &max, &min), PDT_OK);
    ck_assert(k == OPT_CLIP_VALUE && max == 1.5 && min == -0.5);
    ck_assert_int_eq(opt_parse_clip(NULL, "value:1.5,2", &k, &max, &min), PDT_EUSAGE);
    ck_assert_int_eq(opt_parse_clip(NULL, "global_norm:5", &k, &max, &min), PDT_OK);
    ck_assert(k == OPT_CLIP_GLOBAL_NORM && max == 5);
    ck_assert_int_eq(opt_parse_clip(NULL, "value:-1", &k, &max, &min), PDT_EUSAGE);
    ck_assert_int_eq(opt_parse_clip(NULL, "norm", &k, &max, &min), PDT_EUSAGE);
    ck_assert_int_eq(opt_parse_clip(NULL, "norm:max=1", &k, &max, &min), PDT_EUSAGE);
    ck_assert_int_eq(opt_parse_regularization(NULL, "l1:0.01", &rk, &coeff), PDT_OK);
    ck_assert(rk == OPT_REG_L1 && coeff == 0.01);
    ck_assert_int_eq(opt_parse_regularization(NULL, "l3:1", &rk, &coeff), PDT_EUSAGE);
    ck_assert_int_eq(opt_parse_regularization(NULL, "l2:x", &rk, &coeff), PDT_EUSAGE);
    ck_assert_int_eq(opt_lr_schedule_check(NULL, "piecewise:boundaries=10,values=1", NULL),
                     PDT_EUSAGE);
    ck_assert_int_eq(opt_lr_schedule_check(NULL, "exponential:decay_rate=0.5", NULL),
                     PDT_EUSAGE);
    ck_assert_int_eq(opt_lr_schedule_check(NULL, "cosine:x=1", NULL), PDT_EUSAGE);
}
END_TEST

START_TEST(py_float_repr)
{
    static const struct {
        double v;
        const char *s;
    } cases[] = {{1.0, "1.0"},       {0.1, "0.1"},          {1e-8, "1e-08"},
                 {0.0001, "0.0001"}, {1e16, "1e+16"},       {123.5, "123.5"},
                 {-2.0, "-2.0"},     {1e15, "1000000000000000.0"}, {0.95, "0.95"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[64];
        opt_py_float_str(cases[i].v, buf, sizeof buf);
        ck_assert_str_eq(buf, cases[i].s);
    }
}
END_TEST

START_TEST(namer_continues_past_existing_names)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    ir_block_var(b, "learning_rate_0");
    ir_block_var(b, "clip_0.tmp_0");
    ir_block_var(b, "tmp_4");
    opt_namer *n = opt_namer_new(p, NULL);
    ck_assert_str_eq(opt_namer_gen(n, "learning_rate"), "learning_rate_1");
    ck_assert_str_eq(opt_namer_gen(n, "tmp"), "tmp_5");
    ck_assert_str_eq(opt_namer_layer_tmp(n, "clip"), "clip_1.tmp_0");
    ck_assert_str_eq(opt_namer_gen(n, "w_moment1"), "w_moment1_0");
    ck_assert_str_eq(opt_namer_scope(n, "optimizer"), "/optimizer/");
    ck_assert_str_eq(opt_namer_scope(n, "optimizer"), "/optimizer_1/");
    opt_namer_free(n);
    ir_program_free(p);
}
END_TEST

/* ---- passes ------------------------------------------------------------ */

START_TEST(sgd_sorted_with_startup_prepended)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ir_block *sb = ir_program_block(ctx.startup, 0);
    ir_op *init = ir_block_append_op(sb, "uniform_random");
    ir_op_set_output1(init, "Out", "w");
    ctx.optim.optimizer = "sgd:lr=0.25";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    const ir_block *b = ir_program_block(ctx.main, 0);
    ck_assert_uint_eq(b->n_ops, 8);
    const ir_op *s0 = op_at(&ctx, 6), *s1 = op_at(&ctx, 7);
    ck_assert_str_eq(s0->type, "sgd");
    ck_assert_str_eq(in1(s0, "Param"), "b");
    ck_assert_str_eq(in1(s1, "Param"), "w");
    ck_assert_str_eq(in1(s1, "Grad"), "w@GRAD");
    ck_assert_str_eq(in1(s1, "LearningRate"), "learning_rate_0");
    ck_assert_int_eq(ir_op_role(s1), IR_ROLE_OPTIMIZE);
    ck_assert_str_eq(role_var(s1, 0), "w");
    ck_assert_str_eq(role_var(s1, 1), "w@GRAD");
    ck_assert_str_eq(ir_op_get_string(s0, "op_namescope"), "/optimizer/");
    ck_assert_str_eq(ir_op_get_string(s1, "op_namescope"), "/optimizer_1/");
    const ir_var *lr = ir_block_find_var(b, ir_intern("learning_rate_0"));
    ck_assert_ptr_nonnull(lr);
    ck_assert(lr->persistable && lr->n_dims == 1 && lr->dims[0] == 1);
    ck_assert_uint_eq(sb->n_ops, 2);
    ck_assert_str_eq(sb->ops[0]->type, "fill_constant");
    ck_assert_str_eq(ir_op_output1(sb->ops[0], "Out"), "learning_rate_0");
    ck_assert(ir_op_get_float(sb->ops[0], "value", 0) == (float)0.25);
    ck_assert_str_eq(sb->ops[1]->type, "uniform_random");
    ck_assert_ptr_nonnull(ir_block_find_var(sb, ir_intern("learning_rate_0")));
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(adam_accumulators)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "adam:beta1=0.8";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    const ir_block *b = ir_program_block(ctx.main, 0);
    const ir_op *a = op_at(&ctx, 7);
    ck_assert_str_eq(a->type, "adam");
    ck_assert_str_eq(in1(a, "Moment1"), "w_moment1_0");
    ck_assert_str_eq(in1(a, "Beta2Pow"), "w_beta2_pow_acc_0");
    ck_assert_str_eq(ir_op_output1(a, "Beta1PowOut"), "w_beta1_pow_acc_0");
    ck_assert_ptr_nonnull(ir_op_input(a, "Beta1Tensor"));
    ck_assert_uint_eq(ir_op_input(a, "Beta1Tensor")->n_args, 0);
    ck_assert(ir_op_get_float(a, "beta1", 0) == (float)0.8);
    ck_assert_int_eq(ir_op_get_int(a, "min_row_size_to_use_multithread", 0), 1000);
    const ir_var *m = ir_block_find_var(b, ir_intern("w_moment1_0"));
    ck_assert(m && m->n_dims == 2 && m->dims[0] == 4 && m->dims[1] == 3 && m->persistable);
    const ir_var *pw = ir_block_find_var(b, ir_intern("b_beta1_pow_acc_0"));
    ck_assert(pw && pw->n_dims == 1 && pw->dims[0] == 1);
    /* 8 accumulators + lr, prepended: lr first, then w's last accumulator. */
    const ir_block *sb = ir_program_block(ctx.startup, 0);
    ck_assert_uint_eq(sb->n_ops, 9);
    ck_assert_str_eq(ir_op_output1(sb->ops[0], "Out"), "learning_rate_0");
    ck_assert_str_eq(ir_op_output1(sb->ops[1], "Out"), "w_beta2_pow_acc_0");
    ck_assert_str_eq(ir_op_get_string(sb->ops[1], "op_device"), "cpu");
    ck_assert(ir_op_get_float(sb->ops[2], "value", 0) == (float)0.8);
    ck_assert_str_eq(ir_op_output1(sb->ops[8], "Out"), "b_moment1_0");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(adamax_finish_scales)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "adamax";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    const ir_op *s = op_at(&ctx, 9);
    ck_assert_str_eq(s->type, "scale");
    ck_assert_str_eq(in1(s, "X"), "w_beta1_pow_acc_0");
    ck_assert_str_eq(ir_op_output1(s, "Out"), "w_beta1_pow_acc_0");
    ck_assert_str_eq(ir_op_get_string(s, "op_namescope"), "/adamx_1/");
    ck_assert_ptr_null(ir_op_output(op_at(&ctx, 7), "Beta1PowOut"));
    pdt_ctx_free(&ctx);
}
END_TEST

/* A 1.6 target: adam_op.cc has no Beta1PowOut/Beta2PowOut before v1.7.0,
 * and Adam._finish_update scales both powers, per parameter, after all
 * updates in one name scope. */
START_TEST(adam_before_17_scales_powers)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "adam:beta1=0.8";
    ctx.settings.era = 106;
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    ck_assert_ptr_null(ir_op_output(op_at(&ctx, 7), "Beta1PowOut"));
    ck_assert_ptr_null(ir_op_output(op_at(&ctx, 6), "Beta2PowOut"));
    ck_assert_uint_eq(ir_program_block(ctx.main, 0)->n_ops, 12);
    const ir_op *s1 = op_at(&ctx, 10), *s2 = op_at(&ctx, 11);
    ck_assert_str_eq(s1->type, "scale");
    ck_assert_str_eq(in1(s1, "X"), "w_beta1_pow_acc_0");
    ck_assert_str_eq(ir_op_output1(s2, "Out"), "w_beta2_pow_acc_0");
    ck_assert(ir_op_get_float(s1, "scale", 0) == (float)0.8);
    ck_assert(ir_op_get_float(s2, "scale", 0) == (float)0.999);
    ck_assert_str_eq(ir_op_get_string(s2, "op_namescope"), ir_op_get_string(s1, "op_namescope"));
    pdt_ctx_free(&ctx);
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "adam";
    ctx.settings.era = 107;
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    ck_assert_ptr_nonnull(ir_op_output(op_at(&ctx, 7), "Beta1PowOut"));
    ck_assert_uint_eq(ir_program_block(ctx.main, 0)->n_ops, 8);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(refuses_program_with_optimizer_ops)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "sgd";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    size_t n = ir_program_block(ctx.main, 0)->n_ops;
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_EBADINPUT);
    ctx.optim.clip = "value:1";
    ck_assert_int_eq(pass_gradient_clip(&ctx), PDT_EBADINPUT);
    ck_assert_uint_eq(ir_program_block(ctx.main, 0)->n_ops, n);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(no_gradients_is_an_error)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ir_block *b = ir_program_block(ctx.main, 0);
    for (size_t k = 0; k < b->n_ops; k++)
        ir_op_remove_attr(b->ops[k], "op_role_var");
    ctx.optim.optimizer = "sgd";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_EBADINPUT);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(clip_then_l2_then_sgd)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.clip = "value:0.5";
    ctx.optim.regularization = "l2:0.01";
    ctx.optim.optimizer = "sgd";
    ck_assert_int_eq(pass_gradient_clip(&ctx), PDT_OK);
    ck_assert_int_eq(pass_regularization(&ctx), PDT_OK);
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    /* clip b, clip w, scale b, sum b, scale w, sum w, sgd b, sgd w */
    static const char *types[] = {"clip", "clip", "scale", "sum", "scale", "sum", "sgd", "sgd"};
    for (size_t i = 0; i < 8; i++)
        ck_assert_str_eq(op_at(&ctx, 6 + i)->type, types[i]);
    const ir_op *clip_w = op_at(&ctx, 7), *sum_w = op_at(&ctx, 11), *sgd_w = op_at(&ctx, 13);
    ck_assert_str_eq(ir_op_output1(clip_w, "Out"), "clip_1.tmp_0");
    ck_assert_str_eq(role_var(clip_w, 1), "clip_1.tmp_0");
    ck_assert_str_eq(ir_op_get_string(clip_w, "op_namescope"), "/gradient_clip/");
    ck_assert(ir_op_get_float(clip_w, "min", 0) == -0.5f);
    ck_assert_str_eq(ir_op_output1(sum_w, "Out"), "clip_1.tmp_0");
    ck_assert_uint_eq(ir_op_input(sum_w, "X")->n_args, 2);
    ck_assert_str_eq(ir_op_input(sum_w, "X")->args[1], "_generated_var_1");
    ck_assert_str_eq(ir_op_get_string(sum_w, "op_namescope"), "/regularization/");
    ck_assert_str_eq(in1(sgd_w, "Grad"), "clip_1.tmp_0");
    ck_assert_str_eq(role_var(sgd_w, 1), "clip_1.tmp_0");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(norm_clip_and_l1)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.clip = "norm:2";
    ctx.optim.regularization = "l1:0.5";
    ck_assert_int_eq(pass_gradient_clip(&ctx), PDT_OK);
    ck_assert_int_eq(pass_regularization(&ctx), PDT_OK);
    static const char *types[] = {"clip_by_norm", "clip_by_norm", "sign", "scale", "sum",
                                  "sign", "scale", "sum"};
    for (size_t i = 0; i < 8; i++)
        ck_assert_str_eq(op_at(&ctx, 6 + i)->type, types[i]);
    ck_assert(ir_op_get_float(op_at(&ctx, 6), "max_norm", 0) == 2.0f);
    ck_assert_str_eq(ir_op_output1(op_at(&ctx, 6), "Out"), "clip_by_norm_0.tmp_0");
    const ir_op *scale = op_at(&ctx, 9);
    ck_assert_str_eq(in1(scale, "X"), "_generated_var_0");
    ck_assert_str_eq(ir_op_output1(scale, "Out"), "_generated_var_0");
    ck_assert(ir_op_get_float(scale, "scale", 0) == 0.5f);
    /* create_var(lod_level=param.lod_level): 0 is written explicitly. */
    const ir_var *dv = ir_block_find_var(ir_program_block(ctx.main, 0),
                                         ir_intern("_generated_var_0"));
    ck_assert(dv && dv->has_lod_level && dv->lod_level == 0 && !dv->has_persistable);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(selected_rows_grad_gets_newgrad)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ir_var *g = ir_block_find_var(ir_program_block(ctx.main, 0), ir_intern("w@GRAD"));
    g->type = IR_SELECTED_ROWS;
    g->tensor_slot = IR_TD_SELECTED_ROWS;
    ctx.optim.regularization = "l2:0.1";
    ctx.optim.optimizer = "sgd";
    ck_assert_int_eq(pass_regularization(&ctx), PDT_OK);
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    const ir_op *sum_w = op_at(&ctx, 9), *sgd_w = op_at(&ctx, 11);
    ck_assert_str_eq(ir_op_output1(sum_w, "Out"), "w@GRAD@NEWGRAD@");
    ck_assert_str_eq(ir_op_output1(op_at(&ctx, 7), "Out"), "b@GRAD");
    ck_assert_str_eq(in1(sgd_w, "Grad"), "w@GRAD@NEWGRAD@");
    const ir_var *nv = ir_block_find_var(ir_program_block(ctx.main, 0),
                                         ir_intern("w@GRAD@NEWGRAD@"));
    ck_assert(nv && nv->type == IR_LOD_TENSOR && nv->n_dims == 2);
    ck_assert(nv->has_lod_level && nv->lod_level == 0);
    pdt_ctx_free(&ctx);
}
END_TEST

/* _update_param_device_map: accumulators and update op follow the
 * op_device of the first op reading the param; Adam's beta powers stay
 * on the cpu. */
START_TEST(param_device_follows_first_reader)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ir_op_set_string(ir_program_block(ctx.main, 0)->ops[0], "op_device", "gpu:1");
    ctx.optim.optimizer = "adam";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    const ir_op *adam_b = op_at(&ctx, 6), *adam_w = op_at(&ctx, 7);
    ck_assert_str_eq(in1(adam_w, "Param"), "w");
    ck_assert_str_eq(ir_op_get_string(adam_w, "op_device"), "gpu:1");
    ck_assert_str_eq(ir_op_get_string(adam_b, "op_device"), "");
    const ir_block *sb = ir_program_block(ctx.startup, 0);
    size_t seen = 0;
    for (size_t k = 0; k < sb->n_ops; k++) {
        const char *out = ir_op_output1(sb->ops[k], "Out");
        const char *dev = ir_op_get_string(sb->ops[k], "op_device");
        if (!strcmp(out, "w_moment1_0") || !strcmp(out, "w_moment2_0")) {
            ck_assert_str_eq(dev, "gpu:1");
            seen++;
        } else if (!strcmp(out, "w_beta1_pow_acc_0") || !strcmp(out, "b_beta1_pow_acc_0")) {
            ck_assert_str_eq(dev, "cpu");
            seen++;
        } else if (!strcmp(out, "b_moment1_0") || !strcmp(out, "learning_rate_0")) {
            ck_assert_str_eq(dev, "");
            seen++;
        }
    }
    ck_assert_uint_eq(seen, 6);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(params_filter_and_optimizer_name)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.backward.params = pdt_list_split("w");
    ctx.optim.optimizer = "momentum:name=m";
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    const ir_block *b = ir_program_block(ctx.main, 0);
    ck_assert_uint_eq(b->n_ops, 7);
    ck_assert_str_eq(in1(b->ops[6], "Velocity"), "w_m_velocity_0");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(global_norm_clip_shares_one_scale)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.clip = "global_norm:1.5";
    ck_assert_int_eq(pass_gradient_clip(&ctx), PDT_OK);
    static const char *types[] = {"square", "reduce_sum", "square", "reduce_sum", "sum", "sqrt",
                                  "fill_constant", "elementwise_max", "elementwise_div",
                                  "elementwise_mul", "elementwise_mul"};
    for (size_t i = 0; i < 11; i++)
        ck_assert_str_eq(op_at(&ctx, 6 + i)->type, types[i]);
    const ir_op *sum = op_at(&ctx, 10), *mul_w = op_at(&ctx, 16);
    ck_assert_uint_eq(ir_op_input(sum, "X")->n_args, 2);
    ck_assert_str_eq(role_var(sum, 1), "elementwise_mul_1");
    ck_assert_str_eq(ir_op_output1(mul_w, "Out"), "elementwise_mul_1");
    ck_assert_str_eq(in1(mul_w, "Y"), "elementwise_div_0");
    ck_assert_str_eq(ctx.bw_grads.items[1], "elementwise_mul_1");
    ck_assert_str_eq(ir_op_get_string(op_at(&ctx, 12), "str_value"), "1.5");
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(exponential_schedule_feeds_optimizer)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "sgd:lr=1.0";
    ctx.optim.lr_schedule = "exponential:decay_steps=100,decay_rate=0.5,staircase=true";
    ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_OK);
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    static const char *types[] = {"increment", "mul", "mean", "cast", "scale", "floor",
                                  "fill_constant", "elementwise_pow", "scale", "fill_constant"};
    for (size_t i = 0; i < 10; i++)
        ck_assert_str_eq(op_at(&ctx, i)->type, types[i]);
    ck_assert_int_eq(ir_op_role(op_at(&ctx, 0)), IR_ROLE_LRSCHED);
    ck_assert_int_eq(ir_op_role(op_at(&ctx, 9)), 257);
    ck_assert(ir_op_get_float(op_at(&ctx, 4), "scale", 0) == 0.01f);
    const ir_block *b = ir_program_block(ctx.main, 0);
    const ir_op *sgd = b->ops[b->n_ops - 1];
    ck_assert_str_eq(in1(sgd, "LearningRate"), "tmp_3");
    ck_assert_ptr_null(ir_block_find_var(b, ir_intern("learning_rate_0")));
    const ir_block *sb = ir_program_block(ctx.startup, 0);
    ck_assert_uint_eq(sb->n_ops, 1);
    ck_assert_str_eq(ir_op_output1(sb->ops[0], "Out"), "@LR_DECAY_COUNTER@");
    ck_assert(ir_op_get_float(sb->ops[0], "value", 0) == -1.0f);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(piecewise_schedule_builds_sub_blocks)
{
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "momentum";
    ctx.optim.lr_schedule = "piecewise:boundaries=10,20,values=1.0,0.5,0.1";
    ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_OK);
    ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
    ck_assert_uint_eq(ctx.main->n_blocks, 4);
    for (size_t i = 1; i < 4; i++) {
        const ir_block *sub = ir_program_block(ctx.main, (int32_t)i);
        ck_assert_int_eq(sub->parent_idx, 0);
        ck_assert_uint_eq(sub->n_ops, 1);
        ck_assert_str_eq(sub->ops[0]->type, "assign");
        ck_assert_str_eq(ir_op_output1(sub->ops[0], "Out"), "learning_rate");
    }
    static const char *types[] = {"increment", "mul", "mean", "cast", "fill_constant",
                                  "fill_constant", "less_than", "logical_not",
                                  "conditional_block", "fill_constant", "fill_constant",
                                  "less_than", "logical_not", "logical_and", "logical_and",
                                  "conditional_block", "fill_constant", "conditional_block"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        ck_assert_str_eq(op_at(&ctx, i)->type, types[i]);
    ck_assert_int_eq(ir_op_get_int(op_at(&ctx, 17), "sub_block", -1), 3);
    const ir_block *b = ir_program_block(ctx.main, 0);
    ck_assert_str_eq(in1(b->ops[b->n_ops - 1], "LearningRate"), "learning_rate");
    ck_assert_uint_eq(pdt_verify(ctx.main, "main", NULL), 0);
    pdt_ctx_free(&ctx);
}
END_TEST

/* The transpiler slices exactly the per-element accumulators of the
 * optimizer table (what the old list in transpile_pserver.c said). */
/* Every --lr-schedule kind and --lr-warmup builds a valid program whose
 * optimizer reads the schedule's var; a second warm-up (its fixed var
 * already there) is bad input. */
START_TEST(every_schedule_and_warmup)
{
    static const struct {
        const char *spec, *warmup, *lr;
        size_t blocks;
    } cases[] = {
        {"natural_exp:decay_steps=10,decay_rate=0.5", NULL, "tmp_2", 1},
        {"inverse_time:decay_steps=10,decay_rate=0.5,staircase=true", NULL, "tmp_4", 1},
        {"polynomial:decay_steps=10", NULL, "tmp_5", 1},
        {"polynomial:decay_steps=10,cycle=true", NULL, "tmp_8", 2},
        {"noam:d_model=64,warmup_steps=10", NULL, "tmp_3", 1},
        {"cosine:step_each_epoch=10,epochs=3", NULL, "tmp_4", 1},
        {"cosine:step_each_epoch=10,epochs=3", "warmup_steps=5,start_lr=0,end_lr=0.1",
         "learning_rate_warmup", 3},
        {NULL, "warmup_steps=5,start_lr=0,end_lr=0.1", "learning_rate_warmup", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pdt_ctx ctx;
        ctx_with_net(&ctx);
        ctx.optim.optimizer = "sgd:lr=0.1";
        ctx.optim.lr_schedule = cases[i].spec;
        ctx.optim.lr_warmup = cases[i].warmup;
        ck_assert_int_eq(opt_validate_specs(NULL, &ctx), PDT_OK);
        ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_OK);
        ck_assert_int_eq(pass_optimizer(&ctx), PDT_OK);
        ck_assert_uint_eq(ctx.main->n_blocks, cases[i].blocks);
        const ir_block *b = ir_program_block(ctx.main, 0);
        ck_assert_str_eq(in1(b->ops[b->n_ops - 1], "LearningRate"), cases[i].lr);
        ck_assert_uint_eq(pdt_verify(ctx.main, "main", NULL), 0);
        if (cases[i].warmup) {
            ctx.optim.lr_schedule = NULL;
            ck_assert_int_eq(pass_lr_schedule(&ctx), PDT_EBADINPUT);
        }
        pdt_ctx_free(&ctx);
    }
    pdt_ctx ctx;
    ctx_with_net(&ctx);
    ctx.optim.optimizer = "sgd";
    ctx.optim.lr_schedule = "noam:d_model=64,warmup_steps=10";
    ctx.optim.lr_warmup = "warmup_steps=5,start_lr=0,end_lr=0.1,lr=1";
    ck_assert_int_eq(opt_validate_specs(NULL, &ctx), PDT_EUSAGE);
    ctx.optim.lr_warmup = "warmup_steps=5,start_lr=0";
    ck_assert_int_eq(opt_validate_specs(NULL, &ctx), PDT_EUSAGE);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(table_says_which_accumulators_are_sliced)
{
    static const struct {
        const char *op, *slot;
        int sliced;
    } cases[] = {
        {"sgd", "", 0},          {"sgd", "Param", 0},
        {"adam", "Moment1", 1},  {"adam", "Moment2", 1},
        {"adam", "Beta1Pow", 0}, {"adam", "Beta2Pow", 0},
        {"adam", "Grad", 0},     {"adamax", "Moment", 1},
        {"adamax", "InfNorm", 1}, {"adamax", "Beta1Pow", 0},
        {"adagrad", "Moment", 1}, {"decayed_adagrad", "Moment", 1},
        {"momentum", "Velocity", 1}, {"lars_momentum", "Velocity", 1},
        {"rmsprop", "Moment", 1}, {"rmsprop", "MeanSquare", 1},
        {"rmsprop", "MeanGrad", 1}, {"ftrl", "SquaredAccumulator", 1},
        {"ftrl", "LinearAccumulator", 1}, {"ftrl", "LearningRate", 0},
        {"lamb", "Moment1", -1}, {"mul", "", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        ck_assert_msg(opt_accumulator_sliced(cases[i].op, cases[i].slot) == cases[i].sliced,
                      "%s %s", cases[i].op, cases[i].slot);
    size_t n;
    const opt_def *all = opt_defs(&n);
    ck_assert_uint_eq(n, 9);
    for (size_t i = 0; i < n; i++)
        ck_assert_ptr_eq(opt_def_by_kind(all[i].kind), &all[i]);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("optimizer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, spec_defaults_alias_and_lists);
    tcase_add_test(tc, spec_errors_are_usage_errors);
    tcase_add_test(tc, optimizer_check_keys);
    tcase_add_test(tc, clip_and_regularization_specs);
    tcase_add_test(tc, py_float_repr);
    tcase_add_test(tc, namer_continues_past_existing_names);
    tcase_add_test(tc, sgd_sorted_with_startup_prepended);
    tcase_add_test(tc, adam_accumulators);
    tcase_add_test(tc, adamax_finish_scales);
    tcase_add_test(tc, adam_before_17_scales_powers);
    tcase_add_test(tc, refuses_program_with_optimizer_ops);
    tcase_add_test(tc, no_gradients_is_an_error);
    tcase_add_test(tc, clip_then_l2_then_sgd);
    tcase_add_test(tc, global_norm_clip_shares_one_scale);
    tcase_add_test(tc, norm_clip_and_l1);
    tcase_add_test(tc, selected_rows_grad_gets_newgrad);
    tcase_add_test(tc, params_filter_and_optimizer_name);
    tcase_add_test(tc, param_device_follows_first_reader);
    tcase_add_test(tc, exponential_schedule_feeds_optimizer);
    tcase_add_test(tc, piecewise_schedule_builds_sub_blocks);
    tcase_add_test(tc, every_schedule_and_warmup);
    tcase_add_test(tc, table_says_which_accumulators_are_sliced);
    suite_add_tcase(s, tc);
    return s;
}
