/* dcasgd.c - DC-ASGD (transpile --dc-asgd; research-modes.md section 3):
 * each pserver keeps, per param slice P and trainer i, a backup
 * P.trainer_<i>_bak, and each grad block corrects the grad g before its
 * optimizer:
 *     ref_by_trainer_id(X = [P.trainer_*_bak], TrainerId = @TRAINER_ID@)
 *         -> P.local_bak
 *     g' = g + ((P - P.local_bak) * g) * g      (elementwise; no lambda)
 * The runtime, as fluid 1.7's RequestGetHandler and src/exec/dist.c do it:
 * a recv by trainer k from a dc_asgd pserver copies the P it replies with
 * into P.trainer_<k>_bak (the startup recv too), and a delivered grad
 * sets the pserver's @TRAINER_ID@ to the sender's id (an int64 value
 * known exactly, so ref_by_trainer_id picks that trainer's backup:
 * intfold.c).  (Paddle 1.5 and 2.0's handlers do not write @TRAINER_ID@:
 * research-modes.md open question 3a.)
 *
 * The reference is DC-ASGD's own: trainer k's update applies MAIN's
 * optimizer op to g' = g + ((P - P_k) * g) * g, P being the shared param
 * and P_k trainer k's view of it (what it computed g from, what it last
 * received), with the same elementwise ops the transpiler writes
 * (elementwise_sub, two elementwise_mul, elementwise_add, no attrs).  The
 * correction acts row by row (term.c's elementwise pull), so each
 * pserver's slice put together is the whole param's. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"

struct sym_dc {
    size_t trainer;             /* whose update the reference runs */
};

bool sym_dc_setup(sym_job *j)
{
    for (size_t k = 0; k < j->n_ps && !j->dc; k++) {
        ir_op *l = sym_listen_op(&j->ps[k]);
        if (l && ir_op_get_bool(l, "dc_asgd", false) && (j->async || j->half))
            j->dc = xcalloc(1, sizeof *j->dc);
    }
    return true;
}

void sym_dc_free(sym_job *j)
{
    free(j->dc);
    j->dc = NULL;
}

void sym_dc_deliver(sym_job *j, sym_proc *p, sym_proc *ps, const sym_site *site)
{
    if (p->trainer >= 0)
        sym_write(ps, ir_intern("@TRAINER_ID@"), sym_int(j->c.st, p->trainer), site);
}

void sym_dc_recv(sym_job *j, sym_proc *p, sym_proc *ps, const char *w, sym_term *t,
                 const sym_site *site)
{
    ir_op *l = sym_listen_op(ps);
    if (!l || p->trainer < 0 || !ir_op_get_bool(l, "dc_asgd", false))
        return;
    const char *bak = ir_internf("%s.trainer_%d_bak", w, p->trainer);
    (void)j;
    if (pmap_get(&ps->vals, bak))
        sym_write(ps, bak, t, site);
}

void sym_dc_ref_trainer(sym_job *j, size_t t)
{
    if (j->dc)
        j->dc->trainer = t;
}

/* An elementwise op of X and Y as the transpiler writes it (no attrs). */
sym_term *sym_ew(sym_store *st, const char *type, sym_term *x, sym_term *y, int64_t rows)
{
    sym_term *args[2] = {x, y};
    const char *slots[2] = {ir_intern("X"), ir_intern("Y")};
    sym_term *app = sym_app(st, ir_intern(type), ir_intern("X:1,Y:1 | "), args, slots, 2, -1);
    return sym_proj(st, app, "Out", 0, rows);
}

bool sym_dc_ref_op(sym_job *j, size_t i)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    ir_op *op = b->ops[i];
    const ir_slot *ps = ir_op_input(op, "Param"), *gs = ir_op_input(op, "Grad");
    int role = ir_op_role(op);
    sym_proc *r = &j->ref;
    if (!j->dc || !ps || !gs || ps->n_args != 1 || gs->n_args != 1 || role < 0 ||
        !(role & IR_ROLE_OPTIMIZE))
        return sym_run_op(&j->c, r, j->in->main, j->in->main_label, 0, i);
    const char *pn = ps->args[0], *gn = gs->args[0];
    sym_store *st = j->c.st;
    sym_term *p = sym_read(&j->c, r, b, pn), *g = sym_read(&j->c, r, b, gn);
    sym_term *pk = sym_read(&j->c, &j->view[j->dc->trainer], b, pn);
    const sym_site *gsite = pmap_get(&r->sites, gn);
    sym_store_set_site(st, sym_site_make(st, "DC-ASGD's correction", 0, -1, NULL));
    sym_term *o1 = sym_ew(st, "elementwise_sub", p, pk, p->rows);
    sym_term *o3 = sym_ew(st, "elementwise_mul", sym_ew(st, "elementwise_mul", o1, g, p->rows), g,
                          p->rows);
    sym_term *dc = sym_ew(st, "elementwise_add", g, o3, p->rows);
    sym_store_set_site(st, NULL);
    sym_write(r, gn, dc, gsite);
    bool ok = sym_run_op(&j->c, r, j->in->main, j->in->main_label, 0, i);
    sym_write(r, gn, g, gsite);
    return ok;
}
