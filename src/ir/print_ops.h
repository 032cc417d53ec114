/* print_ops.h - a program as one line per op, for people (pdtrans dump
 * --ops, --print-ops).  Not a file format: nothing reads it back. */
#ifndef PDT_IR_PRINT_OPS_H
#define PDT_IR_PRINT_OPS_H

#include <stdio.h>

#include "ir.h"

/* "BLOCK:INDEX TYPE SLOT=ARG,... -> SLOT=ARG,... (ROLE)" per op. */
void ir_print_ops(FILE *out, const ir_program *p);

/* What dump --ops adds to each line. */
typedef struct {
    /* Each op's attrs after its role, NAME=VALUE (attr_format.h), the
     * framework attrs (op_role, op_callstack, ...) last, op_callstack as
     * its depth only ("op_callstack=<N frames>"). */
    bool attrs;
    bool no_callstack;      /* with attrs: leave op_callstack out */
} ir_print_ops_opts;
void ir_print_ops_with(FILE *out, const ir_program *p, const ir_print_ops_opts *o);

#endif
