/* ir_internal.h - helpers shared by the IR's own files and the I/O layer. */
#ifndef PDT_IR_INTERNAL_H
#define PDT_IR_INTERNAL_H

#include "ir.h"

/* Returns an array with room for `need` elements, copying the first n. */
void *ir_grow(ir_arena *a, void *arr, size_t elem, size_t n, size_t *cap,
              size_t need);
ir_bytes ir_bytes_copy(ir_arena *a, ir_bytes b);
/* Appends a var without defaults (the reader fills every field). */
ir_var *ir_block_add_var_raw(ir_block *b, const char *name);
void ir_var_copy_desc(ir_arena *a, ir_var *dst, const ir_var *src);
void ir_attr_copy(ir_arena *a, ir_attr *dst, const ir_attr *src);
/* true if s is the canonical copy of its name (no hashing; see intern.c). */
bool ir_is_interned(const char *s);

/* scope.c: the per-program index behind ir_block_find_var_recursive. */
typedef struct ir_scope ir_scope;
void ir_scope_declare(ir_block *b, const char *name);
void ir_scope_undeclare(ir_block *b, const char *name);
/* The var `name` as seen from b; *answered is false when the index cannot
 * tell (malformed program, name declared in many blocks): walk instead. */
ir_var *ir_scope_lookup(const ir_block *b, const char *name, bool *answered);
/* 1 if d is a or below it, 0 if not, -1 when the index cannot tell. */
int ir_scope_below(const ir_block *d, const ir_block *a);
void ir_scope_free(ir_program *p);

#endif
