/* find_optimize.c - pass 'find_optimize': starts the plan.  Follows
 * _get_optimize_pass (which ops move to the pservers, and the (param,
 * grad) pairs they update) and, for async modes, _get_lr_ops' counters. */
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "../era/era.h"
#include "builders.h"

/* An optimize op moves to a pserver program, where a BLOCK/BLOCKS attr
 * would name a block of the input that is not there (the seed copies the
 * attr as it is, leaving a dangling block reference).  Only the LR ops'
 * sub-blocks are copied (__clone_lr_op_sub_block__), so refuse the rest. */
static int refuse_block_attrs(tp_plan *st, const ir_op *op, size_t pos)
{
    ir_attr_iter it = ir_op_block_attr_iter(op);
    const ir_attr *at = ir_attr_next(&it);
    if (at) {
        pdt_error("%s: block 0, op %zu '%s': attr '%s' names a sub-block, but optimize ops "
                  "move to the pservers without their sub-blocks",
                  st->ctx->main_path, pos, op->type, at->name);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

/* An LR op moves to the pservers with its 'sub_block', and that block's
 * ops with theirs, each re-pointed to its copy (__clone_lr_op_sub_block__);
 * any other BLOCK or BLOCKS attr on the way would still name a block of
 * the input, so refuse it.  The gate made the sub-blocks a tree, so the
 * walk sees each block once. */
static int refuse_lr_block_attrs(tp_plan *st, const ir_op *lr_op, size_t pos)
{
    GPtrArray *todo = g_ptr_array_new();
    g_ptr_array_add(todo, (void *)lr_op);
    int rc = PDT_OK;
    while (todo->len && rc == PDT_OK) {
        const ir_op *op = g_ptr_array_remove_index(todo, todo->len - 1);
        ir_attr_iter it = ir_op_block_attr_iter(op);
        for (const ir_attr *at; rc == PDT_OK && (at = ir_attr_next(&it));) {
            if (at->type == IR_ATTR_BLOCK && at->name == IR_WK(sub_block)) {
                const ir_block *sb = ir_program_block(st->in.main, at->block_idx);
                for (size_t k = 0; sb && k < sb->n_ops; k++)
                    g_ptr_array_add(todo, sb->ops[k]);
            } else if (at->type == IR_ATTR_BLOCK || at->type == IR_ATTR_BLOCKS) {
                pdt_error("%s: block 0, op %zu '%s': attr '%s'%s%s%s names a block, but LR ops "
                          "move to the pservers with their 'sub_block' only",
                          st->ctx->main_path, pos, lr_op->type, at->name,
                          op == lr_op ? "" : " of '", op == lr_op ? "" : op->type,
                          op == lr_op ? "" : "' in its sub-block");
                rc = PDT_EBADINPUT;
            }
        }
    }
    g_ptr_array_free(todo, TRUE);
    return rc;
}

/* Every var an optimize op names must exist: the pservers copy their descs
 * from the input (seed: KeyError deep inside get_pserver_program). */
static int check_declared(tp_plan *st, const ir_op *op, size_t pos)
{
    const ir_slot *sets[2] = {ir_op_ins(op), ir_op_outs(op)};
    size_t counts[2] = {op->n_inputs, op->n_outputs};
    for (int io = 0; io < 2; io++)
        for (size_t s = 0; s < counts[io]; s++)
            for (size_t a = 0; a < sets[io][s].n_args; a++) {
                const char *arg = sets[io][s].args[a];
                if (!ir_block_find_var(st->in.b0, arg)) {
                    pdt_error("%s: block 0, op %zu '%s': %s '%s' names unknown var '%s'",
                              st->ctx->main_path, pos, op->type,
                              io ? "output" : "input", sets[io][s].name, arg);
                    return PDT_EBADINPUT;
                }
            }
    return PDT_OK;
}

static int add_pair(tp_plan *st, GArray *pairs, const char *param,
                    const char *grad, const ir_op *op, size_t pos)
{
    tp_placement *pl = st->draft;
    const ir_var *pv = ir_block_find_var(st->in.b0, param);
    const ir_var *gv = ir_block_find_var(st->in.b0, grad);
    if (!pv || !gv) {
        pdt_error("%s: block 0, op %zu '%s': attr 'op_role_var' names unknown var '%s'",
                  st->ctx->main_path, pos, op->type, pv ? grad : param);
        return PDT_EBADINPUT;
    }
    tp_pair p;
    memset(&p, 0, sizeof p);
    p.param.name = pv->name;
    p.param.var = tp_desc_copy(pl->arena, pv);
    p.grad.name = gv->name;
    p.grad.var = tp_desc_copy(pl->arena, gv);
    g_array_append_val(pairs, p);
    return PDT_OK;
}

static void mark_sparse_tables(tp_plan *st)
{
    tp_placement *pl = st->draft;
    for (size_t i = 0; i < st->in.b0->n_ops; i++) {
        ir_block_prefetch_op(st->in.b0, i);
        const char *w = tp_sparse_table_of(st->in.b0->ops[i]);
        const tp_pair *p = w ? tp_pair_of_param(pl, w) : NULL;
        if (p)
            st->draft_pairs[p - pl->pairs].sparse_table = true;
    }
}

/* --geo: fluid's find_distributed_lookup_table (lookup_table ops only, not
 * _v2) names the table, which _get_sparse_table_names then lists: the
 * trainer's startup does not receive it. */
static void mark_geo_distributed_tables(tp_plan *st)
{
    tp_placement *pl = st->draft;
    for (size_t i = 0; i < st->in.b0->n_ops; i++) {
        const ir_op *op = st->in.b0->ops[i];
        if (op->type != IR_WK(lookup_table) || !ir_op_get_bool(op, "is_distributed", false))
            continue;
        const char *w = ir_op_input1(op, "W");
        const tp_pair *p = w ? tp_pair_of_param(pl, w) : NULL;
        if (p)
            st->draft_pairs[p - pl->pairs].sparse_table = true;
    }
}

/* _get_distribute_update_vars: the comma-separated names in any op's
 * distribute_update_vars attr become (var, var) pairs after the optimizer
 * pairs, in first-occurrence order (the seed's list(set(...)) order is
 * arbitrary).  A var that already is an optimizer's param stays that: the
 * seed's _init_splited_vars drops the duplicate. */
static int add_update_vars(tp_plan *st, GArray *pairs, pmap *seen)
{
    for (size_t i = 0; i < st->in.b0->n_ops; i++) {
        const ir_op *op = st->in.b0->ops[i];
        const char *list = ir_op_has_attr(op, "distribute_update_vars")
                               ? ir_op_get_string(op, "distribute_update_vars")
                               : NULL;
        if (!list || !*list)
            continue;
        pdt_list names = pdt_list_split(list);
        int rc = PDT_OK;
        for (size_t k = 0; k < names.n && rc == PDT_OK; k++) {
            const char *n = names.items[k];
            if (pmap_has(seen, n))
                continue;
            if (!ir_block_find_var(st->in.b0, n)) {
                pdt_error("%s: block 0, op %zu '%s': attr 'distribute_update_vars' names "
                          "unknown var '%s'", st->ctx->main_path, i, op->type, n);
                rc = PDT_EBADINPUT;
                break;
            }
            pmap_add(seen, n);
            rc = add_pair(st, pairs, n, n, op, i);
            if (rc == PDT_OK)
                g_array_index(pairs, tp_pair, pairs->len - 1).update_var = true;
        }
        pdt_list_free(&names);
        if (rc)
            return rc;
    }
    return PDT_OK;
}

/* What an optimize op must be to move to a pserver: its vars declared, no
 * BLOCK attrs (pserver mode), a LearningRate input that names a var. */
static int check_optimize_op(tp_plan *st, const ir_op *op, size_t i)
{
    tp_placement *pl = st->draft;
    int rc = check_declared(st, op, i);
    if (!rc && st->ctx->transpile.mode == PDT_MODE_PSERVER && !pl->geo)
        rc = refuse_block_attrs(st, op, i);
    if (rc)
        return rc;
    const ir_slot *lr = ir_op_input(op, "LearningRate");
    if (lr && lr->n_args == 0 && ir_op_input(op, "Param")) {
        pdt_error("%s: block 0, op %zu '%s': input 'LearningRate' is empty",
                  st->ctx->main_path, i, op->type);
        return PDT_EBADINPUT;
    }
    return PDT_OK;
}

/* One pass over block 0: op_kind of every op, the optimize ops'
 * positions and op_by_param lists, and params_grads in op order. */
static int classify_ops(tp_plan *st, GArray *pairs, pmap *seen, size_t *opt_pos)
{
    tp_placement *pl = st->draft;
    const ir_block *b = st->in.b0;
    int rc = PDT_OK;
    bool pserver = st->ctx->transpile.mode == PDT_MODE_PSERVER;
    /* the op_role_var lists are read once: not kept in the plan's arena */
    ir_arena *scratch = ir_arena_new();
    for (size_t i = 0; i < b->n_ops && rc == PDT_OK; i++) {
        const ir_op *op = b->ops[i];
        int role = ir_op_role(op);
        if (role == IR_ROLE_LRSCHED || role == (IR_ROLE_LRSCHED | IR_ROLE_OPTIMIZE)) {
            st->draft_op_kind[i] = TP_OP_LR;  /* copied to the pservers, so checked too */
            rc = check_declared(st, op, i);
            if (!rc && pserver && !pl->geo)     /* GEO-SGD moves no op */
                rc = refuse_lr_block_attrs(st, op, i);
            continue;
        }
        if (role != IR_ROLE_OPTIMIZE)
            continue;
        if (pserver && ir_op_is_grad_clip(op)) {
            st->draft_op_kind[i] = TP_OP_CLIP;
            continue;
        }
        st->draft_op_kind[i] = TP_OP_OPTIMIZE;
        opt_pos[pl->n_opt++] = i;
        rc = check_optimize_op(st, op, i);
        if (rc)
            break;
        size_t n_rv = 0;
        const char **rv = ir_op_get_names(op, "op_role_var", &n_rv, scratch);
        if (n_rv == 0)
            continue;
        tp_lookup_add_opt(st->draft_lookup, rv[0], i);
        if (n_rv < 2 || !pmap_add(seen, rv[0]))
            continue;
        rc = add_pair(st, pairs, rv[0], rv[1], op, i);
    }
    ir_arena_free(scratch);
    return rc;
}

/* The seed dedups params and grads through one name set; a grad shared by
 * two params (or a param that is another's grad) would break its pairing,
 * so refuse it with a clear message instead.  Fills the pair lookups. */
static int index_pairs(tp_plan *st)
{
    tp_placement *pl = st->draft;
    for (size_t i = 0; i < pl->n_pairs; i++) {
        const tp_pair *p = &pl->pairs[i];
        if (tp_pair_of_grad(pl, p->grad.name) || tp_pair_of_grad(pl, p->param.name) ||
            tp_pair_of_param(pl, p->grad.name) ||
            (p->grad.name == p->param.name && !p->update_var)) {
            if (p->update_var) {
                pdt_error("%s: var '%s' in attr 'distribute_update_vars' is also the grad of "
                          "an optimized param", st->ctx->main_path, p->param.name);
                return PDT_EBADINPUT;
            }
            pdt_error("%s: param '%s' and its grad '%s' clash with another (param, grad) pair",
                      st->ctx->main_path, p->param.name, p->grad.name);
            return PDT_EBADINPUT;
        }
        tp_lookup_set_pair(st->draft_lookup, p->param.name, p->grad.name, i);
    }
    return PDT_OK;
}

int tp_find_optimize(tp_plan *st)
{
    tp_placement *pl = st->draft;
    const ir_block *b = st->in.b0;
    st->draft_op_kind = ir_arena_alloc(pl->arena, b->n_ops + 1);
    pl->op_kind = st->draft_op_kind;
    size_t *opt_pos = ir_arena_alloc(pl->arena, (b->n_ops + 1) * sizeof *opt_pos);
    pl->opt_pos = opt_pos;
    GArray *pairs = g_array_new(FALSE, FALSE, sizeof(tp_pair));
    pmap seen = PMAP_INIT;
    int rc = classify_ops(st, pairs, &seen, opt_pos);
    if (rc == PDT_OK && pl->n_opt > 0)
        rc = add_update_vars(st, pairs, &seen);
    pmap_free(&seen);
    if (rc == PDT_OK && pl->n_opt == 0) {
        pdt_error("%s: no optimize ops (op_role 2) in block 0: nothing to distribute "
                  "(run the optimizer first, or give --loss and --optimizer)",
                  st->ctx->main_path);
        rc = PDT_EBADINPUT;
    } else if (rc == PDT_OK && pairs->len == 0) {
        pdt_error("%s: no optimize op names a (param, grad) pair in 'op_role_var'",
                  st->ctx->main_path);
        rc = PDT_EBADINPUT;
    }
    pl->n_pairs = pairs->len;
    st->draft_pairs = ir_arena_alloc(pl->arena, (pairs->len + 1) * sizeof(tp_pair));
    pl->pairs = st->draft_pairs;
    if (pairs->len)
        memcpy(st->draft_pairs, pairs->data, pairs->len * sizeof(tp_pair));
    g_array_free(pairs, TRUE);
    if (rc || (rc = pl->geo ? PDT_OK : tp_table_find(st)) || (rc = index_pairs(st)))
        return rc;
    mark_sparse_tables(st);
    if (pl->geo) {
        /* GeoSgdTranspiler keeps a distributed table among the params (its
         * find_distributed_lookup_table only names it) and prefetches
         * nothing: lookup_table ops get remote_prefetch False. */
        for (size_t i = 0; i < pl->n_pairs; i++)
            st->draft_pairs[i].sparse_grad = pl->pairs[i].grad.var->type == IR_SELECTED_ROWS;
        mark_geo_distributed_tables(st);
        return PDT_OK;
    }
    return tp_find_remote_prefetch(st);
}

/* The placement's copy of v: see builders.h. */
const ir_var *tp_desc_copy(ir_arena *a, const ir_var *v)
{
    ir_var *copy = ir_arena_alloc(a, sizeof *copy);
    *copy = *v;
    copy->rare = NULL;
    copy->dims = v->n_dims ? ir_arena_memdup(a, v->dims, v->n_dims * sizeof *v->dims) : NULL;
    return copy;
}

/* The placement's settings, resolved from ctx once (its own copy of the
 * endpoint list). */
static tp_placement *new_placement(const pdt_ctx *ctx)
{
    tp_placement *pl = xcalloc(1, sizeof *pl);
    pl->arena = ir_arena_new();
    pl->n_eps = ctx->transpile.pservers.n;
    const char **eps = ir_arena_alloc(pl->arena, (pl->n_eps + 1) * sizeof *eps);
    for (size_t e = 0; e < pl->n_eps; e++)
        eps[e] = ctx->transpile.pservers.items[e];
    pl->eps = eps;
    pl->geo = ctx->transpile.geo_push_nums > 0;
    pl->sync = ctx->transpile.sync_mode == PDT_SYNC && !pl->geo;
    pl->runtime_split = ctx->transpile.sync_mode == PDT_HALF_ASYNC;
    pl->half_async = ctx->transpile.sync_mode == PDT_HALF_ASYNC;
    pl->trainer_suffix = pl->sync && ctx->transpile.trainers > 1;
    /* The seed's mapping from its config, not the flag's name: sync 0;
     * runtime_split_send_recv (pdtrans --half-async) ASYNC 1; any other
     * async HALF_ASYNC 2.  The pserver runtime treats 1 and 2 alike. */
    pl->dist_mode = ctx->transpile.sync_mode == PDT_SYNC         ? TP_DM_SYNC
                    : ctx->transpile.sync_mode == PDT_HALF_ASYNC ? TP_DM_ASYNC
                                                                 : TP_DM_HALF_ASYNC;
    if (pl->geo)    /* GeoSgdTranspiler forces sync_mode False; DistributedMode.GEO */
        pl->dist_mode = TP_DM_GEO;
    return pl;
}

/* A new plan with the settings resolved from ctx, before the search. */
void *tp_plan_create(pdt_ctx *ctx)
{
    tp_plan *st = xcalloc(1, sizeof *st);
    st->ctx = ctx;
    st->in.o = &ctx->transpile;
    st->in.main_path = ctx->main_path;
    st->in.drop_input = ctx->settings.drop_input_pages;
    st->in.arena = ir_arena_new();
    st->draft = new_placement(ctx);
    st->pl = st->draft;
    st->draft_lookup = tp_lookup_new();
    st->draft->lookup = st->draft_lookup;
    st->narrow = (size_t)-1;
    size_t n = st->pl->n_eps + 1;
    st->pserver_main = ir_arena_alloc(st->in.arena, n * sizeof *st->pserver_main);
    st->pserver_startup = ir_arena_alloc(st->in.arena, n * sizeof *st->pserver_startup);
    st->pserver_written = ir_arena_alloc(st->in.arena, n * sizeof *st->pserver_written);
    memset(st->pserver_main, 0, n * sizeof *st->pserver_main);
    memset(st->pserver_startup, 0, n * sizeof *st->pserver_startup);
    memset(st->pserver_written, 0, n * sizeof *st->pserver_written);
    /* The ops of the inputs, before the async LR rewrite adds its own:
     * every other op of an output gets the framework attrs. */
    st->input_ops = tp_input_ops(ctx);
    return st;
}

/* A 1.4-1.5 pserver runs its LR-decay block once, before the async loop
 * (listen_and_serv_op.cc v1.5.2 RunAsyncLoop: block 1 when no grad is
 * bound to it), so an async job's rate never changes: said once. */
static void warn_async_lr_frozen(const pdt_ctx *ctx)
{
    const ir_block *b = ctx->main->blocks[0];
    for (size_t i = 0; i < b->n_ops; i++) {
        int role = ir_op_role(b->ops[i]);
        if (role == IR_ROLE_LRSCHED || role == (IR_ROLE_LRSCHED | IR_ROLE_OPTIMIZE)) {
            char v[16];
            pdt_era_format(ctx->settings.era, v, sizeof v);
            pdt_warning("%s: op %zu '%s' schedules the learning rate, and Paddle %s's async "
                        "pservers run the LR ops once, at start: the rate never changes "
                        "(from 1.6 the trainers send step counters)",
                        ctx->main_path, i, b->ops[i]->type, v);
            return;
        }
    }
}

/* The async LR counter rewrite; the placement keeps a copy of the list. */
static int lr_counters(pdt_ctx *ctx, tp_placement *pl)
{
    GPtrArray *mine = g_ptr_array_new();
    bool async = ctx->transpile.sync_mode != PDT_SYNC && !pl->geo;
    if (async && !tp_era_async_lr_counters(ctx))
        warn_async_lr_frozen(ctx);
    int rc = async && tp_era_async_lr_counters(ctx) ? tp_async_lr_counters(ctx, mine) : PDT_OK;
    pl->n_lr_counters = mine->len;
    const char **copy = ir_arena_alloc(pl->arena, (mine->len + 1) * sizeof *copy);
    for (guint i = 0; i < mine->len; i++)
        copy[i] = g_ptr_array_index(mine, i);
    pl->lr_counters = copy;
    g_ptr_array_free(mine, TRUE);
    return rc;
}

/* The plan as 'find_optimize' makes it: the async LR counter rewrite
 * (_get_lr_ops with sync_mode=False), then the plan's search:
 * params_grads, the optimize, clip and LR ops, the distributed lookup
 * table, remote prefetch.  The analysis's create hook (tp_plan_ops): the
 * pass manager runs it for the pass, and for any pass that needs the plan
 * when none is cached. */
int tp_plan_build(pdt_ctx *ctx, void **out)
{
    if (!ctx->main || ctx->main->n_blocks == 0) {
        pdt_error("%s: program has no blocks", ctx->main_path);
        return PDT_EBADINPUT;
    }
    int checked = tp_era_check_modes(ctx);
    if (checked)
        return checked;
    tp_plan *st = tp_plan_create(ctx);
    *out = st;
    tp_placement *pl = st->draft;
    int rc = PDT_OK;
    /* lr_move.c: before the counters, which then count the moved increment */
    if (ctx->transpile.mode == PDT_MODE_PSERVER && !pl->geo)
        rc = tp_lr_trainer_computed(ctx);
    if (!rc)
        rc = lr_counters(ctx, pl);
    st->in.main = ctx->main;
    st->in.startup = ctx->startup;
    st->in.b0 = ctx->main->blocks[0];
    if (!rc)
        rc = tp_find_optimize(st);
    if (rc)
        return rc;
    ir_op **ops0 = ir_arena_alloc(st->in.arena, (st->in.b0->n_ops + 1) * sizeof *ops0);
    if (st->in.b0->n_ops)
        memcpy(ops0, st->in.b0->ops, st->in.b0->n_ops * sizeof *ops0);
    st->in.ops0 = ops0;
    st->in.n_ops0 = st->in.b0->n_ops;
    pl->stage = TP_PLAN_FOUND;
    return PDT_OK;
}

/* Pass 'find_optimize': a new plan (a plan made before is finished, its
 * manifest made, and replaced). */
int pass_find_optimize(pdt_ctx *ctx)
{
    return pdt_analysis_fresh(ctx, PDT_AN_transpile_plan);
}
