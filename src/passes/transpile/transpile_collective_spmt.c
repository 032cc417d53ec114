/* transpile_collective_spmt.c - --collective-mode=single_process_multi_thread:
 * Paddle's collective.SingleProcessMultiThread, a GradAllReduce with one ring
 * whose startup builds no broadcast and whose main scales the loss grad by
 * 1/(hosts * GPUs) and fuses the grads into one allreduce.  Paddle reads
 * FLAGS_selected_gpus, PADDLE_FUSE_ALLREDUCE and PADDLE_LOSS_SCALE from the
 * environment; here they come from ctx->transpile.runtime (options, or the
 * environment under --from-env), and the manifest records them. */
#include <glib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/unique.h"
#include "transpile_collective.h"

/* The host of host:port: up to the last colon.  Python takes up to the
 * first one, which makes every IPv6 endpoint the same host "["; the intent
 * is the host, which this is. */
static const char *host_of(const char *ep)
{
    const char *colon = strrchr(ep, ':');
    return colon ? ir_intern_n(ep, (size_t)(colon - ep)) : ep;
}

/* SingleProcessMultiThread._transpile_startup_program: several hosts get a
 * communicator across the trainers (c_comm_init_multitrainer) and count as
 * nranks = the number of hosts; one host gets c_comm_init_all and nranks 1.
 * No parameter is broadcast. */
void tp_spmt_startup(ir_block *b, const pdt_list *eps, const char *endpoint, int rank,
                     int *nranks)
{
    pmap hosts = PMAP_INIT;     /* host_of interns */
    for (size_t i = 0; eps->n > 1 && i < eps->n; i++)
        pmap_add(&hosts, host_of(eps->items[i]));
    int nodes = (int)hosts.n;
    pmap_free(&hosts);
    if (nodes > 1) {
        size_t n_others;
        const char **others = tp_coll_others(eps, endpoint, &n_others);
        tp_coll c = {.nranks = (int)eps->n, .rank = rank, .nrings = 1, .endpoint = endpoint,
                     .others = others, .n_others = n_others};
        /* unique_name.generate('nccl_id') continues past the input's */
        unsigned counter = (unsigned)ir_unique_next(b->program, "nccl_id");
        tp_coll_init_communicator(&c, b, 0, &counter, true);
        free(others);
        *nranks = nodes;
        return;
    }
    ir_op *op = tp_coll_op(b->program, "c_comm_init_all", IR_ROLE_FORWARD);
    ir_op_set_int(op, "ring_id", 0);
    ir_block_splice(b, b->n_ops, 0, &op, 1);
    *nranks = 1;
}

/* _insert_fuse_allreduce_ops: every grad named in a Backward op's
 * op_role_var (backward walk, pairs in order) goes into one coalesce_tensor
 * whose FusedOutput `fused_output` is allreduced on ring 0, all right after
 * the last such op.  coalesce_tensor gets no op_role from Python, so it has
 * the program's default, Forward. */
static void fuse_allreduce(ir_block *b)
{
    size_t n = b->n_ops, at = 0;
    GPtrArray *grads = g_ptr_array_new();
    for (size_t k = n; k-- > 0;) {
        const ir_op *op = b->ops[k];
        const ir_attr *rv = ir_op_attr(op, IR_WK(op_role_var));
        if (!tp_coll_role_bit(op, IR_ROLE_BACKWARD) || !rv || rv->type != IR_ATTR_STRINGS ||
            rv->n_strings < 2)
            continue;
        for (size_t i = 1; i < rv->n_strings; i += 2)
            g_ptr_array_add(grads, (void *)ir_intern_n((const char *)rv->strings[i].data,
                                                       rv->strings[i].len));
        if (k + 1 > at)
            at = k + 1;
    }
    if (grads->len) {
        static const int64_t one = 1;
        const char *fused = ir_intern("fused_output");
        ir_var *v = tp_create_var(b, fused, IR_LOD_TENSOR, IR_FP32, &one, 1, -1, 0);
        v->has_stop_gradient = true;
        v->stop_gradient = true;
        ir_op *ops[4];
        ops[0] = tp_coll_op(b->program, "coalesce_tensor", IR_ROLE_FORWARD);
        ir_op_set_input(ops[0], "Input", (const char *const *)grads->pdata, grads->len);
        ir_op_set_output(ops[0], "Output", (const char *const *)grads->pdata, grads->len);
        ir_op_set_output1(ops[0], "FusedOutput", fused);
        ir_op_set_bool(ops[0], "copy_data", true);
        ir_op_set_bool(ops[0], "set_constant", false);
        ir_op_set_int(ops[0], "dtype", IR_FP32);
        ops[1] = tp_coll_inplace_op(b->program, "c_sync_calc_stream", fused, IR_ROLE_BACKWARD);
        ops[2] = tp_coll_inplace_op(b->program, "c_allreduce_sum", fused, IR_ROLE_BACKWARD);
        ir_op_set_int(ops[2], "ring_id", 0);
        ops[3] = tp_coll_inplace_op(b->program, "c_sync_comm_stream", fused, IR_ROLE_BACKWARD);
        ir_op_set_int(ops[3], "ring_id", 0);
        ir_block_splice(b, at, 0, ops, 4);
    }
    g_ptr_array_free(grads, TRUE);
}

/* SingleProcessMultiThread._transpile_main_program. */
void tp_spmt_main(ir_block *b, int nranks, const tp_spmt_env *env)
{
    size_t params = 0;
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_attr *rv = ir_op_attr(b->ops[k], IR_WK(op_role_var));
        if (tp_coll_role_bit(b->ops[k], IR_ROLE_BACKWARD) && rv && rv->type == IR_ATTR_STRINGS)
            params += rv->n_strings / 2;
    }
    /* Older Paddle scales even with PADDLE_LOSS_SCALE=0 (whenever there is
     * a param); the newest only when it is non-zero, and then by 1/gpus
     * alone when there is nothing to allreduce.  pdtrans does the latter,
     * which is what the variable is for. */
    if (env->loss_scale)
        tp_coll_scale_loss_grads(b, params ? 1.0 / nranks / env->gpus : 1.0 / env->gpus);
    if (!params)
        return;
    if (env->fuse_allreduce > 0)
        fuse_allreduce(b);
    else
        tp_coll_insert_allreduce(b, 1);
}
