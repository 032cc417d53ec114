/* spmt.c - collective single_process_multi_thread jobs (job.h).  Paddle's
 * collective.SingleProcessMultiThread is GradAllReduce on one ring: each
 * endpoint's process runs its program on every selected GPU, each on its
 * own batch, and the ring spans endpoints x GPUs (src/exec/README.md).
 * The caller (src/cli/verify_job.c) gives each endpoint's programs once
 * per device, so every device is a trainer here, and collective.c's
 * lockstep, allreduce and loss-grad scale apply as for grad_allreduce.
 * New is the fused allreduce (PADDLE_FUSE_ALLREDUCE > 0):
 * `coalesce_tensor(Input=grads) -> Output=grads, FusedOutput=fused_output`
 * with copy_data packs the grads into one buffer whose members stay views
 * of their slots, and `c_allreduce_sum(fused_output)` then sums every
 * member elementwise over the devices.  So a coalesce_tensor with
 * copy_data (and no set_constant) leaves each Output its Input, and the
 * allreduce of its FusedOutput is the allreduce of each member; any other
 * coalesce_tensor is an uninterpreted op. */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"

static bool packs(const ir_op *op)
{
    const ir_slot *in = ir_op_input(op, "Input"), *o = ir_op_output(op, "Output");
    return !strcmp(op->type, "coalesce_tensor") && in && o && in->n_args == o->n_args &&
           ir_op_get_bool(op, "copy_data", false) && !ir_op_get_bool(op, "set_constant", false);
}

int sym_spmt_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    if (!packs(op))
        return 0;
    const ir_slot *in = ir_op_input(op, "Input"), *o = ir_op_output(op, "Output");
    ir_block *b = ir_program_block(prog, block);
    const sym_site *site = sym_site_make(c->st, prog == p->main ? p->label : p->startup_label,
                                         block, (int)i, op);
    sym_term **v = xmalloc_n(in->n_args + 1, sizeof *v);
    for (uint32_t k = 0; k < in->n_args; k++)
        v[k] = sym_read(c, p, b, in->args[k]);
    sym_run_generic(c, p, prog, b, op, site);   /* FusedOutput: the packed buffer */
    for (uint32_t k = 0; k < o->n_args; k++)
        sym_write(p, o->args[k], v[k], site);
    free(v);
    return 1;
}

/* The coalesce_tensor before op `at` of trainer t's block 0 whose
 * FusedOutput is `buf`, or NULL. */
static const ir_op *packer(sym_job *j, size_t t, size_t at, const char *buf)
{
    ir_block *b = ir_program_block(j->tr[t].main, 0);
    for (size_t i = at; b && i-- > 0;) {
        const ir_op *op = b->ops[i];
        if (packs(op) && ir_op_output1(op, "FusedOutput") == buf)
            return op;
    }
    return NULL;
}

/* Whether every trainer's allreduce k is in place on a buffer its own
 * coalesce_tensor packs with trainer 0's members: only then do the members
 * (views of the buffer) see the sum.  An allreduce into another var leaves
 * them unreduced, which the generic allreduce shows (a fuzz finding: the
 * members were summed whatever the Out). */
static const ir_slot *fused_members(sym_job *j, ir_op **ops, size_t at, uint32_t k)
{
    const ir_slot *m = NULL;
    for (size_t t = 0; t < j->n_tr; t++) {
        const ir_slot *x = ir_op_input(ops[t], "X"), *o = ir_op_output(ops[t], "Out");
        if (!x || !o || k >= x->n_args || k >= o->n_args || x->args[k] != o->args[k])
            return NULL;
        const ir_op *pk = packer(j, t, at, x->args[k]);
        const ir_slot *mt = pk ? ir_op_output(pk, "Output") : NULL;
        if (!mt || (m && (mt->n_args != m->n_args || (m->n_args &&
                          memcmp(mt->args, m->args, m->n_args * sizeof *m->args)))))
            return NULL;
        m = mt;
    }
    return m;
}

bool sym_spmt_fused(sym_job *j, ir_op **ops, size_t at, uint32_t k)
{
    if (j->in->mode != SYM_COLLECTIVE || j->in->coll_mode != SYM_SPMT)
        return false;
    const ir_slot *m = fused_members(j, ops, at, k);
    if (!m)
        return false;
    sym_term **v = xmalloc_n(j->n_tr + 1, sizeof *v);
    for (uint32_t a = 0; a < m->n_args; a++) {
        for (size_t t = 0; t < j->n_tr; t++)
            v[t] = sym_read(&j->c, &j->tr[t], ir_program_block(j->tr[t].main, 0), m->args[a]);
        for (size_t t = 0; t < j->n_tr; t++) {
            sym_proc *p = &j->tr[t];
            const sym_site *site = sym_site_make(j->c.st, p->label, 0, (int)at, ops[t]);
            sym_store_set_site(j->c.st, site);
            sym_write(p, m->args[a],
                      sym_scale(j->c.st, sym_sum(j->c.st, v, (uint32_t)j->n_tr), p->loss_scale, 0,
                                true),
                      site);
        }
    }
    sym_store_set_site(j->c.st, NULL);
    free(v);
    return true;
}
