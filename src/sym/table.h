/* table.h - distributed lookup tables in `verify job` (table.c, README.md
 * in this folder): the table as one term with per-pserver shard views,
 * and the trainer's split_ids / prefetch / merge_ids. */
#ifndef PDT_SYM_TABLE_H
#define PDT_SYM_TABLE_H

#include "job.h"

/* The rows of table t whose id is k mod n (pserver k's shard of a
 * distributed table); shard(modcat(p_0..p_n-1), k, n) is p_k. */
sym_term *sym_shard(sym_store *s, sym_term *t, int k, int n);
/* The table whose shard k is parts[k] (k < n): modcat of the shards of one
 * table is the table; of one output of row-wise ops alike, that op on the
 * modcats of the args that differ; of sums, the sum of the modcats of their
 * operands, paired by shard base. */
sym_term *sym_modcat(sym_store *s, sym_term **parts, int n);

/* split_ids, prefetch, merge_ids, lookup_table_grad (whose W is only its
 * dims), checkpoint_notify: 1 done, 0 not such an op, -1 failed. */
int sym_table_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);
/* Whether pserver ps receives `name` as a distributed table's grad. */
bool sym_table_accepts(sym_proc *ps, const char *name);
/* After the startups and the reference's setup: each pserver's table is
 * its shard of one term, which the reference adopts. */
bool sym_table_setup(sym_job *j);
/* The job's value of table `name` (its shards put together), or NULL when
 * `name` is not a distributed table of the job. */
sym_term *sym_table_value(sym_job *j, const char *name);
/* Explains why table `name` (got) differs from the reference (want). */
void sym_table_explain(sym_job *j, GString *g, const char *name, sym_term *got,
                       sym_term *want);

#endif
