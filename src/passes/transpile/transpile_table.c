/* transpile_table.c - the distributed lookup table (lookup ops with
 * is_distributed): find_distributed_lookup_table,
 * _update_dist_lookup_table_vars, _replace_lookup_table_op_with_prefetch,
 * _split_table_grad_and_add_send_vars, and the pserver's
 * _create_table_optimize_block, _create_prefetch_block and
 * _create_checkpoint_save_block.
 *
 * The table is neither sliced nor dispatched: every pserver holds
 * ceil(rows / pservers) rows of it as SELECTED_ROWS, the trainer fetches
 * rows with prefetch and sends its grad cut by split_ids (row id modulo the
 * pserver count).  Seed defect 1 (`op.type == LOOKUP_TABLE_TYPE`, a string
 * against a list) is fixed: every lookup op of the table is replaced. */
#include <string.h>

#include "../../diag.h"
#include "builders.h"

struct tp_table {
    const char *name;           /* the table W */
    const char *grad;           /* grad_var_name(table) */
    const ir_var *var, *grad_var;
    const ir_var *ids, *out;    /* Ids / Out of its first lookup op */
    size_t opt_pos;             /* its optimizer op (Param == table) in b0 */
    size_t pair_pos;            /* its index in params_grads */
    const char **trainer_grads; /* trainer_side_table_grad_list, n_eps */
};

static bool is_lookup(const ir_op *op)
{
    return op->type == IR_WK(lookup_table) || op->type == IR_WK(lookup_table_v2);
}

/* The var an Ids/Out slot names first, which must be in block 0 (the seed
 * reads program.global_block().vars[...]). */
static const ir_var *slot_var(tp_plan *st, const ir_op *op, size_t pos, bool out)
{
    const char *slot = out ? "Out" : "Ids";
    const char *n = out ? ir_op_output1(op, slot) : ir_op_input1(op, slot);
    const ir_var *v = n ? ir_block_find_var(st->in.b0, n) : NULL;
    if (!v)
        pdt_error("%s: block 0, op %zu '%s': %s '%s' of the distributed table lookup %s%s%s",
                  st->ctx->main_path, pos, op->type, out ? "output" : "input", slot,
                  n ? "names unknown var '" : "is empty", n ? n : "", n ? "'" : "");
    return v;
}

/* find_distributed_lookup_table: the one table W of the is_distributed
 * lookup ops (lookup_table_v2 too, as the transpiler's LOOKUP_TABLE_TYPE
 * says), or NULL. */
static int find_table(tp_plan *st, const char **table)
{
    const ir_block *b = st->in.b0;
    GArray *plain = g_array_new(FALSE, FALSE, sizeof(size_t));
    int rc = PDT_OK;
    *table = NULL;
    for (size_t i = 0; i < b->n_ops && !rc; i++) {
        const ir_op *op = b->ops[i];
        if (!is_lookup(op))
            continue;
        const char *w = ir_op_input1(op, "W");
        if (!ir_op_get_bool(op, "is_distributed", false)) {
            g_array_append_val(plain, i);
            continue;
        }
        if (!w) {
            pdt_error("%s: block 0, op %zu '%s': input 'W' is empty", st->ctx->main_path, i,
                      op->type);
            rc = PDT_EBADINPUT;
        } else if (!*table) {
            *table = w;
        } else if (w != *table) {
            pdt_error("%s: block 0, op %zu '%s': distributed lookup table '%s' differs from "
                      "'%s' (all distributed lookup ops must share one table)",
                      st->ctx->main_path, i, op->type, w, *table);
            rc = PDT_EBADINPUT;
        }
    }
    /* The seed asserts on a plain lookup of the table after the first
     * distributed one and raises in _replace_lookup_table_op_with_prefetch
     * for one before it: either way an error. */
    for (guint k = 0; k < plain->len && !rc && *table; k++) {
        size_t i = g_array_index(plain, size_t, k);
        const ir_op *op = b->ops[i];
        if (ir_op_input1(op, "W") == *table) {
            pdt_error("%s: block 0, op %zu '%s': looks up the distributed table '%s' "
                      "without attr 'is_distributed'", st->ctx->main_path, i, op->type,
                      *table);
            rc = PDT_EBADINPUT;
        }
    }
    g_array_free(plain, TRUE);
    return rc;
}

