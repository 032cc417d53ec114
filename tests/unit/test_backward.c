/* test_backward.c - the append_backward / calc_gradient passes and the grad
 * maker registry, on programs built through ir.h.  Each test names the seed
 * function (../shared/seeds/backward.py.txt) whose behaviour it checks. */
#include "unit.h"

#include "grad/grad.h"
#include "io/pdio.h"
#include "passes/pass.h"

static ir_var *mkvar(ir_block *b, const char *name, bool stop, bool param)
{
    ir_var *v = ir_block_var(b, name);
    int64_t dims[2] = {-1, 4};
    ir_var_set_dims(b->program, v, dims, 2);
    v->has_stop_gradient = stop;
    v->stop_gradient = stop;
    v->has_is_parameter = param;
    v->is_parameter = param;
    return v;
}

static ir_op *mkop(ir_block *b, const char *type, const char *in_slot, const char *in,
                   const char *out_slot, const char *out)
{
    ir_op *op = ir_block_append_op(b, type);
    if (in_slot)
        ir_op_set_input1(op, in_slot, in);
    if (out_slot)
        ir_op_set_output1(op, out_slot, out);
    ir_op_set_role(op, 0);
    return op;
}

/* x (data) -> mul(w) -> h -> relu -> a ; h -> scale -> b ; add(a, b) -> c ; mean -> loss */
static ir_program *two_consumers(void)
{
    ir_program *p = ir_program_new();
    ir_block *b = ir_program_add_block(p, -1);
    mkvar(b, "x", true, false);
    mkvar(b, "w", false, true);
    const char *names[] = {"h", "a", "b", "c", "loss"};
    for (size_t i = 0; i < 5; i++)
        mkvar(b, names[i], false, false);
    ir_op *mul = mkop(b, "mul", "X", "x", "Out", "h");
    ir_op_set_input1(mul, "Y", "w");
    mkop(b, "relu", "X", "h", "Out", "a");
    ir_op *sc = mkop(b, "scale", "X", "h", "Out", "b");
    ir_op_set_float(sc, "scale", 2.0f);
    ir_op *add = mkop(b, "elementwise_add", "X", "a", "Out", "c");
    ir_op_set_input1(add, "Y", "b");
    mkop(b, "mean", "X", "c", "Out", "loss");
    return p;
}

static pdt_ctx run(ir_program *p, const char *loss, const char *no_grad, int *rc)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = p;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = loss;
    ctx.backward.no_grad = pdt_list_split(no_grad);
    const char *pass = "append_backward";
    *rc = pdt_run_pipeline(&ctx, &pass, 1);
    return ctx;
}

static const char *types(const ir_block *b, size_t from, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (size_t i = from; i < b->n_ops; i++) {
        g_strlcat(buf, b->ops[i]->type, cap);
        if (i + 1 < b->n_ops)
            g_strlcat(buf, " ", cap);
    }
    return buf;
}

/* _addup_repetitive_outputs_: two writers of h@GRAD are renamed and summed
 * just before the reader. */
START_TEST(test_sum_of_repeated_grads)
{
    int rc;
    pdt_ctx ctx = run(two_consumers(), "loss", NULL, &rc);
    ck_assert_int_eq(rc, PDT_OK);
    ir_block *b = ctx.main->blocks[0];
    char buf[512];
    ck_assert_str_eq(types(b, 5, buf, sizeof buf),
                     "fill_constant mean_grad elementwise_add_grad scale relu_grad sum mul_grad");
    ir_op *sum = b->ops[10];
    const ir_slot *x = ir_op_input(sum, "X");
    ck_assert_uint_eq(x->n_args, 2);
    ck_assert_str_eq(x->args[0], "h@GRAD@RENAME@block0@0");
    ck_assert_str_eq(x->args[1], "h@GRAD@RENAME@block0@1");
    ck_assert_str_eq(ir_op_output1(sum, "Out"), "h@GRAD");
    ck_assert_int_eq(ir_op_role(sum), IR_ROLE_BACKWARD);
    ck_assert_int_eq(ir_op_role(b->ops[4]), IR_ROLE_LOSS);
    ck_assert_int_eq(ir_op_role(b->ops[5]), IR_ROLE_LOSS | IR_ROLE_BACKWARD);
    ck_assert_uint_eq(ctx.bw_params.n, 1);
    ck_assert_str_eq(ctx.bw_grads.items[0], "w@GRAD");
    const ir_attr *rv = ir_op_attr(b->ops[11], "op_role_var");
    ck_assert_ptr_nonnull(rv);
    ck_assert_uint_eq(rv->n_strings, 2);
    ck_assert(ir_block_find_var(b, "h@GRAD@RENAME@block0@1") != NULL);
    pdt_ctx_free(&ctx);
}
END_TEST

