/* delete_optimizer.c - pass 'delete_optimizer': get_trainer_program's
 * deletions on the trainer 'insert_send_recv' built: the optimize and LR
 * ops, then _delete_trainer_optimizer (the vars only they used, and those
 * vars' init ops in the startup program) and _fake_init_sparsetable. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "builders.h"

typedef struct {
    const tp_placement *pl;
    const tp_inputs *in;
    ir_program *p, *s;      /* trainer main and startup */
    ir_block *b, *sb;       /* their block 0 */
} trainer;

/* delete_ops of the optimize ops and the LR ops (_get_lr_ops). */
static void delete_optimize_ops(trainer *t)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    pmap drop = PMAP_INIT;
    for (size_t i = 0; i < in->n_ops0; i++)
        if (pl->op_kind[i] == TP_OP_OPTIMIZE || pl->op_kind[i] == TP_OP_LR)
            pmap_add(&drop, in->ops0[i]);
    ir_op **keep = xmalloc_n(t->b->n_ops + 1, sizeof *keep);
    size_t n = 0;
    for (size_t k = 0; k < t->b->n_ops; k++)
        if (!pmap_has(&drop, t->b->ops[k]))
            keep[n++] = t->b->ops[k];
    ir_block_set_ops(t->b, keep, n);
    free(keep);
    pmap_free(&drop);
}

/* ---- get_trainer_program's deletions ---- */

/* _delete_trainer_optimizer: the vars only optimize ops read.  A var some
 * remaining op still reads or writes is not optimizer-only, whatever
 * op_role_var says (Paddle keeps a renamed grad because OpDesc::RenameInput
 * renames op_role_var too).  Only ops in blocks still reachable from block
 * 0 count: piecewise decay's learning_rate is read only inside the removed
 * conditional_blocks' sub-blocks, and Paddle removes it. */
static GPtrArray *optimizer_only_vars(trainer *t, ir_op *const *opt_ops)
{
    const tp_placement *pl = t->pl;
    pmap role_vars = PMAP_INIT;
    ir_arena *scratch = ir_arena_new();     /* the lists are read once */
    for (size_t i = 0; i < pl->n_opt; i++) {
        size_t n = 0;
        const char **rv = ir_op_get_names(opt_ops[i], "op_role_var", &n, scratch);
        for (size_t k = 0; k < n; k++)
            pmap_add(&role_vars, rv[k]);
    }
    ir_arena_free(scratch);
    /* Candidates: what optimize ops read, minus op_role_var, in order. */
    pmap cand = PMAP_INIT;
    GPtrArray *order = g_ptr_array_new();
    for (size_t i = 0; i < pl->n_opt; i++) {
        const ir_op *op = opt_ops[i];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++) {
                const char *v = ir_op_ins(op)[s].args[a];
                if (pmap_has(&role_vars, v) || !pmap_add(&cand, v))
                    continue;
                g_ptr_array_add(order, (void *)v);
            }
    }
    /* Drop those any remaining op of a reachable block reads or writes. */
    bool *reach = ir_program_reachable_blocks(t->p);
    for (size_t bi = 0; bi < t->p->n_blocks && cand.n; bi++) {
        if (!reach[bi])
            continue;
        const ir_block *b = t->p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            const ir_op *op = b->ops[k];
            for (int io = 0; io < 2; io++) {
                const ir_slot *sl = io ? ir_op_outs(op) : ir_op_ins(op);
                size_t n = io ? op->n_outputs : op->n_inputs;
                for (size_t s = 0; s < n; s++)
                    for (size_t a = 0; a < sl[s].n_args; a++)
                        pmap_remove(&cand, sl[s].args[a]);
            }
        }
    }
    free(reach);
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; i < order->len; i++)
        if (pmap_has(&cand, order->pdata[i]))
            g_ptr_array_add(out, order->pdata[i]);
    g_ptr_array_free(order, TRUE);
    pmap_free(&cand);
    pmap_free(&role_vars);
    return out;
}

/* Removes the startup ops that write any of `vars`, and the vars. */
static void delete_startup_inits(trainer *t, GPtrArray *vars)
{
    pmap del = PMAP_INIT;
    for (size_t i = 0; i < vars->len; i++)
        pmap_add(&del, vars->pdata[i]);
    ir_op **keep = xmalloc_n(t->sb->n_ops + 1, sizeof *keep);
    size_t n = 0;
    for (size_t k = 0; k < t->sb->n_ops; k++) {
        ir_op *op = t->sb->ops[k];
        bool hit = false;
        for (size_t s = 0; s < op->n_outputs && !hit; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args && !hit; a++)
                hit = pmap_has(&del, ir_op_outs(op)[s].args[a]);
        if (!hit)
            keep[n++] = op;
    }
    if (n != t->sb->n_ops)
        ir_block_set_ops(t->sb, keep, n);
    free(keep);
    for (size_t i = 0; i < vars->len; i++)
        ir_block_remove_var(t->sb, vars->pdata[i]);
    pmap_free(&del);
}

