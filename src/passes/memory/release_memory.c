/* release_memory.c - Paddle's release_memory: after each op, one
 * delete_var op for the inputs that die there (memory-passes.md §6). */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "memory.h"

typedef struct {
    ir_block *block;
    size_t n, cap;
    size_t *pos;        /* raw insert index, as Paddle's _insert_op gets it */
    ir_op **ops;
} insert_list;

static void insert_push(insert_list *l, size_t pos, ir_op *op)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->pos = xrealloc(l->pos, l->cap * sizeof *l->pos);
        l->ops = xrealloc(l->ops, l->cap * sizeof *l->ops);
    }
    l->pos[l->n] = pos;
    l->ops[l->n++] = op;
}

/* Applies inserts made one after another at increasing raw indices: the
 * k-th lands at index pos[k] of the final array (later ones are further
 * right and do not move it).  One pass, instead of one shift per insert. */
static void insert_apply(insert_list *l)
{
    if (!l->n)
        return;
    ir_block *b = l->block;
    size_t total = b->n_ops + l->n;
    ir_op **all = xmalloc(total * sizeof *all);
    size_t src = 0, k = 0;
    for (size_t q = 0; q < total; q++) {
        if (k < l->n && (l->pos[k] <= q || src == b->n_ops))
            all[q] = l->ops[k++];
        else
            all[q] = b->ops[src++];
    }
    ir_block_set_ops(b, all, total);
    free(all);
    l->n = 0;
}

static ir_op *delete_var_op(ir_program *p, const char *const *names, size_t n)
{
    ir_op *op = ir_op_new(p, "delete_var");
    ir_op_set_input(op, "X", names, n);
    return op;
}

static void release_cfg(ir_program *p, mem_cfg *cfg)
{
    mem_index ix;
    mem_index_build(&ix, cfg);
    insert_list fwd = {0}, bwd = {0};
    size_t cap = 16, n;
    const char **names = xmalloc(cap * sizeof *names);
    for (size_t i = 0; i < cfg->n_ops; i++) {
        if (mem_is_sub_block_op(cfg->ops[i]))
            continue;
        n = 0;
        for (size_t u = ix.uses_start[i]; u < ix.uses_start[i + 1]; u++) {
            size_t o = ix.uses[u];
            const char *name = ix.names[ix.occ[o].node];
            if (mem_live_after(&ix, o) || !mem_valid(cfg, i, name, NULL))
                continue;
            if (n == cap)
                names = xrealloc(names, (cap *= 2) * sizeof *names);
            names[n++] = name;
        }
        if (!n)
            continue;
        bool is_fwd = i < cfg->forward_num;
        insert_list *l = is_fwd ? &fwd : &bwd;
        size_t at = is_fwd ? i + l->n + 1 : i - cfg->forward_num + l->n + 1;
        l->block = cfg->ops[i]->block;
        insert_push(l, at, delete_var_op(p, names, n));
    }
    insert_apply(&fwd);
    insert_apply(&bwd);
    free(fwd.pos);
    free(fwd.ops);
    free(bwd.pos);
    free(bwd.ops);
    free(names);
    mem_index_free(&ix);
}

int pass_release_memory(pdt_ctx *ctx)
{
    mem_cfg_list cfgs;
    if (!mem_cfgs_build(ctx, &cfgs))
        return PDT_EBADINPUT;
    for (size_t c = 0; c < cfgs.n; c++) {
        mem_cfg_add_run_skips(&cfgs.cfgs[c], &ctx->memory.skip);
        release_cfg(ctx->main, &cfgs.cfgs[c]);
    }
    mem_cfgs_free(&cfgs);
    return PDT_OK;
}
