/* append_backward.c - the append_backward pass: Paddle's
 * paddle.static.append_backward(loss, parameter_list, no_grad_set,
 * checkpoints) on block 0 of ctx->main.
 *
 * Reads ctx->backward.loss, ctx->backward.params, ctx->backward.no_grad, ctx->backward.checkpoints;
 * fills ctx->bw_params / ctx->bw_grads with the (param, grad) pairs in Paddle's order.  The steps
 * and their order follow the seed's append_backward(). */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"
#include "backward_recompute.h"
#include "../pass.h"

/* _find_loss_op_: the last op whose output list is exactly [loss]. */
static ir_op *find_loss_op(ir_block *b, const char *loss)
{
    for (size_t i = b->n_ops; i-- > 0;) {
        ir_op *op = b->ops[i];
        size_t n = 0;
        const char *only = NULL;
        for (size_t s = 0; s < op->n_outputs; s++) {
            n += ir_op_outs(op)[s].n_args;
            if (ir_op_outs(op)[s].n_args)
                only = ir_op_outs(op)[s].args[0];
        }
        if (n == 1 && only == loss)
            return op;
    }
    return NULL;
}

/* _create_loss_op_desc_. */
static ir_op *loss_grad_op(ir_program *p, const ir_var *loss, const ir_op *loss_op)
{
    ir_op *op = ir_op_new(p, "fill_constant");
    ir_op_set_output1(op, "Out", grad_name(loss->name));
    bool keep_shape = loss->n_dims == 0;
    for (size_t i = 0; i < loss->n_dims; i++)
        keep_shape |= loss->dims[i] == 0;
    int64_t one = 1;
    if (keep_shape)
        ir_op_set_longs(op, "shape", loss->dims, loss->n_dims);
    else
        ir_op_set_longs(op, "shape", &one, 1);
    ir_op_set_float(op, "value", 1.0f);
    ir_op_set_int(op, "dtype", loss->dtype);
    ir_op_set_bool(op, "force_cpu", false);
    ir_op_set_role(op, IR_ROLE_BACKWARD | IR_ROLE_LOSS);
    const char *dev = ir_op_get_string(loss_op, "op_device");
    ir_op_set_string(op, "op_device", dev ? dev : "");
    return op;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}


/* parameter_list, or every trainable parameter of block 0 (a loaded
 * program lists its vars by name). */
static pdt_list param_names(pdt_ctx *ctx, ir_block *b)
{
    pdt_list l = {0, NULL};
    if (ctx->backward.params.n) {
        l.items = xcalloc(ctx->backward.params.n, sizeof *l.items);
        for (size_t i = 0; i < ctx->backward.params.n; i++) {
            if (!ir_block_find_var(b, ctx->backward.params.items[i])) {
                char *hint = pdt_var_hint(b, ctx->backward.params.items[i]);
                pdt_warning("%s: block 0 has no var '%s' (--params)%s", ctx->main_path,
                            ctx->backward.params.items[i], hint);
                g_free(hint);
            }
            l.items[l.n++] = ctx->backward.params.items[i];
        }
        return l;
    }
    /* counted first: the list lives through the pass, at its peak */
    size_t n = 0;
    for (size_t i = 0; i < b->n_vars; i++)
        n += bw_is_trainable(b->vars[i]);
    l.items = xcalloc(n + 1, sizeof *l.items);
    for (size_t i = 0; i < b->n_vars; i++)
        if (bw_is_trainable(b->vars[i]))
            l.items[l.n++] = b->vars[i]->name;
    qsort(l.items, l.n, sizeof *l.items, cmp_name);
    return l;
}

static int cmp_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* op_role_var = [p, g] pairs (pair indexes `at`, n of them) + its old value. */
static void set_role_var(ir_op *op, const pdt_list *params, const pdt_list *grads, size_t *at,
                         size_t n)
{
    if (n > 1)
        qsort(at, n, sizeof *at, cmp_desc);
    const ir_attr *old = ir_op_attr(op, IR_WK(op_role_var));
    size_t n_old = old && old->type == IR_ATTR_STRINGS ? old->n_strings : 0;
    const char **val = xcalloc(2 * n + n_old + 1, sizeof *val);
    size_t have = 0;
    for (size_t k = 0; k < n; k++) {
        val[have++] = params->items[at[k]];
        val[have++] = grads->items[at[k]];
    }
    for (size_t k = 0; k < n_old; k++)
        val[have++] = ir_intern_n((const char *)old->strings[k].data, old->strings[k].len);
    ir_op_set_strings(op, IR_WK(op_role_var), val, have);
    ir_op_settle(op);
    free(val);
}

