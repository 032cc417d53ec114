/* lr_decay.c - an async or half-async job's LR-decay block on the pservers
 * (job.h; research-modes.md section 1), as Paddle's fluid 1.7 runtime runs
 * it and src/exec/dist.c simulates it:
 * - the block (listen_and_serv's lr_decay_block_id) sums the per-trainer
 *   counters C.trainer_<i> into C, then computes the learning rate from C;
 * - each pserver runs it once at start-up, when every C.trainer_<i> is 1
 *   (so C is the trainer count n);
 * - a trainer's notify send (use_send_handler false) of C.trainer_<k>, to
 *   every endpoint of its epmap, adds the sent value (1) to that pserver's
 *   C.trainer_<k> and runs the block again.  A name without
 *   @LR_DECAY_COUNTER@ is dropped, as Paddle's notify handler drops it.
 * The counters are int64 [1] values folded exactly (intfold.c), so trainer
 * k's grads in round s read the rate of C = s*n + k.  Single-process
 * training's update t = (s-1)*n + k + 1 reads its rate of c0 + t, c0 being
 * its counter's start (-1 for a schedule that begins at 0): Paddle's async
 * schedule runs n - 1 - c0 steps ahead.  The reference therefore starts
 * each counter at n - 1 and carries it from update to update (also through
 * a counter MAIN increments in its forward ops); every other op of the
 * learning rate must be single-process training's, and the offset is
 * reported (sym_lr_note). */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"

struct sym_lr {
    GPtrArray *counters;        /* interned names the LR-decay blocks sum per trainer */
    GPtrArray *start;           /* single-process training's initial term of each */
    GPtrArray *state;           /* every name the LR-decay blocks write */
    pmap state_set;
};

static int lr_block(sym_proc *ps)
{
    ir_op *l = sym_listen_op(ps);
    return l ? (int)ir_op_get_int(l, "lr_decay_block_id", -1) : -1;
}


bool sym_lr_setup(sym_job *j)
{
    for (size_t k = 0; k < j->n_ps; k++) {
        int lb = lr_block(&j->ps[k]);
        ir_block *b = lb >= 0 ? ir_program_block(j->ps[k].main, lb) : NULL;
        if (lb < 0)
            continue;
        if (!b || lb == 0) {
            snprintf(j->c.err, sizeof j->c.err, "%s: listen_and_serv's lr_decay_block_id %d "
                     "names no block", j->ps[k].label, lb);
            return false;
        }
        if (!j->lr) {
            j->lr = xcalloc(1, sizeof *j->lr);
            j->lr->counters = g_ptr_array_new();
            j->lr->start = g_ptr_array_new();
            j->lr->state = g_ptr_array_new();
        }
        for (size_t i = 0; i < b->n_ops; i++) {
            const ir_op *op = b->ops[i];
            for (uint32_t o = 0; o < op->n_outputs; o++)
                for (uint32_t q = 0; q < ir_op_outs(op)[o].n_args; q++)
                    if (*ir_op_outs(op)[o].args[q] && pmap_add(&j->lr->state_set, ir_op_outs(op)[o].args[q]))
                        g_ptr_array_add(j->lr->state, (void *)ir_op_outs(op)[o].args[q]);
            const char *c = ir_op_trainer_counter_sum(op);
            bool seen = false;
            for (guint q = 0; c && q < j->lr->counters->len; q++)
                seen |= j->lr->counters->pdata[q] == c;
            if (c && !seen)
                g_ptr_array_add(j->lr->counters, (void *)c);
        }
    }
    return true;
}

void sym_lr_free(sym_job *j)
{
    if (!j->lr)
        return;
    g_ptr_array_free(j->lr->counters, TRUE);
    g_ptr_array_free(j->lr->start, TRUE);
    g_ptr_array_free(j->lr->state, TRUE);
    pmap_free(&j->lr->state_set);
    free(j->lr);
    j->lr = NULL;
}

/* listen_and_serv's start-up run of the LR-decay block ("execute global
 * block if needed": it is in no grad_to_block_id entry). */
bool sym_lr_startup(sym_job *j)
{
    for (size_t k = 0; j->lr && k < j->n_ps; k++) {
        int lb = lr_block(&j->ps[k]);
        if (lb > 0 && !sym_run_block(&j->c, &j->ps[k], j->ps[k].main, j->ps[k].label, lb))
            return false;
    }
    return true;
}

