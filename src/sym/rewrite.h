/* rewrite.h - `pdtrans verify rewrite --symbolic`: a program and its
 * rewrite by memory_optimize or release_memory run symbolically, side by
 * side, each var a buffer (README.md in this folder, "verify rewrite"). */
#ifndef PDT_SYM_REWRITE_H
#define PDT_SYM_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../ir/ir.h"

typedef struct {
    const char *labels[2];      /* BEFORE's and AFTER's file names, for reports */
    ir_program *progs[2];       /* BEFORE, AFTER */
    int steps;                  /* runs of block 0; persistable vars carry over */
    /* Called before each step (NULL: none), for the progress line. */
    void (*on_step)(int step);
} sym_rewrite_in;

/* Prints one line per target (fetch op input, or block 0 var an op writes
 * and none reads) and one for the persistable vars to `out` when the two
 * agree.  Returns 0 when equal, 1 with the first difference in err (it
 * names AFTER's file, block, op and var), -1 with err when the programs
 * cannot be paired op by op (err names the file). */
int sym_verify_rewrite(const sym_rewrite_in *in, FILE *out, char *err, size_t errlen);

/* Whether a var of this VarType holds tensors that are compared (LOD_TENSOR,
 * SELECTED_ROWS, LOD_TENSOR_ARRAY, plain dtypes); Scope, readers, feed and
 * fetch lists, rank tables... are not. */
bool sym_is_tensor_type(int type);

#endif
