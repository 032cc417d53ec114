/* test_collective.c - --mode=collective (collective.c):
 * ring assignment and op placement of GradAllReduce and LocalSGD on small
 * hand-built blocks, the startup's parameter order, and the pass-level
 * guards.  The golden cases transpile_collective* hold whole outputs. */
#include <glib.h>

#include "io/pdio.h"
#include "cli/cli.h"
#include "passes/pass.h"
#include "passes/transpile/builders.h"
#include "unit.h"

static ir_program *new_prog(void)
{
    ir_program *p = ir_program_new();
    ir_program_add_block(p, -1);
    return p;
}

static void tensor(ir_block *b, const char *name, int dtype, int64_t d0, bool param)
{
    ir_var *v = tp_create_var(b, name, IR_LOD_TENSOR, dtype, &d0, 1, -1, param ? 1 : -1);
    v->has_is_parameter = param;
    v->is_parameter = param;
}

/* An op writing `out` with role `role` and op_role_var `rv` (n names). */
static ir_op *op_rv(ir_block *b, const char *type, int role, const char *out,
                    const char *const *rv, size_t n)
{
    ir_op *op = ir_block_append_op(b, type);
    if (out)
        ir_op_set_output1(op, "Out", out);
    ir_op_set_role(op, role);
    if (rv)
        ir_op_set_strings(op, "op_role_var", rv, n);
    return op;
}

static ir_op *update_op(ir_block *b, const char *param)
{
    ir_op *op = ir_block_append_op(b, "sgd");
    ir_op_set_input1(op, "Param", param);
    ir_op_set_input1(op, "Grad", ir_internf("%s@GRAD", param));
    ir_op_set_input1(op, "LearningRate", "lr");
    ir_op_set_output1(op, "ParamOut", param);
    ir_op_set_role(op, IR_ROLE_OPTIMIZE);
    return op;
}

/* Asserts op k is `type` on X=Out=`var` (when var) with ring_id `ring`
 * (when ring >= 0, else none). */
static void expect(const ir_block *b, size_t k, const char *type, const char *var, int ring)
{
    ck_assert_uint_lt(k, b->n_ops);
    const ir_op *op = b->ops[k];
    ck_assert_msg(op->type == ir_intern(type), "op %zu is '%s', not '%s'", k, op->type, type);
    if (var) {
        ck_assert_str_eq(ir_op_input1(op, "X"), var);
        ck_assert_str_eq(ir_op_output1(op, "Out"), var);
    }
    if (ring >= 0)
        ck_assert_int_eq(ir_op_get_int(op, "ring_id", -1), ring);
    else
        ck_assert(!ir_op_has_attr(op, "ring_id"));
}

START_TEST(allreduce_rings_follow_the_backward_walk)
{
    ir_program *p = new_prog();
    ir_block *b = p->blocks[0];
    for (int i = 0; i < 5; i++) {
        tensor(b, ir_internf("p%d", i), IR_FP32, 4, true);
        tensor(b, ir_internf("p%d@GRAD", i), IR_FP32, 4, false);
    }
    static const char *const rv0[] = {"p0", "p0@GRAD"};
    static const char *const rv1[] = {"p1", "p1@GRAD", "p2", "p2@GRAD", "p3", "p3@GRAD"};
    static const char *const rv4[] = {"p4", "p4@GRAD"};
    op_rv(b, "g0", IR_ROLE_BACKWARD, "p0@GRAD", rv0, 2);
    op_rv(b, "g1", IR_ROLE_BACKWARD, "p1@GRAD", rv1, 6);
    op_rv(b, "fwd", IR_ROLE_FORWARD, "p2", rv4, 2);    /* not Backward: ignored */
    op_rv(b, "bw", IR_ROLE_BACKWARD, "p3@GRAD", NULL, 0);
    op_rv(b, "g4", IR_ROLE_BACKWARD | IR_ROLE_LOSS, "p4@GRAD", rv4, 2);
    update_op(b, "p0");
    update_op(b, "p1");
    tp_coll_insert_allreduce(b, 3);
    /* Walk: g4 takes ring 0; g1's pairs rings 1, 2, 0; g0 ring 1. */
    size_t k = 0;
    expect(b, k++, "g0", NULL, -1);
    expect(b, k++, "c_sync_calc_stream", "p0@GRAD", -1);
    expect(b, k++, "c_allreduce_sum", "p0@GRAD", 1);
    expect(b, k++, "g1", NULL, -1);
    expect(b, k++, "c_sync_calc_stream", "p1@GRAD", -1);
    expect(b, k++, "c_allreduce_sum", "p3@GRAD", 0);
    expect(b, k++, "c_allreduce_sum", "p2@GRAD", 2);
    expect(b, k++, "c_allreduce_sum", "p1@GRAD", 1);
    expect(b, k++, "fwd", NULL, -1);
    expect(b, k++, "bw", NULL, -1);
    expect(b, k++, "g4", NULL, -1);
    expect(b, k++, "c_sync_calc_stream", "p4@GRAD", -1);
    expect(b, k++, "c_allreduce_sum", "p4@GRAD", 0);
    for (int r = 0; r < 3; r++)
        expect(b, k++, "c_sync_comm_stream", "p0@GRAD", r);
    expect(b, k++, "sgd", NULL, -1);
    expect(b, k++, "sgd", NULL, -1);
    ck_assert_uint_eq(k, b->n_ops);
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strncmp(b->ops[i]->type, "c_", 2)) {
            ck_assert_int_eq(ir_op_role(b->ops[i]), IR_ROLE_BACKWARD);
            ck_assert(!ir_op_has_attr(b->ops[i], "op_role_var"));
        }
    ir_program_free(p);
}
END_TEST

