/* rewrite_check.h - `verify rewrite`: a program and its rewrite (memory
 * optimisation, release_memory, fuse_batch_norm...) run on the same seeded
 * feeds and parameters must fetch the same values. */
#ifndef PDT_EXEC_REWRITE_CHECK_H
#define PDT_EXEC_REWRITE_CHECK_H

#include "../ir/tensors.h"
#include "exec.h"

typedef struct {
    uint64_t seed;                      /* feeds and unloaded parameters */
    int64_t batch;                      /* replaces -1 dims of the feeds */
    const ir_tensors *before_params;    /* NULL: seeded values */
    const ir_tensors *after_params;     /* NULL: the same values as BEFORE's */
} ex_rewrite_opts;

typedef struct {
    const char *target;         /* BEFORE's fetch target (interned) */
    const char *after_name;     /* where AFTER holds it */
    size_t numel;
    size_t worst_index;
    double worst_diff;          /* |a - b| / max(1, |b|), b BEFORE's value */
    double before, after;       /* values at worst_index */
    const char *problem;        /* non-NULL: no value or a shape mismatch */
} ex_rewrite_result;

/* Runs block 0 of both programs (feed ops skipped: their targets get the
 * seeded feeds; fetch ops record their input at that point) and compares
 * every fetch target.  False with err set when a program cannot run; the
 * results (an array of *n entries, free() it) are the caller's. */
bool ex_rewrite_check(const ir_program *before, const ir_program *after,
                      const ex_rewrite_opts *o, ex_rewrite_result **out, size_t *n,
                      char *err, size_t errlen);

#endif
