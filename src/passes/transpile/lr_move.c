/* lr_move.c - a learning rate the trainer computes (issue 29 point 3).
 *
 * DistributeTranspiler moves only LRSched-role ops (_get_lr_ops) to the
 * pservers' LR-decay block.  A schedule built from forward-role ops (the
 * PaddleOCR models' cosine warm-up: an `increment` of @LR_DECAY_COUNTER@,
 * a cast, a compare and two conditional_blocks writing `learning_rate`)
 * stays on the trainer, and every pserver's optimizer reads a
 * learning_rate nothing updates there: the job trains at a constant rate.
 *
 * Before the plan's search (so the default output stays Paddle's bytes),
 * this finds each var an optimizer reads (other than its Param and Grad)
 * that the trainer computes each step, and the ops of block 0 that compute
 * it (the backward slice through forward-role ops; their sub-blocks go
 * with the ops that own them).  By default it warns, naming the var and
 * the ops.  With --lr-ops=move it gives those ops the LRSched role, so
 * every later pass treats them as the transpiler treats LR-decay ops: the
 * pservers run them in their LR-decay block (sub-blocks cloned), the
 * trainer drops them, and in async modes the counter's `increment` becomes
 * the per-trainer counter sum (transpile_lr.c).  It refuses (exit 1,
 * naming the var) when a moved op would read what a pserver cannot have
 * (a feed, a forward activation, a grad) or when the trainer still reads
 * what the moved ops compute.  Sub-block ops keep their roles: the
 * pserver copies them as they are, as the seed copies LRSched sub-blocks. */
#include <string.h>

#include "../../diag.h"
#include "builders.h"

typedef struct {
    pdt_ctx *ctx;
    const ir_program *p;
    const ir_block *b;
    uint8_t *in_slice;          /* per op of block 0 */
    bool *slice_block;          /* per block: a sub-block of a slice op */
    pmap needed;                /* var name -> (index in needed_list) + 1 */
    GPtrArray *needed_list;     /* var names, in the order the walk met them */
    GArray *needed_by;          /* parallel: the op position that reads it */
    pmap slice_out;             /* var written by a slice op -> its position + 1 */
    pmap bwd_written;           /* vars a backward or optimize op of block 0 writes */
    GPtrArray *targets;         /* the vars optimizers read, in op order */
    GArray *target_reader;      /* parallel: the first optimizer reading it */
} lrm;

static int role_of(const ir_op *op)
{
    int r = ir_op_role(op);
    return r < 0 ? 0 : r;
}

/* An op the transpiler leaves on the trainer's forward pass. */
static bool on_trainer(const ir_op *op)
{
    return !(role_of(op) & (IR_ROLE_BACKWARD | IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED));
}

static void need(lrm *m, const char *var, size_t reader)
{
    if (pmap_has(&m->needed, var))
        return;
    g_ptr_array_add(m->needed_list, (void *)var);
    g_array_append_val(m->needed_by, reader);
    pmap_put(&m->needed, var, GSIZE_TO_POINTER(m->needed_list->len));
}

/* The targets: every input of an optimizer op (Param and LearningRate)
 * but its Param and Grad that a forward-role op of block 0 writes, or
 * that is not persistable and no op writes (a feed). */
static void find_targets(lrm *m)
{
    pmap fwd = PMAP_INIT, lrs = PMAP_INIT;
    for (size_t i = 0; i < m->b->n_ops; i++) {
        const ir_op *op = m->b->ops[i];
        pmap *into = on_trainer(op)                          ? &fwd
                     : (role_of(op) & IR_ROLE_LRSCHED) ? &lrs
                                                             : &m->bwd_written;
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
                pmap_add(into, ir_op_outs(op)[s].args[a]);
    }
    pmap seen = PMAP_INIT;
    for (size_t i = 0; i < m->b->n_ops; i++) {
        const ir_op *op = m->b->ops[i];
        int r = role_of(op);
        if (!(r & IR_ROLE_OPTIMIZE) || (r & IR_ROLE_LRSCHED) || !tp_is_optimizer_op(op))
            continue;
        for (size_t s = 0; s < op->n_inputs; s++) {
            const char *slot = ir_op_ins(op)[s].name;
            if (!strcmp(slot, "Param") || !strcmp(slot, "Grad"))
                continue;
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++) {
                const char *v = ir_op_ins(op)[s].args[a];
                const ir_var *var = ir_block_find_var(m->b, v);
                /* not persistable and written by no op: fed each step */
                bool fed = var && !var->persistable && !pmap_has(&lrs, v) &&
                           !pmap_has(&m->bwd_written, v);
                if ((pmap_has(&fwd, v) || fed) && pmap_add(&seen, v)) {
                    g_ptr_array_add(m->targets, (void *)v);
                    g_array_append_val(m->target_reader, i);
                }
            }
        }
    }
    pmap_free(&seen);
    pmap_free(&fwd);
    pmap_free(&lrs);
}