/* Every lookup of the table needs an Ids and an Out in block 0. */
static int check_lookups(tp_plan *st, tp_table *t)
{
    tp_placement *pl = st->draft;
    for (size_t i = 0; i < st->in.b0->n_ops; i++) {
        const ir_op *op = st->in.b0->ops[i];
        if (!is_lookup(op) || ir_op_input1(op, "W") != t->name)
            continue;
        const ir_var *ids = slot_var(st, op, i, false);
        const ir_var *out = ids ? slot_var(st, op, i, true) : NULL;
        if (!out)
            return PDT_EBADINPUT;
        if (!t->ids) {
            t->ids = tp_desc_copy(pl->arena, ids);
            t->out = tp_desc_copy(pl->arena, out);
        }
    }
    return PDT_OK;
}

int tp_table_find(tp_plan *st)
{
    tp_placement *pl = st->draft;
    const char *name = NULL;
    int rc = find_table(st, &name);
    if (rc || !name)
        return rc;
    const char *path = st->ctx->main_path;
    tp_table *t = ir_arena_alloc(pl->arena, sizeof *t);
    t->name = name;
    t->grad = ir_internf("%s@GRAD", name);
    size_t pi = 0;
    while (pi < pl->n_pairs && pl->pairs[pi].param.name != name)
        pi++;
    bool have_opt = false;
    for (size_t i = 0; i < pl->n_opt && !have_opt; i++) {
        const ir_op *op = st->in.b0->ops[pl->opt_pos[i]];
        if (ir_op_input(op, "Param") && ir_op_input1(op, "Param") == name) {
            t->opt_pos = pl->opt_pos[i];
            have_opt = true;
        }
    }
    if (pi == pl->n_pairs || !have_opt) {
        pdt_error("%s: distributed lookup table '%s' has no optimizer op (an op with input "
                  "'Param' and op_role_var naming it)", path, name);
        return PDT_EBADINPUT;
    }
    /* table_block gives the pservers' sgd the optimizer's learning rate. */
    const ir_op *topt = st->in.b0->ops[t->opt_pos];
    const char *lr = ir_op_input1(topt, "LearningRate");
    if (!lr || !ir_block_find_var(st->in.b0, lr)) {
        pdt_error("%s: block 0, op %zu '%s': distributed lookup table '%s': the optimizer "
                  "needs input 'LearningRate' naming a var of block 0",
                  path, t->opt_pos, topt->type, name);
        return PDT_EBADINPUT;
    }
    const tp_pair *p = &pl->pairs[pi];
    if (p->grad.name != t->grad) {
        pdt_error("%s: distributed lookup table '%s': its grad is '%s', not '%s'", path, name,
                  p->grad.name, t->grad);
        return PDT_EBADINPUT;
    }
    t->var = p->param.var;
    t->grad_var = p->grad.var;
    if (t->var->n_dims == 0 || t->var->dims[0] <= 0) {
        char dims[128];
        pdt_error("%s: distributed lookup table '%s' has dims %s; splitting its rows among "
                  "the pservers needs a known row count (dim 0)", path, name,
                  ir_dims_text(t->var->dims, t->var->n_dims, dims, sizeof dims));
        return PDT_EBADINPUT;
    }
    rc = check_lookups(st, t);
    if (rc)
        return rc;
    /* _update_dist_lookup_table_vars: the table and its grad are neither
     * sliced nor dispatched, so they leave the pairs. */
    t->pair_pos = pi;
    memmove(&st->draft_pairs[pi], &pl->pairs[pi + 1], (pl->n_pairs - pi - 1) * sizeof *pl->pairs);
    pl->n_pairs--;
    t->trainer_grads = ir_arena_alloc(pl->arena, pl->n_eps * sizeof *t->trainer_grads);
    for (size_t k = 0; k < pl->n_eps; k++)
        t->trainer_grads[k] =
            pl->sync ? ir_internf("%s.trainer_%d.pserver_%zu", t->grad,
                                  st->ctx->transpile.trainer_id, k)
                     : ir_internf("%s.pserver_%zu", t->grad, k);
    const ir_op *opt = st->in.b0->ops[t->opt_pos];
    if (st->ctx->transpile.role != PDT_ROLE_TRAINER && opt->type != IR_WK(sgd))
        pdt_warning("distributed lookup table '%s' is updated with sgd on the pservers, "
                    "not with its optimizer '%s'", name, opt->type);
    pl->table = t;
    return PDT_OK;
}

