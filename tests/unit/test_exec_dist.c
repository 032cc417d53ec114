/* test_exec_dist.c - verify transpile on in-process transpiles: a correct
 * sync transpile equals single-process training; deliberately broken ones
 * (a wrong split_byref `sections`, the pserver's merge without its `scale`,
 * a send to the wrong endpoint) are caught.  A collective transpile of a
 * program without optimizer ops gives the mean grads, and not without the
 * loss grad's scale; nccl2 averages the grads after the backward ops, with
 * optimizer ops or without.  Async LR step counters reach the pservers as
 * Paddle's notify handler takes them. */
#include <glib.h>
#include <math.h>

#include "exec/dist.h"
#include "unit.h"
#include "transpile_fixture.h"

#define CASE "tests/golden/transpile_basic/in/"

typedef struct {
    char *main_path, *startup_path;     /* the contexts hold them */
    pdt_ctx ctx[2];
    ir_program *main, *startup;
    ex_cluster c;
} job;

static void job_init_case(job *j, const char *dir, pdt_sync_mode mode)
{
    memset(j, 0, sizeof *j);
    j->main_path = g_strconcat(dir, "main.pbtxt", NULL);
    j->startup_path = g_strconcat(dir, "startup.pbtxt", NULL);
    for (int t = 0; t < 2; t++) {
        tpf_load(&j->ctx[t], j->main_path, j->startup_path);
        j->ctx[t].transpile.trainer_id = t;
        j->ctx[t].transpile.sync_mode = mode;
        const char *pass = "transpile";
        ck_assert_int_eq(pdt_run_pipeline(&j->ctx[t], &pass, 1), 0);
    }
    j->main = pdio_read(j->main_path);
    j->startup = pdio_read(j->startup_path);
    tpf_cluster(&j->c, j->ctx, 2, EX_CL_PSERVER, mode == PDT_SYNC ? 0 : mode == PDT_ASYNC ? 1 : 2);
}

static void job_init(job *j)
{
    job_init_case(j, CASE, PDT_SYNC);
}

/* Worst relative difference over the parameters; -1 when the run failed. */
static double job_run(job *j)
{
    ex_transpile_opts o = {.seed = 3, .batch = 4, .steps = 2, .tolerance = 1e-9};
    ex_param_result *r = NULL;
    size_t n = 0;
    double worst = -1;
    if (ex_transpile_check(&j->c, j->main, j->startup, &o, &r, &n)) {
        ck_assert_uint_eq(n, 2);
        worst = 0;
        for (size_t i = 0; i < n; i++) {
            ck_assert(r[i].finite);
            worst = fmax(worst, r[i].worst_rel);
        }
    }
    free(r);
    return worst;
}

static void job_free(job *j)
{
    ex_cluster_release(&j->c);
    ir_program_free(j->main);
    ir_program_free(j->startup);
    pdt_ctx_free(&j->ctx[0]);
    pdt_ctx_free(&j->ctx[1]);
    g_free(j->main_path);
    g_free(j->startup_path);
}

START_TEST(sync_transpile_equals_single_process)
{
    job j;
    job_init(&j);
    double w = job_run(&j);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    job_free(&j);
}
END_TEST

START_TEST(wrong_sections_are_caught)
{
    job j;
    job_init(&j);
    for (int t = 0; t < 2; t++) {
        ir_op *s = tpf_find_op(j.c.trainers[t].main->blocks[0], "split_byref", 0);
        ck_assert_ptr_nonnull(s);
        int64_t sec[] = {600, 400};
        ir_op_set_longs(s, "sections", sec, 2);
    }
    double w = job_run(&j);
    ck_assert_msg(w < 0 || w > 1e-6, "not caught (worst %g)", w);
    job_free(&j);
}
END_TEST

START_TEST(missing_merge_scale_is_caught)
{
    job j;
    job_init(&j);
    for (int k = 0; k < 2; k++) {
        ir_program *p = j.c.pservers[k].main;
        for (size_t b = 1; b < p->n_blocks; b++) {
            ir_block *blk = p->blocks[b];
            for (size_t i = 0; i < blk->n_ops; i++)
                if (!strcmp(blk->ops[i]->type, "scale")) {
                    ir_block_remove_op(blk, i);
                    break;
                }
        }
    }
    double w = job_run(&j);
    ck_assert_msg(w > 1e-6, "not caught (worst %g)", w);
    job_free(&j);
}
END_TEST

