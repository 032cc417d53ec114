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

#endif
