/* nccl2.c - pass 'nccl2', _transpile_nccl2: only the trainer's startup changes,
 * gaining the NCCLID var and the gen_nccl_id op that shares it.  The main
 * program is written unchanged (the allreduce is added by Paddle's graph
 * passes at run time). */
#include <stdlib.h>

#include "../../diag.h"
#include "builders.h"

static void raw_var(ir_block *b, const char *name)
{
    ir_var *v = tp_create_var(b, name, IR_RAW, 0, NULL, 0, -1, 1);
    v->tensor_slot = IR_TD_NONE;
}

int tp_build_nccl2(const tp_collective_plan *cp, ir_program *main, ir_program *startup)
{
    (void)main;     /* written unchanged */
    const pdt_transpile_opts *o = cp->o;
    const pdt_list *eps = &o->trainer_endpoints;
    ir_block *b = startup->blocks[0];
    raw_var(b, "NCCLID");
    for (int i = 1; i < o->nccl_comm_num; i++)
        raw_var(b, ir_internf("NCCLID_%d", i));
    for (int i = 0; o->hierarchical_allreduce && i < o->nccl_comm_num; i++) {
        raw_var(b, ir_internf("Hierarchical_inter_NCCLID_%d", i));
        raw_var(b, ir_internf("Hierarchical_exter_NCCLID_%d", i));
    }
    /* Only the first id var is the op's output, as in the seed; gen_nccl_id
     * fills the others by name from nccl_comm_num. */
    ir_op *op = ir_block_append_op(b, "gen_nccl_id");
    ir_op_set_output1(op, "NCCLID", "NCCLID");
    ir_op_set_strings(op, "trainers", eps->items, eps->n);
    ir_op_set_int(op, "trainer_id", o->trainer_id);
    ir_op_set_int(op, "nccl_comm_num", o->nccl_comm_num);
    ir_op_set_bool(op, "use_hierarchical_allreduce", o->hierarchical_allreduce);
    ir_op_set_int(op, "hierarchical_allreduce_inter_nranks", o->hierarchical_inter_nranks);
    ir_op_set_role(op, IR_ROLE_FORWARD);
    return PDT_OK;
}

int pass_nccl2(pdt_ctx *ctx)
{
    return tp_stage_trainer_rewrite(ctx, "nccl2", PDT_MODE_NCCL2, tp_build_nccl2);
}
