/* hash_export.c - the attr order up to 2.3 of every op of a program that
 * Paddle loaded with load_inference_model, rewrote (InferenceTranspiler)
 * and wrote with save_inference_model: what `pdtrans inference` models
 * (research-2x-3x.md 4z12).
 *
 * An op's order changes only where Paddle builds a ProgramDesc from a
 * proto: each OpDesc(proto) re-inserts the attrs into a fresh
 * std::unordered_map in the flushed order, BLOCK and BLOCKS ones last
 * (hash_reread.c).  Copies (Program.clone, core.ProgramDesc(desc):
 * OpDesc(const OpDesc &) = CopyFrom's `attrs_ = other.attrs_`) keep the
 * map's list and set need_update_, so they change nothing but make every
 * op re-flushed.  In v1.4.1-v2.3.2 the chain has two such reads:
 * load_inference_model's Program.parse_from_string, and
 * save_inference_model's _prune (1.4-1.5) / _prune_with_input (1.6 on),
 * whose core.prune flushes the cloned program and returns
 * ProgramDesc(pruned proto).  So:
 *   - an op read from the input: its attrs as the input has them (the
 *     pass's additions after, as hash_reread.c), re-read twice;
 *   - the elementwise_add _insert_bias_op builds: its Operator.__init__
 *     history (py_order.def), re-read once;
 *   - feed and fetch: save_inference_model drops the program's and
 *     prepend_feed_ops / append_fetch_ops build new ones after the prune,
 *     so their Operator.__init__ history, no re-read (the 1.6-2.0 files
 *     show it).
 * _inference_optimize's `_set_attr('is_test', True)` only sets present
 * keys, which keep their place. */
#include "era.h"
#include "hash_table.h"

#include "../pass.h"

#include <string.h>

/* N re-reads of OP's attrs as they stand; false (OP untouched from the
 * first failure on) when OP has more than the table holds. */
static bool reread(ht *t, ir_op *op, int n)
{
    for (int i = 0; i < n; i++) {
        if (!pdt_hash_reread(t, op))
            return false;
        ir_op_settle_ranked(op, ht_rank, t);
    }
    return true;
}

static bool is_feed_fetch(const ir_op *op)
{
    return !strcmp(op->type, "feed") || !strcmp(op->type, "fetch");
}

/* Block 0's feed and fetch: their history when the row names all of their
 * attrs (one that has others keeps its order: Paddle's new op would not
 * have them).  true when OP is one of them. */
static bool fresh_feed_fetch(ht *t, ir_op *op, size_t bi, int era)
{
    if (bi != 0 || !is_feed_fetch(op))
        return false;
    if (pdt_hash_python_built(t, op, era))
        ir_op_settle_ranked(op, ht_rank, t);
    return true;
}

static bool applies(const pdt_ctx *ctx, const ir_program *p, int era)
{
    return ctx && ctx->settings.saved_inference && p == ctx->main && p->n_blocks &&
           era != PDT_ERA_NATIVE && era <= 203;
}

typedef void (*export_step)(ht *t, ir_op *op, size_t bi, int era);

static void each_op(const pdt_ctx *ctx, ir_program *p, int era, export_step step)
{
    if (!applies(ctx, p, era))
        return;
    ht t;
    t.policy = ht_policy_of(era);
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++)
            step(&t, p->blocks[bi]->ops[k], bi, era);
}

static void loaded_step(ht *t, ir_op *op, size_t bi, int era)
{
    if (!op->made && !fresh_feed_fetch(t, op, bi, era))
        reread(t, op, 2);
}

static void made_step(ht *t, ir_op *op, size_t bi, int era)
{
    if (!op->made || fresh_feed_fetch(t, op, bi, era) || !pdt_hash_python_built(t, op, era))
        return;
    ir_op_settle_ranked(op, ht_rank, t);
    reread(t, op, 1);
}

void pdt_hash_export_loaded(const pdt_ctx *ctx, ir_program *p, int era)
{
    each_op(ctx, p, era, loaded_step);
}

void pdt_hash_export_made(const pdt_ctx *ctx, ir_program *p, int era)
{
    each_op(ctx, p, era, made_step);
}
