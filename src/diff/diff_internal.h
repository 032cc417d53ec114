/* diff_internal.h - what program.c, vars.c and job.c share. */
#ifndef PDT_DIFF_INTERNAL_H
#define PDT_DIFF_INTERNAL_H

#include <glib.h>

#include "diff.h"

/* One comparison of two programs under way. */
typedef struct {
    const pdiff_opts *o;
    pdiff_report *r;
    const char *path_a, *path_b;
    long block;                 /* the block being compared, -1 before */
    GString *va, *vb, *what;    /* scratch for the items' text */
} pdiff_cmp;

/* Reports one difference about op x (index ia in A) and/or y (ib in B),
 * or about the block (both NULL, -1). */
void pdiff_emit(pdiff_cmp *c, pdiff_kind kind, const ir_op *x, long ia, const ir_op *y, long ib,
                const char *what, const char *a, const char *b);
/* vars.c: the vars of two blocks by name, every VarDesc field. */
void pdiff_compare_vars(pdiff_cmp *c, const ir_block *x, const ir_block *y);

#endif
