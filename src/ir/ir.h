/*
 * ir.h - the in-memory program IR every pass works on.
 *
 * Contracts:
 * - A program owns everything reachable from it (blocks, vars, ops, attrs,
 *   arrays) through one arena; nothing is freed before ir_program_free.
 *   Removing a var or op only unlinks it.
 * - Names are interned (ir_intern): two names are equal iff the pointers are.
 *   Every `const char *` name stored in the IR is interned; setters intern
 *   what they are given, so callers may pass any string.
 * - Var lookup by name is O(1) (a hash map per block).  Ops live in a plain
 *   array; bulk edits go through ir_block_splice so that inserting k ops
 *   costs O(n + k), not O(n * k).
 * - Any mutation of an op through this API marks it dirty.  Dirty ops are
 *   written with slots and attrs sorted by name (Paddle's OpDesc::Flush);
 *   clean ops keep the order they were read in, so an untouched program
 *   round-trips byte for byte.  An op read from a binary file keeps the
 *   bytes it came from while it is clean, and is written back as those
 *   bytes: code that edits an op's fields directly, not through this API,
 *   must call ir_op_mark_dirty, or its edit is lost.  (Any op may keep its
 *   attrs encoded: walk them with an ir_attr_iter or through ir_op_attrs.)
 * - Vars read from a file keep their order; vars added later are written
 *   after them, sorted by name (Paddle's BlockDesc::Flush).
 * - The IR never holds protobuf-c structs.  Fields the IR does not model are
 *   kept as opaque wire bytes (ir_bytes `unknown`) by the I/O layer.
 */
#ifndef PDT_IR_H
#define PDT_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- interned names -------------------------------------------------- */

/* Returns the canonical copy of s (NUL-terminated).  Lives until
 * ir_intern_shutdown.  NULL in, NULL out. */
const char *ir_intern(const char *s);
const char *ir_intern_n(const char *s, size_t n);
/* ir_intern_n for bytes the caller knows are not an interned name (its own
 * buffer, an input file's bytes): skips the test whether they are, a walk
 * over the name chunks that grows with the program.  Any s is correct. */
const char *ir_intern_bytes(const char *s, size_t n);
/* printf-style, result interned. */
const char *ir_internf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Room for n more names at once (a decoded block's vars, backward's grad
 * vars): the table is sized for them instead of growing step by step. */
void ir_intern_reserve(size_t n);
/* A hint: starts loading the table slot where s[0..n) will be looked up,
 * for a caller that knows its next names (the decoder, a few fields ahead).
 * A table of millions of names is a cache miss a lookup otherwise. */
void ir_intern_prefetch(const char *s, size_t n);
/* Frees the lookup table, not the names (interned pointers stay valid):
 * for when the passes are done and the outputs are written, which intern
 * nothing new as a rule.  The next ir_intern* call rebuilds it. */
void ir_intern_drop_table(void);
void ir_intern_shutdown(void);
/* The well-known names (names.def): IR_WK(op_role) is the interned
 * "op_role", a constant pointer into ir_wk_names, which the intern table
 * holds from its start (intern.c).  The enum gives each name's offset in
 * that block: "\0name\0name\0...", so IR_WK_a is 1 and each next one
 * starts after the previous name's NUL. */
enum {
    IR_WK_BEGIN_ = 0,
#define X(id, s) IR_WK_##id, IR_WK_END_##id = IR_WK_##id + (int)sizeof(s) - 1,
#include "ir/names.def"
#undef X
    IR_WK_SIZE_
};
extern const char ir_wk_names[IR_WK_SIZE_];
#define IR_WK(id) (ir_wk_names + IR_WK_##id)
/* IR_NAME("s"): ir_intern("s"), a hashed lookup, kept so code written
 * before names.def builds; hot code uses IR_WK. */
#define IR_NAME(lit) ir_intern(lit)

/* ---- arena ------------------------------------------------------------ */

typedef struct ir_arena ir_arena;
ir_arena *ir_arena_new(void);
void ir_arena_free(ir_arena *a);
void *ir_arena_alloc(ir_arena *a, size_t size);  /* zeroed, 8-aligned */
void *ir_arena_alloc_raw(ir_arena *a, size_t size); /* not zeroed */
void *ir_arena_dup(ir_arena *a, const void *p, size_t size);  /* plus a NUL after */
/* A copy with no NUL after it, for arrays that are not strings: a dup of
 * 16 bytes (two dims, two args) takes 16 bytes instead of 32. */
