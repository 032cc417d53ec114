/* transpile_collective.h - collective_ops.c, the helpers collective.c and
 * transpile_collective_spmt.c share (their entry points are in builders.h). */
#ifndef PDT_TRANSPILE_COLLECTIVE_H
#define PDT_TRANSPILE_COLLECTIVE_H

#include "builders.h"

/* One trainer's place among the endpoints. */
typedef struct {
    const char *path;       /* for messages */
    int nranks, rank, nrings;
    const char *endpoint;
    const char **others;    /* the endpoints but this one, in order */
    size_t n_others;
} tp_coll;

/* A new detached op with op_role `role` (the only framework attr the ops
 * Python's collective transpilers create are given). */
ir_op *tp_coll_op(ir_program *p, const char *type, int role);
/* The same with X = Out = var. */
ir_op *tp_coll_inplace_op(ir_program *p, const char *type, const char *var, int role);
/* The op has an op_role attr with `bit` set. */
bool tp_coll_role_bit(const ir_op *op, int bit);
const char **tp_coll_others(const pdt_list *eps, const char *endpoint, size_t *n);
/* _init_communicator for one ring, appended to b: an nccl_id var,
 * c_gen_nccl_id and c_comm_init (c_comm_init_multitrainer when
 * `multitrainer`). */
void tp_coll_init_communicator(const tp_coll *c, ir_block *b, int ring, unsigned *counter,
                               bool multitrainer);

/* scale X=Out=var by `scale`. */
ir_op *tp_coll_scale_op(ir_program *p, const char *var, double scale, int role);
/* Rebuilds b's ops with after[k] (ops, may be NULL) placed right after op
 * k, and before's ops right before op before_pos: one O(n + k) pass. */
void tp_coll_rebuild(ir_block *b, GPtrArray **after, size_t before_pos, GPtrArray *before);
void tp_coll_free_after(GPtrArray **after, size_t n);
void tp_coll_push_after(GPtrArray **after, size_t k, ir_op *op);
/* The first output argument, slots in name order. */
const char *tp_coll_first_output(const ir_op *op);
/* Backward and Loss role bits both set. */
bool tp_coll_is_loss_grad_op(const ir_op *op);

#endif