/* The last op writing each parameter grad gets op_role_var = [p, g] + its
 * previous value (the seed's loop over reversed(block.ops)): the new ops of
 * b0 (from start) are walked from the last, and an op writing a grad no op
 * after it wrote is that grad's last writer; no other op of block 0 writes
 * a grad var created by this pass.  An op writing k param grads (concat_grad
 * of k params) ends with the k pairs, the last param first, then its old
 * value: built once per op, as prepending pair by pair copied the list k
 * times (O(k^2): 7 GB at 20 000 inputs).  Found after the vars are made,
 * with the grad and var tables gone, and walked in op order so that the
 * forward bytes the grad ops borrow are read in one sweep (bw_swept): the
 * pass's peak at 100k and 1M ops (issue 33). */
static void tag_role_var(bw_run *r, ir_block *b0, size_t start, const pdt_list *params,
                         const pdt_list *grads)
{
    /* g -> 1 + the last index naming it; next[i]: 1 + the one before that
     * (a param given twice in --params) */
    pmap idx = PMAP_INIT;
    pmap_reserve(&idx, grads->n);
    size_t *next = NULL, left = 0;
    for (size_t i = 0; i < grads->n; i++) {
        size_t prev = (size_t)pmap_get(&idx, grads->items[i]);
        if (prev && !next)
            next = xcalloc(grads->n, sizeof *next);
        if (prev)
            next[i] = prev;
        left += !prev;
        pmap_put(&idx, grads->items[i], (void *)(i + 1));
    }
    size_t *at = xmalloc_n(grads->n + 1, sizeof *at);
    for (size_t k = b0->n_ops; left && k-- > start;) {
        ir_op *op = b0->ops[k];
        size_t n = 0;
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++) {
                size_t i1 = (size_t)pmap_get(&idx, ir_op_outs(op)[s].args[a]);
                if (!i1)
                    continue;
                pmap_put(&idx, ir_op_outs(op)[s].args[a], NULL);  /* found its last writer */
                left--;
                for (; i1; i1 = next ? next[i1 - 1] : 0)
                    at[n++] = i1 - 1;
            }
        if (n)
            set_role_var(op, params, grads, at, n);
        bw_swept(r);
    }
    free(at);
    free(next);
    pmap_free(&idx);
}

static bool locate_loss(pdt_ctx *ctx, ir_block *b0, const char *loss, ir_var **lv,
                        ir_op **lop)
{
    *lv = ir_block_find_var(b0, loss);
    if (!*lv) {
        for (size_t i = 1; i < ctx->main->n_blocks; i++)
            if (ir_block_find_var(ctx->main->blocks[i], loss)) {
                pdt_error("%s: loss var '%s' is declared in block %zu; append_backward "
                          "needs the loss in block 0",
                          ctx->main_path, loss, i);
                return false;
            }
        char *hint = pdt_loss_hint(b0, loss);
        pdt_error("%s: block 0 has no var '%s' (--loss)%s", ctx->main_path, loss, hint);
        g_free(hint);
        return false;
    }
    *lop = find_loss_op(b0, loss);
    if (!*lop) {
        pdt_error("%s: no op of block 0 has the loss var '%s' as its only output",
                  ctx->main_path, loss);
        return false;
    }
    return true;
}

/* Each parameter whose grad var exists, with it: ctx->bw_params / bw_grads. */
static void publish_pairs(pdt_ctx *ctx, const bw_run *r, const ir_block *b0,
                          const pdt_list *params)
{
    pdt_list_free(&ctx->bw_params);
    pdt_list_free(&ctx->bw_grads);
    ctx->bw_params.items = xcalloc(params->n + 1, sizeof(char *));
    ctx->bw_grads.items = xcalloc(params->n + 1, sizeof(char *));
    for (size_t i = 0; i < params->n; i++) {
        const char *g = pmap_get(r->grad_info, params->items[i]);
        if (!g || !ir_block_find_var(b0, g))
            continue;
        ctx->bw_params.items[ctx->bw_params.n++] = params->items[i];
        ctx->bw_grads.items[ctx->bw_grads.n++] = g;
    }
}