void *ir_arena_memdup(ir_arena *a, const void *p, size_t size);
/* A hint, never a limit: A will hold at least BYTES, so its chunks may be
 * whole 2 MB pages (fewer page faults) up to there (arena.c). */
void ir_arena_expect(ir_arena *a, size_t bytes);
size_t ir_arena_held(const ir_arena *a);   /* bytes of its chunks */
/* The next ir_program_new's arena will hold at least BYTES (a decoder
 * that knows its input's size and creates the program inside); 0 clears. */
void ir_program_expect_next(size_t bytes);

/* ---- small value types ------------------------------------------------ */

typedef struct { const uint8_t *data; size_t len; } ir_bytes;  /* arena-owned */

typedef enum {
    IR_ATTR_INT = 0, IR_ATTR_FLOAT = 1, IR_ATTR_STRING = 2, IR_ATTR_INTS = 3,
    IR_ATTR_FLOATS = 4, IR_ATTR_STRINGS = 5, IR_ATTR_BOOLEAN = 6,
    IR_ATTR_BOOLEANS = 7, IR_ATTR_BLOCK = 8, IR_ATTR_LONG = 9,
    IR_ATTR_BLOCKS = 10, IR_ATTR_LONGS = 11, IR_ATTR_FLOAT64S = 12,
    IR_ATTR_VAR = 13, IR_ATTR_VARS = 14, IR_ATTR_FLOAT64 = 15,
    IR_ATTR_SCALAR = 16, IR_ATTR_SCALARS = 17
} ir_attr_type;

/* VarType.Type values (framework.proto). */
enum {
    IR_BOOL = 0, IR_INT16 = 1, IR_INT32 = 2, IR_INT64 = 3, IR_FP16 = 4,
    IR_FP32 = 5, IR_FP64 = 6, IR_SIZE_T = 19, IR_UINT8 = 20, IR_INT8 = 21,
    IR_BF16 = 22, IR_COMPLEX64 = 23, IR_COMPLEX128 = 24,
    IR_LOD_TENSOR = 7, IR_SELECTED_ROWS = 8, IR_FEED_MINIBATCH = 9,
    IR_FETCH_LIST = 10, IR_STEP_SCOPES = 11, IR_LOD_RANK_TABLE = 12,
    IR_LOD_TENSOR_ARRAY = 13, IR_PLACE_LIST = 14, IR_READER = 15,
    IR_RAW = 17, IR_TUPLE = 18, IR_STRING_T = 25, IR_STRINGS_T = 26,
    IR_VOCAB = 27, IR_FEED_LIST = 28, IR_PSTRING = 29, IR_SPARSE_COO = 30,
    IR_SPARSE_CSR = 31
};

#include "role.h" /* IR_ROLE_*, ir_op_role */

typedef struct {            /* framework.proto Scalar */
    int type;               /* 1 BOOLEAN, 2 LONG, 3 FLOAT64, 4 COMPLEX128 */
    bool has_b, has_i, has_r, has_c;
    bool b;
    int64_t i;
    double r;
    double c_r, c_i;
    ir_bytes unknown;
} ir_scalar;

/* An attribute: its name, its type and the one value of that type, in 40
 * bytes (lists out of line).  Only the `has_*` flag of the type's own field
 * is ever set, and only the union member of that type is meaningful: read
 * `n_strings` only after checking `type == IR_ATTR_STRINGS`.  What else a
 * file's OpDesc.Attr held (fields of other kinds, unknown fields) is kept
 * by the I/O layer in `more`, so unusual files survive a round trip.
 * Passes use the typed setters/getters below. */
