/* memory_index.c - per-op use/def lists and next-mention links of one CFG.
 *
 * Paddle keeps live_in/live_out sets per op, which costs O(ops x live
 * vars) time and memory.  A name is in live_out[i] exactly when the next op
 * after i that mentions it reads it, so a link from each mention to the
 * next one answers every liveness question the passes ask in O(1). */
#include <stdlib.h>
#include <string.h>

#include "../../ir/util.h"
#include "memory.h"

typedef struct {
    size_t n, cap;
    size_t *v;
} vec;

static void vec_push(vec *a, size_t x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->v = xrealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = x;
}

/* Slot positions sorted by slot name: OpDesc keeps slots in a std::map, so
 * input_arg_names()/output_arg_names() list them in name order. */
static void sorted_slots(const ir_slot *slots, size_t n, vec *order)
{
    order->n = 0;
    for (size_t s = 0; s < n; s++) {
        size_t j = order->n;
        vec_push(order, s);
        while (j > 0 && strcmp(slots[order->v[j - 1]].name, slots[s].name) > 0) {
            order->v[j] = order->v[j - 1];
            j--;
        }
        order->v[j] = s;
    }
}

typedef struct {
    mem_index *ix;
    size_t cap_nodes;
    size_t *stamp, *def_stamp, *last_occ, *cur_occ;
    size_t n_occ, cap_occ;
} builder;

static size_t node_for(builder *bd, const char *name)
{
    mem_index *ix = bd->ix;
    size_t node = (size_t)(uintptr_t)pmap_get(&ix->node_of, name);
    if (node)
        return node - 1;
    if (ix->n_nodes == bd->cap_nodes) {
        bd->cap_nodes = bd->cap_nodes ? bd->cap_nodes * 2 : 256;
        size_t c = bd->cap_nodes;
        ix->names = xrealloc(ix->names, c * sizeof *ix->names);
        ix->max_def = xrealloc(ix->max_def, c * sizeof *ix->max_def);
        ix->first_occ = xrealloc(ix->first_occ, c * sizeof *ix->first_occ);
        bd->stamp = xrealloc(bd->stamp, c * sizeof *bd->stamp);
        bd->def_stamp = xrealloc(bd->def_stamp, c * sizeof *bd->def_stamp);
        bd->last_occ = xrealloc(bd->last_occ, c * sizeof *bd->last_occ);
        bd->cur_occ = xrealloc(bd->cur_occ, c * sizeof *bd->cur_occ);
    }
    node = ix->n_nodes++;
    ix->names[node] = name;
    ix->max_def[node] = -1;
    bd->stamp[node] = bd->def_stamp[node] = 0;
    bd->last_occ[node] = MEM_NONE;
    pmap_put(&ix->node_of, name, (void *)(uintptr_t)(node + 1));
    return node;
}

/* The occurrence of `node` at op k (k + 1 is the stamp), made on first
 * mention and linked from the node's previous one. */
static size_t occ_for(builder *bd, size_t node, size_t k, bool use)
{
    mem_index *ix = bd->ix;
    if (bd->stamp[node] == k + 1)
        return bd->cur_occ[node];
    if (bd->n_occ == bd->cap_occ) {
        bd->cap_occ = bd->cap_occ ? bd->cap_occ * 2 : 256;
        ix->occ = xrealloc(ix->occ, bd->cap_occ * sizeof *ix->occ);
    }
    size_t o = bd->n_occ++;
    ix->occ[o] = (mem_occ){node, MEM_NONE, use};
    if (bd->last_occ[node] != MEM_NONE)
        ix->occ[bd->last_occ[node]].next = o;
    else
        ix->first_occ[node] = o;
    bd->last_occ[node] = o;
    bd->cur_occ[node] = o;
    bd->stamp[node] = k + 1;
    return o;
}

static void index_op(builder *bd, size_t k, const ir_op *op, vec *uses, vec *defs, vec *order)
{
    mem_index *ix = bd->ix;
    sorted_slots(ir_op_ins(op), op->n_inputs, order);
    for (size_t s = 0; s < order->n; s++) {
        const ir_slot *sl = &ir_op_ins(op)[order->v[s]];
        for (size_t a = 0; a < sl->n_args; a++) {
            size_t node = node_for(bd, sl->args[a]);
            if (bd->stamp[node] != k + 1)
                vec_push(uses, occ_for(bd, node, k, true));
        }
    }
    sorted_slots(ir_op_outs(op), op->n_outputs, order);
    for (size_t s = 0; s < order->n; s++) {
        const ir_slot *sl = &ir_op_outs(op)[order->v[s]];
        for (size_t a = 0; a < sl->n_args; a++) {
            size_t node = node_for(bd, sl->args[a]);
            ix->max_def[node] = (long)k;
            if (bd->def_stamp[node] == k + 1)
                continue;
            bd->def_stamp[node] = k + 1;
            vec_push(defs, occ_for(bd, node, k, false));
        }
    }
}

void mem_index_build(mem_index *ix, const mem_cfg *cfg)
{
    memset(ix, 0, sizeof *ix);
    builder bd = {.ix = ix};
    size_t n = cfg->n_ops;
    ix->uses_start = xcalloc(n + 1, sizeof *ix->uses_start);
    ix->defs_start = xcalloc(n + 1, sizeof *ix->defs_start);
    ix->occ_start = xcalloc(n + 1, sizeof *ix->occ_start);
    vec uses = {0}, defs = {0}, order = {0};
    for (size_t k = 0; k < n; k++) {
        ix->uses_start[k] = uses.n;
        ix->defs_start[k] = defs.n;
        ix->occ_start[k] = bd.n_occ;
        index_op(&bd, k, cfg->ops[k], &uses, &defs, &order);
    }
    ix->uses_start[n] = uses.n;
    ix->defs_start[n] = defs.n;
    ix->occ_start[n] = bd.n_occ;
    ix->uses = uses.v;
    ix->defs = defs.v;
    free(order.v);
    free(bd.stamp);
    free(bd.def_stamp);
    free(bd.last_occ);
    free(bd.cur_occ);
}

void mem_index_free(mem_index *ix)
{
    free(ix->names);
    free(ix->max_def);
    free(ix->first_occ);
    pmap_free(&ix->node_of);
    free(ix->uses_start);
    free(ix->defs_start);
    free(ix->occ_start);
    free(ix->uses);
    free(ix->defs);
    free(ix->occ);
    memset(ix, 0, sizeof *ix);
}