/* _find_op_path_ with a no-grad var: the scale op leaves the path. */
START_TEST(test_no_grad_leaves_path)
{
    int rc;
    pdt_ctx ctx = run(two_consumers(), "loss", "b", &rc);
    ck_assert_int_eq(rc, PDT_OK);
    char buf[512];
    ck_assert_str_eq(types(ctx.main->blocks[0], 5, buf, sizeof buf),
                     "fill_constant mean_grad elementwise_add_grad relu_grad mul_grad");
    const ir_slot *yg = ir_op_output(ctx.main->blocks[0]->ops[7], "Y@GRAD");
    ck_assert_ptr_nonnull(yg);
    ck_assert_uint_eq(yg->n_args, 0);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(test_errors)
{
    int rc;
    pdt_ctx ctx = run(two_consumers(), "nope", NULL, &rc);
    ck_assert_int_eq(rc, PDT_EBADINPUT);
    ck_assert_uint_eq(ctx.main->blocks[0]->n_ops, 5);
    pdt_ctx_free(&ctx);

    ir_program *p = two_consumers();
    p->blocks[0]->ops[1]->type = ir_intern("mystery_op");
    ctx = run(p, "loss", NULL, &rc);
    ck_assert_int_eq(rc, PDT_EBADINPUT);
    pdt_ctx_free(&ctx);
}
END_TEST

START_TEST(test_strip_suffix)
{
    ck_assert_str_eq(grad_strip_suffix("x@GRAD"), "x");
    ck_assert_str_eq(grad_strip_suffix("x@GRAD@GRAD"), "x");
    ck_assert_str_eq(grad_strip_suffix("y@GRAD@RENAME@1"), "y");
    ck_assert_str_eq(grad_strip_suffix("z@GRAD_slice_0@GRAD"), "z@GRAD_slice_0");
    ck_assert_str_eq(grad_strip_suffix("grad/grad/z@GRAD@RENAME@block0@1@GRAD"), "z");
    ck_assert_str_eq(grad_strip_suffix("plain"), "plain");
}
END_TEST

/* Every op type of grad-ops.md and of the real programs has a registry
 * entry (a maker or "no gradient"); the Lite / custom ops do not. */
START_TEST(test_registry_coverage)
{
    const char *known[] = {
        "mul", "matmul", "matmul_v2", "elementwise_add", "elementwise_sub", "elementwise_mul",
        "elementwise_div", "elementwise_max", "mean", "reduce_sum", "reduce_mean", "sum",
        "scale", "square", "sqrt", "exp", "log", "relu", "leaky_relu", "sigmoid", "tanh",
        "gelu", "softmax", "log_softmax", "cross_entropy", "cross_entropy2",
        "softmax_with_cross_entropy", "sigmoid_cross_entropy_with_logits", "conv2d",
        "depthwise_conv2d", "conv2d_transpose", "pool2d", "batch_norm", "layer_norm",
        "dropout", "lookup_table", "lookup_table_v2", "concat", "split", "slice", "reshape2",
        "transpose2", "flatten_contiguous_range", "squeeze2", "unsqueeze2", "stack", "gather",
        "cast", "assign", "sequence_pool", "sequence_conv", "top_k", "increment", "fc",
        "accuracy", "fill_constant", "uniform_random", "gaussian_random", "shape",
        "less_than", "feed", "fetch", "affine_channel", "arg_max", "box_coder", "clip",
        "crf_decoding", "data_norm", "fake_dequantize_max_abs",
        "fake_quantize_dequantize_moving_average_abs_max",
        "fake_quantize_moving_average_abs_max", "gru", "hard_sigmoid", "hard_swish",
        "log_loss", "multiclass_nms", "multiclass_nms3", "nearest_interp",
        "nearest_interp_v2", "prior_box", "reciprocal", "relu6", "reshape", "sgd", "swish",
        "conditional_block", "while", "lstm", "warpctc", "im2sequence", "ctc_align",
        "create_double_buffer_reader", "gen_nccl_id", "fl_listen_and_serv"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        ck_assert_msg(grad_maker_find(known[i]) != NULL, "no registry entry for %s", known[i]);
    ck_assert_ptr_null(grad_maker_find("io_copy"));
    ck_assert_ptr_null(grad_maker_find("layout"));
    ck_assert_ptr_null(grad_maker_find("gap"));
    ck_assert_int_eq(grad_maker_find("fill_constant")->kind, GM_NONE);
    ck_assert_int_eq(grad_maker_find("mul")->kind, GM_SPEC);
}
END_TEST

/* calc_gradient: fill_any_like ones for the target, grads for the inputs. */
START_TEST(test_calc_gradient)
{
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = two_consumers();
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.targets = pdt_list_split("c");
    ctx.backward.inputs = pdt_list_split("w,x");
    const char *pass = "calc_gradient";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    char buf[512];
    ck_assert_str_eq(types(ctx.main->blocks[0], 5, buf, sizeof buf),
                     "fill_any_like elementwise_add_grad scale relu_grad sum mul_grad");
    ck_assert_uint_eq(ctx.bw_grads.n, 2);
    ck_assert_str_eq(ctx.bw_grads.items[0], "w@GRAD");
    ck_assert_ptr_null(ctx.bw_grads.items[1]);
    ck_assert_double_eq(ir_op_get_float(ctx.main->blocks[0]->ops[5], "value", 0), 1.0);
    pdt_ctx_free(&ctx);
}
END_TEST

static bool same_slots(const ir_slot *a, size_t na, const ir_slot *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        const ir_slot *m = NULL;
        for (size_t k = 0; k < nb && !m; k++)
            if (b[k].name == a[i].name)
                m = &b[k];
        if (!m || m->n_args != a[i].n_args)
            return false;
        for (size_t k = 0; k < m->n_args; k++)
            if (m->args[k] != a[i].args[k])
                return false;
    }
    return true;
}

/* Real Paddle output: the PaddleFL trainer program was written by Paddle
 * 1.8 with its backward.  Cut it back to the forward ops (those before the
 * loss-grad fill_constant), drop the @GRAD vars, restore the stop_gradient
 * of the data vars (the saved file lost it) and run append_backward: every
 * grad op must come out with Paddle's type, slots and arguments, and every
 * grad var with Paddle's dtype and dims. */
START_TEST(test_reproduces_paddle_fl_trainer)
{
    const char *dir = unit_shared_dir();
    if (!dir)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/fl_trainer_main_sgd_train.pdmodel", dir);
    ir_program *orig = pdio_read(path), *p = pdio_read(path);
    ck_assert_ptr_nonnull(orig);
    ck_assert_ptr_nonnull(p);
    ir_block *b = p->blocks[0];
    size_t cut = 0;
    while (cut < b->n_ops && ir_op_role(b->ops[cut]) != (IR_ROLE_BACKWARD | IR_ROLE_LOSS))
        cut++;
    ck_assert_uint_lt(cut, b->n_ops);
    ir_block_splice(b, cut, b->n_ops - cut, NULL, 0);
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && strstr(b->vars[i]->name, "@GRAD"))
            ir_block_remove_var(b, b->vars[i]->name);
    const char *data[] = {"0", "1", "2", "label"};
    for (size_t i = 0; i < 4; i++)
        ir_block_find_var(b, data[i])->stop_gradient = true;
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    ctx.main = p;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = "reduce_mean_0.tmp_0";
    /* The file does not mark its parameters is_parameter: name them. */
    ctx.backward.params = pdt_list_split("fc_0.b_0,fc_0.w_0,fc_1.b_0,fc_1.w_0,fc_2.b_0,fc_2.w_0");
    const char *pass = "append_backward";
    ck_assert_int_eq(pdt_run_pipeline(&ctx, &pass, 1), PDT_OK);
    const ir_block *ob = orig->blocks[0];
    size_t k = cut;
    for (size_t i = cut; i < ob->n_ops; i++) {
        const ir_op *want = ob->ops[i];
        if (!(ir_op_role(want) & IR_ROLE_BACKWARD))
            continue;
        ck_assert_uint_lt(k, b->n_ops);
        const ir_op *got = b->ops[k++];
        ck_assert_str_eq(got->type, want->type);
        ck_assert_msg(same_slots(ir_op_ins(want), want->n_inputs, ir_op_ins(got), got->n_inputs),
                      "inputs of grad op %zu '%s' differ", i, want->type);
        ck_assert_msg(same_slots(ir_op_outs(want), want->n_outputs, ir_op_outs(got), got->n_outputs),
                      "outputs of grad op %zu '%s' differ", i, want->type);
        ck_assert_int_eq(ir_op_role(got), ir_op_role(want));
        const ir_attr *rw = ir_op_attr(want, "op_role_var"), *rg = ir_op_attr(got, "op_role_var");
        size_t nw = rw && rw->type == IR_ATTR_STRINGS ? rw->n_strings : 0;
        size_t ng = rg && rg->type == IR_ATTR_STRINGS ? rg->n_strings : 0;
        ck_assert_uint_eq(ng, nw);
        for (size_t s = 0; s < nw; s++)
            ck_assert(rw->strings[s].len == rg->strings[s].len &&
                      memcmp(rw->strings[s].data, rg->strings[s].data, rw->strings[s].len) == 0);
    }
    ck_assert_uint_eq(k, b->n_ops);
    size_t n_grad = 0;
    for (size_t i = 0; i < ob->n_vars; i++) {
        const ir_var *w = ob->vars[i];
        if (w->removed || !strstr(w->name, "@GRAD"))
            continue;
        const ir_var *g = ir_block_find_var(b, w->name);
        ck_assert_msg(g != NULL, "grad var %s missing", w->name);
        ck_assert_int_eq(g->type, w->type);
        ck_assert_int_eq(g->dtype, w->dtype);
        ck_assert_uint_eq(g->n_dims, w->n_dims);
        for (size_t d = 0; d < w->n_dims; d++)
            ck_assert_int_eq(g->dims[d], w->dims[d]);
        n_grad++;
    }
    ck_assert_uint_eq(n_grad, 18);
    ck_assert_uint_eq(ctx.bw_params.n, 6);
    pdt_ctx_free(&ctx);
    ir_program_free(orig);
}
END_TEST

