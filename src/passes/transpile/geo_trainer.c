/* geo_trainer.c - pass 'geo_trainer' (--geo): GeoSgdTranspiler's
 * transpile() on the trainer side, then get_trainer_program and
 * trainer_startup_program.  The trainer keeps every op (its optimizer
 * included: it trains locally); transpile() only declares the slice and
 * delta vars the communicator fills, turns remote prefetch off, and appends
 * one `send` of the sparse ids.  The startup fetches the dense params from
 * the pservers, then sends `param_init`. */
#include <string.h>

#include "../../diag.h"
#include "builders.h"

/* _init_splited_vars on the trainer: _create_vars_from_blocklist's slice
 * vars, then per param P.delta and, when P is split, P.block<i>.delta. */
static void declare_vars(const tp_placement *pl, ir_block *b)
{
    for (size_t i = 0; i < pl->n_pairs; i++) {
        const tp_dvar *d = &pl->pairs[i].param;
        for (size_t k = 0; d->n_slices > 1 && k < d->n_slices; k++)
            tp_create_var(b, d->slices[k].name, d->var->type, d->var->dtype,
                          d->slices[k].dims, d->slices[k].n_dims, -1, 0);
    }
    for (size_t i = 0; i < pl->n_pairs; i++) {
        const tp_pair *p = &pl->pairs[i];
        const tp_dvar *d = &p->param;
        tp_geo_declare_delta(b, p, tp_geo_delta_name(d->name), d->var->dims, d->var->n_dims);
        for (size_t k = 0; d->n_slices > 1 && k < d->n_slices; k++)
            tp_geo_declare_delta(b, p, tp_geo_delta_name(d->slices[k].name),
                                 d->slices[k].dims, d->slices[k].n_dims);
    }
}

static bool is_sparse_param(const tp_placement *pl, const char *name)
{
    const tp_pair *p = tp_pair_of_param(pl, name);
    return p && p->sparse_grad;
}

/* The ids the communicator is sent: over every op with an is_sparse attr
 * (lookup_table, its grad, lookup_table_v2, ...), zip(Ids, W) with W a
 * sparse param, an ids var skipped only when its last recorded table is
 * this W.  lookup_table ops get remote_prefetch False on the way. */
static int sparse_ids(const tp_placement *pl, const char *main_path, ir_block *b, GPtrArray *ids,
                      GPtrArray *tables)
{
    pmap last = PMAP_INIT;  /* ids var -> its last table */
    int rc = PDT_OK;
    for (size_t i = 0; i < b->n_ops && !rc; i++) {
        ir_op *op = b->ops[i];
        if (!ir_op_has_attr(op, "is_sparse"))
            continue;
        if (op->type == IR_WK(lookup_table))
            ir_op_set_bool(op, "remote_prefetch", false);
        const ir_slot *in = ir_op_input(op, "Ids"), *w = ir_op_input(op, "W");
        if (!in || !w) {
            pdt_error("%s: block 0, op %zu '%s' has attr 'is_sparse' but no input '%s': "
                      "GeoSgdTranspiler reads its Ids and W", main_path, i,
                      op->type, in ? "W" : "Ids");
            rc = PDT_EBADINPUT;
            break;
        }
        for (size_t a = 0; a < in->n_args && a < w->n_args && !rc; a++) {
            const char *id = in->args[a], *table = w->args[a];
            if (!is_sparse_param(pl, table) || pmap_get(&last, id) == table)
                continue;
            if (!ir_block_find_var(b, id)) {
                pdt_error("%s: block 0, op %zu '%s': input 'Ids' names unknown var '%s'",
                          main_path, i, op->type, id);
                rc = PDT_EBADINPUT;
            }
            g_ptr_array_add(ids, (void *)id);
            g_ptr_array_add(tables, (void *)table);
            pmap_put(&last, id, (void *)table);
        }
    }
    pmap_free(&last);
    return rc;
}

static ir_op *append_send(ir_block *b, const char *const *xs, size_t n, const char *const *names,
                          const char *out)
{
    ir_op *op = ir_block_append_op(b, "send");
    ir_op_set_input(op, "X", xs, n);
    ir_op_set_output1(op, "Out", out);
    ir_op_set_strings(op, "send_varnames", names, n);
    ir_op_set_role(op, IR_ROLE_FORWARD);
    return op;
}

/* The startup: _get_trainer_startup_program, then every param's delta
 * (persistable False given), then `send` of param_init. */
static void build_startup(const tp_placement *pl, const tp_inputs *in, ir_block *sb,
                          unsigned *ctl)
{
    tp_trainer_startup_recvs(pl, in, sb, ctl);
    for (size_t i = 0; i < pl->n_pairs; i++) {
        const tp_pair *p = &pl->pairs[i];
        const ir_var *pv = p->param.var;
        tp_create_var(sb, tp_geo_delta_name(p->param.name),
                      p->sparse_grad ? IR_SELECTED_ROWS : pv->type, pv->dtype, pv->dims,
                      pv->n_dims, -1, 0);
    }
    const char *out = tp_control_var(sb, ctl);
    /* create_var(name="param_init"): a name and the default type only, as
     * a control var */
    const char *names[1] = {ir_intern("param_init")};
    ir_var *v = ir_block_var(sb, names[0]);
    v->has_stop_gradient = true;
    v->stop_gradient = false;
    v->type = IR_LOD_TENSOR;
    v->tensor_slot = IR_TD_NONE;
    v->has_persistable = false;
    append_send(sb, names, 1, names, out);
}

int tp_build_geo_trainer(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                         ir_program *startup)
{
    ir_block *b = main->blocks[0];
    GPtrArray *ids = g_ptr_array_new(), *tables = g_ptr_array_new();
    int rc = sparse_ids(pl, in->main_path, b, ids, tables);
    if (rc) {
        g_ptr_array_free(ids, TRUE);
        g_ptr_array_free(tables, TRUE);
        return rc;
    }
    declare_vars(pl, b);
    unsigned ctl = 0;
    const char *dummy = tp_control_var(b, &ctl);
    append_send(b, (const char *const *)ids->pdata, ids->len,
                (const char *const *)tables->pdata, dummy);
    g_ptr_array_free(ids, TRUE);
    g_ptr_array_free(tables, TRUE);
    build_startup(pl, in, startup->blocks[0], &ctl);
    return PDT_OK;
}

int pass_geo_trainer(pdt_ctx *ctx)
{
    return tp_build_trainer(ctx, "geo_trainer", tp_build_geo_trainer);
}
