/* remote_prefetch.h - remote prefetch in `verify job` (remote_prefetch.c,
 * README.md in this folder): a row-sliced param that lookup_table, _v2 or
 * nce reads with remote_prefetch, which the trainer never receives; its
 * lookups read the pservers' slices through distributed_lookup_table. */
#ifndef PDT_SYM_REMOTE_PREFETCH_H
#define PDT_SYM_REMOTE_PREFETCH_H

#include "job.h"

/* The table a remote lookup reads: parts[k] (declared with rows[k] rows on
 * its pserver) put together by the op's height_sections (heights[k]).  The
 * row concat of the parts when every section is its part's rows (so the
 * slices of W put back in order are W); NULL when a section is not its
 * part's rows (ids would land in other rows: the caller reports it). */
sym_term *sym_sections(sym_store *s, sym_term **parts, const int64_t *rows,
                       const int64_t *heights, int n);

/* distributed_lookup_table; lookup_table, _v2 and nce with remote_prefetch;
 * nce_grad without Input@GRAD (reads only Weight's dims): 1 done, 0 not
 * such an op, -1 failed. */
int sym_remote_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op);
/* After the startups and the reference's setup: the reference adopts each
 * remote param as the pservers' slices put together. */
bool sym_remote_setup(sym_job *j);
/* The job's value of remote param `name` (its slices on the pservers put
 * together, in slice order), or NULL when `name` is not one. */
sym_term *sym_remote_value(sym_job *j, const char *name);
/* Explains why remote param `name` differs from the reference (want). */
void sym_remote_explain(sym_job *j, GString *g, const char *name, sym_term *want);

#endif
