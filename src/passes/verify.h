/* verify.h - the structural checker behind `pdtrans check` and the
 * after-each-pass verification. */
#ifndef PDT_VERIFY_H
#define PDT_VERIFY_H

#include <stdio.h>

#include "../ir/ir.h"

/* Checks p; prints one line per problem to `out` (NULL: no printing),
 * each prefixed with `name` (the file).  Returns the number of errors.
 * Warnings (block 0's parent_idx 0) are printed but not counted. */
size_t pdt_verify(const ir_program *p, const char *name, FILE *out);
/* The same checks, stopping after `max` errors (0: no limit) and printing
 * no warnings when there is a limit.  The gate
 * before the first pass reports only the first problem. */
size_t pdt_verify_max(const ir_program *p, const char *name, FILE *out, size_t max);

/* Prints a note for each input that names a var Paddle takes from its
 * runtime scope (create_py_reader's blocking_queue) and the program does
 * not declare; pdt_verify accepts those.  Returns the count. */
size_t pdt_verify_notes(const ir_program *p, const char *name, FILE *out);

/* Dims below -1 (Paddle's InferShape writes -1 * 1917 as -1917) are
 * unknown dims, accepted like -1.  Prints one note naming the first such
 * var and how many more there are, once per program `name` in a run (not
 * under -q: pdt_quiet_warnings; `out` NULL prints nothing).  Returns how
 * many live vars have such dims.  pdt_verify_notes calls it too. */
size_t pdt_verify_note_dims(const ir_program *p, const char *name, FILE *out);

#endif