/* The vars of block 0 that op's sub-blocks (and theirs) read, as needed
 * by op `pos`; marks those blocks as the slice's. */
static void need_sub_block_reads(lrm *m, const ir_op *op, size_t pos)
{
    GPtrArray *todo = g_ptr_array_new();
    g_ptr_array_add(todo, (void *)op);
    while (todo->len) {
        const ir_op *o = g_ptr_array_remove_index(todo, todo->len - 1);
        ir_attr_iter it = ir_op_block_attr_iter(o);
        for (const ir_attr *at; (at = ir_attr_next(&it));) {
            const ir_block *sb = at->type == IR_ATTR_BLOCK
                                     ? ir_program_block(m->p, at->block_idx) : NULL;
            if (!sb || sb->idx == 0 || m->slice_block[sb->idx])
                continue;
            m->slice_block[sb->idx] = true;
            for (size_t k = 0; k < sb->n_ops; k++) {
                const ir_op *so = sb->ops[k];
                g_ptr_array_add(todo, (void *)so);
                for (size_t s = 0; s < so->n_inputs; s++)
                    for (size_t a = 0; a < ir_op_ins(so)[s].n_args; a++) {
                        const char *v = ir_op_ins(so)[s].args[a];
                        if (!ir_block_find_var(sb, v) && ir_block_find_var(m->b, v))
                            need(m, v, pos);
                    }
            }
        }
    }
    g_ptr_array_free(todo, TRUE);
}

/* The backward slice of the targets through the forward-role ops of
 * block 0, from the last op to the first (an `increment` reads and writes
 * its counter, so it joins once the counter's readers did). */
static size_t walk_slice(lrm *m)
{
    for (guint t = 0; t < m->targets->len; t++)
        need(m, m->targets->pdata[t], g_array_index(m->target_reader, size_t, t));
    size_t n = 0;
    for (size_t i = m->b->n_ops; i-- > 0;) {
        const ir_op *op = m->b->ops[i];
        if (!on_trainer(op))
            continue;
        bool writes = false;
        for (size_t s = 0; s < op->n_outputs && !writes; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args && !writes; a++)
                writes = pmap_has(&m->needed, ir_op_outs(op)[s].args[a]);
        if (!writes)
            continue;
        m->in_slice[i] = 1;
        n++;
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
                pmap_put(&m->slice_out, ir_op_outs(op)[s].args[a], GSIZE_TO_POINTER(i + 1));
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++)
                need(m, ir_op_ins(op)[s].args[a], i);
        need_sub_block_reads(m, op, i);
    }
    return n;
}

/* "0 'increment', 246 'cast', ..." (at most 12, then how many more). */
static char *slice_ops_text(const lrm *m)
{
    GString *g = g_string_new("");
    size_t shown = 0, total = 0;
    for (size_t i = 0; i < m->b->n_ops; i++) {
        if (!m->in_slice[i])
            continue;
        if (shown < 12)
            g_string_append_printf(g, "%s%zu '%s'", shown ? ", " : "", i, m->b->ops[i]->type);
        shown += shown < 12;
        total++;
    }
    if (total > shown)
        g_string_append_printf(g, " and %zu more", total - shown);
    return g_string_free(g, FALSE);
}

static bool is_feed_op(const char *type)
{
    static const char *const feeds[] = {"feed", "read", "create_py_reader",
                                        "create_double_buffer_reader", "recv", NULL};
    for (size_t k = 0; feeds[k]; k++)
        if (!strcmp(type, feeds[k]))
            return true;
    return false;
}

/* "'learning_rate'" or "'a', 'b'": the vars the optimizers read. */
static char *targets_text(const lrm *m)
{
    GString *g = g_string_new("");
    for (guint t = 0; t < m->targets->len; t++)
        g_string_append_printf(g, "%s'%s'", t ? ", " : "", (const char *)m->targets->pdata[t]);
    return g_string_free(g, FALSE);
}

/* Every var the slice reads from outside it must be on a pserver already:
 * persistable, and written by no backward or optimize op (a grad). */
