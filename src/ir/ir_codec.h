/* ir_codec.h - what the I/O layer (src/io) sees of the IR's insides, and
 * nothing else does: an op's encoding state, the full form of an attr as a
 * file holds it, the decoder of attrs still encoded, and the constructors
 * the readers use.  Only src/ir and src/io include it (src/ir through
 * ir_internal.h, its own private header); passes, commands and the
 * executor see none of it (issue 28 point 3). */
#ifndef PDT_IR_CODEC_H
#define PDT_IR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "ir.h"

/* ---- an op's encoding state ---- */

/* What src/ir and src/io keep of an op beside its public fields: whether
 * it is written as read, and its attrs while they are still bytes. */
typedef struct ir_op_enc {
    /* The program the op was made for: its arena while detached, and the
     * decoder of its encoded attrs (ir_program.attr_codec). */
    ir_program *program;
    /* The OpDesc's bytes as read (wire_len of them), when they are exactly
     * what the encoder writes for this op; dropped by ir_op_mark_dirty
     * unless they hold the op's attrs (below).  NULL: none. */
    const uint8_t *wire;
    /* The op_role attr of an op whose attrs are still bytes, decoded at
     * once (every pass asks every op for it); NULL if the bytes have none.
     * With role_set, the value set since (shared, attr.c). */
    const ir_attr *pending_role;
    /* The small parts live in the ir_op itself, in what was its padding
     * (ir.h: enc_*_), read and written as ir_enc_op(e)->enc_NAME_:
     * - wire_len: ops of 4 GiB or more keep no bytes.
     * - n_overlay: a dirty op whose attrs are bytes borrowed from another op
     *   (`wire` is then only their source, never written as this op) holds
     *   the attrs set on it since in op->attrs: n_overlay of them, room for
     *   cap_attrs.
     * - dirty: changed since read: written with slots and attrs sorted
     *   (Paddle's OpDesc::Flush), never as `wire`.  New ops are dirty.
     * - attrs_pending: the attrs are still bytes (in `wire`): op->attrs is
     *   NULL (or the overlay) while n_attrs counts them, and ir_op_attrs (or
     *   any ir_op_attr* call) decodes them.  Never with a BLOCK, BLOCKS, VAR
     *   or VARS attr among them (the reader decodes those ops at once).
     * - attrs_sorted: the kept attrs' names strictly increase (src/io), so
     *   that another op of the program may borrow them (ir_op_copy_attrs,
     *   attr.c).
     * - role_set: a dirty op whose attrs are still bytes, given an op_role
     *   since: the value is pending_role, not the bytes' op_role.
     * - slots_pending (ir.h): a clean op's slots are still bytes (in
     *   `wire`), decoded by ir_op_ins / ir_op_outs; ir_op_mark_dirty and
     *   every setter of slots decode them first, so a dirty op never has
     *   them pending. */
} ir_op_enc;

/* How every op is allocated (op.c), so that the state is found from the
 * op's pointer. */
typedef struct ir_op_box {
    ir_op op;
    ir_op_enc enc;
} ir_op_box;

/* The op's encoding state (writable: decoding attrs on demand is allowed
 * on a const op, as it changes no value). */
static inline ir_op_enc *ir_enc(const ir_op *op)
{
    return &((ir_op_box *)(uintptr_t)op)->enc;
}

/* The op an encoding state belongs to, writable (as ir_enc): where the
 * state's small parts are (ir_op.enc_*_). */
static inline ir_op *ir_enc_op(const ir_op_enc *e)
{
    return &((ir_op_box *)((uintptr_t)e - offsetof(ir_op_box, enc)))->op;
}

/* The bytes the op was read as (empty: none). */
static inline ir_bytes ir_op_wire(const ir_op *op)
{
    const ir_op_enc *e = ir_enc(op);
    return (ir_bytes){e->wire, ir_enc_op(e)->enc_wire_len_};
}

/* false when the op surely has no BLOCK, BLOCKS, VAR or VARS attr, known
 * without decoding its attrs (they are still bytes). */
static inline bool ir_op_may_name_blocks(const ir_op *op)
{
    return !op->enc_attrs_pending_;
}

/* ---- the decoder of attrs still encoded ---- */

/* Set by the reader on each program it makes with ops whose attrs are still
 * bytes (ir_program.attr_codec); attr.c calls it through the op's program.
 * `decode` writes the attrs the op's `wire` holds into `out` (all of them,
 * at most n_attrs, or with `only` the first of that name; lists and strings
 * in `a`), leaves the op as it is and returns how many it wrote (a
 * borrower's overlay and a role set since are attr.c's to merge); `probe`
 * tells, without decoding, whether the op has an attr of that name. */
typedef struct ir_attr_codec {
    size_t (*decode)(const ir_op *op, ir_arena *a, ir_attr *out, const char *only);
    bool (*probe)(const ir_op *op, const char *name);
    /* Builds the slots of an op whose slots are still bytes (ir.h's
     * enc_slots_pending_: n_inputs and n_outputs known, inputs_ and
     * outputs_ not built) from its `wire`, in arena a, names interned;
     * clears enc_slots_pending_.  The reader checked the bytes: it cannot
     * fail. */
    void (*slots)(ir_op *op, ir_arena *a);
} ir_attr_codec;

/* A process-wide copy of a plain INT attr (only `i` set, no `more`), the
 * same pointer for the same name and value; NULL for any other attr or
 * when the table (64 entries) is full.  For pending_role (attr.c). */
const ir_attr *ir_attr_shared(const ir_attr *a);
/* A borrower's overlay (attr.c): the attrs set on it since it borrowed
 * another op's kept attrs, *n of them (0 and NULL for any other op). */
const ir_attr *ir_op_overlay(const ir_op *op, size_t *n);

/* ---- what the readers build with ---- */

/* n as a 32-bit count; aborts past UINT32_MAX (the decoders refuse such
 * input, and no pass makes that many slots, args or attrs). */
uint32_t ir_count32(size_t n);
/* The arena an op allocates from, attached or not (op.c). */
ir_arena *ir_op_arena(const ir_op *op);
/* An op with no arrays reserved: for the reader and whole-program copies,
 * which size every array themselves (ir_op_new reserves; op.c). */
ir_op *ir_op_new_bare(ir_program *p, const char *type);
/* Appends a var without defaults (the reader fills every field). */
ir_var *ir_block_add_var_raw(ir_block *b, const char *name);
/* Gives v a copy of r in arena a when r holds anything, else no rare part
 * (the decoders fill a local ir_var_rare and hand it over). */
void ir_var_set_rare(ir_arena *a, ir_var *v, const ir_var_rare *r);

/* ---- attrs as a file holds them ---- */

/* An OpDesc.Attr (or VarDesc.Attr) as the file held it: every field with
 * its presence, whatever the type says.  The I/O layer reads into and
 * writes from this form; the IR keeps the compact ir_attr, with the full
 * form hung on `more` only when the file held fields of other kinds or
 * unknown fields (attr_value.c). */
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

#endif
