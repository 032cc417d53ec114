/* unique.h - where Paddle's unique_name generator stood after building the
 * input (issue 30 point 4).  unique_name.generate(key) hands out key_0,
 * key_1, ... per key and process; a program holds the names it gave, so
 * every "_<digits>" that ends a name or precedes a '.' is a counter already
 * used for the key before it ("fc" in fc_0.w_0, "fc_0.tmp" in fc_0.tmp_1,
 * "x@GRAD" in x@GRAD_2).  framework.name_scope numbers a repeated child
 * scope the same way: "/regularization/", "/regularization_1/", ... */
#ifndef PDT_IR_UNIQUE_H
#define PDT_IR_UNIQUE_H

#include <stddef.h>

#include "ir.h"

/* Called with a key (key_len bytes of a longer string, not terminated)
 * and the next counter the name implies (N + 1 for key_N). */
typedef void (*ir_unique_fn)(void *ud, const char *key, size_t key_len, size_t next);

/* Every counter one name implies. */
void ir_unique_name(const char *name, ir_unique_fn fn, void *ud);
/* Every counter the var names of every block of p imply (p may be NULL). */
void ir_unique_vars(const ir_program *p, ir_unique_fn fn, void *ud);
/* The name-scope children of the root the ops of p entered: for each op's
 * op_namescope "/S/..." or "/S_N/...", S with next 1 or N + 1.  Linear in
 * the ops; only ops that carry the attr count. */
void ir_unique_scopes(const ir_program *p, ir_unique_fn fn, void *ud);
/* The next counter of one key after the var names of p (0 when none). */
size_t ir_unique_next(const ir_program *p, const char *key);

#endif
