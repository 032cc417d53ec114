/* collective_ops.c - the ops and op-list edits the collective rewrites
 * share: collective.c (GradAllReduce, LocalSGD) and
 * transpile_collective_spmt.c (SingleProcessMultiThread) both use them,
 * so no call goes from one back to the other. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../../ir/infershape.h"
#include "transpile_collective.h"

ir_op *tp_coll_op(ir_program *p, const char *type, int role)
{
    ir_op *op = ir_op_new(p, type);
    ir_op_set_role(op, role);
    return op;
}

/* An op whose X and Out are both `var` (the stream, allreduce and
 * broadcast ops Paddle inserts all work in place). */
ir_op *tp_coll_inplace_op(ir_program *p, const char *type, const char *var, int role)
{
    ir_op *op = tp_coll_op(p, type, role);
    ir_op_set_input1(op, "X", var);
    ir_op_set_output1(op, "Out", var);
    return op;
}

/* scale X=Out=var.  Python gives inputs, so Operator also writes every
 * dispensable input slot the caller leaves out, empty: ScaleTensor. */
ir_op *tp_coll_scale_op(ir_program *p, const char *var, double scale, int role)
{
    ir_op *op = tp_coll_inplace_op(p, "scale", var, role);
    ir_op_set_input(op, "ScaleTensor", NULL, 0);
    ir_op_set_float(op, "scale", (float)scale);
    return op;
}

/* Rebuilds b's ops with after[k] (ops, may be NULL) placed right after op k,
 * and before_pos's ops right before op before_pos: one O(n + k) pass. */
void tp_coll_rebuild(ir_block *b, GPtrArray **after, size_t before_pos, GPtrArray *before)
{
    size_t n = b->n_ops, total = n;
    for (size_t k = 0; k < n; k++)
        total += after[k] ? after[k]->len : 0;
    total += before ? before->len : 0;
    ir_op **ops = xmalloc_n(total ? total : 1, sizeof(ir_op *));
    size_t o = 0;
    /* each new op's compile-time InferShape effects (ShareLoD of scale,
     * elementwise_sub, assign, ...: ir/infershape.c), as Operator runs it
     * when _insert_op / append_op adds the op */
    for (size_t k = 0; k < n; k++) {
        if (before && k == before_pos)
            for (guint i = 0; i < before->len; i++) {
                ir_infer_apply(b, before->pdata[i]);
                ops[o++] = before->pdata[i];
            }
        ops[o++] = b->ops[k];
        if (after[k])
            for (guint i = 0; i < after[k]->len; i++) {
                ir_infer_apply(b, after[k]->pdata[i]);
                ops[o++] = after[k]->pdata[i];
            }
    }
    ir_block_set_ops(b, ops, o);
    free(ops);
}

void tp_coll_free_after(GPtrArray **after, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (after[k])
            g_ptr_array_free(after[k], TRUE);
    free(after);
}

void tp_coll_push_after(GPtrArray **after, size_t k, ir_op *op)
{
    if (!after[k])
        after[k] = g_ptr_array_new();
    g_ptr_array_add(after[k], op);
}

bool tp_coll_role_bit(const ir_op *op, int bit)
{
    int r = ir_op_role(op);
    return r >= 0 && (r & bit);
}

/* The first output argument, as OpDesc::OutputArgumentNames lists them
 * (slots in name order). */
const char *tp_coll_first_output(const ir_op *op)
{
    const ir_slot *best = NULL;
    for (size_t i = 0; i < op->n_outputs; i++) {
        const ir_slot *s = &ir_op_outs(op)[i];
        if (s->n_args && (!best || strcmp(s->name, best->name) < 0))
            best = s;
    }
    return best ? best->args[0] : NULL;
}

bool tp_coll_is_loss_grad_op(const ir_op *op)
{
    return tp_coll_role_bit(op, IR_ROLE_BACKWARD) && tp_coll_role_bit(op, IR_ROLE_LOSS);
}

void tp_coll_scale_loss_grads(ir_block *b, double scale)
{
    size_t n = b->n_ops;
    GPtrArray **after = xcalloc(n ? n : 1, sizeof(GPtrArray *));
    for (size_t k = 0; k < n; k++) {
        if (!tp_coll_is_loss_grad_op(b->ops[k]))
            continue;
        tp_coll_push_after(after, k, tp_coll_scale_op(b->program, tp_coll_first_output(b->ops[k]), scale,
                                      IR_ROLE_BACKWARD));
    }
    tp_coll_rebuild(b, after, 0, NULL);
    tp_coll_free_after(after, n);
}

/* unique_name.generate('nccl_id'): nccl_id_0, nccl_id_1, ... past the
 * highest the input holds (the callers start *counter there); a name the
 * startup holds anyway is skipped, so an id var never aliases a var. */
static const char *nccl_id_name(const ir_block *b, unsigned *counter)
{
    for (;;) {
        const char *name = ir_internf("nccl_id_%u", (*counter)++);
        if (!ir_block_find_var(b, name))
            return name;
    }
}

/* _init_communicator for one ring, as on a CUDA build (the XPU and custom
 * device variants differ only in op and var names).  wait_server_ready,
 * which makes rank 0 block until the other endpoints listen, is a run-time
 * act with no trace in the program; pdtrans does not wait. */
void tp_coll_init_communicator(const tp_coll *c, ir_block *b, int ring, unsigned *counter,
                               bool multitrainer)
{
    const char *id = nccl_id_name(b, counter);
    ir_var *v = tp_create_var(b, id, IR_RAW, 0, NULL, 0, -1, 1);
    v->tensor_slot = IR_TD_NONE;
    ir_op *gen = tp_coll_op(b->program, "c_gen_nccl_id", IR_ROLE_FORWARD);
    ir_op_set_output1(gen, "Out", id);
    ir_op_set_int(gen, "rank", c->rank);
    ir_op_set_string(gen, "endpoint", c->endpoint);
    ir_op_set_strings(gen, "other_endpoints", c->others, c->n_others);
    ir_op *init = tp_coll_op(b->program,
                             multitrainer ? "c_comm_init_multitrainer" : "c_comm_init",
                             IR_ROLE_FORWARD);
    ir_op_set_input1(init, "X", id);
    ir_op_set_int(init, multitrainer ? "ntrainers" : "nranks", c->nranks);
    ir_op_set_int(init, multitrainer ? "trainer_id" : "rank", c->rank);
    ir_op_set_int(init, "ring_id", ring);
    ir_op *pair[2] = {gen, init};
    ir_block_splice(b, b->n_ops, 0, pair, 2);
}

/* Python's other_endpoints.remove(current_endpoint): the list without its
 * first match (caller frees with free). */
const char **tp_coll_others(const pdt_list *eps, const char *endpoint, size_t *n)
{
    const char **others = xmalloc_n(eps->n ? eps->n : 1, sizeof(const char *));
    bool removed = false;
    *n = 0;
    for (size_t i = 0; i < eps->n; i++) {
        if (!removed && eps->items[i] == endpoint)
            removed = true;
        else
            others[(*n)++] = eps->items[i];
    }
    return others;
}
