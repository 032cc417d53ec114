/* backward_recompute.h - _append_backward_ops_with_checkpoints_ (recompute). */
#ifndef PDT_BACKWARD_RECOMPUTE_H
#define PDT_BACKWARD_RECOMPUTE_H

#include "backward_internal.h"
#include "../pass.h"

/* Appends the grad ops of `path` with forward recomputation between the
 * checkpoints to `target`.  May insert `seed` ops into `path` and block b
 * (dropout), and adds two scratch blocks to the program, as Paddle does.
 * Returns false after printing an error. */
bool bw_append_backward_ops_with_checkpoints(bw_run *r, ir_block *b, GPtrArray *path,
                                             ir_block *target, const pdt_list *checkpoints);
/* After _append_backward_vars_: drops the copies in the scratch blocks that
 * name undeclared vars. */
void bw_recompute_prune_scratch(bw_run *r);

#endif
