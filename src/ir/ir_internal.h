/* ir_internal.h - helpers shared by the IR's own files and the I/O layer. */
#ifndef PDT_IR_INTERNAL_H
#define PDT_IR_INTERNAL_H

#include "ir.h"

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
/* n as a 32-bit count; aborts past UINT32_MAX (the decoders refuse such
 * input, and no pass makes that many slots, args or attrs). */
uint32_t ir_count32(size_t n);
ir_bytes ir_bytes_copy(ir_arena *a, ir_bytes b);
/* false when the op surely has no BLOCK, BLOCKS, VAR or VARS attr, known
 * without decoding its attrs (an op whose attrs are still bytes: the
 * reader decodes those with such an attr at once). */
static inline bool ir_op_may_name_blocks(const ir_op *op)
{
    return !op->attrs_pending;
}
/* The arena an op allocates from, attached or not (op.c). */
ir_arena *ir_op_arena(const ir_op *op);
/* An op with no arrays reserved: for the reader and whole-program copies,
 * which size every array themselves (ir_op_new reserves; op.c). */
ir_op *ir_op_new_bare(ir_program *p, const char *type);
/* The I/O layer's decoder of an op's pending attrs (attrs_pending):
 * `decode` writes the attrs its `wire` holds into `out` (all of them, at
 * most n_attrs, or with `only` the first of that name; lists and strings
 * in `a`), leaves the op as it is and returns how many it wrote (a
 * borrower's overlay and a role set since are attr.c's to merge); `probe`
 * tells, without decoding, whether the op has an attr of that name.
 * attr.c calls them (and sets op->attrs when an op's attrs are asked
 * for); pbdec_op.c sets them. */
void ir_op_set_attrs_loader(size_t (*decode)(const ir_op *op, ir_arena *a,
                                             ir_attr *out, const char *only),
                            bool (*probe)(const ir_op *op, const char *name));
/* A process-wide copy of a plain INT attr (only `i` set, no `more`), the
 * same pointer for the same name and value; NULL for any other attr or
 * when the table (64 entries) is full.  For pending_role (attr.c). */
const ir_attr *ir_attr_shared(const ir_attr *a);
/* An op whose attrs are still bytes: all of them decoded into `out`
 * (n_attrs entries, lists and strings in `a`), the op left as it is. */
void ir_op_decode_attrs_into(const ir_op *op, ir_arena *a, ir_attr *out);
/* A borrower's overlay (attr.c): the attrs set on it since it borrowed
 * another op's kept attrs, *n of them (0 and NULL for any other op). */
const ir_attr *ir_op_overlay(const ir_op *op, size_t *n);
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
void ir_op_shapes_reset(void);          /* by ir_intern_shutdown */
/* Counts slot and attr arrays that outgrew their room and were copied,
 * leaving the old array in the arena (a test's measure). */
void ir_op_array_moved(void);
size_t ir_op_array_copies(void);
/* Appends a var without defaults (the reader fills every field). */
ir_var *ir_block_add_var_raw(ir_block *b, const char *name);
void ir_var_copy_desc(ir_arena *a, ir_var *dst, const ir_var *src);
/* Gives v a copy of r in arena a when r holds anything, else no rare part
 * (the decoders fill a local ir_var_rare and hand it over). */
void ir_var_set_rare(ir_arena *a, ir_var *v, const ir_var_rare *r);
void ir_attr_copy(ir_arena *a, ir_attr *dst, const ir_attr *src);

/* An OpDesc.Attr (or VarDesc.Attr) as the file held it: every field with
 * its presence, whatever the type says.  The I/O layer reads into and
 * writes from this form; the IR keeps the compact ir_attr, with the full
 * form hung on `more` only when the file held fields of other kinds or
 * unknown fields (attr.c). */
typedef struct ir_attr_full {
    const char *name;
    ir_attr_type type;
    bool has_i, has_f, has_s, has_b, has_block_idx, has_l, has_var_name,
         has_float64, has_scalar;
    int32_t i;
    float f;
    ir_bytes s;
    bool b;
    int32_t block_idx;
    int64_t l;
    const char *var_name;
    double float64;
    ir_scalar scalar;
    size_t n_ints, n_floats, n_strings, n_bools, n_blocks_idx, n_longs,
           n_float64s, n_vars_name, n_scalars;
    int32_t *ints;
    float *floats;
    ir_bytes *strings;
    bool *bools;
    int32_t *blocks_idx;
    int64_t *longs;
    double *float64s;
    const char **vars_name;
    ir_scalar *scalars;
    ir_bytes unknown;
} ir_attr_full;
/* dst takes src's value of its type (sharing src's arrays, which must live
 * in arena a); when src holds anything else, a copy of src goes to `more`. */
void ir_attr_compact(ir_arena *a, ir_attr *dst, const ir_attr_full *src);
/* The full form of src: `more` (if any) with the typed value put over it. */
void ir_attr_widen(const ir_attr *src, ir_attr_full *dst);
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