/* _append_backward_ops_ (with recompute when checkpoints are given), then
 * _rename_grad_ and _append_backward_vars_ on the new ops, and the
 * (param, grad) pairs with their op_role_var.  Frees path. */
static bool emit_grads(pdt_ctx *ctx, bw_run *r, ir_block *b0, GPtrArray *path,
                       size_t fwd_op_num)
{
    /* Only the parameters' grad_info entries are ever read. */
    pdt_list params = param_names(ctx, b0);
    /* Without --params, and one var per name in b0, the wanted names are
     * b0's trainable vars: its var map tells (backward_vars.c's wanted). */
    size_t live = 0;
    for (size_t i = 0; i < b0->n_vars; i++)
        live += !b0->vars[i]->removed;
    pmap *wanted = NULL;
    r->n_wanted = params.n;
    if (!ctx->backward.params.n && ir_block_n_var_names(b0) == live) {
        r->trainable_in = b0;
    } else {
        wanted = pmap_new();
        pmap_reserve(wanted, params.n);     /* exact: 1.4 MB at 100k ops, not 2 */
        for (size_t i = 0; i < params.n; i++)
            pmap_add(wanted, params.items[i]);
        r->wanted = wanted;
    }
    /* Without --params the wanted names are parameters by construction. */
    r->wanted_are_params = !ctx->backward.params.n;
    bool ok =
        ctx->backward.checkpoints.n
            ? bw_append_backward_ops_with_checkpoints(r, b0, path, b0, &ctx->backward.checkpoints)
            : bw_append_backward_ops(r, b0, path, b0);
    /* read by nothing after the grad ops: freed before the pass's peak */
    g_ptr_array_free(path, TRUE);
    if (ok) {
        bw_rename_grad(r, b0, fwd_op_num, NULL, NULL);
        ok = bw_append_backward_vars(r, b0, fwd_op_num);
        bw_recompute_prune_scratch(r);
        /* Read by nothing after the vars (grad_info after the pairs): freed
         * before op_role_var's overlays are made (issue 33). */
        pmap_free(r->grad_to_var);
        r->wanted = NULL;
        r->trainable_in = NULL;
        pmap_destroy(wanted);
        wanted = NULL;
        if (ok) {
            publish_pairs(ctx, r, b0, &params);
            pdt_list_free(&params);
            pmap_free(r->grad_info);
            tag_role_var(r, b0, fwd_op_num, &ctx->bw_params, &ctx->bw_grads);
        }
    }
    r->wanted = NULL;
    pdt_list_free(&params);
    pmap_destroy(wanted);
    return ok;
}

int pass_append_backward(pdt_ctx *ctx)
{
    if (!ctx->backward.loss) {
        pdt_error("append_backward: no loss var given (--loss)");
        return PDT_EBADINPUT;
    }
    ir_program *p = ctx->main;
    ir_block *b0 = ir_program_block(p, 0);
    const char *loss = ir_intern(ctx->backward.loss);
    ir_var *lv;
    ir_op *lop;
    if (!b0 || !locate_loss(ctx, b0, loss, &lv, &lop))
        return PDT_EBADINPUT;
    ir_op_set_role(lop, IR_ROLE_FORWARD | IR_ROLE_LOSS);

    bw_run r;
    bw_init(&r, p, ctx->main_path);
    r.drop_input = ctx->settings.drop_input_pages;
    bw_stop_gradients(&r);
    for (size_t i = 0; i < ctx->backward.no_grad.n; i++)
        pmap_add(r.no_grad[0], grad_name(ctx->backward.no_grad.items[i]));
    r.targets = &loss;
    r.n_targets = 1;

    size_t fwd_op_num = b0->n_ops;
    pmap *targets = pmap_new();
    pmap_add(targets, loss);
    pmap *block_no_grad = bw_forward_no_grad(&r, 0);
    bool ok = false;
    GPtrArray *path = bw_find_op_path(&r, b0, targets, NULL, 0, block_no_grad, false);
    if (path) {
        ir_op *fill = loss_grad_op(p, lv, lop);
        ir_block_splice(b0, b0->n_ops, 0, &fill, 1);
        bw_extend_no_grad(&r, b0, path, targets, block_no_grad);
        ok = emit_grads(ctx, &r, b0, path, fwd_op_num);    /* frees path */
    }
    pmap_destroy(targets);
    pmap_destroy(block_no_grad);
    bw_free(&r);
    return ok ? PDT_OK : PDT_EBADINPUT;
}
