/* transpile.c - the `transpile` pass: DistributeTranspiler.transpile plus
 * get_trainer_program, get_pserver_program(s) and get_startup_program for
 * the roles ctx->role asks for.  See transpile.h for the overall shape. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "transpile.h"

bool tp_text_output;

static void state_free(tp_state *st)
{
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
    ir_arena_free(st->arena);
}

/* Checks the options the pass relies on; the command checks them first
 * with usage errors, this guards other callers (unit tests, --passes). */
static int check_options(pdt_ctx *ctx)
{
    if (ctx->pservers.n == 0) {
        pdt_error("transpile: no pserver endpoints (--pservers)");
        return PDT_EUSAGE;
    }
    if (ctx->trainers < 1) {
        pdt_error("transpile: --trainers must be at least 1, not %d", ctx->trainers);
        return PDT_EUSAGE;
    }
    if (ctx->trainer_id < 0 || ctx->trainer_id >= ctx->trainers) {
        pdt_error("transpile: trainer id %d is out of range (%d trainer%s)", ctx->trainer_id,
                  ctx->trainers, ctx->trainers == 1 ? "" : "s");
        return PDT_EUSAGE;
    }
    if (ctx->endpoint) {
        bool found = false;
        for (size_t i = 0; i < ctx->pservers.n; i++)
            found |= ir_intern(ctx->endpoint) == ctx->pservers.items[i];
        if (!found) {
            pdt_error("transpile: endpoint '%s' is not one of --pservers", ctx->endpoint);
            return PDT_EUSAGE;
        }
    }
    for (size_t i = 0; i < ctx->pservers.n; i++)
        for (size_t j = 0; j < i; j++)
            if (ctx->pservers.items[i] == ctx->pservers.items[j]) {
                pdt_error("transpile: endpoint '%s' is listed twice in --pservers",
                          ctx->pservers.items[i]);
                return PDT_EUSAGE;
            }
    if (ctx->dc_asgd && ctx->sync_mode == PDT_SYNC) {
        pdt_error("transpile: DC-ASGD needs async or half-async mode");
        return PDT_EUSAGE;
    }
    if (ctx->min_block_size < 1) {
        pdt_error("transpile: min block size must be positive");
        return PDT_EUSAGE;
    }
    return PDT_OK;
}

static void print_block_map(const tp_state *st)
{
    for (size_t i = 0; i < st->n_pairs; i++) {
        const tp_pair *p = &st->pairs[i];
        for (size_t k = 0; k < p->param.n_slices; k++) {
            const tp_slice *s = &p->param.slices[k];
            char shape[128];
            size_t off = 0;
            shape[0] = '\0';
            for (size_t d = 0; d < s->n_dims && off < sizeof shape - 24; d++)
                off += (size_t)snprintf(shape + off, sizeof shape - off, "%s%lld",
                                        d ? ", " : "", (long long)s->dims[d]);
            pdt_note("block map: %s [%s] offset %lld, grad %s -> pserver_%d %s", s->name, shape,
                     (long long)s->offset, p->grad.slices[k].name, p->ep[k],
                     st->eps[p->ep[k]]);
        }
    }
    for (size_t e = 0; e < st->n_eps; e++)
        pdt_note("block map: pserver_%zu %s holds %zu slice%s, %lld param bytes", e, st->eps[e],
                 st->epl[e].n, st->epl[e].n == 1 ? "" : "s", (long long)st->epl[e].bytes);
}

static int analyze(tp_state *st, pdt_ctx *ctx)
{
    memset(st, 0, sizeof *st);
    st->ctx = ctx;
    st->main = ctx->main;
    st->startup = ctx->startup;
    st->b0 = ctx->main->blocks[0];
    st->arena = ir_arena_new();
    st->eps = ctx->pservers.items;
    st->n_eps = ctx->pservers.n;
    st->sync = ctx->sync_mode == PDT_SYNC;
    st->runtime_split = ctx->sync_mode == PDT_HALF_ASYNC;
    st->half_async = ctx->sync_mode == PDT_HALF_ASYNC;
    st->trainer_suffix = st->sync && ctx->trainers > 1;
    /* The seed's mapping from its config, not the flag's name: sync 0;
     * runtime_split_send_recv (pdtrans --half-async) ASYNC 1; any other
     * async HALF_ASYNC 2.  The pserver runtime treats 1 and 2 alike. */
    st->dist_mode = ctx->sync_mode == PDT_SYNC         ? TP_DM_SYNC
                    : ctx->sync_mode == PDT_HALF_ASYNC ? TP_DM_ASYNC
                                                       : TP_DM_HALF_ASYNC;
    st->opt_by_param = g_hash_table_new(g_direct_hash, g_direct_equal);
    st->pair_of_param = g_hash_table_new(g_direct_hash, g_direct_equal);
    st->pair_of_grad = g_hash_table_new(g_direct_hash, g_direct_equal);
    int rc = tp_find_optimize(st);
    if (!rc)
        rc = tp_split_vars(st);
    if (!rc)
        rc = tp_dispatch(st);
    if (!rc)
        print_block_map(st);
    return rc;
}

