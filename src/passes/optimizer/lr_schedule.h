/* lr_schedule.h - what lr_schedule.c (the SPECs and the pass) and
 * lr_decay.c (the op sequences of Paddle 1.8's
 * layers/learning_rate_scheduler.py) share.  Private to the optimizer
 * family. */
#ifndef PDT_LR_SCHEDULE_H
#define PDT_LR_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>

#include "optimizer_util.h"

/* fluid.layers.*_decay, by the name --lr-schedule takes. */
typedef enum {
    LR_NONE,            /* only --lr-warmup: warms up a constant rate */
    LR_EXPONENTIAL,
    LR_NATURAL_EXP,
    LR_INVERSE_TIME,
    LR_POLYNOMIAL,
    LR_PIECEWISE,
    LR_NOAM,
    LR_COSINE,
} lr_kind;

/* One parsed --lr-schedule (and --lr-warmup); the fields are the Python
 * arguments of the function, with Python's defaults. */
typedef struct {
    lr_kind kind;
    double learning_rate, decay_steps, decay_rate, end_learning_rate, power;
    double d_model, warmup_steps, step_each_epoch, epochs;
    bool staircase, cycle;
    double *boundaries, *values;
    size_t n_boundaries, n_values;
    /* linear_lr_warmup(learning_rate, warmup_steps, start_lr, end_lr) */
    bool warmup;
    double wu_steps, wu_start, wu_end, wu_rate;
} lr_cfg;

/* Parses SPEC and WARMUP (either may be NULL, not both) against the
 * optimizer's SPEC (its learning_rate is the default base rate). */
int lr_cfg_parse(const char *cmd, const char *spec, const char *warmup, const char *optimizer,
                 lr_cfg *c);
void lr_cfg_free(lr_cfg *c);

/* One schedule being built into block 0 of ctx->main. */
typedef struct {
    pdt_ctx *ctx;
    ir_block *b;            /* block 0 */
    ir_block *cur;          /* the block ops go to (block 0, or a case's sub-block) */
    opt_ops *out;           /* ops queued for `cur` */
    opt_namer *names;
    opt_ops ops;            /* block 0's: go before the backward part */
    opt_inits inits;
    ir_op *increment;       /* the counter's increment, prepended to block 0 */
    /* control_flow.Switch: the last "not any case so far" condition. */
    const char *pre_not;
    /* piecewise_decay fills "learning_rate" inside each case (2.0-2.4)
     * instead of assigning a value filled in block 0 (1.8). */
    bool fill_in_case;
    /* polynomial_decay's cycle and linear_lr_warmup through
     * paddle.static.nn.cond / case (2.5, lr_cond.c) instead of a Switch. */
    bool cond_forms;
    /* 1.4-1.5 (before v1.6.0's _scalar_elementwise_op_): math_op_patch
     * makes a Python scalar operand a fill_constant (create_scalar /
     * create_tensor) and the elementwise_* op, never a scale. */
    bool scalar_fill;
    /* 1.4-1.6 (before #21189, v1.7.0): math_op_patch appends to the
     * Variable's own block (var.block), so the warm-up's arithmetic on the
     * block-0 step goes to block 0 though written inside its Switch case. */
    bool var_block;
} lr_build;

/* lr_decay.c's builders lr_cond.c shares: an op of op_role LRSched queued
 * for the current block, a layer's "TYPE_N.tmp_0", a one-input layer, an
 * assign, a cast. */
ir_op *lr_op_new(lr_build *s, const char *type);
const char *lr_layer_var(lr_build *s, const char *type, int dtype);
const char *lr_layer1(lr_build *s, const char *type, const char *x, int dtype);
void lr_assign(lr_build *s, const char *x, const char *out);
const char *lr_cast(lr_build *s, const char *x, int from, int to);

/* One conditional block being built: its sub-block, the ops queued for
 * it, the parent's queue, and the condition of its conditional_block. */
typedef struct {
    ir_block *sub, *parent;
    opt_ops *parent_out;
    opt_ops ops;
    const char *cond;
} lr_case;
/* ConditionalBlockGuard: open a sub-block of the current block; close it
 * with ConditionalBlock.complete's conditional_block in the parent. */
void lr_block_open(lr_build *s, lr_case *k, const char *cond);
void lr_block_close(lr_build *s, lr_case *k);

/* A branch of paddle.static.nn.cond: fn builds its ops in the current
 * (sub-)block and returns its value; a NULL fn is `lambda: var`. */
typedef struct {
    const char *(*fn)(lr_build *s, const void *arg);
    const void *arg;
    const char *var;
} lr_branch;
/* paddle.static.nn.cond(pred, true_fn, false_fn) with one Variable out
 * (lr_cond.c); returns select_input's output. */
const char *lr_cond(lr_build *s, const char *pred, lr_branch t, lr_branch f);

/* Builds the schedule c describes; returns the learning-rate var. */
const char *lr_build_all(lr_build *s, const lr_cfg *c);

/* lr_schedule_2x.c: which op sequences the target version
 * (ctx->settings.era, --paddle-version) takes. */
typedef enum {
    LR_WRITE_18,        /* fluid 1.8's (and every 1.x or unknown target) */
    LR_WRITE_2X,        /* 2.0-2.4: 1.8's but piecewise_decay (fill_in_case) */
    LR_WRITE_25,        /* 2.5: 2.0-2.4's, cond / case in polynomial and warm-up */
    LR_WRITE_HOST,      /* 2.6 on: paddle.optimizer.lr, no schedule ops */
} lr_writer;
lr_writer lr_writer_for(const pdt_ctx *ctx);
/* The 1.x math_op_patch forms for the target: lr_build's scalar_fill and
 * var_block (false for a native or unknown target: 1.8's). */
bool lr_scalar_fill(const pdt_ctx *ctx);
bool lr_var_block(const pdt_ctx *ctx);
/* What the target's learning_rate_scheduler.py cannot build: refused
 * (exit 2) when --paddle-version named it, else a warning and written in
 * the next version's form. */
int lr_era_check(const pdt_ctx *ctx, const lr_cfg *c);
/* 2.6 and later: the persistable learning_rate_N that paddle.optimizer's
 * _create_global_learning_rate makes for an LRScheduler, filled in the
 * startup with the schedule's rate at epoch 0, and made the optimizer's
 * learning rate; a warning says the schedule itself runs on the host. */
void lr_build_host(pdt_ctx *ctx, const lr_cfg *c);

#endif
