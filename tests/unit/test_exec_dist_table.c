/* test_exec_dist_table.c - verify transpile with lookup tables the
 * trainers never hold: the pservers' table kernels against hand-computed
 * values; a sync transpile with a distributed table (prefetch) or
 * remote_prefetch tables equals single-process training; deliberately
 * broken ones (a table shard sent or prefetched to the wrong pserver, the
 * pservers' table update dropped, wrong height_sections) are caught.  An
 * nce with remote_prefetch reads the pservers' rows; a param the trainers
 * only fake_init is read as such in their first step. */
#include <glib.h>
#include <math.h>

#include "exec/dist.h"
#include "exec_fixture.h"
#include "unit.h"
#include "transpile_fixture.h"

#define DIST "tests/golden/transpile_dist_table/in/"
#define REMOTE "tests/golden/transpile_remote_prefetch/in/"
/* corrected copies of transpile_remote_nce's and transpile_dist_table_mixed's inputs */
#define NCE "tests/golden/verify_transpile/in/remote_nce."
#define MIXED "tests/golden/verify_transpile/in/dist_table_mixed."

START_TEST(table_kernels)
{
    net_new();
    ex_scope *S = ex_scope_new();
    ex_ctx x;
    ex_ctx_init(&x, net_prog, S, 1);
    /* pserver 1 of 2: ids 1, 3, 5 in slots 0-2 */
    int64_t rows[] = {1, 3, 5}, wd = 2;
    ex_tensor *w = ex_rows_new(IR_FP32, 3, rows, 1, &wd, 6);
    for (size_t i = 0; i < 6; i++)
        w->data[i] = (double)(10 * (i / 2) + i % 2);    /* 0 1, 10 11, 20 21 */
    ex_scope_put(S, "w", w);
    int64_t n = 3;
    ex_tensor *ids = ex_tensor_new(IR_INT64, 1, &n);
    ids->data[0] = 5, ids->data[1] = 1, ids->data[2] = 5;
    ex_scope_put(S, "ids", ids);
    ck_assert(ex_run_op(&x, net_op("lookup_sparse_table", "W=w Ids=ids", "Out=out")));
    const ex_tensor *out = ex_scope_get(S, "out");
    const double want[] = {20, 21, 0, 1, 20, 21};
    ck_assert_uint_eq(out->numel, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert(out->data[i] == want[i]);
    /* sgd on the shard: grad rows 3 and 5 (5 twice) */
    int64_t grows[] = {5, 3, 5};
    ex_tensor *g = ex_rows_new(IR_FP32, 3, grows, 1, &wd, 6);
    for (size_t i = 0; i < 6; i++)
        g->data[i] = 1;
    ex_scope_put(S, "g", g);
    int64_t one = 1;
    ex_tensor *lr = ex_tensor_new(IR_FP32, 1, &one);
    lr->data[0] = 0.5;
    ex_scope_put(S, "lr", lr);
    ck_assert(ex_run_op(&x, net_op("sgd", "Param=w Grad=g LearningRate=lr", "ParamOut=w")));
    const double after[] = {0, 1, 9.5, 10.5, 19, 20};
    w = ex_scope_get(S, "w");
    for (size_t i = 0; i < 6; i++)
        ck_assert_msg(w->data[i] == after[i], "w[%zu] = %g", i, w->data[i]);
    /* an id this pserver does not hold */
    ids->data[1] = 2;
    ck_assert(!ex_run_op(&x, net_op("lookup_sparse_table", "W=w Ids=ids", "Out=out")));
    ck_assert_msg(strstr(x.err, "id 2 is not in this pserver's rows of 'w'"), "%s", x.err);
    ex_scope_free(S);
    net_free();
}
END_TEST

typedef struct {
    pdt_ctx ctx[2];
    ir_program *main, *startup;
    ex_cluster c;
} job;

static void job_init(job *j, const char *dir)
{
    memset(j, 0, sizeof *j);
    char *mp = g_strconcat(dir, "main.pbtxt", NULL), *sp = g_strconcat(dir, "startup.pbtxt", NULL);
    for (int t = 0; t < 2; t++) {
        tpf_load(&j->ctx[t], mp, sp);
        j->ctx[t].transpile.trainer_id = t;
        const char *pass = "transpile";
        ck_assert_int_eq(pdt_run_pipeline(&j->ctx[t], &pass, 1), 0);
    }
    j->main = pdio_read(mp);
    j->startup = pdio_read(sp);
    g_free(mp);
    g_free(sp);
    tpf_cluster(&j->c, j->ctx, 2, EX_CL_PSERVER, 0);
}

/* Worst relative difference over the parameters; -1 when the run failed. */
static double job_run(job *j, size_t n_params)
{
    ex_transpile_opts o = {.seed = 3, .batch = 4, .steps = 2, .tolerance = 1e-9};
    ex_param_result *r = NULL;
    size_t n = 0;
    double worst = -1;
    if (ex_transpile_check(&j->c, j->main, j->startup, &o, &r, &n)) {
        ck_assert_uint_eq(n, n_params);
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
}

/* The table really is trained: shared_w moves, and the gathered value is
 * what the pservers hold. */
START_TEST(distributed_table_equals_single_process)
{
    job j;
    job_init(&j, DIST);
    double w = job_run(&j, 3);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    const ex_table *t = ex_cluster_table(&j.c, "shared_w");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->kind, EX_TABLE_BY_ID);
    const ex_tensor *shard = ex_scope_get(j.c.pservers[1].scope, "shared_w");
    ck_assert_int_eq(shard->kind, EX_ROWS);
    ck_assert(shard->rows[0] == 1 && shard->rows[499] == 999);
    job_free(&j);
}
END_TEST

START_TEST(table_grad_to_wrong_pserver_is_caught)
{
    job j;
    job_init(&j, DIST);
    const ir_block *b = j.c.trainers[1].main->blocks[0];
    ir_op *s = NULL;
    for (size_t i = 0; (s = tpf_find_op(b, "send", i)) != NULL; i++)
        if (ex_n_in(s, "X") == 2)
            break;
    ck_assert_ptr_nonnull(s);
    const char *ep[] = {"127.0.0.1:6175", "127.0.0.1:6174"};
    ir_op_set_strings(s, "epmap", ep, 2);
    ck_assert(job_run(&j, 3) < 0);
    ck_assert_msg(strstr(j.c.err, "does not expect 'shared_w@GRAD.trainer_1.pserver_0'"), "%s", j.c.err);
    job_free(&j);
}
END_TEST

START_TEST(prefetch_to_wrong_pserver_is_caught)
{
    job j;
    job_init(&j, DIST);
    ir_op *p = tpf_find_op(j.c.trainers[0].main->blocks[0], "prefetch", 0);
    ck_assert_ptr_nonnull(p);
    const char *ep[] = {"127.0.0.1:6175", "127.0.0.1:6174"};
    ir_op_set_strings(p, "epmap", ep, 2);
    ck_assert(job_run(&j, 3) < 0);
    ck_assert_msg(strstr(j.c.err, "no prefetch block for 'prefetch_compress_in_tmp_0'"), "%s", j.c.err);
    job_free(&j);
}
END_TEST

START_TEST(dropped_table_update_is_caught)
{
    job j;
    job_init(&j, DIST);
    for (int k = 0; k < 2; k++) {
        ir_program *p = j.c.pservers[k].main;
        for (size_t b = 1; b < p->n_blocks; b++)
            for (size_t i = 0; i < p->blocks[b]->n_ops; i++)
                if (!strcmp(p->blocks[b]->ops[i]->type, "sgd"))
                    ir_block_remove_op(p->blocks[b], i--);
    }
    double w = job_run(&j, 3);
    ck_assert_msg(w > 1e-6, "not caught (worst %g)", w);
    job_free(&j);
}
END_TEST

START_TEST(remote_prefetch_equals_single_process)
{
    job j;
    job_init(&j, REMOTE);
    double w = job_run(&j, 4);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    const ex_table *t = ex_cluster_table(&j.c, "profile_emb");
    ck_assert(t && t->kind == EX_TABLE_SLICED && t->n_slices == 2);
    job_free(&j);
}
END_TEST

START_TEST(wrong_height_sections_are_caught)
{
    job j;
    job_init(&j, REMOTE);
    for (int t = 0; t < 2; t++) {
        ir_op *d = tpf_find_op(j.c.trainers[t].main->blocks[0], "distributed_lookup_table", 0);
        ck_assert_ptr_nonnull(d);
        int64_t hs[] = {400, 600};
        ir_op_set_longs(d, "height_sections", hs, 2);
    }
    double w = job_run(&j, 4);
    ck_assert_msg(w < 0 || w > 1e-6, "not caught (worst %g)", w);
    job_free(&j);
}
END_TEST

START_TEST(remote_nce_equals_single_process)
{
    job j;
    job_init(&j, NCE);
    double w = job_run(&j, 2);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    const ex_table *t = ex_cluster_table(&j.c, "nce_w");
    ck_assert(t && t->kind == EX_TABLE_SLICED && t->n_slices == 2);
    ck_assert_str_eq(t->slices[0], "nce_w.block0");
    ck_assert_str_eq(t->eps[0], "127.0.0.1:6175");
    job_free(&j);
}
END_TEST

/* A trainer nce that reads its own (fake_init) nce_w trains on zeros. */
START_TEST(nce_without_prefetch_is_caught)
{
    job j;
    job_init(&j, NCE);
    for (int t = 0; t < 2; t++) {
        ir_op *n = tpf_find_op(j.c.trainers[t].main->blocks[0], "nce", 0);
        ck_assert_ptr_nonnull(n);
        ir_op_set_bool(n, "remote_prefetch", false);
    }
    double w = job_run(&j, 2);
    ck_assert_msg(w < 0 || w > 1e-6, "not caught (worst %g)", w);
    job_free(&j);
}
END_TEST

START_TEST(fake_init_param_equals_single_process)
{
    job j;
    job_init(&j, MIXED);
    double w = job_run(&j, 4);
    ck_assert_msg(w >= 0 && w <= 1e-9, "worst %g: %s", w, j.c.err);
    ck_assert_ptr_null(ex_cluster_table(&j.c, "profile_w"));
    job_free(&j);
}
END_TEST

Suite *make_suite(void)
{
    Suite *s = suite_create("exec_dist_table");
    TCase *tc = tcase_create("tables");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, table_kernels);
    tcase_add_test(tc, distributed_table_equals_single_process);
    tcase_add_test(tc, table_grad_to_wrong_pserver_is_caught);
    tcase_add_test(tc, prefetch_to_wrong_pserver_is_caught);
    tcase_add_test(tc, dropped_table_update_is_caught);
    tcase_add_test(tc, remote_prefetch_equals_single_process);
    tcase_add_test(tc, wrong_height_sections_are_caught);
    tcase_add_test(tc, remote_nce_equals_single_process);
    tcase_add_test(tc, nce_without_prefetch_is_caught);
    tcase_add_test(tc, fake_init_param_equals_single_process);
    suite_add_tcase(s, tc);
    return s;
}