START_TEST(no_grads_or_no_optimizer_means_no_comm_sync)
{
    /* Optimize ops but no op_role_var: nothing at all is inserted. */
    ir_program *p = new_prog();
    ir_block *b = p->blocks[0];
    tensor(b, "p0", IR_FP32, 4, true);
    op_rv(b, "bw", IR_ROLE_BACKWARD, "p0", NULL, 0);
    update_op(b, "p0");
    tp_coll_insert_allreduce(b, 2);
    ck_assert_uint_eq(b->n_ops, 2);
    ir_program_free(p);

    /* Grads but no Optimize op: the allreduces, no comm-stream sync. */
    p = new_prog();
    b = p->blocks[0];
    tensor(b, "p0", IR_FP32, 4, true);
    tensor(b, "p0@GRAD", IR_FP32, 4, false);
    static const char *const rv[] = {"p0", "p0@GRAD"};
    op_rv(b, "g0", IR_ROLE_BACKWARD, "p0@GRAD", rv, 2);
    tp_coll_insert_allreduce(b, 2);
    ck_assert_uint_eq(b->n_ops, 3);
    expect(b, 2, "c_allreduce_sum", "p0@GRAD", 0);
    ir_program_free(p);
}
END_TEST

START_TEST(loss_grad_scale_uses_first_output_by_slot_name)
{
    ir_program *p = new_prog();
    ir_block *b = p->blocks[0];
    tensor(b, "a", IR_FP32, 1, false);
    tensor(b, "z", IR_FP32, 1, false);
    ir_op *l0 = op_rv(b, "fill_constant", IR_ROLE_BACKWARD | IR_ROLE_LOSS, "z", NULL, 0);
    ir_op_set_output1(l0, "A", "a");    /* slot A sorts before Out */
    op_rv(b, "mean_grad", IR_ROLE_BACKWARD, "z", NULL, 0);
    op_rv(b, "fill_constant", IR_ROLE_LOSS, "z", NULL, 0);     /* Loss alone: no */
    op_rv(b, "fill_constant", IR_ROLE_BACKWARD | IR_ROLE_LOSS, "z", NULL, 0);
    tp_coll_scale_loss_grads(b, 1.0 / 4);
    ck_assert_uint_eq(b->n_ops, 6);
    expect(b, 1, "scale", "a", -1);
    ck_assert_float_eq(ir_op_get_float(b->ops[1], "scale", 0), 0.25f);
    ck_assert_int_eq(ir_op_role(b->ops[1]), IR_ROLE_BACKWARD);
    /* Operator writes the dispensable input Python leaves out, empty. */
    const ir_slot *st = ir_op_input(b->ops[1], "ScaleTensor");
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(st->n_args, 0);
    ck_assert_uint_eq(b->ops[1]->n_inputs, 2);
    ck_assert_uint_eq(b->ops[1]->n_attrs, 2);     /* op_role, scale: no defaults */
    expect(b, 5, "scale", "z", -1);
    ir_program_free(p);
}
END_TEST