/* Pserver ps notified of counter w holding `sent`. */
static int notified(sym_job *j, sym_proc *ps, const char *w, sym_term *sent, const char *label,
                    int block, size_t i, ir_op *op)
{
    sym_term *own = pmap_get(&ps->vals, w);
    int64_t a, b;
    int lb = lr_block(ps);
    if (!own || !sym_int_value(own, &a) || !sym_int_value(sent, &b)) {
        sym_fail(&j->c, label, block, i, op, "notifies '%s' to %s (%s), where %s", w, ps->endpoint,
                 ps->label, !own ? "no startup op wrote that counter"
                           : "the counter or the sent value is not a known int64 count");
        return -1;
    }
    if (lb <= 0) {
        sym_fail(&j->c, label, block, i, op, "notifies '%s' to %s (%s), which has no LR-decay "
                 "block", w, ps->endpoint, ps->label);
        return -1;
    }
    sym_write(ps, w, sym_int(j->c.st, a + b), sym_site_make(j->c.st, label, block, (int)i, op));
    bool ok = sym_run_block(&j->c, ps, ps->main, ps->label, lb);
    sym_store_set_site(j->c.st, NULL);
    return ok ? 1 : -1;
}

int sym_lr_notify(sym_job *j, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    const char *label = prog == p->main ? p->label : p->startup_label;
    const ir_slot *x = ir_op_input(op, "X");
    ir_arena *a = ir_arena_new();
    size_t n_ep = 0;
    const char **eps = ir_op_get_names(op, "epmap", &n_ep, a);
    ir_block *b = ir_program_block(prog, block);
    int rc = 1;
    for (uint32_t k = 0; x && k < x->n_args && rc > 0; k++) {
        const char *w = sym_wire_name(p, x->args[k]);
        sym_term *t = sym_read(&j->c, p, b, x->args[k]);
        for (size_t e = 0; e < n_ep && rc > 0; e++) {
            sym_proc *ps = sym_pserver_at(j, eps[e]);
            if (!ps) {
                sym_fail(&j->c, label, block, i, op, "notifies '%s' to '%s', which no pserver "
                         "of the job serves", w, eps[e]);
                rc = -1;
            } else if (strstr(w, "@LR_DECAY_COUNTER@")) {
                rc = notified(j, ps, w, t, label, block, i, op);
            }
        }
    }
    sym_store_set_site(j->c.st, NULL);
    ir_arena_free(a);
    return rc;
}

void sym_lr_ref_setup(sym_job *j)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    sym_term *start = sym_int(j->c.st, (int64_t)j->n_tr - 1);
    const sym_site *site = sym_site_make(j->c.st, "Paddle's async step counter", 0, -1, NULL);
    for (guint q = 0; j->lr && q < j->lr->counters->len; q++) {
        const char *c = j->lr->counters->pdata[q];
        g_ptr_array_add(j->lr->start, sym_read(&j->c, &j->ref, b, c));
        sym_write(&j->ref, c, start, site);
        for (size_t t = 0; t < j->n_tr; t++)
            sym_write(&j->view[t], c, start, site);
    }
}

/* The vars the LR-decay block writes are the pservers' own, one for all
 * trainers: trainer t's view takes them from the last update, so that a
 * counter and a learning rate MAIN computes in its forward ops (moved to
 * the pservers by --lr-ops=move) count on from the last trainer's step,
 * and a conditional_block that leaves the rate as it was leaves the last
 * update's. */
void sym_lr_ref_view(sym_job *j, size_t t)
{
    for (guint q = 0; j->lr && q < j->lr->state->len; q++) {
        const char *c = j->lr->state->pdata[q];
        sym_term *v = pmap_get(&j->ref.vals, c);
        if (v)
            sym_write(&j->view[t], c, v, pmap_get(&j->ref.sites, c));
    }
}

void sym_lr_note(sym_job *j, GString *g)
{
    long long n = (long long)j->n_tr;
    for (guint q = 0; j->lr && q < j->lr->counters->len; q++) {
        const char *c = j->lr->counters->pdata[q];
        int64_t c0;
        bool known = q < j->lr->start->len && sym_int_value(j->lr->start->pdata[q], &c0);
        if (g->len)
            g_string_append(g, "; ");
        if (!strstr(c, "@LR_DECAY_COUNTER@")) {
            g_string_append_printf(g, "the pservers' counter '%s' stays at the trainer count %lld: "
                                   "Paddle's notify handler raises only @LR_DECAY_COUNTER@ names",
                                   c, n);
            continue;
        }
        g_string_append_printf(g, "async LR decay: the pservers' step counter '%s' starts at the "
                               "trainer count %lld and counts every trainer's step, so the "
                               "learning-rate schedule runs ", c, n);
        if (known)
            g_string_append_printf(g, "%lld steps ahead of single-process training's (its counter "
                                   "starts at %lld)", n - 1 - (long long)c0, (long long)c0);
        else
            g_string_append(g, "ahead of single-process training's (whose counter no startup op "
                               "sets)");
        g_string_append_printf(g, "; compared with single-process training whose counter starts "
                               "at %lld", n - 1);
    }
}