static int run_pserver_mode(pdt_ctx *ctx)
{
    int rc = check_options(ctx);
    if (rc)
        return rc;
    if (!ctx->main || ctx->main->n_blocks == 0) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        return PDT_EBADINPUT;
    }
    GPtrArray *lr_counters = g_ptr_array_new();
    if (ctx->sync_mode != PDT_SYNC)
        rc = tp_async_lr_counters(ctx, lr_counters);
    if (rc) {
        g_ptr_array_free(lr_counters, TRUE);
        return rc;
    }
    tp_state st;
    rc = analyze(&st, ctx);
    st.lr_counters = (const char *const *)lr_counters->pdata;
    st.n_lr_counters = lr_counters->len;
    bool *written = g_new0(bool, st.n_eps ? st.n_eps : 1);
    bool trainer = !rc && ctx->role != PDT_ROLE_PSERVER;
    /* Every output is built before any is handed over, so a failure leaves
     * ctx->outputs untouched and nothing gets written. */
    ir_program **progs = g_new0(ir_program *, 2 * st.n_eps + 2);
    const char **stems = g_new0(const char *, 2 * st.n_eps + 2);
    size_t n_out = 2;   /* slots 0 and 1: the trainer's, filled last */
    for (size_t e = 0; !rc && ctx->role != PDT_ROLE_TRAINER && e < st.n_eps; e++) {
        if (ctx->endpoint && ir_intern(ctx->endpoint) != st.eps[e])
            continue;
        rc = tp_build_pserver(&st, e, &progs[n_out]);
        if (rc)
            break;
        rc = tp_build_pserver_startup(&st, e, progs[n_out], &progs[n_out + 1]);
        stems[n_out] = ir_internf("pserver_%zu", e);
        stems[n_out + 1] = ir_internf("pserver_%zu.startup", e);
        n_out += rc ? 1 : 2;
        written[e] = !rc;
    }
    /* The trainer goes last: it takes ctx->main and ctx->startup over. */
    if (!rc && trainer) {
        rc = tp_build_trainer(&st, &progs[0], &progs[1]);
        stems[0] = ir_internf("trainer_%d", ctx->trainer_id);
        stems[1] = ir_internf("trainer_%d.startup", ctx->trainer_id);
    }
    if (rc) {
        for (size_t i = 0; i < n_out; i++)
            ir_program_free(progs[i]);
    } else {
        for (size_t i = 0; i < n_out; i++)
            if (progs[i])
                pdt_ctx_add_output(ctx, stems[i], progs[i]);
        free(ctx->manifest_json);
        ctx->manifest_json = tp_manifest(&st, written, trainer);
    }
    g_free(progs);
    g_free(stems);
    g_free(written);
    g_ptr_array_free(lr_counters, TRUE);
    state_free(&st);
    return rc;
}

static int run_mode(pdt_ctx *ctx)
{
    switch (ctx->mode) {
    case PDT_MODE_PSERVER:
        return run_pserver_mode(ctx);
    case PDT_MODE_NCCL2:
    case PDT_MODE_COLLECTIVE: {
        ir_program *m = NULL, *s = NULL;
        int rc = ctx->mode == PDT_MODE_NCCL2 ? tp_build_nccl2(ctx, &m, &s)
                                             : tp_build_collective(ctx, &m, &s);
        if (rc)
            return rc;
        pdt_ctx_add_output(ctx, ir_internf("trainer_%d", ctx->trainer_id), m);
        pdt_ctx_add_output(ctx, ir_internf("trainer_%d.startup", ctx->trainer_id), s);
        return PDT_OK;
    }
    }
    pdt_error("transpile: unknown mode %d", (int)ctx->mode);
    return PDT_EUSAGE;
}

int pass_transpile(pdt_ctx *ctx)
{
    GHashTable *input_ops = tp_input_ops(ctx);
    size_t first = ctx->n_outputs;
    int rc = run_mode(ctx);
    for (size_t i = first; rc == PDT_OK && i < ctx->n_outputs; i++)
        tp_framework_attrs(input_ops, ctx->outputs[i].program);
    g_hash_table_destroy(input_ops);
    return rc;
}