/* ---- trainer ---- */

const char *tp_table_send_dummy(const tp_placement *pl, ir_block *b, unsigned *ctl)
{
    return pl->table ? tp_control_var(b, ctl) : NULL;
}

GPtrArray *tp_sparse_table_names(const tp_placement *pl, const tp_inputs *in)
{
    GPtrArray *names = g_ptr_array_new();
    for (size_t pi = 0; pi <= pl->n_pairs; pi++) {
        if (pl->table && pl->table->pair_pos == pi)
            g_ptr_array_add(names, (void *)pl->table->name);
        if (pi < pl->n_pairs && pl->pairs[pi].sparse_table)
            g_ptr_array_add(names, (void *)pl->pairs[pi].param.name);
    }
    /* _get_sparse_table_names also lists the tables of is_sparse lookups
     * that no optimizer updates (a frozen embedding): they follow, in op
     * order. */
    pmap seen = PMAP_INIT;
    for (guint i = 0; i < names->len; i++)
        pmap_add(&seen, names->pdata[i]);
    for (size_t k = 0; k < in->b0->n_ops; k++) {
        ir_block_prefetch_op(in->b0, k);
        const char *w = tp_sparse_table_of(in->b0->ops[k]);
        if (w && !tp_pair_of_param(pl, w) && pmap_add(&seen, w))
            g_ptr_array_add(names, (void *)w);
    }
    pmap_free(&seen);
    return names;
}

static ir_op *new_op(ir_program *p, const char *type, int role)
{
    ir_op *op = ir_op_new(p, type);
    ir_op_set_role(op, role);
    return op;
}

/* create_var(name, type, shape, dtype) of the seed: no lod_level, no
 * persistable. */
static const char *like_var(ir_block *b, const char *name, const ir_var *like)
{
    tp_create_var(b, name, like->type, like->dtype, like->dims, like->n_dims, -1, -1);
    return ir_intern(name);
}

static const char *in_tmp(size_t k)
{
    return ir_internf("prefetch_compress_in_tmp_%zu", k);
}

static const char *out_tmp(size_t k)
{
    return ir_internf("prefetch_compress_out_tmp_%zu", k);
}

/* _replace_lookup_table_op_with_prefetch: every lookup of the table goes;
 * one split_ids -> prefetch -> merge_ids for all of them stands where the
 * first was.  Returns the new op list. */
static GPtrArray *replace_lookups(const tp_placement *pl, const tp_inputs *in, ir_block *b)
{
    const tp_table *t = pl->table;
    ir_program *p = b->program;
    GPtrArray *ops = g_ptr_array_sized_new((guint)b->n_ops + 8);
    GPtrArray *ids = g_ptr_array_new(), *outs = g_ptr_array_new();
    guint first = G_MAXUINT;
    for (size_t k = 0; k < b->n_ops; k++) {
        ir_op *op = b->ops[k];
        if (is_lookup(op) && ir_op_input1(op, "W") == t->name) {
            if (first == G_MAXUINT)
                first = ops->len;
            g_ptr_array_add(ids, (void *)ir_op_input1(op, "Ids"));
            g_ptr_array_add(outs, (void *)ir_op_output1(op, "Out"));
            continue;
        }
        g_ptr_array_add(ops, op);
    }
    size_t n = pl->n_eps;
    const char **ins = ir_arena_alloc(in->arena, n * sizeof *ins);
    const char **outv = ir_arena_alloc(in->arena, n * sizeof *outv);
    for (size_t k = 0; k < n; k++) {
        ins[k] = like_var(b, in_tmp(k), t->ids);
        outv[k] = like_var(b, out_tmp(k), t->out);
    }
    ir_op *split = new_op(p, "split_ids", IR_ROLE_FORWARD);
    ir_op_set_input(split, "Ids", (const char *const *)ids->pdata, ids->len);
    ir_op_set_output(split, "Out", ins, n);
    ir_op *fetch = new_op(p, "prefetch", IR_ROLE_FORWARD);
    ir_op_set_input(fetch, "X", ins, n);
    ir_op_set_output(fetch, "Out", outv, n);
    ir_op_set_strings(fetch, "epmap", pl->eps, n);
    ir_op *merge = new_op(p, "merge_ids", IR_ROLE_FORWARD);
    ir_op_set_input(merge, "Ids", (const char *const *)ids->pdata, ids->len);
    ir_op_set_input(merge, "Rows", ins, n);
    ir_op_set_input(merge, "X", outv, n);
    ir_op_set_output(merge, "Out", (const char *const *)outs->pdata, outs->len);
    g_ptr_array_insert(ops, (gint)first, merge);
    g_ptr_array_insert(ops, (gint)first, fetch);
    g_ptr_array_insert(ops, (gint)first, split);
    g_ptr_array_free(ids, TRUE);
    g_ptr_array_free(outs, TRUE);
    return ops;
}