typedef struct ir_attr {
    const char *name;
    ir_attr_type type;
    bool has_i : 1, has_f : 1, has_s : 1, has_b : 1, has_block_idx : 1, has_l : 1,
         has_var_name : 1, has_float64 : 1, has_scalar : 1;
    union {
        int32_t i;
        float f;
        ir_bytes s;             /* STRING value; may hold any bytes */
        bool b;
        int32_t block_idx;
        int64_t l;
        const char *var_name;   /* interned */
        double float64;
        ir_scalar *scalar;
        struct { size_t n_ints; int32_t *ints; };
        struct { size_t n_floats; float *floats; };
        struct { size_t n_strings; ir_bytes *strings; };
        struct { size_t n_bools; bool *bools; };
        struct { size_t n_blocks_idx; int32_t *blocks_idx; };
        struct { size_t n_longs; int64_t *longs; };
        struct { size_t n_float64s; double *float64s; };
        struct { size_t n_vars_name; const char **vars_name; };  /* interned */
        struct { size_t n_scalars; ir_scalar *scalars; };
    };
    struct ir_attr_full *more;  /* NULL unless the file held more (ir_internal.h) */
} ir_attr;

/* One input or output slot: parameter -> arguments (24 bytes; the unknown
 * fields a file's slot held are the op's, ir_slot_unknown). */
typedef struct ir_slot {
    const char *name;           /* interned slot name, e.g. "X" */
    const char **args;          /* interned var names */
    uint32_t n_args, cap_args;
} ir_slot;

/* What almost no op has, out of line (ir_op.rare): the unknown fields of
 * its OpDesc and of its slots (OpDesc.Var), kept by the I/O layer so that
 * unusual files survive a round trip.  The slot arrays run parallel to the
 * op's inputs and outputs (kept so by op.c when slots come and go); a NULL
 * array or an entry past its cap holds nothing.  A pointer of its own in
 * each slot was 8 of 32 bytes: 56 MB at backward's 1M ops. */
typedef struct ir_op_rare {
    ir_bytes unknown;           /* the OpDesc's own */
    ir_bytes *in, *out;
    uint32_t cap_in, cap_out;
} ir_op_rare;

typedef struct ir_block ir_block;
typedef struct ir_program ir_program;

/* An op's fields passes read and write.  Every op also carries its
 * encoding state (dirty or not, attrs still encoded, the bytes it was read
 * as), which only src/ir and src/io see (ir_codec.h): ops are made by
 * ir_op_new and the reader, never by value.  80 bytes here (the small
 * parts of that state included), 104 with the rest (checked in op.c). */
typedef struct ir_op {
    const char *type;           /* interned */
    /* Not for passes: the slots (n_inputs / n_outputs of them) are read
     * through ir_op_ins / ir_op_outs below, and changed through them or
     * the ir_op_* setters (issue 33 point 2). */
    ir_slot *inputs_;
    ir_slot *outputs_;
    /* May be NULL, or hold only part of them, while the op's attrs are
     * still encoded (n_attrs counts them all): walk them with an
     * ir_attr_iter or take them from ir_op_attrs, never from here. */
    ir_attr *attrs;
    uint32_t n_inputs, cap_inputs;
    uint32_t n_outputs, cap_outputs;
    uint32_t n_attrs, cap_attrs;
    bool has_is_target : 1, is_target : 1;
    /* Made by a pass (ir_op_new, or ir_op_clone into another program; a
     * clone within one keeps it), not read from the input: the era step
     * (src/passes/era) rewrites only these. */
    bool made : 1;
    /* Not for passes: part of the op's encoding state (ir_codec.h), kept
     * in what was padding here so that an op box is 104 bytes, not 112
     * (issue 33: 8 MB at 1M ops).  Read and written by src/ir and src/io
     * only, through ir_codec.h's ir_enc_op. */
    bool enc_dirty_ : 1, enc_attrs_pending_ : 1, enc_attrs_sorted_ : 1, enc_role_set_ : 1;
    /* inputs_/outputs_ not built yet: the slots are still the op's bytes
     * (ir_op_ins decodes them on first use; ir_codec.h) */
    bool enc_slots_pending_ : 1;
    uint16_t enc_n_overlay_;
    uint32_t enc_wire_len_;
    ir_op_rare *rare;           /* NULL (most ops): read through ir_op_unknown */
    ir_block *block;            /* owner; NULL while detached */
} ir_op;

/* Not for passes: decodes the slots of an op read from a file that are
 * still bytes, and interns their names (attr_walk.c, through the reader's
 * ir_attr_codec).  Allowed on a const op, as it changes no value. */
void ir_op_load_slots_(const ir_op *op);

