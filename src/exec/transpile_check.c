/* transpile_check.c - single-process training next to the cluster: each
 * step, every trainer's seeded batch goes through main's forward and
 * backward ops on the same parameters, the parameter grads are averaged
 * over the trainers, and main's LR-schedule and optimizer ops run once.
 * A MAIN without optimizer ops (its updates are done outside the program)
 * has nothing to train: then the grads themselves are compared. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "dist.h"
#include "feed.h"

static bool is_update_op(const ir_op *op)
{
    int r = ir_op_role(op);
    return r >= 0 && (r & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED));
}

static bool is_forward_backward_op(const ir_op *op)
{
    return !is_update_op(op) && !ex_is_feed_fetch(op);
}

/* [param, grad] pairs of the op_role_var of main's ops whose role has
 * `role_bit`, first occurrence kept. */
static size_t role_var_pairs(const ir_block *b, int role_bit, const char ***params,
                             const char ***grads)
{
    GPtrArray *ps = g_ptr_array_new(), *gs = g_ptr_array_new();
    pmap seen = PMAP_INIT;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_attr *rv = ir_op_attr(b->ops[i], "op_role_var");
        int role = ir_op_role(b->ops[i]);
        if (!rv || rv->type != IR_ATTR_STRINGS || role < 0 || !(role & role_bit))
            continue;
        for (size_t k = 0; k + 1 < rv->n_strings; k += 2) {
            const char *p = ir_intern_n((const char *)rv->strings[k].data, rv->strings[k].len);
            if (!pmap_add(&seen, p))
                continue;
            g_ptr_array_add(ps, (void *)p);
            g_ptr_array_add(gs, (void *)ir_intern_n((const char *)rv->strings[k + 1].data,
                                                    rv->strings[k + 1].len));
        }
    }
    pmap_free(&seen);
    size_t n = ps->len;
    *params = ex_names_take(ps);
    *grads = ex_names_take(gs);
    return n;
}

static ex_scope *feeds_for(const ir_program *main, uint64_t seed, int step, size_t trainer,
                           int64_t batch, char *err, size_t errlen)
{
    ex_scope *f = ex_scope_new();
    ex_rng r;
    ex_rng_seed(&r, seed * 1000003u + (uint64_t)step * 7919u + trainer);
    ex_feed_opts fo = {.batch = batch, .scale = 1.0, .data_only = true};
    if (!ex_feed_random(main, f, &fo, &r, err, errlen)) {
        ex_scope_free(f);
        return NULL;
    }
    return f;
}

static void copy_into(ex_scope *dst, const ex_scope *src)
{
    const char **names;
    size_t n = ex_scope_names(src, &names);
    for (size_t i = 0; i < n; i++)
        ex_scope_put(dst, names[i], ex_tensor_copy(ex_scope_get(src, names[i])));
    free(names);
}

/* The transpiled job averages with a float32 `scale` attr (the pservers'
 * merge scale 1/trainers, the collective loss grad's 1/nranks), so the
 * reference scales the sum by that float32 value, not by an exact 1/n: with
 * 3 trainers the two differ by 3e-8 relative, which a large grad times the
 * learning rate lifts over the 1e-9 tolerance (transpile_remote_nce). */
double ex_mean_factor(size_t n)
{
    return (double)(float)(1.0 / (double)n);
}

/* grads[g] = the sum over trainers times `factor`; SELECTED_ROWS values
 * stay rows (their rows concatenated), as the pservers' sum + scale keeps
 * them. */
