/* memory_cfg.c - the op lists Paddle's memory passes analyse (_get_cfgs),
 * their skip sets, var validity, and the use/def index both passes build
 * once per list. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "memory.h"

bool mem_is_sub_block_op(const ir_op *op)
{
    return op->type == IR_WK(while) || op->type == IR_WK(while_grad) ||
           op->type == IR_WK(conditional_block) ||
           op->type == IR_WK(conditional_block_grad);
}

static void skip_add_args(pmap *skip, const ir_slot *slots, size_t n)
{
    for (size_t s = 0; s < n; s++)
        for (size_t a = 0; a < slots[s].n_args; a++)
            pmap_add(skip, slots[s].args[a]);
}

static void skip_add_op(pmap *skip, const ir_op *op)
{
    skip_add_args(skip, ir_op_outs(op), op->n_outputs);
    skip_add_args(skip, ir_op_ins(op), op->n_inputs);
}

static mem_cfg *cfgs_push(mem_cfg_list *l, size_t *cap)
{
    if (l->n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        l->cfgs = xrealloc(l->cfgs, *cap * sizeof *l->cfgs);
    }
    mem_cfg *c = &l->cfgs[l->n++];
    memset(c, 0, sizeof *c);
    return c;
}

static void cfg_set_ops(mem_cfg *c, const ir_block *fwd, const ir_block *grad)
{
    c->forward_num = fwd->n_ops;
    c->n_ops = fwd->n_ops + (grad ? grad->n_ops : 0);
    c->ops = xcalloc(c->n_ops ? c->n_ops : 1, sizeof *c->ops);
    for (size_t i = 0; i < fwd->n_ops; i++)
        c->ops[i] = fwd->ops[i];
    for (size_t i = 0; grad && i < grad->n_ops; i++)
        c->ops[fwd->n_ops + i] = grad->ops[i];
}

/* The sub_block attr of block 0's op k, checked: Paddle would raise on a
 * missing attr or a block that does not exist. */
static bool sub_block_of(const pdt_ctx *ctx, size_t k, const ir_op *op, int32_t *id)
{
    const ir_attr *a = ir_op_attr(op, "sub_block");
    if (!a || a->type != IR_ATTR_BLOCK) {
        pdt_error("%s: block 0, op %zu '%s': no BLOCK attr 'sub_block'", ctx->main_path, k,
                  op->type);
        return false;
    }
    if (a->block_idx <= 0 || !ir_program_block(ctx->main, a->block_idx)) {
        pdt_error("%s: block 0, op %zu '%s': attr 'sub_block' names missing block %d",
                  ctx->main_path, k, op->type, a->block_idx);
        return false;
    }
    *id = a->block_idx;
    return true;
}

/* _process_sub_block_pair for one (forward, grad) op type pair. */
static bool add_pair_cfgs(const pdt_ctx *ctx, const char *fwd_type, const char *grad_type,
                          mem_cfg_list *l, size_t *cap)
{
    const ir_program *p = ctx->main;
    const ir_block *b0 = p->blocks[0];
    size_t nb = p->n_blocks;
    /* sub_op_dict: block id -> the last op of either type naming it. */
    const ir_op **owner = xcalloc(nb, sizeof *owner);
    int32_t *fwd_ids = xcalloc(b0->n_ops + 1, sizeof *fwd_ids);
    int32_t *grad_ids = xcalloc(b0->n_ops + 1, sizeof *grad_ids);
    size_t n_fwd = 0, n_grad = 0;
    bool ok = true;
    for (size_t k = 0; k < b0->n_ops && ok; k++) {
        const ir_op *op = b0->ops[k];
        bool is_fwd = op->type == fwd_type, is_grad = op->type == grad_type;
        int32_t id;
        if (!is_fwd && !is_grad)
            continue;
        if (!(ok = sub_block_of(ctx, k, op, &id)))
            break;
        if (is_fwd)
            fwd_ids[n_fwd++] = id;
        else
            grad_ids[n_grad++] = id;
        owner[id] = op;
    }
    /* Pairs in grad-op order; a matched forward id leaves the list (its
     * first occurrence, as list.remove does). */
    for (size_t g = 0; g < n_grad && ok; g++) {
        const ir_block *grad = p->blocks[grad_ids[g]];
        int32_t fwd_id = grad->has_forward_block_idx ? grad->forward_block_idx : -1;
        size_t f = 0;
        while (f < n_fwd && fwd_ids[f] != fwd_id)
            f++;
        if (f == n_fwd)
            continue;
        memmove(fwd_ids + f, fwd_ids + f + 1, (n_fwd - f - 1) * sizeof *fwd_ids);
        n_fwd--;
        mem_cfg *c = cfgs_push(l, cap);
        cfg_set_ops(c, p->blocks[fwd_id], grad);
        skip_add_op(&c->skip, owner[fwd_id]);
        skip_add_op(&c->skip, owner[grad_ids[g]]);
    }
    for (size_t f = 0; f < n_fwd && ok; f++) {
        mem_cfg *c = cfgs_push(l, cap);
        cfg_set_ops(c, p->blocks[fwd_ids[f]], NULL);
        skip_add_op(&c->skip, owner[fwd_ids[f]]);
    }
    free(owner);
    free(fwd_ids);
    free(grad_ids);
    return ok;
}