START_TEST(local_sgd_rings_and_tail)
{
    ir_program *p = new_prog();
    ir_block *b = p->blocks[0];
    tensor(b, "lr", IR_FP32, 1, false);
    tensor(b, "a", IR_FP16, 8, true);
    tensor(b, "b", IR_FP32, 4, true);
    tensor(b, "c", IR_FP32, 2, true);
    update_op(b, "a");
    op_rv(b, "scale", IR_ROLE_OPTIMIZE, "lr", NULL, 0);
    update_op(b, "b");
    update_op(b, "c");
    tp_coll_local_sgd_main(b, 2, 2);
    /* Walk: c ring 0, b ring 1, a ring 0; syncs on `a`, the walk's last. */
    static const struct { const char *param; int ring; size_t at; } ar[] = {
        {"a", 0, 0}, {"b", 1, 5}, {"c", 0, 9}};
    for (size_t i = 0; i < 3; i++) {
        size_t k = ar[i].at;
        expect(b, k, "sgd", NULL, -1);
        ck_assert_str_eq(ir_op_input1(b->ops[k + 1], "X"), ir_internf("%s@SNAPSHOT", ar[i].param));
        ck_assert_str_eq(ir_op_input1(b->ops[k + 1], "Y"), ar[i].param);
        expect(b, k + 2, "c_sync_calc_stream", ar[i].param, -1);
        expect(b, k + 3, "c_allreduce_sum", ar[i].param, ar[i].ring);
    }
    expect(b, 4, "scale", NULL, -1);
    expect(b, 13, "c_sync_comm_stream", "a", 0);
    expect(b, 14, "c_sync_comm_stream", "a", 1);
    static const char *const order[] = {"a", "b", "c"};
    for (size_t i = 0; i < 3; i++) {
        size_t k = 15 + 3 * i;
        expect(b, k, "scale", order[i], -1);
        ck_assert_float_eq(ir_op_get_float(b->ops[k], "scale", 0), 0.5f);
        ck_assert_ptr_nonnull(ir_op_input(b->ops[k], "ScaleTensor"));
        ck_assert_uint_eq(ir_op_input(b->ops[k], "ScaleTensor")->n_args, 0);
        ck_assert(b->ops[k + 1]->type == ir_intern("elementwise_sub"));
        ck_assert(b->ops[k + 2]->type == ir_intern("assign"));
        ck_assert_str_eq(ir_op_output1(b->ops[k + 2], "Out"), ir_internf("%s@SNAPSHOT", order[i]));
    }
    ck_assert_uint_eq(b->n_ops, 24);
    for (size_t i = 0; i < b->n_ops; i++)
        ck_assert_int_eq(ir_op_role(b->ops[i]), IR_ROLE_OPTIMIZE);
    const ir_var *snap = ir_block_find_var(b, "a@SNAPSHOT");
    ck_assert_ptr_nonnull(snap);
    ck_assert_int_eq(snap->dtype, IR_FP16);
    ck_assert_uint_eq(snap->n_dims, 1);
    ck_assert_int_eq(snap->dims[0], 8);
    ck_assert(snap->persistable && snap->has_stop_gradient && snap->stop_gradient);
    ir_program_free(p);
}
END_TEST

START_TEST(local_sgd_without_update_ops_adds_nothing)
{
    ir_program *p = new_prog();
    ir_block *b = p->blocks[0];
    tensor(b, "a", IR_FP32, 4, true);
    op_rv(b, "relu", IR_ROLE_FORWARD, "a", NULL, 0);
    tp_coll_local_sgd_main(b, 2, 2);
    ck_assert_uint_eq(b->n_ops, 1);
    ir_program_free(p);
}
END_TEST

