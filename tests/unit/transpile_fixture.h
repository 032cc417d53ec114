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

#endif
