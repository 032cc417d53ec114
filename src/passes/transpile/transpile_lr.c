/* transpile_lr.c - _get_lr_ops with sync_mode=False: each LRSched `increment`
 * of a step counter becomes a `sum` over per-trainer counters
 * `COUNTER.trainer_<i>` (created in main and startup, initialised to 1), and
 * the startup fill_constant of COUNTER gets value -trainers.  The seed does
 * this to the origin programs inside transpile(), before any role is
 * derived, so it runs here once before the analysis; every role then sees
 * the rewritten programs, as in the seed.  The trainer later sends its own
 * counters (insert_send_recv.c): all of them, where the seed keeps only
 * the last in self.counter_var and so never advances the other decays. */
#include <stdlib.h>

#include "../../diag.h"
#include "builders.h"

/* The Constant(1) initializer Block.create_var(initializer=...) runs:
 * paddle.nn.initializer.Constant passes str_value str(float(1)). */
static void init_one(ir_block *sb, const ir_var *v)
{
    ir_op *op = ir_block_append_op(sb, "fill_constant");
    ir_op_set_output1(op, "Out", v->name);
    ir_op_set_longs(op, "shape", v->dims, v->n_dims);
    ir_op_set_int(op, "dtype", v->dtype);
    ir_op_set_float(op, "value", 1.0f);
    ir_op_set_string(op, "str_value", "1.0");
    ir_op_set_bool(op, "force_cpu", false);
    ir_op_set_role(op, IR_ROLE_FORWARD);
}

/* The startup's fill_constant ops by the one var they write, so that each
 * counter's init is found without a scan of the startup per counter. */
static void inits_by_output(const ir_block *sb, pmap *by_out)
{
    const char *fc = ir_intern("fill_constant");
    for (size_t i = 0; i < sb->n_ops; i++) {
        ir_op *op = sb->ops[i];
        if (op->type != fc)
            continue;
        for (size_t s = 0; s < op->n_outputs; s++) {
            if (ir_op_outs(op)[s].n_args != 1)
                continue;
            const char *out = ir_op_outs(op)[s].args[0];
            GPtrArray *list = pmap_get(by_out, out);
            if (!list) {
                list = g_ptr_array_new();
                pmap_put(by_out, out, list);
            }
            g_ptr_array_add(list, op);
        }
    }
}

static void reset_counter_init(const pmap *inits, const char *counter, int trainers)
{
    GPtrArray *list = pmap_get(inits, counter);
    for (guint i = 0; list && i < list->len; i++)
        ir_op_set_float(list->pdata[i], "value", (float)(0.0 - trainers));
}

static bool is_lr_increment(const ir_op *op)
{
    int role = ir_op_role(op);
    return op->type == IR_WK(increment) &&
           (role == IR_ROLE_LRSCHED || role == (IR_ROLE_LRSCHED | IR_ROLE_OPTIMIZE));
}

/* _remove_op + _insert_op: a new sum with the increment's outputs and only
 * op_role, in the increment's place. */
static ir_op *counter_sum(ir_program *p, const ir_op *inc, const char **names, int n)
{
    ir_op *sum = ir_op_new(p, "sum");
    ir_op_set_input(sum, "X", names, (size_t)n);
    for (size_t s = 0; s < inc->n_outputs; s++)
        ir_op_set_output(sum, ir_op_outs(inc)[s].name, (const char *const *)ir_op_outs(inc)[s].args,
                         ir_op_outs(inc)[s].n_args);
    ir_op_set_role(sum, IR_ROLE_LRSCHED);
    return sum;
}

int tp_async_lr_counters(pdt_ctx *ctx, GPtrArray *mine)
{
    ir_block *b = ctx->main->blocks[0];
    if (ctx->startup->n_blocks == 0)
        ir_program_add_block(ctx->startup, -1);
    ir_block *sb = ctx->startup->blocks[0];
    pmap inits = PMAP_INIT;     /* var -> GPtrArray of its fill_constant ops */
    inits_by_output(sb, &inits);
    int n = ctx->transpile.trainers;
    /* The ops of block 0 with each increment replaced, set in one step. */
    ir_op **ops = xmalloc_n(b->n_ops + 1, sizeof *ops);
    bool changed = false;
    int rc = PDT_OK;
    for (size_t i = 0; i < b->n_ops && rc == PDT_OK; i++) {
        ir_op *op = b->ops[i];
        ops[i] = op;
        if (!is_lr_increment(op))
            continue;
        const ir_slot *out = ir_op_output(op, "Out");
        const ir_var *cv = out && out->n_args == 1 ? ir_block_find_var(b, out->args[0]) : NULL;
        if (!cv) {
            pdt_error("%s: block 0, op %zu 'increment': output 'Out' must name one declared var",
                      ctx->main_path, i);
            rc = PDT_EBADINPUT;
            break;
        }
        const char *counter = cv->name;
        const char **names = xmalloc_n((size_t)n, sizeof *names);
        for (int t = 0; t < n; t++) {
            names[t] = ir_internf("%s.trainer_%d", counter, t);
            tp_create_var(b, names[t], cv->type, cv->dtype, cv->dims, cv->n_dims, -1,
                          cv->persistable);
        }
        reset_counter_init(&inits, counter, n);
        for (int t = 0; t < n; t++) {
            ir_var *sv = tp_create_var(sb, names[t], cv->type, cv->dtype, cv->dims, cv->n_dims,
                                       -1, cv->persistable);
            init_one(sb, sv);
        }
        g_ptr_array_add(mine, (void *)names[ctx->transpile.trainer_id]);
        ops[i] = counter_sum(ctx->main, op, names, n);
        op->block = NULL;
        changed = true;
        free(names);
    }
    if (rc == PDT_OK && changed)
        ir_block_set_ops(b, ops, b->n_ops);
    free(ops);
    PMAP_FOR(&inits, s)
        g_ptr_array_free(s->val, TRUE);
    pmap_free(&inits);
    return rc;
}
