/* transpile_fixture.h - what the transpile suites share: a context loaded
 * from a golden case's input (2 pservers, 2 trainers, trainer 0, sync) and
 * lookups into the programs the pass produced.  Include after unit.h. */
#ifndef PDT_TRANSPILE_FIXTURE_H
#define PDT_TRANSPILE_FIXTURE_H

#include "io/pdio.h"
#include "passes/pass.h"

static inline void tpf_load(pdt_ctx *ctx, const char *main_path, const char *startup_path)
{
    pdt_ctx_init(ctx);
    ctx->main = pdio_read(main_path);
    ck_assert_ptr_nonnull(ctx->main);
    ctx->startup = pdio_read(startup_path);
    ck_assert_ptr_nonnull(ctx->startup);
    ctx->main_path = main_path;
    ctx->transpile.pservers = pdt_list_split("127.0.0.1:6174,127.0.0.1:6175");
    ctx->transpile.trainers = 2;
}

/* The output program written as `stem` (e.g. "trainer_0"), or NULL. */
static inline ir_program *tpf_output(const pdt_ctx *ctx, const char *stem)
{
    for (size_t i = 0; i < ctx->n_outputs; i++)
        if (ctx->outputs[i].stem == ir_intern(stem))
            return ctx->outputs[i].program;
    return NULL;
}

/* The nth (from 0) op of `type` in b, or NULL. */
static inline ir_op *tpf_find_op(const ir_block *b, const char *type, size_t nth)
{
    for (size_t k = 0; k < b->n_ops; k++)
        if (b->ops[k]->type == ir_intern(type) && nth-- == 0)
            return b->ops[k];
    return NULL;
}

static inline size_t tpf_count_ops(const ir_block *b, const char *type)
{
    size_t n = 0;
    for (size_t k = 0; k < b->n_ops; k++)
        n += b->ops[k]->type == ir_intern(type);
    return n;
}

#ifdef PDT_EXEC_DIST_H
/* The cluster of N transpile runs (trainer t's in ctx[t], the pservers'
 * in ctx[0]) as verify sets it up: ex_cluster_from_outputs. */
static inline void tpf_cluster(ex_cluster *c, const pdt_ctx *ctx, size_t n, ex_cluster_mode mode,
                               int dist_mode)
{
    size_t total = 0;
    for (size_t t = 0; t < n; t++)
        total += ctx[t].n_outputs;
    ex_output *outs = g_new0(ex_output, total + 1);
    total = 0;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < ctx[t].n_outputs; i++)
            outs[total++] = (ex_output){ctx[t].outputs[i].stem, ctx[t].outputs[i].program};
    const pdt_list *eps = &ctx[0].transpile.pservers;
    ex_cluster_shape shape = {.mode = mode, .dist_mode = dist_mode, .n_trainers = n,
                              .devices = 1, .n_pservers = eps->n, .endpoints = eps->items};
    ck_assert_msg(ex_cluster_from_outputs(c, &shape, outs, total), "%s", c->err);
    g_free(outs);
}
#endif

#endif