bool mem_cfgs_build(const pdt_ctx *ctx, mem_cfg_list *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    const ir_program *p = ctx->main;
    if (!p || p->n_blocks == 0)
        return true;
    mem_cfg *global = cfgs_push(out, &cap);
    (void)global;
    if (!add_pair_cfgs(ctx, IR_WK(while), IR_WK(while_grad), out, &cap) ||
        !add_pair_cfgs(ctx, IR_WK(conditional_block), IR_WK(conditional_block_grad),
                       out, &cap)) {
        mem_cfgs_free(out);
        return false;
    }
    /* The pushes may have moved the array: fill the global CFG now.  Its
     * skip set is the union of the sub-block ones. */
    mem_cfg *g = &out->cfgs[0];
    cfg_set_ops(g, p->blocks[0], NULL);
    for (size_t c = 1; c < out->n; c++)
        PMAP_FOR(&out->cfgs[c].skip, s)
            pmap_add(&g->skip, s->key);
    return true;
}

void mem_cfgs_free(mem_cfg_list *l)
{
    for (size_t c = 0; c < l->n; c++) {
        free(l->cfgs[c].ops);
        pmap_free(&l->cfgs[c].skip);
    }
    free(l->cfgs);
    memset(l, 0, sizeof *l);
}

/* `op.attr("force_cpu") == True` in Python: any number equal to 1. */
static bool force_cpu(const ir_op *op)
{
    const ir_attr *a = ir_op_attr(op, "force_cpu");
    if (!a)
        return false;
    switch (a->type) {
    case IR_ATTR_BOOLEAN: return a->b;
    case IR_ATTR_INT: return a->i == 1;
    case IR_ATTR_LONG: return a->l == 1;
    case IR_ATTR_FLOAT: return a->f == 1.0f;
    case IR_ATTR_FLOAT64: return a->float64 == 1.0;
    default: return false;
    }
}

void mem_cfg_add_run_skips(mem_cfg *cfg, const pdt_list *user_skip)
{
    for (size_t i = 0; i < cfg->n_ops; i++)
        if (force_cpu(cfg->ops[i]))
            skip_add_args(&cfg->skip, ir_op_outs(cfg->ops[i]), cfg->ops[i]->n_outputs);
    for (size_t k = 0; user_skip && k < user_skip->n; k++)
        pmap_add(&cfg->skip, user_skip->items[k]);
}

ir_var *mem_lookup(const mem_cfg *cfg, size_t i, const char *name)
{
    const ir_block *b = cfg->ops[i]->block;
    return i < cfg->forward_num ? ir_block_find_var(b, name)
                                : ir_block_find_var_recursive(b, name);
}

size_t mem_var_dims(const ir_var *v, const int64_t **dims)
{
    if (v->tensor_slot != IR_TD_LOD_TENSOR) {
        *dims = NULL;
        return 0;
    }
    *dims = v->dims;
    return v->n_dims;
}

bool mem_valid(const mem_cfg *cfg, size_t i, const char *name, ir_var **out)
{
    if (name == IR_WK(EMPTY))
        return false;
    ir_var *v = mem_lookup(cfg, i, name);
    const int64_t *dims;
    if (!v || v->persistable || v->type != IR_LOD_TENSOR || pmap_has(&cfg->skip, name) ||
        mem_var_dims(v, &dims) == 0)
        return false;
    if (out)
        *out = v;
    return true;
}
