/* transpile.c - the `transpile` group (the transpile passes for --mode)
 * and the plan they share: its lifetime, the check that a pass runs after
 * the one that makes what it needs, and the outputs' finishing touches.
 * See README.md for the passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "builders.h"

/* Every pass the group may stand for: pserver mode's six, then the one of
 * nccl2 and the one of collective, then GEO's own two. */
static const char *const all_passes[] = {"find_optimize", "split_vars", "build_pserver",
                                         "build_pserver_startup", "insert_send_recv",
                                         "delete_optimizer", "nccl2", "collective",
                                         "geo_pserver", "geo_trainer"};
enum { N_PSERVER_PASSES = 6 };
/* --geo: GeoSgdTranspiler's pipeline, the plan's passes and the pserver
 * startup shared with the other pserver modes. */
static const char *const geo_passes[] = {"find_optimize", "split_vars", "geo_pserver",
                                         "build_pserver_startup", "geo_trainer"};

const char *const *members_transpile(const pdt_ctx *ctx, size_t *n)
{
    if (!ctx) {
        *n = sizeof all_passes / sizeof *all_passes;
        return all_passes;
    }
    switch (ctx->transpile.mode) {
    case PDT_MODE_NCCL2:
        *n = 1;
        return all_passes + N_PSERVER_PASSES;
    case PDT_MODE_COLLECTIVE:
        *n = 1;
        return all_passes + N_PSERVER_PASSES + 1;
    case PDT_MODE_PSERVER:
        break;
    }
    if (ctx->transpile.geo_push_nums) {
        *n = sizeof geo_passes / sizeof *geo_passes;
        return geo_passes;
    }
    *n = N_PSERVER_PASSES;
    return all_passes;
}

/* The alias, called directly (unit tests): the same passes, in order. */
int pass_transpile(pdt_ctx *ctx)
{
    size_t n = 0;
    const char *const *names = members_transpile(ctx, &n);
    return pdt_run_members(ctx, names, n);
}

/* The plan owns the placement it made (tp_plan_create); its readers see
 * it const, hence the cast in tp_plan_free. */
static void placement_free(tp_placement *pl)
{
    if (!pl)
        return;
    tp_lookup_free((tp_lookup *)pl->lookup);
    ir_arena_free(pl->arena);
    free(pl);
}

void tp_plan_free(void *a)
{
    tp_plan *st = a;
    if (!st)
        return;
    /* the plan made the placement (tp_plan_create) and owns it */
    placement_free((tp_placement *)st->pl);
    tp_op_set_free(st->input_ops);
    ir_arena_free(st->in.arena);
    free(st);
}

bool tp_pserver_wanted(const tp_plan *st, size_t e)
{
    const pdt_ctx *ctx = st->ctx;
    return ctx->transpile.role != PDT_ROLE_TRAINER &&
           (!ctx->transpile.endpoint || ir_intern(ctx->transpile.endpoint) == st->pl->eps[e]) &&
           (st->narrow == (size_t)-1 || st->narrow == e);
}

size_t tp_plan_n_pservers(const void *a)
{
    const tp_plan *st = a;
    return st ? st->pl->n_eps : 0;
}

bool tp_plan_narrow(void *a, size_t e)
{
    tp_plan *st = a;
    st->narrow = (size_t)-1;
    if (e == (size_t)-1)
        return true;
    if (e >= st->pl->n_eps || !tp_pserver_wanted(st, e))
        return false;
    st->narrow = e;
    return true;
}

void tp_plan_make_manifest(void *a)
{
    tp_plan *st = a;
    if (!st || !st->manifest_stale)
        return;
    pdt_manifest_free(st->ctx->manifest);
    st->ctx->manifest = tp_manifest(st, st->pserver_written, st->trainer_written);
    st->manifest_stale = false;
}

void tp_plan_output_freed(void *a, const ir_program *p)
{
    tp_plan *st = a;
    if (!st)
        return;
    for (size_t e = 0; e < st->pl->n_eps; e++) {
        if (st->pserver_main[e] == p)
            st->pserver_main[e] = NULL;
        if (st->pserver_startup[e] == p)
            st->pserver_startup[e] = NULL;
    }
    if (st->trainer_main == p)
        st->trainer_main = NULL;
    if (st->trainer_startup == p)
        st->trainer_startup = NULL;
}

/* The plan as the pass manager sees it (passes.def: ANALYSIS): made by
 * 'find_optimize' (its create hook), extended by 'split_vars', read by the
 * passes after them; finishing it makes the manifest; its shards are the
 * pservers. */
const pdt_analysis tp_plan_ops = {
    .name = "transpile_plan",
    .create = tp_plan_build,
    .free = tp_plan_free,
    .finish = tp_plan_make_manifest,
    .check_order = tp_check_order,
    .n_shards = tp_plan_n_pservers,
    .narrow = tp_plan_narrow,
    .output_freed = tp_plan_output_freed,
    .print = tp_plan_print,
    .shard_name = "pserver",
};

/* What each transpile pass needs of the passes before it, which the
 * pipeline checks before any pass runs (tp_check_order). */