static ex_tensor *scaled_sum(ex_tensor **per, size_t n, double factor)
{
    bool rows = true;
    size_t total = 0;
    for (size_t t = 0; t < n; t++) {
        rows &= per[t]->kind == EX_ROWS;
        total += per[t]->kind == EX_ROWS ? (size_t)per[t]->dims[0] : 0;
    }
    ex_tensor *out;
    if (rows) {
        out = ex_rows_new(per[0]->dtype, total, NULL, per[0]->nd - 1, per[0]->dims + 1, per[0]->height);
        size_t r = 0, at = 0;
        for (size_t t = 0; t < n; t++) {
            memcpy(out->rows + r, per[t]->rows, (size_t)per[t]->dims[0] * sizeof *out->rows);
            memcpy(out->data + at, per[t]->data, per[t]->numel * sizeof *out->data);
            r += (size_t)per[t]->dims[0];
            at += per[t]->numel;
        }
    } else {
        out = ex_densify(per[0]);
        for (size_t t = 1; t < n; t++) {
            ex_tensor *d = ex_densify(per[t]);
            for (size_t i = 0; i < out->numel && i < d->numel; i++)
                out->data[i] += d->data[i];
            ex_tensor_free(d);
        }
    }
    for (size_t i = 0; i < out->numel; i++)
        out->data[i] *= factor;
    return out;
}

/* A distributed table (prefetch) is not updated by MAIN's optimizer: its
 * pservers apply sgd with the learning rate of that optimizer to the sum of
 * the trainers' grads (Paddle's _create_table_optimize_block), so the
 * reference does the same.  The grad in R is then the sum. */
static bool by_id_table(const ex_cluster *c, const char *param)
{
    const ex_table *t = param ? ex_cluster_table(c, param) : NULL;
    return t && t->kind == EX_TABLE_BY_ID;
}

/* data_norm's statistic "grads" are summaries of the batch (its size, sum
 * and square sum), not derivatives of the loss: they never pass through the
 * loss grad's 1/trainers scale, so a collective grad_allreduce sums them,
 * which is what single-process training on all the trainers' batches
 * together gives.  The reference sums them too in collective mode. */
static void summary_grads(const ir_block *b, pmap *out)
{
    static const char *const slots[] = {"BatchSize@GRAD", "BatchSum@GRAD", "BatchSquareSum@GRAD"};
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "data_norm_grad"))
            for (size_t k = 0; k < G_N_ELEMENTS(slots); k++) {
                const char *g = ir_op_output1(b->ops[i], slots[k]);
                if (g)
                    pmap_add(out, g);
            }
}

static bool table_sgd(ex_scope *R, const ir_op *op, char *err, size_t errlen)
{
    const char *pn = ir_op_input1(op, "Param"), *gn = ir_op_input1(op, "Grad");
    const char *ln = ir_op_input1(op, "LearningRate");
    ex_tensor *p = ex_scope_get(R, pn);
    const ex_tensor *g = gn ? ex_scope_get(R, gn) : NULL, *lr = ln ? ex_scope_get(R, ln) : NULL;
    if (!p || !g || !lr || !lr->numel) {
        g_snprintf(err, errlen, "single-process run: the update of table '%s' lacks its inputs", pn);
        return false;
    }
    ex_tensor *d = ex_densify(g);
    for (size_t i = 0; i < p->numel && i < d->numel; i++)
        p->data[i] -= lr->data[0] * d->data[i];
    ex_tensor_free(d);
    return true;
}

static bool run_updates(ex_scope *R, const ir_program *main, const ex_cluster *c, char *err,
                        size_t errlen)
{
    ex_ctx x;
    ex_ctx_init(&x, main, R, 99);
    const ir_block *b = ir_program_block(main, 0);
    x.block = b;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        if (!is_update_op(op))
            continue;
        if (by_id_table(c, ir_op_input1(op, "Param"))) {
            if (!table_sgd(R, op, err, errlen))
                return false;
            continue;
        }
        x.op_idx = i;
        if (!ex_run_op(&x, op)) {
            g_snprintf(err, errlen, "single-process run: block 0, op %zu '%s': %s", i, op->type, x.err);
            return false;
        }
    }
    return true;
}

/* Ordinary params a trainer's startup only fake_inits (an is_sparse
 * lookup_table's W: the seed's _get_sparse_table_names and
 * _fake_init_sparsetable) get no recv before the first step: each trainer's
 * first forward reads the fake value (Paddle: uninitialised memory; here
 * zeros), later ones the value recv'd after each step.  So the reference
 * starts them from the pservers' slices and runs step 0's forward and
 * backward of trainer t on what trainer t holds. */