/* The op's input and output slots: n_inputs and n_outputs of them.  An op
 * read from a file and not yet asked keeps its slots as bytes, its
 * argument names not interned (issue 33 point 2); the first call decodes
 * both lists.  Writable (a pass that edits an arg in place marks the op
 * dirty itself). */
static inline ir_slot *ir_op_ins(const ir_op *op)
{
    if (op->enc_slots_pending_)
        ir_op_load_slots_(op);
    return op->inputs_;
}

static inline ir_slot *ir_op_outs(const ir_op *op)
{
    if (op->enc_slots_pending_)
        ir_op_load_slots_(op);
    return op->outputs_;
}

/* The tensor part of a VarType, wherever it sits in the message. */
typedef enum {
    IR_TD_NONE = 0, IR_TD_SELECTED_ROWS, IR_TD_LOD_TENSOR,
    IR_TD_TENSOR_ARRAY, IR_TD_STRING, IR_TD_STRINGS, IR_TD_VOCAB,
    IR_TD_SPARSE_COO, IR_TD_SPARSE_CSR
} ir_tensor_slot;

/* What almost no var has, out of line (ir_var.rare): VarType parts no pass
 * edits, as wire bytes re-emitted verbatim (the ReaderDesc and Tuple
 * sub-messages without tag), the unknown fields of VarType, TensorDesc,
 * LoD(Array)Desc and VarDesc, and VarDesc.attrs.  Read them through
 * ir_var_rare_of (never NULL), write them through ir_var_rare_mut. */
typedef struct ir_var_rare {
    bool has_reader, has_tuple;
    ir_bytes reader_raw, tuple_raw;
    ir_bytes type_unknown;
    ir_bytes tensor_unknown;    /* unknown fields of the TensorDesc */
    ir_bytes lod_unknown;       /* ... and of the LoDTensor(Array)Desc */
    size_t n_var_attrs;         /* VarDesc.attrs: name, type, i, s, ints */
    ir_attr *var_attrs;
    ir_bytes unknown;           /* VarDesc's own */
} ir_var_rare;

/* A var in 48 bytes (checked in ir.c): what every var has inline, the
 * rest behind `rare` (NULL for an ordinary var). */
typedef struct ir_var {
    const char *name;           /* interned */
    int64_t *dims;
    ir_var_rare *rare;          /* NULL unless the file or a pass set a rare part */
    int type;                   /* VarType.type, e.g. IR_LOD_TENSOR */
    int dtype;                  /* TensorDesc.data_type */
    uint32_t n_dims;
    int32_t lod_level;
    uint32_t order;             /* insertion sequence, for stable output */
    /* The tensor description passes read and write.  `tensor_slot` says
     * which VarType field holds it (IR_TD_NONE: none).  lod_level lives in
     * LoDTensorDesc / LoDTensorArrayDesc only. */
    ir_tensor_slot tensor_slot : 8;
    bool has_lod_level : 1;
    bool has_persistable : 1, persistable : 1;
    bool has_need_check_feed : 1, need_check_feed : 1;
    bool has_is_parameter : 1, is_parameter : 1;
    bool has_stop_gradient : 1, stop_gradient : 1;
    bool from_input : 1;        /* read from a file: keeps its position */
    bool removed : 1;
} ir_var;

struct ir_block {
    ir_program *program;
    int32_t idx;
    int32_t parent_idx;
    bool has_forward_block_idx;
    int32_t forward_block_idx;
    size_t n_ops, cap_ops;
    ir_op **ops;
    size_t n_vars, cap_vars;    /* insertion order; may contain removed */
    ir_var **vars;
    void *var_map;              /* name -> ir_var*, private to ir.c */
    ir_bytes unknown;
};

struct ir_program {
    ir_arena *arena;
    size_t n_blocks, cap_blocks;
    ir_block **blocks;
    bool has_version;
    int64_t version;
    bool version_has_value;     /* Version message present but empty? */
    ir_bytes version_unknown;
    bool has_op_version_map;
    ir_bytes op_version_map;    /* wire bytes of OpVersionMap */
    ir_bytes unknown;           /* e.g. retired fields 2 and 3 */
    void *input_bytes;          /* the file's bytes ops' `wire` point into, or NULL (freed with p) */
    void (*input_free)(void *); /* how input_bytes go (a mapped file's); NULL: free() */
    size_t var_seq;
    struct ir_scope *scope;     /* name lookup index, private to scope.c */
    size_t n_new_op_attrs;      /* ir_program_set_new_op_attrs */
    ir_attr *new_op_attrs;
    void *copy_notes;           /* ir_op_note_copy: op -> what its source had (clone.c) */
    /* How the ops src/io read with their attrs still encoded decode them
     * (set by the reader; NULL for a program no reader made).  ir_codec.h. */
    const struct ir_attr_codec *attr_codec;
};

