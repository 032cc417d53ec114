/* collective.c - nccl2 and collective grad_allreduce jobs (job.h).  The
 * trainers run in lockstep: each stops at its next sync point, which is
 * then handled for all of them at once.
 * - collective: `c_allreduce_sum` of X is the sum over the trainers of
 *   their X.  The transpiler scales the loss grad by 1/n (a `scale` of
 *   the var the Backward|Loss fill_constant wrote) before the backward
 *   ops; the backward ops are linear in the loss grad, so that scale is
 *   kept aside (`loss_scale`) and applied to each allreduce's sum (the
 *   linearity axiom), which makes the trainers' mean grad the same term
 *   as single-process training's scale(sum, float(1/n)).
 * - nccl2: the programs hold no collective op; Paddle's ParallelExecutor
 *   scales the loss grad by a float 1/n and allreduces each grad after
 *   the backward ops, so right before the first update op every
 *   optimizer grad becomes scale(sum over the trainers, float(1/n)).
 * - `c_broadcast` (the startup's) gives every trainer the root's value. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"

static bool is_update(const ir_op *op)
{
    int r = ir_op_role(op);
    return r >= 0 && (r & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED));
}

int sym_coll_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    sym_job *j = c->job;
    ir_block *b = ir_program_block(prog, block);
    const char *x = ir_op_input1(op, "X"), *out = ir_op_output1(op, "Out");
    const sym_site *site = sym_site_make(c->st, prog == p->main ? p->label : p->startup_label,
                                         block, (int)i, op);
    if (!strcmp(op->type, "c_broadcast") && x && out && p->trainer >= 0) {
        int64_t root = ir_op_get_int(op, "root", 0);
        sym_proc *r = root >= 0 && (size_t)root < j->n_tr && root <= p->trainer ? &j->tr[root] : p;
        sym_write(p, out, sym_read(c, r, b, x), site);
        return 1;
    }
    int r = sym_lsgd_op(c, p, prog, block, i, op);
    if (r || (r = sym_spmt_op(c, p, prog, block, i, op)))
        return r;
    const sym_site *w = x ? pmap_get(&p->sites, x) : NULL;
    const ir_slot *st = ir_op_input(op, "ScaleTensor");
    /* (local_sgd writes no loss-grad scale: one there is the op it is) */
    if (j->in->mode == SYM_COLLECTIVE && !sym_lsgd_active(j) && !strcmp(op->type, "scale") && x && out && w && w->op &&
        !strcmp(w->op->type, "fill_constant") && ir_op_role(w->op) == (IR_ROLE_BACKWARD | IR_ROLE_LOSS) &&
        (!st || !st->n_args) && ir_op_get_float(op, "bias", 0) == 0) {
        p->loss_scale *= ir_op_get_float(op, "scale", 1.0);
        sym_write(p, out, sym_read(c, p, b, x), site);
        return 1;
    }
    return 0;
}

/* nccl2's sync point: right after the last backward op (an LR op may come
 * first, as ResNet-50's increment does); without backward ops, the first
 * update op. */
static size_t nccl2_point(ir_block *b)
{
    size_t last = b->n_ops, first_update = b->n_ops;
    for (size_t i = 0; i < b->n_ops; i++) {
        int r = ir_op_role(b->ops[i]);
        if (r >= 0 && (r & IR_ROLE_BACKWARD) && !is_update(b->ops[i]))
            last = i;
        if (first_update == b->n_ops && is_update(b->ops[i]))
            first_update = i;
    }
    return last < b->n_ops ? last + 1 : first_update;
}

/* The index of trainer p's next sync point from p->pc (n_ops: none). */
static size_t next_sync(sym_job *j, sym_proc *p, ir_block *b)
{
    if (j->in->mode == SYM_NCCL2)
        return p->synced ? b->n_ops : nccl2_point(b);
    for (size_t i = p->pc; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "c_allreduce_sum"))
            return i;
    return b->n_ops;
}