static size_t fake_init_params(const ex_cluster *c, const ir_block *b0, const char ***out)
{
    GPtrArray *a = g_ptr_array_new();
    const ir_block *sb = c->n_trainers ? ir_program_block(c->trainers[0].startup, 0) : NULL;
    for (size_t i = 0; sb && i < sb->n_ops; i++) {
        const char *name = !strcmp(sb->ops[i]->type, "fake_init") ? ir_op_output1(sb->ops[i], "Out") : NULL;
        if (name && !ex_cluster_table(c, name) && ir_block_find_var(b0, name))
            g_ptr_array_add(a, (void *)name);
    }
    size_t n = a->len;
    *out = ex_names_take(a);
    return n;
}

typedef struct {
    const char **params, **grads;
    size_t n_grads;
    pmap summed;                    /* grads the reference sums, not averages */
    const char **held;              /* fake_init_params */
    size_t n_held;
    const char **state;             /* step_state */
    size_t n_state;
} ref_plan;

/* The persistable vars, params aside, that main's forward and backward
 * ops of block 0 write: a forward-role LR counter (the PaddleOCR warm-up,
 * or one --lr-ops=move moves), batch-norm statistics.  Each trainer holds
 * its own and runs those ops once a step; the reference runs them once per
 * trainer in one scope, so each trainer's run starts from the step's
 * values (else a counter would count trainers times steps). */
static size_t step_state(const ir_block *b0, const char **params, size_t np, const char ***out)
{
    pmap skip = PMAP_INIT;
    for (size_t i = 0; i < np; i++)
        pmap_add(&skip, params[i]);
    GPtrArray *a = g_ptr_array_new();
    for (size_t i = 0; i < b0->n_ops; i++) {
        const ir_op *op = b0->ops[i];
        if (!is_forward_backward_op(op))
            continue;
        for (uint32_t k = 0; k < op->n_outputs; k++)
            for (uint32_t j = 0; j < ir_op_outs(op)[k].n_args; j++) {
                const char *name = ir_op_outs(op)[k].args[j];
                const ir_var *v = ir_block_find_var(b0, name);
                if (v && v->persistable && pmap_add(&skip, name))
                    g_ptr_array_add(a, (void *)name);
            }
    }
    pmap_free(&skip);
    size_t n = a->len;
    *out = ex_names_take(a);
    return n;
}

/* Puts trainer t's own values of the held params into R; returns R's. */
static ex_tensor **hold_trainer_values(ex_scope *R, const ex_scope *trainer, const ref_plan *rp)
{
    ex_tensor **real = xcalloc(rp->n_held + 1, sizeof(ex_tensor *));
    for (size_t h = 0; h < rp->n_held; h++) {
        const ex_tensor *mine = ex_scope_get(trainer, rp->held[h]), *r = ex_scope_get(R, rp->held[h]);
        real[h] = r ? ex_tensor_copy(r) : NULL;
        if (mine)
            ex_scope_put(R, rp->held[h], ex_tensor_copy(mine));
    }
    return real;
}

static void restore_values(ex_scope *R, const ref_plan *rp, ex_tensor **real)
{
    for (size_t h = 0; h < rp->n_held; h++)
        if (real[h])
            ex_scope_put(R, rp->held[h], real[h]);
    free(real);
}