typedef struct {
    const char *pass;
    pdt_dist_mode mode;     /* the --mode it is for */
    const char *plan_of;    /* the plan must have been made by this pass */
    bool reads_inputs;      /* it must run before insert_send_recv */
    const char *product_of, *product;   /* it builds on what this pass made */
    pdt_role waives;        /* ...unless --role is this (nothing to build on) */
    const char *again;      /* it runs once per plan: the message otherwise */
    int geo;                /* 1: for --geo only; -1: not for --geo; 0: either */
} order_rule;

static const order_rule order_rules[] = {
    {"find_optimize", PDT_MODE_PSERVER, NULL, false, NULL, NULL, PDT_ROLE_ALL, NULL, 0},
    {"split_vars", PDT_MODE_PSERVER, "find_optimize", false, NULL, NULL, PDT_ROLE_ALL,
     "has already run on this plan", 0},
    {"build_pserver", PDT_MODE_PSERVER, "split_vars", true, NULL, NULL, PDT_ROLE_ALL, NULL, -1},
    {"build_pserver_startup", PDT_MODE_PSERVER, "split_vars", true, "build_pserver",
     "the pserver programs", PDT_ROLE_TRAINER, NULL, 0},
    {"insert_send_recv", PDT_MODE_PSERVER, "split_vars", false, NULL, NULL, PDT_ROLE_ALL,
     "has already built the trainer", -1},
    {"delete_optimizer", PDT_MODE_PSERVER, "split_vars", false, "insert_send_recv",
     "the trainer program", PDT_ROLE_PSERVER, NULL, -1},
    {"nccl2", PDT_MODE_NCCL2, NULL, false, NULL, NULL, PDT_ROLE_ALL, NULL, 0},
    {"collective", PDT_MODE_COLLECTIVE, NULL, false, NULL, NULL, PDT_ROLE_ALL, NULL, 0},
    {"geo_pserver", PDT_MODE_PSERVER, "split_vars", true, NULL, NULL, PDT_ROLE_ALL, NULL, 1},
    {"geo_trainer", PDT_MODE_PSERVER, "split_vars", false, NULL, NULL, PDT_ROLE_ALL,
     "has already built the trainer", 1},
};

static const char *const mode_names[] = {"pserver", "nccl2", "collective"};

/* Whether NAME runs among passes[0..at) on the plan passes[at] sees: back
 * to the last pass that drops the plan or the find_optimize that made it. */
static bool ran_on_plan(const pdt_pass *const *passes, size_t at, const char *name)
{
    for (size_t j = at; j-- > 0 && (passes[j]->preserves & PDT_AN_BIT(transpile_plan));) {
        if (!strcmp(passes[j]->name, name))
            return true;
        if (!strcmp(passes[j]->name, "find_optimize"))
            return false;
    }
    return false;
}

static int check_one(const pdt_ctx *ctx, const order_rule *r, const pdt_pass *const *passes,
                     size_t at)
{
    const pdt_transpile_opts *o = &ctx->transpile;
    bool geo = o->geo_push_nums > 0;
    /* GEO builds its pservers with geo_pserver, whose programs the shared
     * startup builder reads */
    const char *product_of = geo && r->product_of && !strcmp(r->product_of, "build_pserver")
                                 ? "geo_pserver"
                                 : r->product_of;
    /* the pass that takes the inputs over for the trainer */
    const char *rewriter = geo ? "geo_trainer" : "insert_send_recv";
    if (o->mode != r->mode)
        pdt_error("pass '%s' is for --mode=%s", r->pass, mode_names[r->mode]);
    else if (r->geo > 0 && !geo)
        pdt_error("pass '%s' is for --geo", r->pass);
    else if (r->geo < 0 && geo)
        pdt_error("pass '%s' is not for --geo (GEO-SGD's passes are geo_pserver and "
                  "geo_trainer)", r->pass);
    else if (r->plan_of && !ran_on_plan(passes, at, r->plan_of))
        pdt_error("pass '%s' needs the plan of pass '%s'; run it first", r->pass, r->plan_of);
    else if (r->reads_inputs && ran_on_plan(passes, at, rewriter))
        pdt_error("pass '%s' reads the input programs, which pass '%s' has rewritten into the "
                  "trainer's; run it before '%s'", r->pass, rewriter, rewriter);
    else if (product_of && o->role != r->waives && !ran_on_plan(passes, at, product_of))
        pdt_error("pass '%s' needs %s of pass '%s'; run it first", r->pass, r->product,
                  product_of);
    else if (r->again && ran_on_plan(passes, at, r->pass))
        pdt_error("pass '%s' %s", r->pass, r->again);
    else
        return PDT_OK;
    return PDT_EUSAGE;
}

int tp_check_order(const pdt_ctx *ctx, const pdt_pass *const *passes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < sizeof order_rules / sizeof *order_rules; k++)
            if (!strcmp(passes[i]->name, order_rules[k].pass) &&
                check_one(ctx, &order_rules[k], passes, i))
                return PDT_EUSAGE;
    return PDT_OK;
}

