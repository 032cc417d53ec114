/* transpile_nccl2.c - _transpile_nccl2: only the trainer's startup changes,
 * gaining the NCCLID var and the gen_nccl_id op that shares it.  The main
 * program is written unchanged (the allreduce is added by Paddle's graph
 * passes at run time). */
#include <stdlib.h>

#include "../diag.h"
#include "transpile.h"

int tp_build_nccl2(pdt_ctx *ctx, ir_program **main_out, ir_program **startup_out)
{
    const pdt_list *eps = &ctx->trainer_endpoints;
    if (eps->n == 0) {
        pdt_error("transpile: --mode=nccl2 needs --trainers as a list of trainer endpoints");
        return PDT_EUSAGE;
    }
    if (ctx->role == PDT_ROLE_PSERVER) {
        pdt_error("transpile: --mode=nccl2 has no pserver role");
        return PDT_EUSAGE;
    }
    if (!ctx->endpoint) {
        pdt_error("transpile: --mode=nccl2 needs --endpoint, this trainer's endpoint");
        return PDT_EUSAGE;
    }
    bool found = false;
    for (size_t i = 0; i < eps->n; i++)
        found |= eps->items[i] == ir_intern(ctx->endpoint);
    if (!found) {
        /* The seed's worker_endpoints.remove(current_endpoint) raises here. */
        pdt_error("transpile: endpoint '%s' is not one of the --trainers endpoints", ctx->endpoint);
        return PDT_EUSAGE;
    }
    if (ctx->trainer_id < 0 || (size_t)ctx->trainer_id >= eps->n) {
        pdt_error("transpile: trainer id %d is out of range (%zu trainer endpoints)",
                  ctx->trainer_id, eps->n);
        return PDT_EUSAGE;
    }
    ir_program *m = ir_program_clone(ctx->main);
    ir_program *s = ir_program_clone(ctx->startup);
    ir_block *b = s->blocks[0];
    ir_var *v = tp_create_var(b, "NCCLID", IR_RAW, 0, NULL, 0, -1, 1);
    v->tensor_slot = IR_TD_NONE;
    ir_op *op = ir_block_append_op(b, "gen_nccl_id");
    ir_op_set_output1(op, "NCCLID", "NCCLID");
    ir_op_set_strings(op, "trainers", eps->items, eps->n);
    ir_op_set_int(op, "trainer_id", ctx->trainer_id);
    ir_op_set_int(op, "nccl_comm_num", 1);
    ir_op_set_bool(op, "use_hierarchical_allreduce", false);
    ir_op_set_int(op, "hierarchical_allreduce_inter_nranks", 0);
    ir_op_set_role(op, IR_ROLE_FORWARD);
    *main_out = m;
    *startup_out = s;
    free(ctx->manifest_json);
    ctx->manifest_json = tp_manifest_nccl2(ctx);
    return PDT_OK;
}