/* ---- program and blocks ----------------------------------------------- */

ir_program *ir_program_new(void);               /* no blocks */
void ir_program_free(ir_program *p);
ir_program *ir_program_clone(const ir_program *p);
/* Appends a block with idx = n_blocks. */
ir_block *ir_program_add_block(ir_program *p, int32_t parent_idx);
ir_block *ir_program_block(const ir_program *p, int32_t idx); /* NULL if out of range */
/* Parent block, or NULL for block 0, a bad index or a self-loop. */
ir_block *ir_block_parent(const ir_block *b);

/* ---- vars ------------------------------------------------------------- */

/* The var named `name` in b itself (not ancestors), or NULL. */
ir_var *ir_block_find_var(const ir_block *b, const char *name);
/* Search b, then its ancestors; stops after n_blocks hops on a cycle.
 * Costs O(log depth), not the depth, on a program whose blocks sit at
 * their idx with parents before them (see scope.c): parent_idx and idx
 * must not change once a block is added (the reader and clone set idx
 * right after adding). */
ir_var *ir_block_find_var_recursive(const ir_block *b, const char *name);
/* A hint for a loop that looks up every arg of its ops in b's own var map
 * (a cache miss each at 1M ops): starts loading where op's args lie in it,
 * a few ops ahead of their lookups. */
void ir_block_prefetch_args(const ir_block *b, const ir_op *op);
/* Creates (or returns the existing) var `name` in b.  New vars are
 * LOD_TENSOR, FP32, no dims, has_persistable=true persistable=false. */
ir_var *ir_block_var(ir_block *b, const char *name);
/* Makes room for n more vars in b at once (passes that add many vars). */
void ir_block_reserve_vars(ir_block *b, size_t n);
/* Copies type, dtype, dims, lod_level and the flags of src under a new name. */
ir_var *ir_block_clone_var(ir_block *b, const ir_var *src, const char *name);
void ir_block_remove_var(ir_block *b, const char *name);
/* Number of names the block's var map holds.  Equal to the number of live
 * vars unless two live vars share a name (what the verifier looks for). */
size_t ir_block_n_var_names(const ir_block *b);
/* Live vars in insertion order (skips removed ones). Returns count. */
size_t ir_block_live_vars(const ir_block *b, ir_var ***out, ir_arena *scratch);
void ir_var_set_dims(ir_program *p, ir_var *v, const int64_t *dims, size_t n);
/* dst takes src's dims array itself (dims arrays are never written in
 * place): both vars must belong to the same program. */
void ir_var_share_dims(ir_var *dst, const ir_var *src);
/* Product of dims; -1 if any is < 0; -2 if the product overflows int64
 * (the input gate refuses such vars, so passes never see -2).  Any
 * negative dim is unknown: -1 (the batch) or what Paddle's compile-time
 * InferShape wrote when it multiplied -1 by a known extent (-1917). */
int64_t ir_var_numel(const ir_var *v);
/* Whether some dim is below -1 (see ir_var_numel). */
bool ir_var_has_dims_below_minus_one(const ir_var *v);
/* "[d0, d1, ...]" in buf (len bytes, NUL included; a shape too long for
 * it ends in "...]"), for messages that name a var's dims.  Returns buf. */
const char *ir_dims_text(const int64_t *dims, size_t n, char *buf, size_t len);
/* The var's rare parts; an all-empty one when it has none. */
const ir_var_rare *ir_var_rare_of(const ir_var *v);
/* The var's rare parts for writing, made (empty, in p's arena) if absent. */
ir_var_rare *ir_var_rare_mut(ir_program *p, ir_var *v);

/* ---- ops -------------------------------------------------------------- */