static bool reference_step(ex_scope *R, const ir_program *main, const ex_cluster *c,
                           ex_scope **feeds, const ref_plan *rp, int step, char *err, size_t errlen)
{
    size_t n_tr = c->n_trainers, n_grads = rp->n_grads;
    const char **params = rp->params, **grads = rp->grads;
    ex_tensor **per = xcalloc(n_grads * n_tr + 1, sizeof(ex_tensor *));
    bool ok = true;
    ex_tensor **start = xcalloc(rp->n_state + 1, sizeof(ex_tensor *));
    for (size_t k = 0; k < rp->n_state; k++) {
        const ex_tensor *v = ex_scope_get(R, rp->state[k]);
        start[k] = v ? ex_tensor_copy(v) : NULL;
    }
    for (size_t t = 0; ok && t < n_tr; t++) {
        for (size_t k = 0; t > 0 && k < rp->n_state; k++)
            if (start[k])
                ex_scope_put(R, rp->state[k], ex_tensor_copy(start[k]));
        copy_into(R, feeds[t]);
        ex_tensor **real = step == 0 ? hold_trainer_values(R, c->trainers[t].scope, rp) : NULL;
        ex_ctx x;
        ex_ctx_init(&x, main, R, 99);
        ok = ex_run_block(&x, 0, is_forward_backward_op);
        if (real)
            restore_values(R, rp, real);
        if (!ok)
            g_snprintf(err, errlen, "single-process run: %s", x.err);
        for (size_t g = 0; ok && g < n_grads; g++) {
            const ex_tensor *v = ex_scope_get(R, grads[g]);
            if (!v) {
                g_snprintf(err, errlen, "single-process run: no op computes '%s'", grads[g]);
                ok = false;
                break;
            }
            /* A dense grad of trainer 0 makes scaled_sum add densified
             * grads in trainer order: add each as it comes (the same sums,
             * bit for bit) instead of holding one per trainer, which with
             * the cluster alive cost a grad per trainer. */
            ex_tensor **acc = &per[g * n_tr];
            if (t > 0 && *acc && (*acc)->kind == EX_DENSE) {
                ex_tensor *d = ex_densify(v);
                for (size_t i = 0; i < (*acc)->numel && i < d->numel; i++)
                    (*acc)->data[i] += d->data[i];
                ex_tensor_free(d);
            } else
                acc[t] = t == 0 && v->kind == EX_DENSE ? ex_densify(v) : ex_tensor_copy(v);
        }
    }
    for (size_t g = 0; ok && g < n_grads; g++) {
        bool sum = by_id_table(c, params[g]) || pmap_has(&rp->summed, grads[g]);
        double factor = sum ? 1.0 : ex_mean_factor(n_tr);
        ex_tensor **list = per + g * n_tr;
        if (list[0]->kind == EX_DENSE) {
            for (size_t i = 0; i < list[0]->numel; i++)
                list[0]->data[i] *= factor;
            ex_scope_put(R, grads[g], list[0]);
            list[0] = NULL;
        } else
            ex_scope_put(R, grads[g], scaled_sum(list, n_tr, factor));
    }
    ok = ok && run_updates(R, main, c, err, errlen);
    for (size_t k = 0; k < rp->n_state; k++)
        ex_tensor_free(start[k]);
    free(start);
    for (size_t i = 0; i < n_grads * n_tr; i++)
        ex_tensor_free(per[i]);
    free(per);
    return ok;
}

/* The reference starts from the trainers' parameters after their startup
 * (the pservers initialised them, slice by slice). */
static void adopt_initial_values(ex_scope *R, const ex_scope *trainer, const ir_block *b)
{
    const char **names;
    size_t n = ex_scope_names(trainer, &names);
    for (size_t i = 0; i < n; i++) {
        const ir_var *v = ir_block_find_var(b, names[i]);
        const ex_tensor *mine = ex_scope_get(R, names[i]), *theirs = ex_scope_get(trainer, names[i]);
        if (v && v->persistable && mine && theirs->numel == mine->numel)
            ex_scope_put(R, names[i], ex_tensor_copy(theirs));
    }
    free(names);
}

/* Persistable vars MAIN's block 0 reads that no op before the read and no
 * startup op writes hold what the user sets in the scope (a learning-rate
 * var of his own, say): each gets one seeded value, as feeds do but
 * positive, in the reference and in every trainer and pserver whose block
 * 0 declares it and that holds none. */
