/* ir_internal.h - helpers private to src/ir (src/io includes only
 * ir_codec.h, the part of them it needs, which this header includes). */
#ifndef PDT_IR_INTERNAL_H
#define PDT_IR_INTERNAL_H

#include "ir_codec.h"

/* Grows the arena's newest allocation p from old to size bytes where it
 * lies; false when p is not the newest or its chunk lacks room (arena.c). */
bool ir_arena_extend(ir_arena *a, void *p, size_t old, size_t size);
/* Returns an array with room for `need` elements, copying the first n;
 * grows in place when arr is the arena's newest allocation (grow.c). */
void *ir_grow(ir_arena *a, void *arr, size_t elem, size_t n, size_t *cap,
              size_t need);
/* The same, for a count kept in 32 bits (ops' and slots' arrays);
 * aborts past UINT32_MAX, which no program reaches (grow.c). */
void *ir_grow32(ir_arena *a, void *arr, size_t elem, size_t n, uint32_t *cap,
                size_t need);
ir_bytes ir_bytes_copy(ir_arena *a, ir_bytes b);
/* The op's program's ir_attr_codec, called (attr_walk.c): aborts when the
 * op's attrs are bytes no reader left (cannot happen). */
size_t ir_op_decode_kept(const ir_op *op, ir_arena *a, ir_attr *out, const char *only);
bool ir_op_probe_kept(const ir_op *op, const char *name);
/* One attr of op as the getters see it (attr.c): of an op whose attrs are
 * still bytes only that attr is decoded, into *out, its lists and strings
 * in *scratch (NULL otherwise; the caller frees it).  NULL when absent. */
const ir_attr *ir_op_read_one_attr(const ir_op *op, const char *name, ir_attr *out,
                                   ir_arena **scratch);
/* An op whose attrs are still bytes: all of them decoded into `out`
 * (n_attrs entries, lists and strings in `a`), the op left as it is. */
void ir_op_decode_attrs_into(const ir_op *op, ir_arena *a, ir_attr *out);
/* Gives op the attrs of p's ir_program_set_new_op_attrs it lacks (attr.c). */
void ir_op_add_new_op_attrs(ir_op *op, const ir_program *p);

/* op_shape.c: per op type, the most input slots, output slots and attrs
 * an op of that type has reached, so that ir_op_new and ir_op_clone give
 * new ops arrays of that size at once (see the file's comment). */
typedef struct {
    size_t n_inputs, n_outputs, n_attrs;
} ir_op_shape;
ir_op_shape ir_op_shape_of(const char *type);   /* zeros for a type not seen */
/* After a slot or attr was appended to op. */
void ir_op_shape_note(const ir_op *op);
/* After room for attrs was reserved ahead of need (attr.c's reserve_for):
 * later ops of the type get that room at once. */
void ir_op_shape_note_attr_room(const ir_op *op);
/* Counts slot and attr arrays that outgrew their room and were copied,
 * leaving the old array in the arena (a test's measure). */
void ir_op_array_moved(void);
size_t ir_op_array_copies(void);
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