int tp_order_bug(const char *pass)
{
    pdt_error("BUG: pass '%s' ran out of order: the pipeline checks the order of the transpile "
              "passes before running them (tp_check_order)", pass);
    return PDT_EINTERNAL;
}

tp_plan *tp_plan_need(pdt_ctx *ctx, const char *pass, int stage)
{
    tp_plan *st = pdt_analysis_get(ctx, PDT_AN_transpile_plan);
    if (!st || st->pl->stage < stage) {
        tp_order_bug(pass);
        return NULL;
    }
    return st;
}

/* The order outputs are written in, which a failing disk shows (the
 * files before the failure are in place): trainer, then each pserver. */
static void order_staged(tp_plan *st)
{
    pdt_ctx *ctx = st->ctx;
    size_t n_known = 2 + 2 * st->pl->n_eps;
    ir_program **order = xcalloc(n_known, sizeof *order);
    order[0] = st->trainer_main;
    order[1] = st->trainer_startup;
    for (size_t e = 0; e < st->pl->n_eps; e++) {
        order[2 + 2 * e] = st->pserver_main[e];
        order[3 + 2 * e] = st->pserver_startup[e];
    }
    /* slot[i]: the staged entry of order[i]; entries not in `order` keep
     * their place after the known ones. */
    pmap rank = PMAP_INIT;
    for (size_t i = 0; i < n_known; i++)
        if (order[i])
            pmap_put(&rank, order[i], GSIZE_TO_POINTER(i + 1));
    pdt_output **slot = xcalloc(n_known, sizeof *slot);
    pdt_output *sorted = xmalloc_n(ctx->n_staged + 1, sizeof *sorted);
    size_t n = 0;
    for (size_t k = 0; k < ctx->n_staged; k++) {
        size_t r = GPOINTER_TO_SIZE(pmap_get(&rank, ctx->staged[k].program));
        if (r)
            slot[r - 1] = &ctx->staged[k];
    }
    for (size_t i = 0; i < n_known; i++)
        if (slot[i])
            sorted[n++] = *slot[i];
    for (size_t k = 0; k < ctx->n_staged; k++)
        if (!pmap_has(&rank, ctx->staged[k].program))
            sorted[n++] = ctx->staged[k];
    if (n)
        memcpy(ctx->staged, sorted, n * sizeof *sorted);
    pmap_free(&rank);
    free(slot);
    free(sorted);
    free(order);
}

void tp_plan_outputs_changed(tp_plan *st, ir_program *const *progs, size_t n)
{
    order_staged(st);
    for (size_t i = 0; i < n; i++)
        if (progs[i])
            tp_framework_attrs(st->input_ops, progs[i]);
    st->manifest_stale = true;
}

int tp_plan_need_inputs(const tp_plan *st, const char *pass)
{
    return st->trainer_main ? tp_order_bug(pass) : PDT_OK;
}

/* The pass layer of nccl2 and collective: the builders see the options
 * through a tp_collective_plan and the programs they rewrite, never ctx. */
int tp_stage_trainer_rewrite(pdt_ctx *ctx, const char *pass, pdt_dist_mode mode,
                             tp_collective_builder build)
{
    if (ctx->transpile.mode != mode)
        return tp_order_bug(pass);
    if (!ctx->main->n_blocks || !ctx->startup->n_blocks) {
        pdt_error("%s: program has no blocks",
                  ctx->main->n_blocks ? ctx->startup_path : ctx->main_path);
        return PDT_EBADINPUT;
    }
    const pdt_transpile_opts *o = &ctx->transpile;
    /* only collective reads the endpoint (nccl2 lists them all) */
    const char *ep = mode == PDT_MODE_COLLECTIVE ? ir_intern(o->endpoint) : NULL;
    const tp_collective_plan cp = {
        .o = o, .main_path = ctx->main_path, .endpoint = ep,
        .spmt = {o->runtime.selected_gpus, o->runtime.fuse_allreduce, o->runtime.loss_scale}};
    tp_op_set *input_ops = tp_input_ops(ctx);
    ir_program *m = tp_take_over(&ctx->main), *s = tp_take_over(&ctx->startup);
    int rc = build(&cp, m, s);
    if (rc == PDT_OK) {
        tp_framework_attrs(input_ops, m);
        tp_framework_attrs(input_ops, s);
        pdt_ctx_stage_output(ctx, ir_internf("trainer_%d", o->trainer_id), m);
        pdt_ctx_stage_output(ctx, ir_internf("trainer_%d.startup", o->trainer_id), s);
        if (mode == PDT_MODE_NCCL2)
            tp_manifest_nccl2(ctx);
        else
            tp_manifest_collective(ctx, o->collective_mode == PDT_COLL_SPMT ? &cp.spmt : NULL);
    } else {
        /* the builder refused before changing them: ctx gets them back */
        ir_program_free(ctx->main);
        ir_program_free(ctx->startup);
        ctx->main = m;
        ctx->startup = s;
    }
    tp_op_set_free(input_ops);
    return rc;
}
