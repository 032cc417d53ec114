/* transpile.c - the `transpile` group (the transpile passes for --mode)
 * and the plan they share: its lifetime, the check that a pass runs after
 * the one that makes what it needs, and the outputs' finishing touches.
 * See README.md for the passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "transpile.h"

static const char *const pserver_passes[] = {"find_optimize", "split_vars", "build_pserver",
                                             "build_pserver_startup", "insert_send_recv",
                                             "delete_optimizer"};
static const char *const nccl2_passes[] = {"nccl2"};
static const char *const collective_passes[] = {"collective"};

const char *const *members_transpile(const pdt_ctx *ctx, size_t *n)
{
    switch (ctx->transpile.mode) {
    case PDT_MODE_NCCL2:
        *n = 1;
        return nccl2_passes;
    case PDT_MODE_COLLECTIVE:
        *n = 1;
        return collective_passes;
    case PDT_MODE_PSERVER:
        break;
    }
    *n = sizeof pserver_passes / sizeof *pserver_passes;
    return pserver_passes;
}

/* The alias, called directly (unit tests): the same passes, in order. */
int pass_transpile(pdt_ctx *ctx)
{
    size_t n = 0;
    const char *const *names = members_transpile(ctx, &n);
    return pdt_run_members(ctx, names, n);
}

void tp_plan_free(tp_plan *st)
{
    if (!st)
        return;
    if (st->opt_by_param) {
        GHashTableIter it;
        void *k, *v;
        g_hash_table_iter_init(&it, st->opt_by_param);
        while (g_hash_table_iter_next(&it, &k, &v))
            g_array_free(v, TRUE);
        g_hash_table_destroy(st->opt_by_param);
    }
    if (st->pair_of_param)
        g_hash_table_destroy(st->pair_of_param);
    if (st->pair_of_grad)
        g_hash_table_destroy(st->pair_of_grad);
    if (st->input_ops)
        g_hash_table_destroy(st->input_ops);
    if (st->lr_counter_list)
        g_ptr_array_free(st->lr_counter_list, TRUE);
    ir_arena_free(st->arena);
    free(st);
}

/* The pass that brings the plan to each stage. */
static const char *maker_of(int stage)
{
    return stage == TP_PLAN_FOUND ? "find_optimize" : "split_vars";
}

tp_plan *tp_plan_need(pdt_ctx *ctx, const char *pass, int stage)
{
    tp_plan *st = ctx->transpile_plan;
    if (!st || st->stage < stage) {
        pdt_error("pass '%s' needs the plan of pass '%s'; run it first", pass, maker_of(stage));
        return NULL;
    }
    return st;
}

/* The order outputs are written in, which a failing disk shows (the
 * files before the failure are in place): trainer, then each pserver. */
static void order_staged(tp_plan *st)
{
    pdt_ctx *ctx = st->ctx;
    size_t n_known = 2 + 2 * st->n_eps;
    ir_program **order = g_new0(ir_program *, n_known);
    order[0] = st->trainer_main;
    order[1] = st->trainer_startup;
    for (size_t e = 0; e < st->n_eps; e++) {
        order[2 + 2 * e] = st->pserver_main[e];
        order[3 + 2 * e] = st->pserver_startup[e];
    }
    /* slot[i]: the staged entry of order[i]; entries not in `order` keep
     * their place after the known ones. */
    GHashTable *rank = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < n_known; i++)
        if (order[i])
            g_hash_table_insert(rank, order[i], GSIZE_TO_POINTER(i + 1));
    pdt_output **slot = g_new0(pdt_output *, n_known);
    pdt_output *sorted = g_new(pdt_output, ctx->n_staged + 1);
    size_t n = 0;
    for (size_t k = 0; k < ctx->n_staged; k++) {
        size_t r = GPOINTER_TO_SIZE(g_hash_table_lookup(rank, ctx->staged[k].program));
        if (r)
            slot[r - 1] = &ctx->staged[k];
    }
    for (size_t i = 0; i < n_known; i++)
        if (slot[i])
            sorted[n++] = *slot[i];
    for (size_t k = 0; k < ctx->n_staged; k++)
        if (!g_hash_table_contains(rank, ctx->staged[k].program))
            sorted[n++] = ctx->staged[k];
    if (n)
        memcpy(ctx->staged, sorted, n * sizeof *sorted);
    g_hash_table_destroy(rank);
    g_free(slot);
    g_free(sorted);
    g_free(order);
}

void tp_plan_outputs_changed(tp_plan *st, ir_program *const *progs, size_t n)
{
    order_staged(st);
    for (size_t i = 0; i < n; i++)
        if (progs[i])
            tp_framework_attrs(st->input_ops, progs[i]);
    pdt_ctx *ctx = st->ctx;
    free(ctx->manifest_json);
    ctx->manifest_json = tp_manifest(st, st->pserver_written, st->trainer_written);
}

int tp_plan_need_inputs(const tp_plan *st, const char *pass)
{
    if (!st->trainer_main)
        return PDT_OK;
    pdt_error("pass '%s' reads the input programs, which pass 'insert_send_recv' has rewritten "
              "into the trainer's; run it before 'insert_send_recv'", pass);
    return PDT_EUSAGE;
}

int tp_stage_trainer_rewrite(pdt_ctx *ctx, const char *pass, pdt_dist_mode mode,
                             int (*build)(pdt_ctx *, ir_program **, ir_program **))
{
    if (ctx->transpile.mode != mode) {
        pdt_error("pass '%s' is for --mode=%s", pass,
                  mode == PDT_MODE_NCCL2 ? "nccl2" : "collective");
        return PDT_EUSAGE;
    }
    GHashTable *input_ops = tp_input_ops(ctx);
    ir_program *m = NULL, *s = NULL;
    int rc = build(ctx, &m, &s);
    if (rc == PDT_OK) {
        tp_framework_attrs(input_ops, m);
        tp_framework_attrs(input_ops, s);
        pdt_ctx_stage_output(ctx, ir_internf("trainer_%d", ctx->transpile.trainer_id), m);
        pdt_ctx_stage_output(ctx, ir_internf("trainer_%d.startup", ctx->transpile.trainer_id), s);
    }
    g_hash_table_destroy(input_ops);
    return rc;
}