/* For a loop over b's ops that reads each op and little else (a scan for
 * an op type, a block attr): starts loading op k + 16 while op k is read.
 * At 1M ops the op structs are hundreds of MiB, and such a scan waited
 * for a cache miss at every op.  always_inline: GCC 12 deletes calls to a
 * plain inline function that only prefetches (see pmap_prefetch). */
static inline __attribute__((always_inline)) void ir_block_prefetch_op(const ir_block *b,
                                                                        size_t k)
{
    if (k + 16 < b->n_ops)
        __builtin_prefetch(b->ops[k + 16]);
}

ir_op *ir_op_new(ir_program *p, const char *type);   /* detached, dirty */
/* Attrs every op later made in p (ir_op_new) or copied into it
 * (ir_op_clone) starts with when it lacks them, as Python's
 * Operator.__init__ gives every op its framework attrs.  A pass that gives
 * every op it appends such attrs declares them here, so that each op is
 * built with them and its arrays are sized once (src/ir/op_shape.c).
 * Copied into p's arena; names need not be interned; n = 0 clears. */
void ir_program_set_new_op_attrs(ir_program *p, const ir_attr *attrs, size_t n);
ir_op *ir_op_clone(ir_program *p, const ir_op *src); /* detached, same dirtiness */
/* Notes the attrs Python's append_op(..., attrs=src.all_attrs()) gives a
 * copy (the pserver's copies): SRC's names now, or all when SRC is made
 * (Python would have given it check_attrs's defaults).  Kept in COPY's
 * program, not carried by ir_op_clone or ir_program_clone; read by the
 * era step (src/passes/era hash_order_dist.c).  ir_op_copy_had: 1 when the
 * source had NAME (or was made), 0 when not, -1 for an op not noted. */
void ir_op_note_copy(ir_op *copy, const ir_op *src);
int ir_op_copy_had(const ir_op *op, const char *name);
/* Marks op changed: it is written sorted, and not as the bytes it was read
 * from.  Every ir_op mutator calls it; a pass that writes an op's fields
 * directly must too.  ir_op_changed: so marked and not settled since (the
 * era step orders such an input op as the target Paddle re-flushes it). */
void ir_op_mark_dirty(ir_op *op);
bool ir_op_changed(const ir_op *op);
/* Puts a dirty op's slots and attrs in name order, the order the writer
 * would give them (OpDesc::Flush), and lets it be written as it now stands:
 * the output does not change, and the writer has nothing left to sort.
 * Does nothing to a clean op, or to one whose attrs are still encoded.
 * For a pass done with an op it made (backward settles each grad op while
 * it is in cache). */
void ir_op_settle(ir_op *op);
/* Like ir_op_settle, for any op: its slots in name order, its attrs in
 * ascending RANK(attr, ctx) and by name among equal ranks, then clean (no
 * bytes of its own): the era step's order of the target Paddle's Flush.
 * A later mutation makes it dirty, and sorted by name, again. */
void ir_op_settle_ranked(ir_op *op, int (*rank)(const ir_attr *attr, void *ctx), void *ctx);
/* true when both ops are unchanged since they were read from binary files,
 * as the same bytes: then they are equal in every field, and nothing needs
 * decoding to tell (pdtrans diff). */
bool ir_op_same_bytes(const ir_op *x, const ir_op *y);
ir_op *ir_block_append_op(ir_block *b, const char *type);
ir_op *ir_block_insert_op(ir_block *b, size_t pos, const char *type); /* O(n) */
void ir_block_remove_op(ir_block *b, size_t pos);                    /* O(n) */
/* Replaces ops[pos, pos+n_remove) with new_ops[0..n_new): O(n_ops + n_new). */
void ir_block_splice(ir_block *b, size_t pos, size_t n_remove,
                     ir_op *const *new_ops, size_t n_new);
/* Rebuilds the op array from `ops` (n of them, attached to b afterwards). */
void ir_block_set_ops(ir_block *b, ir_op *const *ops, size_t n);

/* Slots.  The getters return NULL / 0 when the slot is absent.  An absent
 * slot differs from a present empty one (grad makers rely on that). */
