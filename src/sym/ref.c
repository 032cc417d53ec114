/* ref.c - single-process training of MAIN, symbolically (job.h).  MAIN's
 * startup runs once; the values trainer 0 holds after its startup by
 * recv and concat (the params, as the pservers initialised them slice by
 * slice) are adopted, as `verify transpile` does.  A step: each trainer's
 * view (its params and its own state, such as batch-norm statistics)
 * runs MAIN's forward and backward ops on that trainer's feeds; the
 * shared state takes trainer 0's values, each optimizer grad becomes the
 * mean over the trainers (scale(sum, float(1/n)), the job's float32
 * factor), and MAIN's optimize and LR-schedule ops run once.  Async: one
 * trainer per update, on its own grad, and only its view is refreshed.
 * An async job's LR-decay counters start where Paddle's pservers put them
 * (lr_decay.c), and DC-ASGD's optimizer reads the corrected grad
 * (dcasgd.c). */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"

/* Gradient-clip ops run on each trainer before its send: not update ops. */
static bool update_role(const ir_op *op)
{
    int r = ir_op_role(op);
    return !ir_op_is_grad_clip(op) && r >= 0 && (r & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED));
}

static gint cmp_str(gconstpointer x, gconstpointer y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* MAIN's (param, grad) pairs from its optimizer ops' op_role_var (the
 * last op naming a param is its optimizer: its grad is what the trainers
 * send, after clipping, before regularization), and the names its update
 * ops write. */
static void scan_main(sym_job *j)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    ir_arena *a = ir_arena_new();
    pmap grad_of = PMAP_INIT;
    j->params = g_ptr_array_new();
    j->grads = g_ptr_array_new();
    for (size_t i = 0; b && i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        if (!update_role(op))
            continue;
        for (uint32_t s = 0; s < op->n_outputs; s++)
            for (uint32_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
                if (pmap_add(&j->shared_set, ir_op_outs(op)[s].args[k]))
                    g_ptr_array_add(j->shared, (void *)ir_op_outs(op)[s].args[k]);
        size_t n = 0;
        const char **rv = ir_op_get_names(op, "op_role_var", &n, a);
        for (size_t k = 0; k + 1 < n && (ir_op_role(op) & IR_ROLE_OPTIMIZE); k += 2)
        {
            if (!pmap_get(&grad_of, rv[k]))
                g_ptr_array_add(j->params, (void *)rv[k]);
            pmap_put(&grad_of, rv[k], (void *)rv[k + 1]);
        }
    }
    g_ptr_array_sort(j->params, cmp_str);
    for (guint k = 0; k < j->params->len; k++)
        g_ptr_array_add(j->grads, pmap_get(&grad_of, j->params->pdata[k]));
    pmap_free(&grad_of);
    ir_arena_free(a);
}

/* dst takes every value src holds but those of `skip`, or only the
 * names `only`, when given. */
static void copy_vals(sym_proc *dst, const sym_proc *src, const GPtrArray *only,
                      const pmap *skip)
{
    if (!only) {
        PMAP_FOR(&src->vals, s) if (!skip || !pmap_get(skip, s->key))
            sym_write(dst, s->key, s->val, pmap_get(&src->sites, s->key));
        return;
    }
    for (guint k = 0; k < only->len; k++) {
        sym_term *t = pmap_get(&src->vals, only->pdata[k]);
        if (t)
            sym_write(dst, only->pdata[k], t, pmap_get(&src->sites, only->pdata[k]));
    }
}

bool sym_ref_setup(sym_job *j)
{
    sym_proc *r = &j->ref;
    memset(r, 0, sizeof *r);
    r->label = j->in->main_label;
    r->startup_label = "the single-process startup";
    r->main = j->in->main;
    r->trainer = -1;
    r->emulate_from = -1;
    j->shared = g_ptr_array_new();
    if (j->in->startup && !sym_run_block(&j->c, r, j->in->startup, r->startup_label, 0))
        return false;
    ir_block *sb = j->tr[0].startup ? ir_program_block(j->tr[0].startup, 0) : NULL;
    for (size_t i = 0; sb && i < sb->n_ops; i++) {
        ir_op *op = sb->ops[i];
        const ir_slot *o = ir_op_output(op, "Out");
        if (strcmp(op->type, "recv") && strcmp(op->type, "concat"))
            continue;
        for (uint32_t k = 0; o && k < o->n_args; k++) {
            sym_term *t = pmap_get(&j->tr[0].vals, o->args[k]);
            if (t) {
                sym_write(r, o->args[k], t, pmap_get(&j->tr[0].sites, o->args[k]));
                if (pmap_add(&j->shared_set, o->args[k]))
                    g_ptr_array_add(j->shared, (void *)o->args[k]);
            }
        }
    }
    scan_main(j);
    j->view = xcalloc(j->n_tr + 1, sizeof *j->view);
    for (size_t t = 0; t < j->n_tr; t++) {
        j->view[t] = *r;
        memset(&j->view[t].vals, 0, sizeof(pmap));
        memset(&j->view[t].sites, 0, sizeof(pmap));
        j->view[t].trainer = (int)t;
        copy_vals(&j->view[t], r, NULL, NULL);
    }
    sym_lr_ref_setup(j);
    return true;
}

static bool run_main(sym_job *j, sym_proc *p, bool updates)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++)
        if (update_role(b->ops[i]) == updates &&
            !(updates ? sym_dc_ref_op(j, i)
                      : sym_run_op(&j->c, p, j->in->main, j->in->main_label, 0, i)))
            return false;
    return true;
}

bool sym_ref_step(sym_job *j, int step, size_t t0, size_t t1)
{
    if (sym_lsgd_active(j))   /* local SGD's own reference */
        return sym_lsgd_ref_step(j, step);
    for (size_t t = t0; t < t1; t++) {
        j->view[t].feed_tag = ir_internf("t%zu.s%d", t, step);
        sym_lr_ref_view(j, t);
        if (!run_main(j, &j->view[t], false))
            return false;
    }
    /* the shared state stays the reference's own (async: views are stale) */
    copy_vals(&j->ref, &j->view[t0], NULL, &j->shared_set);
    size_t n = t1 - t0;
    sym_term **g = xmalloc_n(n + 1, sizeof *g);
    const sym_site *site = sym_site_make(j->c.st, j->in->main_label, 0, -1, NULL);
    for (guint k = 0; k < j->grads->len; k++) {
        const char *gn = j->grads->pdata[k];
        ir_block *b = ir_program_block(j->in->main, 0);
        for (size_t t = t0; t < t1; t++)
            g[t - t0] = sym_read(&j->c, &j->view[t], b, gn);
        sym_term *mean = sym_scale(j->c.st, sym_sum(j->c.st, g, (uint32_t)n),
                                   (double)(float)(1.0 / (double)n), 0, true);
        sym_write(&j->ref, gn, mean, site);
    }
    free(g);
    j->ref.feed_tag = ir_internf("t%zu.s%d", t0, step);
    sym_dc_ref_trainer(j, t0);
    if (!run_main(j, &j->ref, true))
        return false;
    for (size_t t = t0; t < t1; t++)
        copy_vals(&j->view[t], &j->ref, j->shared, NULL);
    return true;
}

void sym_ref_sync_views(sym_job *j)
{
    for (size_t t = 0; t < j->n_tr; t++)
        copy_vals(&j->view[t], &j->ref, j->shared, NULL);
}
