/* delete_optimizer.c - pass 'delete_optimizer': get_trainer_program's
 * deletions on the trainer 'insert_send_recv' built: the optimize and LR
 * ops, then _delete_trainer_optimizer (the vars only they used, and those
 * vars' init ops in the startup program) and _fake_init_sparsetable. */
#include <string.h>

#include "../../diag.h"
#include "transpile.h"

typedef struct {
    tp_plan *st;
    ir_program *p, *s;      /* trainer main and startup */
    ir_block *b, *sb;       /* their block 0 */
} trainer;

/* delete_ops of the optimize ops and the LR ops (_get_lr_ops). */
static void delete_optimize_ops(trainer *t)
{
    tp_plan *st = t->st;
    GHashTable *drop = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < st->n_ops0; i++)
        if (st->op_kind[i] == TP_OP_OPTIMIZE || st->op_kind[i] == TP_OP_LR)
            g_hash_table_add(drop, st->ops0[i]);
    ir_op **keep = g_new(ir_op *, t->b->n_ops + 1);
    size_t n = 0;
    for (size_t k = 0; k < t->b->n_ops; k++)
        if (!g_hash_table_contains(drop, t->b->ops[k]))
            keep[n++] = t->b->ops[k];
    ir_block_set_ops(t->b, keep, n);
    g_free(keep);
    g_hash_table_destroy(drop);
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
    tp_plan *st = t->st;
    GHashTable *role_vars = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < st->n_opt; i++) {
        size_t n = 0;
        const char **rv = tp_get_strings(opt_ops[i], "op_role_var", &n, st->arena);
        for (size_t k = 0; k < n; k++)
            g_hash_table_add(role_vars, (void *)rv[k]);
    }
    /* Candidates: what optimize ops read, minus op_role_var, in order. */
    GHashTable *cand = g_hash_table_new(g_direct_hash, g_direct_equal);
    GPtrArray *order = g_ptr_array_new();
    for (size_t i = 0; i < st->n_opt; i++) {
        const ir_op *op = opt_ops[i];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < op->inputs[s].n_args; a++) {
                const char *v = op->inputs[s].args[a];
                if (g_hash_table_contains(role_vars, v) || !g_hash_table_add(cand, (void *)v))
                    continue;
                g_ptr_array_add(order, (void *)v);
            }
    }
    /* Drop those any remaining op of a reachable block reads or writes. */
    bool *reach = ir_program_reachable_blocks(t->p);
    for (size_t bi = 0; bi < t->p->n_blocks && g_hash_table_size(cand); bi++) {
        if (!reach[bi])
            continue;
        const ir_block *b = t->p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            const ir_op *op = b->ops[k];
            for (int io = 0; io < 2; io++) {
                const ir_slot *sl = io ? op->outputs : op->inputs;
                size_t n = io ? op->n_outputs : op->n_inputs;
                for (size_t s = 0; s < n; s++)
                    for (size_t a = 0; a < sl[s].n_args; a++)
                        g_hash_table_remove(cand, sl[s].args[a]);
            }
        }
    }
    g_free(reach);
    GPtrArray *out = g_ptr_array_new();
    for (guint i = 0; i < order->len; i++)
        if (g_hash_table_contains(cand, order->pdata[i]))
            g_ptr_array_add(out, order->pdata[i]);
    g_ptr_array_free(order, TRUE);
    g_hash_table_destroy(cand);
    g_hash_table_destroy(role_vars);
    return out;
}

/* Removes the startup ops that write any of `vars`, and the vars. */
static void delete_startup_inits(trainer *t, GPtrArray *vars)
{
    GHashTable *del = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < vars->len; i++)
        g_hash_table_add(del, vars->pdata[i]);
    ir_op **keep = g_new(ir_op *, t->sb->n_ops + 1);
    size_t n = 0;
    for (size_t k = 0; k < t->sb->n_ops; k++) {
        ir_op *op = t->sb->ops[k];
        bool hit = false;
        for (size_t s = 0; s < op->n_outputs && !hit; s++)
            for (size_t a = 0; a < op->outputs[s].n_args && !hit; a++)
                hit = g_hash_table_contains(del, op->outputs[s].args[a]);
        if (!hit)
            keep[n++] = op;
    }
    if (n != t->sb->n_ops)
        ir_block_set_ops(t->sb, keep, n);
    g_free(keep);
    for (size_t i = 0; i < vars->len; i++)
        ir_block_remove_var(t->sb, vars->pdata[i]);
    g_hash_table_destroy(del);
}