/* _split_table_grad_and_add_send_vars: split_ids and send right after the
 * first op that writes the table's grad. */
static void send_grad(const tp_placement *pl, const tp_inputs *in, ir_block *b, GPtrArray *ops,
                      const char *table_dummy)
{
    const tp_table *t = pl->table;
    size_t n = pl->n_eps;
    /* _update_dist_lookup_table_vars declares them up front, whether or
     * not an op writes the grad. */
    for (size_t k = 0; k < n; k++)
        like_var(b, t->trainer_grads[k], t->grad_var);
    guint at = 0;
    while (at < ops->len && !ir_op_writes(ops->pdata[at], t->grad))
        at++;
    if (at == ops->len)
        return;     /* the seed adds no op either */
    ir_op *split = new_op(b->program, "split_ids", IR_ROLE_DIST);
    ir_op_set_input1(split, "Ids", t->grad);
    ir_op_set_output(split, "Out", t->trainer_grads, n);
    ir_op *send = new_op(b->program, "send", IR_ROLE_RPC);
    ir_op_set_input(send, "X", t->trainer_grads, n);
    ir_op_set_output(send, "Out", &table_dummy, pl->sync ? 1 : 0);
    ir_op_set_strings(send, "epmap", pl->eps, n);
    ir_op_set_int(send, "trainer_id", in->o->trainer_id);
    const char *rv[2] = {t->name, t->grad};
    ir_op_set_strings(send, "op_role_var", rv, 2);
    g_ptr_array_insert(ops, (gint)at + 1, send);
    g_ptr_array_insert(ops, (gint)at + 1, split);
}

void tp_table_trainer(const tp_placement *pl, const tp_inputs *in, ir_block *b,
                      const char *table_dummy)
{
    if (!pl->table)
        return;
    GPtrArray *ops = replace_lookups(pl, in, b);
    send_grad(pl, in, b, ops, table_dummy);
    ir_block_set_ops(b, (ir_op *const *)ops->pdata, ops->len);
    g_ptr_array_free(ops, TRUE);
}

/* ---- pserver ---- */

/* _create_table_optimize_block: sum the trainers' rows (sync) and apply
 * sgd, whatever the table's optimizer was (the seed only supports sgd). */
static ir_block *table_block(const tp_placement *pl, const tp_inputs *in, size_t ep,
                             ir_program *p, int32_t pre, GPtrArray *grad_to_block)
{
    const tp_table *t = pl->table;
    ir_block *g = p->blocks[0];
    ir_block *tb = ir_program_add_block(p, pre);
    const ir_op *opt = in->b0->ops[t->opt_pos];
    int64_t *dims = ir_arena_dup(in->arena, t->var->dims, t->var->n_dims * sizeof *dims);
    int64_t n_eps = (int64_t)pl->n_eps;
    dims[0] = (dims[0] + n_eps - 1) / n_eps;
    tp_create_var(g, t->name, IR_SELECTED_ROWS, t->var->dtype, dims, t->var->n_dims, -1, 1);
    const char *grad = t->grad;
    if (pl->sync) {
        tp_clone_variable(g, t->grad_var, NULL);
        int n = in->o->trainers;
        const char **xs = ir_arena_alloc(in->arena, (size_t)n * sizeof *xs);
        for (int i = 0; i < n; i++)
            xs[i] = like_var(g, ir_internf("%s.trainer_%d.pserver_%zu", t->grad, i, ep),
                             t->grad_var);
        ir_op *sum = ir_block_append_op(tb, "sum");
        ir_op_set_input(sum, "X", xs, (size_t)n);
        ir_op_set_output1(sum, "Out", grad);
        ir_op_set_role(sum, IR_ROLE_FORWARD);
    } else {
        /* _clone_variable then _rename_var to the .pserver_<k> name. */
        grad = t->trainer_grads[ep];
        tp_clone_variable(g, t->grad_var, grad);
    }
    const char *lr = ir_op_input1(opt, "LearningRate");
    tp_clone_variable(g, ir_block_find_var(in->b0, lr), NULL);
    ir_op *sgd = ir_block_append_op(tb, "sgd");
    ir_op_set_input1(sgd, "Param", t->name);
    ir_op_set_input1(sgd, "Grad", grad);
    ir_op_set_input1(sgd, "LearningRate", lr);
    /* sgd's proto (Paddle 2.2 and later) declares the dispensable
     * MasterParam, which Operator writes empty when not given. */
    ir_op_set_input(sgd, "MasterParam", NULL, 0);
    ir_op_set_output1(sgd, "ParamOut", t->name);
    ir_op_set_role(sgd, IR_ROLE_FORWARD);
    g_ptr_array_add(grad_to_block, (void *)ir_internf("%s:%d", grad, tb->idx));
    return tb;
}