START_TEST(send_to_wrong_endpoint_is_caught)
{
    job j;
    job_init(&j);
    ir_op *s = tpf_find_op(j.c.trainers[1].main->blocks[0], "send", 0);
    ck_assert_ptr_nonnull(s);
    const char *ep[] = {"127.0.0.1:6175"};   /* fc_b lives on 6174 */
    ir_op_set_strings(s, "epmap", ep, 1);
    double w = job_run(&j);
    ck_assert_msg(w < 0, "not caught (worst %g)", w);
    ck_assert_msg(strstr(j.c.err, "does not expect") != NULL, "%s", j.c.err);
    job_free(&j);
}
END_TEST

/* transpile_collective's net with its optimizer ops removed (updates done
 * outside the program, as in PaddleRec's join program), transpiled for
 * collective grad_allreduce: verify compares the allreduced grads. */
#define COLL "tests/golden/transpile_collective/in/"

static ir_program *without_optimizer(const char *path)
{
    ir_program *p = pdio_read(path);
    ck_assert_ptr_nonnull(p);
    ir_block *b = p->blocks[0];
    for (size_t i = b->n_ops; i-- > 0;) {
        int role = ir_op_role(b->ops[i]);
        if (role >= 0 && (role & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED)))
            ir_block_remove_op(b, i);
    }
    return p;
}

/* `nccl2`: the same in nccl2 mode, whose programs hold no collective op;
 * `optimizer`: the net as it is, optimizer ops kept. */
static void grads_job_init_mode(job *j, bool nccl2, bool optimizer)
{
    memset(j, 0, sizeof *j);
    for (int t = 0; t < 2; t++) {
        pdt_ctx *ctx = &j->ctx[t];
        pdt_ctx_init(ctx);
        ctx->main = optimizer ? pdio_read(COLL "main.pbtxt") : without_optimizer(COLL "main.pbtxt");
        ctx->startup = pdio_read(COLL "startup.pbtxt");
        ctx->transpile.mode = nccl2 ? PDT_MODE_NCCL2 : PDT_MODE_COLLECTIVE;
        if (!nccl2)
            ctx->transpile.collective_mode = PDT_COLL_GRAD_ALLREDUCE;
        ctx->transpile.trainers_arg = "h:1,h:2";
        ctx->transpile.endpoint = t ? "h:2" : "h:1";
        ctx->transpile.trainer_id = t;
        int rc = pdt_family_transpile.validate(ctx, "t");
        ck_assert_int_eq(rc == PDT_OK ? pass_transpile(ctx) : rc, PDT_OK);
    }
    tpf_cluster(&j->c, j->ctx, 2, nccl2 ? EX_CL_NCCL2 : EX_CL_COLLECTIVE, 0);
    j->main = optimizer ? pdio_read(COLL "main.pbtxt") : without_optimizer(COLL "main.pbtxt");
    j->startup = pdio_read(COLL "startup.pbtxt");
}

static void grads_job_init(job *j)
{
    grads_job_init_mode(j, false, false);
}

START_TEST(allreduced_grads_equal_single_process)
{
    job j;
    grads_job_init(&j);
    double w = job_run(&j);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    job_free(&j);
}
END_TEST

/* Without the loss grad's 1/trainers scale the allreduce gives the sum. */
START_TEST(missing_loss_grad_scale_is_caught)
{
    job j;
    grads_job_init(&j);
    for (int t = 0; t < 2; t++) {
        ir_block *b = j.c.trainers[t].main->blocks[0];
        size_t k = 0;
        while (k < b->n_ops && b->ops[k]->type != ir_intern("scale"))
            k++;
        ck_assert_uint_lt(k, b->n_ops);
        ir_block_remove_op(b, k);
    }
    double w = job_run(&j);
    ck_assert_msg(w > 1e-6, "not caught (worst %g)", w);
    job_free(&j);
}
END_TEST

/* nccl2 averages the grads after the last backward op, as Paddle's
 * ParallelExecutor allreduces each right after the op making it, so a
 * program without optimizer ops has its grads averaged too. */
START_TEST(nccl2_averages_grads_without_optimizer)
{
    job j;
    grads_job_init_mode(&j, true, false);
    for (int t = 0; t < 2; t++)
        ck_assert_msg(!tpf_find_op(j.c.trainers[t].main->blocks[0], "c_allreduce_sum", 0),
                      "an nccl2 program holds no allreduce op");
    double w = job_run(&j);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    job_free(&j);
}
END_TEST