static bool set_user_values(ex_cluster *c, const ir_program *main, ex_scope *R, uint64_t seed)
{
    const char **before;
    size_t n0 = ex_scope_names(R, &before), n;
    free(before);
    ex_rng r;
    ex_rng_seed(&r, seed * 7919u + 17);
    ex_feed_opts fo = {.batch = 1, .scale = 1.0, .data_only = false};
    if (!ex_feed_random(main, R, &fo, &r, c->err, sizeof c->err))
        return false;
    const char **names;
    n = ex_scope_names(R, &names);
    const ir_block *b0 = ir_program_block(main, 0);
    for (size_t i = n0; i < n; i++) {
        const ir_var *v = ir_block_find_var(b0, names[i]);
        ex_tensor *t = ex_scope_get(R, names[i]);
        if (!v || !v->persistable) {
            ex_scope_remove(R, names[i]);   /* a data var: each step feeds it */
            continue;
        }
        for (size_t k = 0; k < t->numel; k++)
            t->data[k] = fabs(t->data[k]);
        for (size_t p = 0; p < c->n_trainers + c->n_pservers; p++) {
            ex_proc *x = p < c->n_trainers ? &c->trainers[p] : &c->pservers[p - c->n_trainers];
            if (ir_block_find_var(ir_program_block(x->main, 0), names[i]) &&
                !ex_scope_get(x->scope, names[i]))
                ex_scope_put(x->scope, names[i], ex_tensor_copy(t));
        }
    }
    free(names);
    return true;
}

/* |a - b| per element over max(1, |b|) for parameters; grads (often far
 * below 1) over the largest |b| of the tensor instead, so that a wrong
 * small grad is not hidden. */