ir_slot *ir_op_input(const ir_op *op, const char *slot);
ir_slot *ir_op_output(const ir_op *op, const char *slot);
/* First argument of a slot, or NULL. */
const char *ir_op_input1(const ir_op *op, const char *slot);
const char *ir_op_output1(const ir_op *op, const char *slot);
/* OUT when op is a `sum` whose X args are all OUT.trainer_<i> (the
 * transpiler's per-trainer step counters, summed on a pserver), or NULL.
 * verify's numeric reference and its symbolic model find them alike. */
const char *ir_op_trainer_counter_sum(const ir_op *op);
/* Replaces the slot's arguments (creating the slot). */
void ir_op_set_input(ir_op *op, const char *slot, const char *const *args, size_t n);
void ir_op_set_output(ir_op *op, const char *slot, const char *const *args, size_t n);
void ir_op_set_input1(ir_op *op, const char *slot, const char *arg);
void ir_op_set_output1(ir_op *op, const char *slot, const char *arg);
void ir_op_add_input_arg(ir_op *op, const char *slot, const char *arg);
void ir_op_add_output_arg(ir_op *op, const char *slot, const char *arg);
void ir_op_remove_input(ir_op *op, const char *slot);
void ir_op_remove_output(ir_op *op, const char *slot);
/* The unknown fields the op's OpDesc, and its input or output slot i,
 * held in a file (ir_op_rare): empty for most.  The setters keep the bytes
 * given (in the op's arena, or living as long); empty bytes clear. */
ir_bytes ir_op_unknown(const ir_op *op);
ir_bytes ir_slot_unknown(const ir_op *op, bool out, size_t i);
void ir_op_set_unknown(ir_op *op, ir_bytes b);
void ir_op_set_slot_unknown(ir_op *op, bool out, size_t i, ir_bytes b);
/* Renames every occurrence of var `from` to `to` in the op's inputs and
 * outputs (and VAR/VARS attrs).  Marks the op dirty only if it changed. */
bool ir_op_rename_input(ir_op *op, const char *from, const char *to);
bool ir_op_rename_output(ir_op *op, const char *from, const char *to);
/* true if any input / output argument is `name`. */
bool ir_op_reads(const ir_op *op, const char *name);
bool ir_op_writes(const ir_op *op, const char *name);

/* Attributes.  Setters replace an existing attr of that name in place
 * (keeping its position) or append one; they mark the op dirty.
 * An op read from a file may hold its attrs still encoded: never index
 * op->attrs yourself.  Walk them with an ir_attr_iter, or take the array
 * from ir_op_attrs (n_attrs entries), which decodes them first. */
ir_attr *ir_op_attrs(const ir_op *op);

/* A walk over an op's attrs, in their order:
 *     ir_attr_iter it = ir_op_attr_iter(op);
 *     for (const ir_attr *at; (at = ir_attr_next(&it));) ...
 * ir_op_attr_iter yields every attr (decoding still-encoded ones first, as
 * ir_op_attrs does); ir_op_block_attr_iter yields only the BLOCK and BLOCKS
 * attrs, and decodes nothing (an op whose attrs are still encoded has none:
 * the reader decodes such ops at once), so walks for sub-blocks over every
 * op cost no decoding.  The op must not change during the walk. */
typedef struct ir_attr_iter {
    const ir_attr *attrs_;
    uint32_t i_, n_;
    bool blocks_only_;
} ir_attr_iter;
ir_attr_iter ir_op_attr_iter(const ir_op *op);
ir_attr_iter ir_op_block_attr_iter(const ir_op *op);
static inline const ir_attr *ir_attr_next(ir_attr_iter *it)
{
    while (it->i_ < it->n_) {
        const ir_attr *at = &it->attrs_[it->i_++];
        if (!it->blocks_only_ || at->type == IR_ATTR_BLOCK || at->type == IR_ATTR_BLOCKS)
            return at;
    }
    return NULL;
}
/* The op's attr `name` when it is a BLOCK or BLOCKS attr, else NULL;
 * decodes nothing (see ir_op_block_attr_iter). */
