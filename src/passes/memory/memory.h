/* memory.h - what memory_optimize and release_memory share: the op lists
 * Paddle analyses (its "control-flow graphs"), the skip sets, the
 * per-op use/def lists and the next-mention index that answers liveness
 * questions in O(1).  See README.md in this folder for the design. */
#ifndef PDT_MEMORY_H
#define PDT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "../../ir/pmap.h"
#include "../pass.h"

#define MEM_NONE ((size_t)-1)

/* One analysed op list (memory_optimization_transpiler.py's
 * ControlFlowGraph): block 0, or a forward sub-block followed by its grad
 * sub-block.  Ops [0, forward_num) are looked up in their own block only,
 * the rest through the parent chain. */
typedef struct {
    ir_op **ops;
    size_t n_ops;
    size_t forward_num;
    pmap skip;                  /* interned names, value = key */
} mem_cfg;

typedef struct {
    size_t n;
    mem_cfg *cfgs;
} mem_cfg_list;

/* Paddle's _get_cfgs: block 0 first, then while pairs, unmatched while
 * blocks, conditional_block pairs, unmatched conditional blocks.  Returns
 * false after printing an error naming the op (a sub-block op without a
 * valid sub_block attr). */
bool mem_cfgs_build(const pdt_ctx *ctx, mem_cfg_list *out);
void mem_cfgs_free(mem_cfg_list *l);

/* The CFG's skip set as the pass sees it: what _get_cfgs put there, the
 * outputs of ops with force_cpu == true, and the user's --skip. */
void mem_cfg_add_run_skips(mem_cfg *cfg, const pdt_list *user_skip);

/* while, while_grad, conditional_block, conditional_block_grad. */
bool mem_is_sub_block_op(const ir_op *op);

/* One distinct name an op mentions, in the analysis of one CFG. */
typedef struct {
    size_t node;                /* index of the name in mem_index.names */
    size_t next;                /* next occurrence of that name, or MEM_NONE */
    bool use;                   /* the op reads it */
} mem_occ;

/* Use and def lists of every op of a CFG, in Paddle's order (slots by
 * name, then argument order, duplicates dropped).  Both list occurrence
 * indices: a name an op reads and writes has one occurrence. */
typedef struct {
    size_t n_nodes;
    const char **names;         /* node -> interned name */
    pmap node_of;               /* name -> node + 1 */
    long *max_def;              /* node -> last op that writes it, or -1 */
    size_t *first_occ;          /* node -> its first occurrence */
    size_t *uses_start, *defs_start, *occ_start;   /* per op, n_ops + 1 */
    size_t *uses, *defs;        /* occurrence indices */
    mem_occ *occ;
} mem_index;

void mem_index_build(mem_index *ix, const mem_cfg *cfg);
void mem_index_free(mem_index *ix);
/* Is the name live after the op of occurrence o (its next mention reads
 * it)?  That is Paddle's `name in live_out[i]`. */
static inline bool mem_live_after(const mem_index *ix, size_t o)
{
    size_t next = ix->occ[o].next;
    return next != MEM_NONE && ix->occ[next].use;
}
static inline size_t mem_node(const mem_index *ix, const char *name)
{
    return (size_t)(uintptr_t)pmap_get(&ix->node_of, name) - 1;
}

/* _find_var: op i's own block for forward ops, else the parent chain. */
ir_var *mem_lookup(const mem_cfg *cfg, size_t i, const char *name);
/* _check_var_validity; `v` receives the VarDesc when valid. */
bool mem_valid(const mem_cfg *cfg, size_t i, const char *name, ir_var **v);
/* A LoD tensor var's declared shape (empty for any other kind). */
size_t mem_var_dims(const ir_var *v, const int64_t **dims);

#endif