static double rel_diff(const ex_tensor *a, const ex_tensor *b, bool by_tensor, bool *finite)
{
    double worst = 0, scale = 0;
    *finite = true;
    if (a->numel != b->numel)
        return INFINITY;
    for (size_t i = 0; by_tensor && i < b->numel; i++)
        scale = fmax(scale, fabs(b->data[i]));
    for (size_t i = 0; i < a->numel; i++) {
        *finite &= isfinite(a->data[i]);
        double den = by_tensor ? (scale > 0 ? scale : 1.0) : fmax(1.0, fabs(b->data[i]));
        double d = fabs(a->data[i] - b->data[i]) / den;
        worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    return worst;
}

/* The reference starts where the cluster does: MAIN's startup, then the
 * trainers' parameters, the pservers' tables and the held params. */
static bool reference_start(ex_cluster *c, ex_scope *R, const ir_program *main,
                            const ir_program *startup, ref_plan *rp, uint64_t seed)
{
    const ir_block *b0 = ir_program_block(main, 0);
    bool ok = ex_cluster_startup(c, seed);
    if (ok) {
        ex_ctx x;
        ex_ctx_init(&x, startup, R, seed);
        ok = ex_run_block(&x, 0, NULL);
        if (!ok)
            g_snprintf(c->err, sizeof c->err, "single-process startup: %s", x.err);
    }
    if (ok)
        adopt_initial_values(R, c->trainers[0].scope, b0);
    ok = ok && set_user_values(c, main, R, seed);
    if (ok)
        ex_lr_counter_start(c, R);
    for (size_t i = 0; ok && i < c->n_tables; i++) {
        ex_tensor *t = ex_table_gather(c, &c->tables[i]);
        ok = t != NULL;
        if (ok)
            ex_scope_put(R, c->tables[i].name, t);
    }
    rp->n_held = fake_init_params(c, b0, &rp->held);
    for (size_t i = 0; ok && i < rp->n_held; i++) {
        ex_tensor *t = ex_param_gather(c, rp->held[i]);
        ok = t != NULL;
        if (ok)
            ex_scope_put(R, rp->held[i], t);
    }
    return ok;
}

static bool run_steps(ex_cluster *c, ex_scope *R, const ir_program *main, const ref_plan *rp,
                      const ex_transpile_opts *o)
{
    bool ok = true;
    ex_scope **feeds = xcalloc(c->n_trainers + 1, sizeof(ex_scope *));
    for (int s = 0; ok && s < o->steps; s++) {
        for (size_t t = 0; ok && t < c->n_trainers; t++) {
            ex_scope_free(feeds[t]);
            feeds[t] = feeds_for(main, o->seed, s, t, o->batch, c->err, sizeof c->err);
            ok = feeds[t] != NULL;
            if (ok)
                copy_into(c->trainers[t].scope, feeds[t]);
        }
        ok = ok && reference_step(R, main, c, feeds, rp, s, c->err, sizeof c->err);
        ok = ok && ex_cluster_step(c);
    }
    for (size_t t = 0; t < c->n_trainers; t++)
        ex_scope_free(feeds[t]);
    free(feeds);
    return ok;
}

/* Each name's value on every trainer (a table's: gathered from the
 * pservers) against the reference's. */
static ex_param_result *compare(ex_cluster *c, ex_scope *R, const char **names, size_t n,
                                bool grads)
{
    ex_param_result *r = xcalloc(n + 1, sizeof(ex_param_result));
    for (size_t i = 0; i < n; i++) {
        r[i].param = names[i];
        r[i].finite = true;
        r[i].is_grad = grads;
        const ex_tensor *want = ex_scope_get(R, names[i]);
        const ex_table *tab = grads ? NULL : ex_cluster_table(c, names[i]);
        for (size_t t = 0; t < (tab ? 1 : c->n_trainers); t++) {
            ex_tensor *mine = tab ? ex_table_gather(c, tab) : NULL;
            const ex_tensor *got = tab ? mine : ex_scope_get(c->trainers[t].scope, names[i]);
            bool fin = false;
            double d = got && want ? rel_diff(got, want, grads, &fin) : INFINITY;
            r[i].worst_rel = fmax(r[i].worst_rel, d);
            r[i].finite &= got && fin;
            ex_tensor_free(mine);
        }
    }
    return r;
}

bool ex_transpile_check(ex_cluster *c, const ir_program *main, const ir_program *startup,
                        const ex_transpile_opts *o, ex_param_result **res, size_t *n_res)
{
    *res = NULL;
    *n_res = 0;
    const ir_block *b0 = ir_program_block(main, 0);
    const char **params = NULL, **grads = NULL;
    size_t np = b0 ? role_var_pairs(b0, IR_ROLE_OPTIMIZE, &params, &grads) : 0;
    /* no optimizer: the grads the backward ops name are what the job makes */
    bool grads_only = false;
    if (!np && b0) {
        free(params);
        free(grads);
        np = role_var_pairs(b0, IR_ROLE_BACKWARD, &params, &grads);
        grads_only = np > 0;
    }
    if (!np) {
        free(params);
        free(grads);
        g_snprintf(c->err, sizeof c->err,
                   "MAIN has no optimizer or backward op naming a parameter (op_role_var)");
        return false;
    }
    c->grads = grads;
    c->n_grads = np;
    ex_scope *R = ex_scope_new();
    ref_plan rp = {.params = params, .grads = grads, .n_grads = np, .summed = PMAP_INIT};
    if (c->mode == EX_CL_COLLECTIVE)
        summary_grads(b0, &rp.summed);
    rp.n_state = step_state(b0, params, np, &rp.state);
    bool ok = reference_start(c, R, main, startup, &rp, o->seed) && run_steps(c, R, main, &rp, o);
    ex_param_result *r = ok ? compare(c, R, grads_only ? grads : params, np, grads_only) : NULL;
    size_t n_r = np;
    /* GEO: each pserver slice holds what the trainers pushed (dist_geo.c) */
    ok = ok && (c->dist_mode != 3 || ex_geo_check(c, &r, &n_r));
    ex_scope_free(R);
    pmap_free(&rp.summed);
    free(rp.held);
    free(rp.state);
    free(params);
    if (!ok) {
        free(r);
        return false;
    }
    *res = r;
    *n_res = n_r;
    return true;
}