START_TEST(startup_params_and_broadcast_rings)
{
    ir_program *m = new_prog(), *s = new_prog();
    ir_block *mb = m->blocks[0], *sb = s->blocks[0];
    tensor(mb, "lr", IR_FP32, 1, false);
    tensor(mb, "w_main", IR_FP32, 4, true);    /* marked in main only */
    tensor(mb, "u", IR_FP32, 4, false);        /* an optimizer's Param only */
    tensor(mb, "x", IR_FP32, 4, false);
    tensor(mb, "r", IR_FP32, 4, false);        /* named in an op_role_var only */
    tensor(mb, "r@GRAD", IR_FP32, 4, false);
    static const char *const rv[] = {"r", "r@GRAD"};
    op_rv(mb, "mul_grad", IR_ROLE_BACKWARD, "r@GRAD", rv, 2);
    update_op(mb, "u");
    tensor(sb, "x", IR_FP32, 4, false);        /* not a parameter */
    tensor(sb, "w_main", IR_FP32, 4, false);
    tensor(sb, "u", IR_FP16, 6, false);        /* its snapshot takes FP16 [6] */
    tensor(sb, "b_start", IR_FP32, 4, true);   /* marked in the startup */
    tensor(sb, "r", IR_FP32, 4, false);
    tensor(sb, "r@GRAD", IR_FP32, 4, false);   /* a grad: not a parameter */
    tensor(sb, "nccl_id_0", IR_FP32, 1, false);    /* taken: ids skip it */
    GPtrArray *params = tp_coll_startup_params(m, s);
    ck_assert_uint_eq(params->len, 4);
    ck_assert_str_eq(params->pdata[0], "b_start");
    ck_assert_str_eq(params->pdata[1], "r");
    ck_assert_str_eq(params->pdata[2], "u");
    ck_assert_str_eq(params->pdata[3], "w_main");
    static const char *const others[] = {"h:1", "h:3"};
    tp_coll_startup(sb, params, 3, 1, 2, "h:2", others, 2, true);
    size_t k = 0;
    for (int r = 0; r < 2; r++) {
        const char *id = ir_internf("nccl_id_%d", r + 1);
        ck_assert(sb->ops[k]->type == ir_intern("c_gen_nccl_id"));
        ck_assert_str_eq(ir_op_output1(sb->ops[k], "Out"), id);
        ck_assert_int_eq(ir_op_get_int(sb->ops[k], "rank", -1), 1);
        ck_assert_str_eq(ir_op_get_string(sb->ops[k], "endpoint"), "h:2");
        k++;
        ck_assert(sb->ops[k]->type == ir_intern("c_comm_init"));
        ck_assert_str_eq(ir_op_input1(sb->ops[k], "X"), id);
        ck_assert_uint_eq(sb->ops[k]->n_outputs, 0);
        ck_assert_int_eq(ir_op_get_int(sb->ops[k], "nranks", -1), 3);
        ck_assert_int_eq(ir_op_get_int(sb->ops[k], "ring_id", -1), r);
        k++;
        ck_assert_int_eq(ir_block_find_var(sb, id)->type, IR_RAW);
    }
    expect(sb, k++, "c_broadcast", "b_start", 0);
    expect(sb, k++, "c_broadcast", "r", 1);
    expect(sb, k++, "c_broadcast", "u", 0);
    expect(sb, k++, "c_broadcast", "w_main", 1);
    ck_assert_int_eq(ir_op_get_int(sb->ops[k - 1], "root", -1), 0);
    expect(sb, k++, "c_sync_comm_stream", "w_main", 0);
    expect(sb, k++, "c_sync_comm_stream", "w_main", 1);
    for (guint i = 0; i < params->len; i++, k++) {
        ck_assert(sb->ops[k]->type == ir_intern("assign"));
        ck_assert_str_eq(ir_op_output1(sb->ops[k], "Out"),
                         ir_internf("%s@SNAPSHOT", (const char *)params->pdata[i]));
        /* Paddle's startup create_var passes no dtype; the assign's
         * var-type inference gives the snapshot the param's. */
        const ir_var *param = ir_block_find_var(sb, params->pdata[i]);
        const ir_var *snap = ir_block_find_var(sb, ir_op_output1(sb->ops[k], "Out"));
        ck_assert_int_eq(snap->dtype, param->dtype);
        ck_assert_uint_eq(snap->n_dims, 1);
        ck_assert_int_eq(snap->dims[0], param->dims[0]);
    }
    ck_assert_int_eq(ir_block_find_var(sb, "u@SNAPSHOT")->dtype, IR_FP16);
    ck_assert_int_eq(ir_block_find_var(sb, "u@SNAPSHOT")->dims[0], 6);
    ck_assert_uint_eq(k, sb->n_ops);
    g_ptr_array_free(params, TRUE);
    ir_program_free(m);
    ir_program_free(s);

    /* No parameters: no broadcast and no stream sync. */
    m = new_prog();
    s = new_prog();
    params = tp_coll_startup_params(m, s);
    tp_coll_startup(s->blocks[0], params, 2, 0, 1, "h:1", others, 1, false);
    ck_assert_uint_eq(s->blocks[0]->n_ops, 2);
    g_ptr_array_free(params, TRUE);
    ir_program_free(m);
    ir_program_free(s);
}
END_TEST