static void allreduce(sym_job *j, ir_op **ops, size_t at)
{
    const ir_slot *x = ir_op_input(ops[0], "X"), *o = ir_op_output(ops[0], "Out");
    sym_term **v = xmalloc_n(j->n_tr + 1, sizeof *v);
    for (uint32_t k = 0; x && o && k < x->n_args && k < o->n_args; k++) {
        if (sym_spmt_fused(j, ops, at, k))   /* a coalesce_tensor's buffer: its members */
            continue;
        for (size_t t = 0; t < j->n_tr; t++)
            v[t] = sym_read(&j->c, &j->tr[t], ir_program_block(j->tr[t].main, 0),
                            ir_op_input(ops[t], "X")->args[k]);
        for (size_t t = 0; t < j->n_tr; t++) {
            sym_proc *p = &j->tr[t];
            sym_store_set_site(j->c.st, sym_site_make(j->c.st, p->label, 0, (int)at, ops[t]));
            sym_term *s = sym_scale(j->c.st, sym_sum(j->c.st, v, (uint32_t)j->n_tr),
                                    p->loss_scale, 0, true);
            sym_write(p, ir_op_output(ops[t], "Out")->args[k], s,
                      sym_site_make(j->c.st, p->label, 0, (int)at, ops[t]));
        }
    }
    sym_store_set_site(j->c.st, NULL);
    free(v);
}

/* nccl2: every optimizer grad is the mean over the trainers. */
static void average(sym_job *j, size_t at)
{
    sym_term **v = xmalloc_n(j->n_tr + 1, sizeof *v);
    double f = (double)(float)(1.0 / (double)j->n_tr);
    for (guint k = 0; k < j->grads->len; k++) {
        const char *g = j->grads->pdata[k];
        for (size_t t = 0; t < j->n_tr; t++)
            v[t] = sym_read(&j->c, &j->tr[t], ir_program_block(j->tr[t].main, 0), g);
        for (size_t t = 0; t < j->n_tr; t++) {
            const sym_site *site = sym_site_make(j->c.st, j->tr[t].label, 0, (int)at, NULL);
            sym_write(&j->tr[t], g, sym_scale(j->c.st, sym_sum(j->c.st, v, (uint32_t)j->n_tr), f, 0, true),
                      site);
        }
    }
    free(v);
}

bool sym_coll_step(sym_job *j, int step)
{
    for (size_t t = 0; t < j->n_tr; t++) {
        j->tr[t].pc = 0;
        j->tr[t].synced = false;
        j->tr[t].loss_scale = 1.0;
        j->tr[t].feed_tag = ir_internf("t%zu.s%d", t, step);
    }
    ir_op **ops = xmalloc_n(j->n_tr + 1, sizeof *ops);
    bool ok = true;
    for (;;) {
        size_t at = 0, ended = 0;
        for (size_t t = 0; ok && t < j->n_tr; t++) {
            sym_proc *p = &j->tr[t];
            ir_block *b = ir_program_block(p->main, 0);
            size_t stop = next_sync(j, p, b);
            while (ok && p->pc < stop)
                ok = sym_run_op(&j->c, p, p->main, p->label, 0, p->pc++);
            ops[t] = stop < b->n_ops ? b->ops[stop] : NULL;
            ended += !ops[t];
            at = stop;
        }
        if (!ok || ended == j->n_tr)
            break;
        if (ended || (j->in->mode == SYM_COLLECTIVE && !strcmp(ops[0]->type, "c_allreduce_sum") &&
                      j->n_tr > 1 && ops[1] && strcmp(ops[1]->type, ops[0]->type))) {
            snprintf(j->c.err, sizeof j->c.err, "%s: block 0: the trainers do not meet at the "
                     "same collective op (one ends or runs another)", j->tr[0].label);
            ok = false;
            break;
        }
        if (j->in->mode == SYM_COLLECTIVE) {
            allreduce(j, ops, at);
            for (size_t t = 0; t < j->n_tr; t++)
                j->tr[t].pc++;
        } else {
            average(j, at);
            for (size_t t = 0; t < j->n_tr; t++)
                j->tr[t].synced = true;
        }
    }
    free(ops);
    return ok;
}
