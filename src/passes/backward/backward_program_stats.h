/* backward_program_stats.h - the seed's ProgramStats for recompute
 * (backward_recompute.c): which ops read and write each var of the op
 * path, the checkpoints in order, the segments between them and the vars
 * that must stay in memory.  Private to the two files. */
#ifndef PDT_BACKWARD_PROGRAM_STATS_H
#define PDT_BACKWARD_PROGRAM_STATS_H

#include "../pass.h"
#include "backward_internal.h"

/* var_op_deps of one name.  The seed keeps the full op index lists; every
 * question it asks of them is a min, a max or "is it empty", so those are
 * all that is kept (which also keeps get_out_of_subgraph_vars linear). */
typedef struct {
    const char *name;
    size_t n_readers, n_writers;
    size_t min_reader, max_reader, min_writer, max_writer;
} var_deps;

typedef struct {
    bw_run *r;
    ir_block *block;
    GPtrArray *ops;         /* the op path; seed ops get inserted into it */
    pmap *deps;       /* name -> var_deps* */
    GPtrArray *order;       /* var_deps* in first-seen order */
} prog_stats;

/* Ops [begin, end) of the op path. */
typedef struct {
    size_t begin, end;
} segment;

/* An empty ProgramStats over `path` (ops of block b); the path is edited
 * in place when dropout seeds are added. */
void bw_stats_init(prog_stats *s, bw_run *r, ir_block *b, GPtrArray *path);
void bw_stats_free(prog_stats *s);
/* modify_forward_desc_for_recompute: a `seed` op before each dropout
 * without a Seed input, in the path and in block b. */
void bw_stats_add_dropout_seeds(prog_stats *s);
/* build_stats. */
void bw_stats_build(prog_stats *s);
/* sort_checkpoints: the checkpoints the path uses, by last writer. */
GPtrArray *bw_stats_sort_checkpoints(prog_stats *s, const pdt_list *names);
/* The segments to recompute (GArray of segment), [0, first start) first. */
GArray *bw_stats_segments(prog_stats *s, GPtrArray *ckpts);
/* Adds to `hold` the vars that stay in memory (vars_should_be_hold). */
void bw_stats_held_vars(prog_stats *s, GArray *segs, pmap *hold);
/* Is `name` a persistable var of b? */
bool bw_persistable(const ir_block *b, const char *name);

#endif
