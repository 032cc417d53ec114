/* local_sgd.c - collective local_sgd jobs (job.h; research-modes.md
 * section 4).  Paddle's collective.LocalSGD writes, per parameter p with
 * a snapshot s = p@SNAPSHOT (assigned after the startup's broadcast):
 * right after p's update op `elementwise_sub(s, p) -> p`, then
 * `c_allreduce_sum(p)`; at the block's end `scale(p, 1/n)`,
 * `elementwise_sub(s, p) -> p` and `assign(p) -> s`.  No loss-grad scale
 * and no grad allreduce: each rank updates its own params with its own
 * optimizer state (momentum, Adam moments, LR counter) from its own
 * grad, and the params are averaged after every step (the transpiler
 * has no k_steps: that is fleet's LocalSGDOptimizer, which it does not
 * use).
 *
 * The job side needs only collective.c's lockstep allreduce, plus
 * `assign` as a copy (Out is X), so that the snapshot is the param.  The
 * reference (`sym_lsgd_ref_step`) is local SGD's own, built literally as
 * the transpiler's intent reads it, since s - (s - x) is not x in
 * floating point:
 *     p := s - scale(sum_i (s - p_i), float(1/n)),  s := p
 * with p_i single-process training's whole step (update ops included) on
 * trainer i's view, its feeds and its own optimizer state, and s the
 * params of the step before.  The snapshot is kept in the reference's
 * scope as PARAM@SNAPSHOT. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"

bool sym_lsgd_active(const sym_job *j)
{
    return j->in->mode == SYM_COLLECTIVE && j->in->coll_mode == SYM_LOCAL_SGD;
}

int sym_lsgd_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    const char *x = ir_op_input1(op, "X"), *out = ir_op_output1(op, "Out");
    if (!sym_lsgd_active(c->job) || strcmp(op->type, "assign") || !x || !out)
        return 0;
    const char *label = prog == p->main ? p->label : p->startup_label;
    sym_write(p, out, sym_read(c, p, ir_program_block(prog, block), x),
              sym_site_make(c->st, label, block, (int)i, op));
    return 1;
}

static const char *snapshot(const char *param)
{
    return ir_internf("%s@SNAPSHOT", param);
}

/* Every view runs the whole of MAIN on its own feeds and state. */
static bool run_views(sym_job *j, int step)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t t = 0; t < j->n_tr; t++) {
        j->view[t].feed_tag = ir_internf("t%zu.s%d", t, step);
        for (size_t i = 0; b && i < b->n_ops; i++)
            if (!sym_run_op(&j->c, &j->view[t], j->in->main, j->in->main_label, 0, i))
                return false;
    }
    return true;
}

bool sym_lsgd_ref_step(sym_job *j, int step)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    sym_store *st = j->c.st;
    /* before the first step: the snapshot is the initial (broadcast) param */
    for (guint k = 0; step == 1 && k < j->params->len; k++) {
        const char *p = j->params->pdata[k];
        sym_write(&j->ref, snapshot(p), sym_read(&j->c, &j->view[0], b, p),
                  pmap_get(&j->view[0].sites, p));
    }
    if (!run_views(j, step))
        return false;
    sym_term **d = xmalloc_n(j->n_tr + 1, sizeof *d);
    double f = (double)(float)(1.0 / (double)j->n_tr);
    const sym_site *site = sym_site_make(st, "local SGD's averaging", 0, -1, NULL);
    sym_store_set_site(st, site);
    for (guint k = 0; k < j->params->len; k++) {
        const char *p = j->params->pdata[k];
        sym_term *s = pmap_get(&j->ref.vals, snapshot(p));
        int64_t rows = s->rows >= 0 ? s->rows : sym_var_rows(b, p);
        for (size_t t = 0; t < j->n_tr; t++)
            d[t] = sym_ew(st, "elementwise_sub", s, sym_read(&j->c, &j->view[t], b, p), rows);
        sym_term *mean = sym_scale(st, sym_sum(st, d, (uint32_t)j->n_tr), f, 0, true);
        sym_term *avg = sym_ew(st, "elementwise_sub", s, mean, rows);
        sym_write(&j->ref, p, avg, site);
        sym_write(&j->ref, snapshot(p), avg, site);
        for (size_t t = 0; t < j->n_tr; t++)
            sym_write(&j->view[t], p, avg, site);
    }
    sym_store_set_site(st, NULL);
    free(d);
    return true;
}
