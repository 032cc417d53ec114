/* calc_gradient.c - the calc_gradient pass: Paddle's
 * paddle.static.gradients(targets, inputs, target_gradients, no_grad_set)
 * (seed: calc_gradient_helper) on block 0 of ctx->main.
 *
 * Reads ctx->backward.targets, ctx->backward.inputs, ctx->backward.target_grads (optional, one per
 * target), ctx->backward.no_grad.  Fills ctx->bw_params with the inputs and
 * ctx->bw_grads with each input's grad name, or NULL when the targets do
 * not depend on that input. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../grad/grad.h"
#include "../../ir/util.h"
#include "backward_internal.h"
#include "../pass.h"

static bool same_shape(const ir_var *a, const ir_var *b)
{
    if (a->n_dims != b->n_dims)
        return false;
    for (size_t i = 0; i < a->n_dims; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

static bool check_vars(pdt_ctx *ctx, ir_block *b0)
{
    if (!ctx->backward.targets.n || !ctx->backward.inputs.n) {
        pdt_error("calc_gradient: needs at least one target and one input");
        return false;
    }
    if (ctx->backward.target_grads.n && ctx->backward.target_grads.n != ctx->backward.targets.n) {
        pdt_error("calc_gradient: %zu target gradients given for %zu targets",
                  ctx->backward.target_grads.n, ctx->backward.targets.n);
        return false;
    }
    const pdt_list *lists[] = {&ctx->backward.targets, &ctx->backward.inputs,
                               &ctx->backward.target_grads};
    const char *what[] = {"--targets", "--inputs", "--target-grads"};
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            if (!ir_block_find_var(b0, lists[l]->items[i])) {
                char *hint = pdt_var_hint(b0, lists[l]->items[i]);
                pdt_error("%s: block 0 has no var '%s' (%s)%s", ctx->main_path,
                          lists[l]->items[i], what[l], hint);
                g_free(hint);
                return false;
            }
    for (size_t i = 0; i < ctx->backward.target_grads.n; i++)
        if (!same_shape(ir_block_find_var(b0, ctx->backward.targets.items[i]),
                        ir_block_find_var(b0, ctx->backward.target_grads.items[i]))) {
            pdt_error("%s: the shapes of target and grad are different: '%s' '%s'", ctx->main_path,
                      ctx->backward.targets.items[i], ctx->backward.target_grads.items[i]);
            return false;
        }
    return true;
}

/* The targets' grads: ones of each target's shape and dtype
 * (fill_any_like, never renamed: `skip`), or the given --target-grads
 * (target_grad_map: grad name -> given name). */
static void seed_target_grads(pdt_ctx *ctx, ir_block *b0, pmap *targets,
                              pmap *target_grad_map, pmap *skip)
{
    for (size_t i = 0; i < ctx->backward.targets.n; i++) {
        const char *t = ctx->backward.targets.items[i];
        const char *g = grad_name(t);
        pmap_add(targets, t);
        if (ctx->backward.target_grads.n) {
            pmap_put(target_grad_map, g, (void *)ctx->backward.target_grads.items[i]);
            continue;
        }
        ir_op *fill = bw_new_op(ctx->main, "fill_any_like");
        ir_op_set_input1(fill, "X", t);
        ir_op_set_output1(fill, "Out", g);
        ir_op_set_float(fill, "value", 1.0f);
        ir_op_set_int(fill, "dtype", ir_block_find_var(b0, t)->dtype);
        ir_block_splice(b0, b0->n_ops, 0, &fill, 1);
        pmap_add(skip, g);
    }
}

/* Each input with its grad name (NULL when it has none). */
static void publish_inputs(pdt_ctx *ctx, const bw_run *r)
{
    pdt_list_free(&ctx->bw_params);
    pdt_list_free(&ctx->bw_grads);
    ctx->bw_params.items = xcalloc(ctx->backward.inputs.n + 1, sizeof(char *));
    ctx->bw_grads.items = xcalloc(ctx->backward.inputs.n + 1, sizeof(char *));
    for (size_t i = 0; i < ctx->backward.inputs.n; i++) {
        const char *in = ctx->backward.inputs.items[i];
        ctx->bw_params.items[ctx->bw_params.n++] = in;
        ctx->bw_grads.items[ctx->bw_grads.n++] = pmap_get(r->grad_info, in);
    }
}

int pass_calc_gradient(pdt_ctx *ctx)
{
    ir_program *p = ctx->main;
    ir_block *b0 = ir_program_block(p, 0);
    if (!b0 || !check_vars(ctx, b0))
        return PDT_EBADINPUT;
    bw_run r;
    bw_init(&r, p, ctx->main_path);
    bw_stop_gradients(&r);
    for (size_t i = 0; i < ctx->backward.no_grad.n; i++)
        pmap_add(r.no_grad[0], grad_name(ctx->backward.no_grad.items[i]));
    r.targets = ctx->backward.targets.items;
    r.n_targets = ctx->backward.targets.n;

    size_t fwd_op_num = b0->n_ops;
    pmap *target_grad_map = pmap_new(), *skip = pmap_new(), *targets = pmap_new();
    seed_target_grads(ctx, b0, targets, target_grad_map, skip);
    pmap *block_no_grad = bw_forward_no_grad(&r, 0);
    pmap *wanted = pmap_new();

    bool ok = false;
    GPtrArray *path = bw_find_op_path(&r, b0, targets, ctx->backward.inputs.items,
                                      ctx->backward.inputs.n, block_no_grad, false);
    if (path) {
        bw_extend_no_grad(&r, b0, path, targets, block_no_grad);
        for (size_t i = 0; i < ctx->backward.inputs.n; i++)
            pmap_add(wanted, ctx->backward.inputs.items[i]);
        r.wanted = wanted;
        ok = bw_append_backward_ops(&r, b0, path, b0);
        g_ptr_array_free(path, TRUE);
    }
    if (ok) {
        bw_rename_grad(&r, b0, fwd_op_num, target_grad_map, skip);
        ok = bw_append_backward_vars(&r, b0, fwd_op_num);
        if (ok)
            publish_inputs(ctx, &r);
    }
    pmap_destroy(target_grad_map);
    pmap_destroy(skip);
    pmap_destroy(targets);
    pmap_destroy(block_no_grad);
    pmap_destroy(wanted);
    bw_free(&r);
    return ok ? PDT_OK : PDT_EBADINPUT;
}