/* The grad makers cache interned names (grad names, stripped names, grad
 * types, parsed rows, the type index).  After ir_intern_shutdown every
 * name is new, so the same run must give the same result, not stale
 * pointers.  (Runs last: it drops every interned name.) */
START_TEST(test_caches_survive_intern_shutdown)
{
    char before[512], after[512];
    for (int round = 0; round < 2; round++) {
        int rc;
        pdt_ctx ctx = run(two_consumers(), "loss", NULL, &rc);
        ck_assert_int_eq(rc, PDT_OK);
        ir_block *b = ctx.main->blocks[0];
        types(b, 5, round ? after : before, sizeof before);
        ck_assert_str_eq(ir_op_output1(b->ops[b->n_ops - 1], "Y@GRAD"), "w@GRAD");
        ck_assert_str_eq(grad_strip_suffix(grad_name("w")), "w");
        ck_assert_ptr_eq(grad_maker_find("relu"), grad_maker_find(ir_intern("relu")));
        pdt_ctx_free(&ctx);
        ir_intern_shutdown();
    }
    ck_assert_str_eq(before, after);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("backward");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_sum_of_repeated_grads);
    tcase_add_test(tc, test_no_grad_leaves_path);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_strip_suffix);
    tcase_add_test(tc, test_registry_coverage);
    tcase_add_test(tc, test_calc_gradient);
    tcase_add_test(tc, test_reproduces_paddle_fl_trainer);
    tcase_add_test(tc, test_caches_survive_intern_shutdown);
    suite_add_tcase(s, tc);
    return s;
}