START_TEST(spmt_hosts_decide_the_communicator)
{
    static const struct { const char *eps, *ep; const char *op; int nranks; } cases[] = {
        {"[::1]:1,[::1]:2", "[::1]:2", "c_comm_init_all", 1},  /* one IPv6 host */
        {"[::1]:1,[::2]:1", "[::2]:1", "c_comm_init_multitrainer", 2},
        {"a:1", "a:1", "c_comm_init_all", 1},
        {"a:1,b:1,a:2", "a:2", "c_comm_init_multitrainer", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        ir_program *s = new_prog();
        pdt_list eps = pdt_list_split(cases[i].eps);
        int nranks = -1;
        tp_spmt_startup(s->blocks[0], &eps, ir_intern(cases[i].ep), 1, &nranks);
        ck_assert_int_eq(nranks, cases[i].nranks);
        const ir_block *b = s->blocks[0];
        ck_assert(b->ops[b->n_ops - 1]->type == ir_intern(cases[i].op));
        if (cases[i].nranks > 1) {
            const ir_op *init = b->ops[1];
            ck_assert_int_eq(ir_op_get_int(init, "ntrainers", -1), (int)eps.n);
            ck_assert_int_eq(ir_op_get_int(init, "trainer_id", -1), 1);
            const ir_attr *o = ir_op_attr(b->ops[0], "other_endpoints");
            ck_assert_uint_eq(o->n_strings, eps.n - 1);
        }
        pdt_list_free(&eps);
        ir_program_free(s);
    }
}
END_TEST

START_TEST(spmt_main_scale_and_fuse)
{
    tp_spmt_env env = {.gpus = 4, .fuse_allreduce = 0, .loss_scale = 1};
    for (int fuse = 0; fuse < 2; fuse++) {
        ir_program *p = new_prog();
        ir_block *b = p->blocks[0];
        tensor(b, "l@GRAD", IR_FP32, 1, false);
        for (int i = 0; i < 2; i++) {
            tensor(b, ir_internf("p%d", i), IR_FP32, 4, true);
            tensor(b, ir_internf("p%d@GRAD", i), IR_FP32, 4, false);
        }
        static const char *const rv0[] = {"p0", "p0@GRAD"};
        static const char *const rv1[] = {"p1", "p1@GRAD"};
        op_rv(b, "fill_constant", IR_ROLE_BACKWARD | IR_ROLE_LOSS, "l@GRAD", NULL, 0);
        op_rv(b, "g1", IR_ROLE_BACKWARD, "p1@GRAD", rv1, 2);
        op_rv(b, "g0", IR_ROLE_BACKWARD, "p0@GRAD", rv0, 2);
        update_op(b, "p0");
        env.fuse_allreduce = fuse;
        tp_spmt_main(b, 2, &env);
        expect(b, 1, "scale", "l@GRAD", -1);
        ck_assert_float_eq(ir_op_get_float(b->ops[1], "scale", 0), 0.125f);
        if (fuse) {
            /* After g0, the last op with op_role_var: walk order p0, p1. */
            ck_assert(b->ops[4]->type == ir_intern("coalesce_tensor"));
            const ir_slot *in = ir_op_input(b->ops[4], "Input");
            ck_assert_uint_eq(in->n_args, 2);
            ck_assert_str_eq(in->args[0], "p0@GRAD");
            ck_assert_str_eq(in->args[1], "p1@GRAD");
            ck_assert_int_eq(ir_op_role(b->ops[4]), IR_ROLE_FORWARD);
            expect(b, 5, "c_sync_calc_stream", "fused_output", -1);
            expect(b, 6, "c_allreduce_sum", "fused_output", 0);
            expect(b, 7, "c_sync_comm_stream", "fused_output", 0);
            expect(b, 8, "sgd", NULL, -1);
        } else {
            expect(b, 4, "c_allreduce_sum", "p1@GRAD", 0);
            expect(b, 7, "c_allreduce_sum", "p0@GRAD", 0);
            expect(b, 8, "c_sync_comm_stream", "p1@GRAD", 0);  /* the walk's last */
        }
        ir_program_free(p);
    }
    /* No pairs: the loss grad is scaled by 1/gpus alone; nothing else. */
    ir_program *p = new_prog();
    ir_block *b = p->blocks[0];
    tensor(b, "l@GRAD", IR_FP32, 1, false);
    op_rv(b, "fill_constant", IR_ROLE_BACKWARD | IR_ROLE_LOSS, "l@GRAD", NULL, 0);
    tp_spmt_main(b, 3, &env);
    ck_assert_uint_eq(b->n_ops, 2);
    ck_assert_float_eq(ir_op_get_float(b->ops[1], "scale", 0), 0.25f);
    env.loss_scale = 0;
    tp_spmt_main(b, 3, &env);
    ck_assert_uint_eq(b->n_ops, 2);
    ir_program_free(p);
}
END_TEST

/* The options the pass cannot use are refused by the family's validate(),
 * before any pass runs; what it accepts, the pass transpiles. */
START_TEST(validate_guards_the_pass)
{
    static const char *MAIN = "tests/golden/transpile_collective/in/main.pbtxt";
    static const char *STARTUP = "tests/golden/transpile_collective/in/startup.pbtxt";
    static const struct { int coll; const char *eps, *ep; int id; } bad[] = {
        {PDT_COLL_NONE, "h:1,h:2", "h:1", 0},
        {PDT_COLL_SPMT, "", "h:1", 0},
        {PDT_COLL_GRAD_ALLREDUCE, "h:1", "h:1", 0},
        {PDT_COLL_LOCAL_SGD, "h:1,h:2", NULL, 0},
        {PDT_COLL_LOCAL_SGD, "h:1,h:2", "h:3", 0},
        {PDT_COLL_LOCAL_SGD, "h:1,h:2", "h:2", 2},
    };
    for (size_t i = 0; i <= sizeof bad / sizeof *bad; i++) {
        pdt_ctx ctx;
        pdt_ctx_init(&ctx);
        ctx.main = pdio_read(MAIN);
        ctx.startup = pdio_read(STARTUP);
        ck_assert_ptr_nonnull(ctx.main);
        ck_assert_ptr_nonnull(ctx.startup);
        ctx.transpile.mode = PDT_MODE_COLLECTIVE;
        bool ok = i == sizeof bad / sizeof *bad;
        ctx.transpile.collective_mode =
            ok ? PDT_COLL_GRAD_ALLREDUCE : (pdt_collective_mode)bad[i].coll;
        ctx.transpile.trainers_arg = ok ? "h:1,h:2" : bad[i].eps;
        ctx.transpile.endpoint = ok ? "h:2" : bad[i].ep;
        ctx.transpile.trainer_id = ok ? 1 : bad[i].id;
        int rc = pdt_family_transpile.validate(&ctx, "t");
        if (rc == PDT_OK)
            rc = pass_transpile(&ctx);
        if (ok) {
            ck_assert_int_eq(rc, PDT_OK);
            ck_assert_uint_eq(ctx.n_outputs, 2);
            ck_assert_str_eq(ctx.outputs[0].stem, "trainer_1");
            ck_assert_str_eq(ctx.manifest->mode, "collective");
        } else {
            ck_assert_msg(rc == PDT_EUSAGE, "case %zu: status %d", i, rc);
            ck_assert_uint_eq(ctx.n_outputs, 0);
            ck_assert_ptr_null(ctx.manifest);
        }
        pdt_ctx_free(&ctx);
    }
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("transpile_collective");
    TCase *t = tcase_create("core");
    tcase_add_test(t, allreduce_rings_follow_the_backward_walk);
    tcase_add_test(t, no_grads_or_no_optimizer_means_no_comm_sync);
    tcase_add_test(t, loss_grad_scale_uses_first_output_by_slot_name);
    tcase_add_test(t, local_sgd_rings_and_tail);
    tcase_add_test(t, local_sgd_without_update_ops_adds_nothing);
    tcase_add_test(t, startup_params_and_broadcast_rings);
    tcase_add_test(t, spmt_hosts_decide_the_communicator);
    tcase_add_test(t, spmt_main_scale_and_fuse);
    tcase_add_test(t, validate_guards_the_pass);
    suite_add_tcase(s, t);
    return s;
}
