/* print_ops.h - a program as one line per op, for people (pdtrans dump
 * --ops, --print-ops).  Not a file format: nothing reads it back. */
#ifndef PDT_IR_PRINT_OPS_H
#define PDT_IR_PRINT_OPS_H

#include <stdio.h>

#include "ir.h"

/* "BLOCK:INDEX TYPE SLOT=ARG,... -> SLOT=ARG,... (ROLE)" per op. */
void ir_print_ops(FILE *out, const ir_program *p);

#endif