static int check_inputs(const lrm *m, const char *what)
{
    for (size_t i = 0; i < m->b->n_ops; i++)
        if (m->in_slice[i] && is_feed_op(m->b->ops[i]->type)) {
            pdt_error("%s: --lr-ops=move: the ops computing %s include block 0, op %zu '%s', "
                      "which reads the trainer's input: a pserver cannot run it",
                      m->ctx->main_path, what, i, m->b->ops[i]->type);
            return PDT_EBADINPUT;
        }
    for (guint k = 0; k < m->needed_list->len; k++) {
        const char *v = m->needed_list->pdata[k];
        size_t by = g_array_index(m->needed_by, size_t, k);
        const ir_var *var = ir_block_find_var(m->b, v);
        const char *why = NULL;
        if (pmap_has(&m->slice_out, v))
            continue;
        if (!var || !var->persistable)
            why = "not persistable and not computed by those ops (a feed or a forward "
                  "activation)";
        else if (pmap_has(&m->bwd_written, v))
            why = "written by backward or optimize ops";
        if (why) {
            pdt_error("%s: --lr-ops=move: the ops computing %s read '%s' (block 0, op %zu "
                      "'%s'), %s: a pserver cannot have it",
                      m->ctx->main_path, what, v, by, m->b->ops[by]->type, why);
            return PDT_EBADINPUT;
        }
    }
    return PDT_OK;
}

/* Nothing that stays on the trainer may read what the moved ops write. */
static int check_readers(const lrm *m, const char *what)
{
    for (size_t bi = 0; bi < m->p->n_blocks; bi++) {
        const ir_block *b = m->p->blocks[bi];
        if (m->slice_block[bi])
            continue;
        for (size_t i = 0; i < b->n_ops; i++) {
            const ir_op *op = b->ops[i];
            if (bi == 0 && (m->in_slice[i] ||
                            (role_of(op) & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED))))
                continue;
            for (size_t s = 0; s < op->n_inputs; s++)
                for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++) {
                    const char *v = ir_op_ins(op)[s].args[a];
                    size_t w = GPOINTER_TO_SIZE(pmap_get(&m->slice_out, v));
                    if (!w)
                        continue;
                    pdt_error("%s: --lr-ops=move: '%s', which block 0, op %zu '%s' computes "
                              "for %s, is also read by block %zu, op %zu '%s', which stays on "
                              "the trainer", m->ctx->main_path, v, w - 1,
                              m->b->ops[w - 1]->type, what, bi, i, op->type);
                    return PDT_EBADINPUT;
                }
        }
    }
    return PDT_OK;
}

static void warn(const lrm *m, const char *what)
{
    char *ops = slice_ops_text(m);
    size_t r = g_array_index(m->target_reader, size_t, 0);
    if (!*ops) {    /* a feed: nothing to move */
        pdt_warning("%s: %s, which block 0, op %zu '%s' reads on the pservers, is fed to the "
                    "trainer each step: no pserver op updates it (as with Paddle's transpiler)",
                    m->ctx->main_path, what, r, m->b->ops[r]->type);
        g_free(ops);
        return;
    }
    pdt_warning("%s: %s, which block 0, op %zu '%s' reads on the pservers, is computed by the "
                "trainer each step (block 0, ops %s): no pserver op updates it, so the job "
                "trains at its initial value (as with Paddle's transpiler); --lr-ops=move "
                "moves those ops to the pservers' LR-decay block",
                m->ctx->main_path, what, r, m->b->ops[r]->type, ops);
    g_free(ops);
}

static void lrm_free(lrm *m)
{
    free(m->in_slice);
    free(m->slice_block);
    pmap_free(&m->needed);
    pmap_free(&m->slice_out);
    pmap_free(&m->bwd_written);
    g_ptr_array_free(m->needed_list, TRUE);
    g_array_free(m->needed_by, TRUE);
    g_ptr_array_free(m->targets, TRUE);
    g_array_free(m->target_reader, TRUE);
}

int tp_lr_trainer_computed(pdt_ctx *ctx)
{
    lrm m = {.ctx = ctx, .p = ctx->main, .b = ctx->main->blocks[0]};
    m.in_slice = xcalloc(m.b->n_ops + 1, 1);
    m.slice_block = xcalloc(ctx->main->n_blocks + 1, sizeof *m.slice_block);
    m.needed_list = g_ptr_array_new();
    m.needed_by = g_array_new(FALSE, FALSE, sizeof(size_t));
    m.targets = g_ptr_array_new();
    m.target_reader = g_array_new(FALSE, FALSE, sizeof(size_t));
    int rc = PDT_OK;
    find_targets(&m);
    if (m.targets->len) {
        walk_slice(&m);
        char *what = targets_text(&m);
        if (ctx->transpile.lr_ops != PDT_LR_OPS_MOVE)
            warn(&m, what);
        else if (!(rc = check_inputs(&m, what)) && !(rc = check_readers(&m, what)))
            for (size_t i = 0; i < m.b->n_ops; i++)
                if (m.in_slice[i])
                    ir_op_set_role(m.b->ops[i], IR_ROLE_LRSCHED);
        g_free(what);
    }
    lrm_free(&m);
    return rc;
}