int tp_table_pserver(const tp_placement *pl, const tp_inputs *in, size_t ep, ir_program *p,
                     int32_t pre, GArray *blocks, GPtrArray *grad_to_block, tp_table_ps *out)
{
    const tp_table *t = pl->table;
    if (!t)
        return PDT_OK;
    ir_block *g = p->blocks[0];
    ir_block *tb = table_block(pl, in, ep, p, pre, grad_to_block);
    g_array_append_val(blocks, tb->idx);

    /* _create_prefetch_block */
    ir_block *pb = ir_program_add_block(p, tb->idx);
    const char *ids = like_var(g, in_tmp(ep), t->ids);
    const char *rows = like_var(g, out_tmp(ep), t->out);
    ir_op *look = ir_block_append_op(pb, "lookup_sparse_table");
    ir_op_set_input1(look, "Ids", ids);
    ir_op_set_input1(look, "W", t->name);
    ir_op_set_output1(look, "Out", rows);
    /* The seed also passes is_sparse and is_distributed, which
     * lookup_sparse_table's proto does not declare, so Python's Operator
     * drops them; padding_idx is an int64 there. */
    ir_op_set_long(look, "padding_idx", -1);
    ir_op_set_role(look, IR_ROLE_FORWARD);
    out->prefetch = ir_internf("%s:%d", ids, pb->idx);

    /* _create_checkpoint_save_block */
    tp_create_var(g, "kLookupTablePath", IR_RAW, 0, NULL, 0, -1, 1);
    ir_block *cb = ir_program_add_block(p, tb->idx);
    ir_op *save = ir_block_append_op(cb, "save");
    ir_op_set_input1(save, "X", t->name);
    ir_op_set_string(save, "file_path", "none");
    ir_op_set_role(save, IR_ROLE_FORWARD);
    out->checkpoint_block = cb->idx;
    return PDT_OK;
}

void tp_table_serv_attrs(const tp_placement *pl, ir_op *serv, const tp_table_ps *tps)
{
    if (!pl->table)
        return;
    /* "checkpint" is Paddle's spelling of the attr. */
    ir_op_set_int(serv, "checkpint_block_id", tps->checkpoint_block);
    ir_op_set_strings(serv, "prefetch_var_name_to_block_id", &tps->prefetch, 1);
}

/* ---- manifest ---- */

const pdt_manifest_table *tp_table_manifest(tp_plan *st, pdt_manifest *m)
{
    const tp_table *t = st->pl->table;
    pdt_manifest_table *mt = pdt_manifest_alloc(m, sizeof *mt);
    mt->name = pdt_manifest_str(m, t->name);
    mt->n_shape = t->var->n_dims;
    mt->shape = pdt_manifest_dims(m, t->var->dims, t->var->n_dims);
    int64_t *rows = (int64_t *)pdt_manifest_dims(m, t->var->dims, t->var->n_dims);
    if (t->var->n_dims)
        rows[0] = (rows[0] + (int64_t)st->pl->n_eps - 1) / (int64_t)st->pl->n_eps;
    mt->pserver_shape = rows;
    mt->grad = pdt_manifest_str(m, t->grad);
    const char **g = pdt_manifest_alloc(m, (st->pl->n_eps + 1) * sizeof *g);
    for (size_t k = 0; k < st->pl->n_eps; k++)
        g[k] = pdt_manifest_str(m, t->trainer_grads[k]);
    mt->trainer_grads = g;
    mt->n_trainer_grads = st->pl->n_eps;
    return mt;
}