/* _fake_init_sparsetable: a sparse table's init op becomes a fake_init
 * appended at the end (tables in param order; the seed's set order is
 * arbitrary).  One scan over the startup ops for all tables. */
static int fake_init_tables(trainer *t)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    GPtrArray *tables = tp_sparse_table_names(pl, in);
    /* table -> its init op (NULL until found), so pmap_has tells tables. */
    pmap init_of = PMAP_INIT;
    for (guint i = 0; i < tables->len; i++)
        pmap_put(&init_of, tables->pdata[i], NULL);
    if (init_of.n == 0) {
        g_ptr_array_free(tables, TRUE);
        pmap_free(&init_of);
        return PDT_OK;
    }
    pmap count = PMAP_INIT;     /* table -> init ops found (a size_t) */
    pmap drop = PMAP_INIT;
    for (size_t k = 0; k < t->sb->n_ops; k++) {
        ir_op *op = t->sb->ops[k];
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++) {
                const char *v = ir_op_outs(op)[s].args[a];
                if (!pmap_has(&init_of, v))
                    continue;
                pmap_put(&init_of, v, op);
                pmap_put(&count, v, GSIZE_TO_POINTER(GPOINTER_TO_SIZE(pmap_get(&count, v)) + 1));
                pmap_add(&drop, op);
            }
    }
    int rc = PDT_OK;
    GPtrArray *ops = g_ptr_array_new();
    for (size_t k = 0; k < t->sb->n_ops; k++)
        if (!pmap_has(&drop, t->sb->ops[k]))
            g_ptr_array_add(ops, t->sb->ops[k]);
    for (guint i = 0; i < tables->len && rc == PDT_OK; i++) {
        const char *name = tables->pdata[i];
        size_t n = GPOINTER_TO_SIZE(pmap_get(&count, name));
        if (n != 1) {
            pdt_error("startup program: sparse table '%s' needs exactly one init op, found %zu",
                      name, n);
            rc = PDT_EBADINPUT;
            break;
        }
        const ir_op *init = pmap_get(&init_of, name);
        ir_op *op = ir_op_new(t->s, "fake_init");
        ir_op_set_output1(op, "Out", name);
        /* fake_init's shape is vector<int64_t>: Paddle's attr checker turns
         * the Python list into LONGS whatever type the init op's shape had
         * (truncated_gaussian_random's is INTS). */
        const ir_attr *shape = ir_op_attr(init, "shape");
        if (shape && shape->type == IR_ATTR_INTS) {
            int64_t *d = xmalloc_n(shape->n_ints + 1, sizeof *d);
            for (size_t k = 0; k < shape->n_ints; k++)
                d[k] = shape->ints[k];
            ir_op_set_longs(op, "shape", d, shape->n_ints);
            free(d);
        } else if (shape) {
            ir_op_copy_attr(op, shape);
        }
        ir_op_set_role(op, IR_ROLE_FORWARD);
        g_ptr_array_add(ops, op);
    }
    if (rc == PDT_OK)
        ir_block_set_ops(t->sb, (ir_op *const *)ops->pdata, ops->len);
    g_ptr_array_free(ops, TRUE);
    g_ptr_array_free(tables, TRUE);
    pmap_free(&drop);
    pmap_free(&count);
    pmap_free(&init_of);
    return rc;
}

int tp_delete_optimizer(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                        ir_program *startup)
{
    trainer t = {.pl = pl, .in = in, .p = main, .s = startup, .b = main->blocks[0],
                 .sb = startup->blocks[0]};
    ir_op **opt_ops = xmalloc_n(pl->n_opt + 1, sizeof *opt_ops);
    for (size_t i = 0; i < pl->n_opt; i++)
        opt_ops[i] = in->ops0[pl->opt_pos[i]];
    delete_optimize_ops(&t);
    GPtrArray *dead = optimizer_only_vars(&t, opt_ops);
    free(opt_ops);
    delete_startup_inits(&t, dead);
    for (size_t i = 0; i < dead->len; i++)
        ir_block_remove_var(t.b, dead->pdata[i]);
    g_ptr_array_free(dead, TRUE);
    return fake_init_tables(&t);
}

int pass_delete_optimizer(pdt_ctx *ctx)
{
    tp_plan *st = tp_plan_need(ctx, "delete_optimizer", TP_PLAN_SPLIT);
    if (!st)
        return PDT_EINTERNAL;
    if (ctx->transpile.role == PDT_ROLE_PSERVER)
        return PDT_OK;  /* no trainer asked for */
    if (!st->trainer_main)
        return tp_order_bug("delete_optimizer");
    int rc = tp_delete_optimizer(st->pl, &st->in, st->trainer_main, st->trainer_startup);
    if (rc)
        return rc;
    ir_program *progs[2] = {st->trainer_main, st->trainer_startup};
    tp_plan_outputs_changed(st, progs, 2);
    return PDT_OK;
}