/* _fake_init_sparsetable: a sparse table's init op becomes a fake_init
 * appended at the end (tables in param order; the seed's set order is
 * arbitrary).  One scan over the startup ops for all tables. */
static int fake_init_tables(trainer *t)
{
    tp_plan *st = t->st;
    GPtrArray *tables = tp_sparse_table_names(st);
    GHashTable *init_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < tables->len; i++)
        g_hash_table_insert(init_of, tables->pdata[i], NULL);
    if (g_hash_table_size(init_of) == 0) {
        g_ptr_array_free(tables, TRUE);
        g_hash_table_destroy(init_of);
        return PDT_OK;
    }
    GHashTable *count = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *drop = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t k = 0; k < t->sb->n_ops; k++) {
        ir_op *op = t->sb->ops[k];
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < op->outputs[s].n_args; a++) {
                const char *v = op->outputs[s].args[a];
                if (!g_hash_table_contains(init_of, v))
                    continue;
                g_hash_table_insert(init_of, (void *)v, op);
                g_hash_table_insert(count, (void *)v,
                                    GSIZE_TO_POINTER(GPOINTER_TO_SIZE(g_hash_table_lookup(count, v)) + 1));
                g_hash_table_add(drop, op);
            }
    }
    int rc = PDT_OK;
    GPtrArray *ops = g_ptr_array_new();
    for (size_t k = 0; k < t->sb->n_ops; k++)
        if (!g_hash_table_contains(drop, t->sb->ops[k]))
            g_ptr_array_add(ops, t->sb->ops[k]);
    for (guint i = 0; i < tables->len && rc == PDT_OK; i++) {
        const char *name = tables->pdata[i];
        size_t n = GPOINTER_TO_SIZE(g_hash_table_lookup(count, name));
        if (n != 1) {
            pdt_error("startup program: sparse table '%s' needs exactly one init op, found %zu",
                      name, n);
            rc = PDT_EBADINPUT;
            break;
        }
        const ir_op *init = g_hash_table_lookup(init_of, name);
        ir_op *op = ir_op_new(t->s, "fake_init");
        ir_op_set_output1(op, "Out", name);
        /* fake_init's shape is vector<int64_t>: Paddle's attr checker turns
         * the Python list into LONGS whatever type the init op's shape had
         * (truncated_gaussian_random's is INTS). */
        const ir_attr *shape = ir_op_attr(init, "shape");
        if (shape && shape->type == IR_ATTR_INTS) {
            int64_t *d = g_new(int64_t, shape->n_ints + 1);
            for (size_t k = 0; k < shape->n_ints; k++)
                d[k] = shape->ints[k];
            ir_op_set_longs(op, "shape", d, shape->n_ints);
            g_free(d);
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
    g_hash_table_destroy(drop);
    g_hash_table_destroy(count);
    g_hash_table_destroy(init_of);
    return rc;
}

int tp_delete_optimizer(tp_plan *st, ir_program *main, ir_program *startup)
{
    trainer t = {.st = st, .p = main, .s = startup, .b = main->blocks[0],
                 .sb = startup->blocks[0]};
    ir_op **opt_ops = g_new(ir_op *, st->n_opt + 1);
    for (size_t i = 0; i < st->n_opt; i++)
        opt_ops[i] = st->ops0[st->opt_pos[i]];
    delete_optimize_ops(&t);
    GPtrArray *dead = optimizer_only_vars(&t, opt_ops);
    g_free(opt_ops);
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
    int rc = tp_delete_optimizer(st, st->trainer_main, st->trainer_startup);
    if (rc)
        return rc;
    ir_program *progs[2] = {st->trainer_main, st->trainer_startup};
    tp_plan_outputs_changed(st, progs, 2);
    return PDT_OK;
}
