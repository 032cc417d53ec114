/* dist_lr.c - where single-process training's LR step counter starts for
 * an async or half-async job's reference (dist.h).  Paddle's pservers run
 * the LR-decay block once at start-up, with every per-trainer counter
 * C.trainer_<i> at 1, so their sum C is the trainer count n, and again on
 * each trainer's notify (dist.c): trainer k's grads in round s read the
 * rate of C = s*n + k.  Single-process training's update t reads c0 + t
 * (c0 its startup fill, -1 for a schedule from step 0), so Paddle's async
 * schedule runs n-1-c0 steps ahead.  `verify job` (src/sym/lr_decay.c)
 * defines equal for such a job as single-process training with the
 * counter starting at n-1; the numeric reference starts there too, so
 * the two agree where the numeric one compares exactly (one trainer). */
#include <string.h>

#include "dist.h"


void ex_lr_counter_start(ex_cluster *c, ex_scope *R)
{
    if (c->dist_mode != 1 && c->dist_mode != 2)
        return;
    for (size_t k = 0; k < c->n_pservers; k++) {
        const ir_op *ls = ex_listen_op(&c->pservers[k]);
        int64_t lb = ls ? ir_op_get_int(ls, "lr_decay_block_id", -1) : -1;
        const ir_block *b = lb > 0 ? ir_program_block(c->pservers[k].main, (int32_t)lb) : NULL;
        for (size_t i = 0; b && i < b->n_ops; i++) {
            const char *name = ir_op_trainer_counter_sum(b->ops[i]);
            if (!name)
                continue;
            int64_t one = 1;
            ex_tensor *t = ex_tensor_new(IR_INT64, 1, &one);
            t->data[0] = (double)c->n_trainers - 1;
            ex_scope_put(R, name, t);
        }
    }
}