/* With optimizer ops too, nccl2's average comes right after the last
 * backward op, not at the first optimizer op: an op put between them (an
 * assign of a grad, role Forward) sees the same averaged grad on every
 * trainer. */
START_TEST(nccl2_averages_after_the_backward_ops)
{
    job j;
    grads_job_init_mode(&j, true, true);
    const char *grad = NULL;
    for (int t = 0; t < 2; t++) {
        ir_block *b = j.c.trainers[t].main->blocks[0];
        size_t last = 0;
        for (size_t i = 0; i < b->n_ops; i++) {
            int role = ir_op_role(b->ops[i]);
            if (role >= 0 && (role & IR_ROLE_BACKWARD))
                last = i + 1;
        }
        const ir_op *opt = tpf_find_op(b, "momentum", 0);
        ck_assert_ptr_nonnull(opt);
        grad = ir_op_input1(opt, "Grad");
        ir_op *seen = ir_block_insert_op(b, last, "assign");
        ir_op_set_input1(seen, "X", grad);
        ir_op_set_output1(seen, "Out", "seen_grad");
        ir_op_set_role(seen, IR_ROLE_FORWARD);
    }
    double w = job_run(&j);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    const ex_tensor *s0 = ex_scope_get(j.c.trainers[0].scope, "seen_grad");
    const ex_tensor *s1 = ex_scope_get(j.c.trainers[1].scope, "seen_grad");
    const ex_tensor *g0 = ex_scope_get(j.c.trainers[0].scope, grad);
    ck_assert(s0 && s1 && g0 && s0->numel == s1->numel && s0->numel == g0->numel);
    for (size_t i = 0; i < s0->numel; i++) {
        ck_assert_double_eq(s0->data[i], s1->data[i]);
        ck_assert_double_eq(s0->data[i], g0->data[i]);
    }
    job_free(&j);
}
END_TEST

static double counter(const ex_proc *p, const char *name)
{
    const ex_tensor *v = ex_scope_get(p->scope, name);
    ck_assert_msg(v && v->numel == 1, "pserver %s holds no '%s'", p->endpoint, name);
    return v->data[0];
}

/* Paddle's RequestNotifyHandler adds a sent count to the pserver's own copy
 * when the name holds @LR_DECAY_COUNTER@ and runs the LR-decay block; it
 * drops any other counter (step_counter here): 3 steps of 2 trainers leave
 * each @LR_DECAY_COUNTER@.trainer_T at 1 + 3, their sum at 8, and
 * step_counter at its startup sum 1 + 1. */
START_TEST(async_step_counters_follow_paddles_notify_handler)
{
    job j;
    job_init_case(&j, "tests/golden/transpile_async_two_counters/in/", PDT_ASYNC);
    ex_transpile_opts o = {.seed = 3, .batch = 4, .steps = 3, .tolerance = 1e-9};
    ex_param_result *r = NULL;
    size_t n = 0;
    ck_assert_msg(ex_transpile_check(&j.c, j.main, j.startup, &o, &r, &n), "%s", j.c.err);
    for (size_t i = 0; i < n; i++)
        ck_assert(r[i].finite);
    for (size_t k = 0; k < 2; k++) {
        const ex_proc *p = &j.c.pservers[k];
        ck_assert_double_eq(counter(p, "@LR_DECAY_COUNTER@.trainer_0"), 4);
        ck_assert_double_eq(counter(p, "@LR_DECAY_COUNTER@.trainer_1"), 4);
        ck_assert_double_eq(counter(p, "@LR_DECAY_COUNTER@"), 8);
        ck_assert_double_eq(counter(p, "step_counter.trainer_0"), 1);
        ck_assert_double_eq(counter(p, "step_counter"), 2);
    }
    g_free(r);
    job_free(&j);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("exec_dist");
    TCase *tc = tcase_create("dist");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sync_transpile_equals_single_process);
    tcase_add_test(tc, wrong_sections_are_caught);
    tcase_add_test(tc, missing_merge_scale_is_caught);
    tcase_add_test(tc, send_to_wrong_endpoint_is_caught);
    tcase_add_test(tc, allreduced_grads_equal_single_process);
    tcase_add_test(tc, nccl2_averages_grads_without_optimizer);
    tcase_add_test(tc, nccl2_averages_after_the_backward_ops);
    tcase_add_test(tc, missing_loss_grad_scale_is_caught);
    tcase_add_test(tc, async_step_counters_follow_paddles_notify_handler);
    suite_add_tcase(s, tc);
    return s;
}