const ir_attr *ir_op_block_attr(const ir_op *op, const char *name);
ir_attr *ir_op_attr(const ir_op *op, const char *name);
bool ir_op_has_attr(const ir_op *op, const char *name);
void ir_op_remove_attr(ir_op *op, const char *name);
void ir_op_set_int(ir_op *op, const char *name, int32_t v);
void ir_op_set_long(ir_op *op, const char *name, int64_t v);
void ir_op_set_float(ir_op *op, const char *name, float v);
void ir_op_set_float64(ir_op *op, const char *name, double v);
void ir_op_set_bool(ir_op *op, const char *name, bool v);
void ir_op_set_string(ir_op *op, const char *name, const char *v);
void ir_op_set_block(ir_op *op, const char *name, int32_t block_idx);
void ir_op_set_ints(ir_op *op, const char *name, const int32_t *v, size_t n);
void ir_op_set_longs(ir_op *op, const char *name, const int64_t *v, size_t n);
void ir_op_set_floats(ir_op *op, const char *name, const float *v, size_t n);
void ir_op_set_bools(ir_op *op, const char *name, const bool *v, size_t n);
void ir_op_set_blocks(ir_op *op, const char *name, const int32_t *v, size_t n);
void ir_op_set_strings(ir_op *op, const char *name, const char *const *v, size_t n);
/* Copies an attr (any type) from another op, or from a detached value. */
void ir_op_copy_attr(ir_op *op, const ir_attr *src);
/* Copies every attr of src onto op (Paddle's SetAttrMap). */
void ir_op_copy_attrs(ir_op *op, const ir_op *src);
/* Copies src's attr `name` to op if src has it (true then), without
 * decoding src's other attrs when they are still bytes. */
bool ir_op_copy_attr_from(ir_op *op, const ir_op *src, const char *name);

/* Getters: return `dflt` when absent or of another kind.  INT, LONG,
 * BOOLEAN and BLOCK all read through ir_op_get_int. */
int64_t ir_op_get_int(const ir_op *op, const char *name, int64_t dflt);
double ir_op_get_float(const ir_op *op, const char *name, double dflt);
bool ir_op_get_bool(const ir_op *op, const char *name, bool dflt);
/* NUL-terminated, interned; NULL when absent. */
const char *ir_op_get_string(const ir_op *op, const char *name);
/* A STRINGS attr's values as interned names, in an array from `a` (NULL
 * and *n = 0 when absent or of another type). */
const char **ir_op_get_names(const ir_op *op, const char *name, size_t *n, ir_arena *a);

/* ---- whole-program edits ---------------------------------------------- */

/* Renames var `from` to `to` in block b and every block whose ancestor
 * chain reaches b: the VarDesc (if b declares it) and all op arguments. */
void ir_block_rename_var(ir_block *b, const char *from, const char *to);

/* Def-use index over one block, built on demand and dropped by the caller
 * after edits.  Lists op positions in ascending order. */
typedef struct ir_defuse ir_defuse;
ir_defuse *ir_defuse_build(const ir_block *b);
void ir_defuse_free(ir_defuse *d);
/* Positions of ops that write / read `name`; *n receives the count. */
const size_t *ir_defuse_writers(const ir_defuse *d, const char *name, size_t *n);
const size_t *ir_defuse_readers(const ir_defuse *d, const char *name, size_t *n);

/* Which blocks some op can run: block 0, and every block named by a
 * BLOCK/BLOCKS attr of an op in a reachable block.  Returns an array of
 * p->n_blocks flags (free it).  Iterative and linear in ops plus
 * attrs; out-of-range indexes are skipped. */
bool *ir_program_reachable_blocks(const ir_program *p);

/* The block tree as arrays (tree.c), built without recursion in time
 * linear in the number of blocks; walks over nested blocks use it instead
 * of following parent links from every block.  Positions, not stored idx. */
typedef struct ir_tree {
    size_t n;               /* p->n_blocks when built */
    int32_t *parent;        /* parent position; -1 for block 0 or a bad link */
    bool *rooted;           /* the parent chain reaches block 0 (no cycle) */
    size_t *depth;          /* rooted blocks: hops to block 0 */
    size_t *enter, *leave;  /* rooted blocks: preorder interval */
    size_t *order;          /* rooted blocks in preorder, children by index */
    size_t n_order;
    size_t *child_start;    /* children of b: children[child_start[b] ..  */
    size_t *children;       /*   child_start[b + 1]), rooted ones only */
} ir_tree;
ir_tree *ir_tree_build(const ir_program *p);
void ir_tree_free(ir_tree *t);
/* Block d is strictly below block a (both rooted). */
bool ir_tree_below(const ir_tree *t, size_t d, size_t a);

#endif
