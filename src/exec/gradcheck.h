/* gradcheck.h - `verify grad`: every parameter's gradient from the
 * backward ops against central finite differences of the forward ops. */
#ifndef PDT_EXEC_GRADCHECK_H
#define PDT_EXEC_GRADCHECK_H

#include "exec.h"

typedef struct {
    uint64_t seed;
    int64_t batch;
    double delta;           /* finite-difference step */
    size_t max_samples;     /* elements checked per parameter (0: all) */
} ex_gradcheck_opts;

typedef struct {
    const char *param, *grad;   /* interned */
    size_t n_checked;
    size_t worst_index;
    double worst_rel, analytic, numeric;
} ex_grad_result;

/* Error measure (Paddle's OpTest check_grad): |analytic - numeric| divided
 * by |numeric|, or by 1 when |numeric| < 1e-3. */
double ex_grad_rel_error(double analytic, double numeric);

/* Runs the check on block 0 of `prog` (startup may be NULL).  Parameters
 * are the [param, grad] pairs of the ops' op_role_var attrs, sorted by
 * name.  Returns false with err set on a failure to run; the results
 * (an array of *n entries, free() it) are the caller's. */
bool ex_grad_check(const ir_program *prog, const ir_program *startup, const char *loss,
                   const ex_gradcheck_opts *o, ex_grad_result **out, size_t *n, char *err,
                   size_t errlen);

#endif
