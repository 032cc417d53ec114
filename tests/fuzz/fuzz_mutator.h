/* fuzz_mutator.h - a structure-aware LLVMFuzzerCustomMutator for the
 * pipeline targets (fuzz_backward.c, fuzz_transpile_*.c, ...).
 *
 * Byte flips almost never get a real program past the reader, and the
 * passes' crashes hide behind a valid wire format with a bad structure: a
 * block whose idx is not its position, a sub_block attr that points to its
 * own block, an op moved before the op that writes its input.  So most
 * mutations decode the input (binary, or text through pbtext_parse) into
 * protobuf-c structs, change the structure, and re-encode it:
 *   drop, duplicate or move an op (also into another block); rename an
 *   argument (to another var, a @GRAD name, or ""); change an attr's type;
 *   repoint a BLOCK / BLOCKS attr; change a block's parent or idx; add a
 *   nested block; change a dim to an extreme; flip persistable or op_role.
 * One input in eight, and every input that does not decode or whose
 * mutation does not fit in MaxSize, gets libFuzzer's byte mutation.
 *
 * Decoded messages live in one bump list (fm_arena): ops and strings may
 * then be shared between places without double frees, and everything dies
 * together. */
#ifndef PDT_FUZZ_MUTATOR_H
#define PDT_FUZZ_MUTATOR_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "framework.pb-c.h"
#include "io/pbtext.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed);

typedef Paddle__Framework__Proto__ProgramDesc fm_program;
typedef Paddle__Framework__Proto__BlockDesc fm_block;
typedef Paddle__Framework__Proto__OpDesc fm_op;
typedef Paddle__Framework__Proto__OpDesc__Var fm_slot;
typedef Paddle__Framework__Proto__OpDesc__Attr fm_attr;

typedef struct {
    void **ptrs;
    size_t n, cap;
} fm_arena;

static void *fm_alloc(void *data, size_t size)
{
    fm_arena *a = data;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        void **q = realloc(a->ptrs, cap * sizeof *q);
        if (!q)
            return NULL;
        a->ptrs = q;
        a->cap = cap;
    }
    void *p = calloc(1, size ? size : 1);
    if (p)
        a->ptrs[a->n++] = p;
    return p;
}

static void fm_nofree(void *data, void *p)
{
    (void)data;
    (void)p;
}

static void fm_arena_free(fm_arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->ptrs[i]);
    free(a->ptrs);
}

typedef struct {
    uint64_t s;
} fm_rng;

static uint32_t fm_next(fm_rng *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33);
}

/* Uniform-ish in [0, n); 0 when n is 0. */
static size_t fm_below(fm_rng *r, size_t n)
{
    return n ? fm_next(r) % n : 0;
}

/* A block index around the valid range, including -1 and one past it. */
static int32_t fm_block_ref(fm_rng *r, const fm_program *p)
{
    return (int32_t)fm_below(r, p->n_blocks + 2) - 1;
}

static fm_program *fm_decode(fm_arena *a, const uint8_t *data, size_t size)
{
    ProtobufCAllocator alloc = {fm_alloc, fm_nofree, a};
    const ProtobufCMessageDescriptor *d = &paddle__framework__proto__program_desc__descriptor;
    ProtobufCMessage *m = protobuf_c_message_unpack(d, &alloc, size, data);
    if (m || size == 0)
        return (fm_program *)m;
    for (size_t i = 0; i < size && i < 4096; i++)
        if ((data[i] < 0x20 && data[i] != '\n' && data[i] != '\t' && data[i] != '\r') ||
            data[i] >= 0x7f)
            return NULL;
    ProtobufCMessage *t = pbtext_parse(d, "mutator", (const char *)data, size, NULL, 0);
    if (!t)
        return NULL;
    size_t n = protobuf_c_message_get_packed_size(t);
    uint8_t *bin = malloc(n ? n : 1);
    if (bin) {
        protobuf_c_message_pack(t, bin);
        m = protobuf_c_message_unpack(d, &alloc, n, bin);
        free(bin);
    }
    protobuf_c_message_free_unpacked(t, NULL);
    return (fm_program *)m;
}

/* Grows an array of pointers by one slot at `pos`; arena-owned. */
static bool fm_insert_ptr(fm_arena *a, void ***arr, size_t *n, size_t pos, void *item)
{
    void **q = fm_alloc(a, (*n + 1) * sizeof *q);
    if (!q)
        return false;
    if (*n)
        memcpy(q, *arr, *n * sizeof *q);
    memmove(q + pos + 1, q + pos, (*n - pos) * sizeof *q);
    q[pos] = item;
    *arr = q;
    (*n)++;
    return true;
}

static fm_block *fm_some_block(fm_rng *r, fm_program *p, bool with_ops)
{
    if (!p->n_blocks)
        return NULL;
    for (int tries = 0; tries < 8; tries++) {
        fm_block *b = p->blocks[fm_below(r, p->n_blocks)];
        if (!with_ops || b->n_ops)
            return b;
    }
    return NULL;
}

static fm_op *fm_some_op(fm_rng *r, fm_program *p)
{
    fm_block *b = fm_some_block(r, p, true);
    return b ? b->ops[fm_below(r, b->n_ops)] : NULL;
}

static char *fm_some_var_name(fm_rng *r, fm_program *p, fm_arena *a)
{
    fm_block *b = fm_some_block(r, p, false);
    switch (fm_below(r, 4)) {
    case 0:
        return "";
    case 1: {
        fm_op *op = fm_some_op(r, p);
        if (op && op->n_outputs && op->outputs[0]->n_arguments)
            return op->outputs[0]->arguments[0];
        break;
    }
    case 2:
        if (b && b->n_vars) {
            const char *v = b->vars[fm_below(r, b->n_vars)]->name;
            size_t n = strlen(v ? v : "");
            char *g = fm_alloc(a, n + 6);
            if (g)
                snprintf(g, n + 6, "%s@GRAD", v ? v : "");
            return g ? g : "";
        }
        break;
    default:
        break;
    }
    return b && b->n_vars ? b->vars[fm_below(r, b->n_vars)]->name : "";
}

static fm_attr *fm_some_attr(fm_rng *r, fm_program *p, bool want_block)
{
    for (int tries = 0; tries < 32; tries++) {
        fm_op *op = fm_some_op(r, p);
        if (!op || !op->n_attrs)
            continue;
        fm_attr *at = op->attrs[fm_below(r, op->n_attrs)];
        if (!want_block || at->type == PADDLE__FRAMEWORK__PROTO__ATTR_TYPE__BLOCK ||
            at->type == PADDLE__FRAMEWORK__PROTO__ATTR_TYPE__BLOCKS)
            return at;
    }
    return NULL;
}

static void fm_move_op(fm_rng *r, fm_program *p, fm_arena *a, bool keep_original)
{
    fm_block *from = fm_some_block(r, p, true);
    if (!from)
        return;
    size_t i = fm_below(r, from->n_ops);
    fm_op *op = from->ops[i];
    if (!keep_original) {
        memmove(from->ops + i, from->ops + i + 1, (from->n_ops - i - 1) * sizeof *from->ops);
        from->n_ops--;
    }
    fm_block *to = fm_below(r, 4) ? from : fm_some_block(r, p, false);
    fm_insert_ptr(a, (void ***)&to->ops, &to->n_ops, fm_below(r, to->n_ops + 1), op);
}

static void fm_rename_arg(fm_rng *r, fm_program *p, fm_arena *a)
{
    fm_op *op = fm_some_op(r, p);
    if (!op)
        return;
    bool out = fm_below(r, 2);
    size_t n = out ? op->n_outputs : op->n_inputs;
    if (!n)
        return;
    fm_slot *s = (out ? op->outputs : op->inputs)[fm_below(r, n)];
    if (!s->n_arguments)
        return;
    s->arguments[fm_below(r, s->n_arguments)] = fm_some_var_name(r, p, a);
}

static void fm_retype_attr(fm_rng *r, fm_program *p)
{
    fm_attr *at = fm_some_attr(r, p, false);
    if (!at)
        return;
    at->type = (Paddle__Framework__Proto__AttrType)fm_below(r, 18);
    if (at->type == PADDLE__FRAMEWORK__PROTO__ATTR_TYPE__BLOCK) {
        at->has_block_idx = true;
        at->block_idx = fm_block_ref(r, p);
    }
}

static void fm_repoint_block(fm_rng *r, fm_program *p, fm_arena *a)
{
    fm_attr *at = fm_some_attr(r, p, true);
    if (!at) {
        /* No BLOCK attr yet: give some op a sub_block. */
        fm_op *op = fm_some_op(r, p);
        if (!op)
            return;
        at = fm_alloc(a, sizeof *at);
        if (!at)
            return;
        paddle__framework__proto__op_desc__attr__init(at);
        at->name = "sub_block";
        at->type = PADDLE__FRAMEWORK__PROTO__ATTR_TYPE__BLOCK;
        if (!fm_insert_ptr(a, (void ***)&op->attrs, &op->n_attrs, op->n_attrs, at))
            return;
    }
    if (at->type == PADDLE__FRAMEWORK__PROTO__ATTR_TYPE__BLOCKS && at->n_blocks_idx) {
        at->blocks_idx[fm_below(r, at->n_blocks_idx)] = fm_block_ref(r, p);
        return;
    }
    at->has_block_idx = true;
    at->block_idx = fm_block_ref(r, p);
}

static void fm_add_block(fm_rng *r, fm_program *p, fm_arena *a)
{
    fm_block *b = fm_alloc(a, sizeof *b);
    if (!b)
        return;
    paddle__framework__proto__block_desc__init(b);
    b->idx = (int32_t)p->n_blocks;
    b->parent_idx = p->n_blocks ? (int32_t)fm_below(r, p->n_blocks) : -1;
    fm_insert_ptr(a, (void ***)&p->blocks, &p->n_blocks, p->n_blocks, b);
}

static void fm_extreme_dim(fm_rng *r, fm_program *p)
{
    static const int64_t extremes[] = {-1, 0, 1, 3, (int64_t)1 << 31, (int64_t)1 << 40,
                                       INT64_MAX, INT64_MIN};
    fm_block *b = fm_some_block(r, p, false);
    if (!b || !b->n_vars)
        return;
    Paddle__Framework__Proto__VarDesc *v = b->vars[fm_below(r, b->n_vars)];
    if (fm_below(r, 3) == 0) {
        v->has_persistable = true;
        v->persistable = !v->persistable;
        return;
    }
    if (!v->type || !v->type->lod_tensor || !v->type->lod_tensor->tensor)
        return;
    Paddle__Framework__Proto__VarType__TensorDesc *t = v->type->lod_tensor->tensor;
    if (t->n_dims)
        t->dims[fm_below(r, t->n_dims)] = extremes[fm_below(r, sizeof extremes / sizeof *extremes)];
}

static void fm_flip_role(fm_rng *r, fm_program *p)
{
    static const int32_t roles[] = {0, 1, 2, 4, 8, 16, 256, 257, 4096, -1};
    for (int tries = 0; tries < 16; tries++) {
        fm_op *op = fm_some_op(r, p);
        if (!op)
            return;
        for (size_t i = 0; i < op->n_attrs; i++)
            if (op->attrs[i]->name && strcmp(op->attrs[i]->name, "op_role") == 0) {
                op->attrs[i]->has_i = true;
                op->attrs[i]->i = roles[fm_below(r, sizeof roles / sizeof *roles)];
                return;
            }
    }
}

static void fm_mutate_once(fm_rng *r, fm_program *p, fm_arena *a)
{
    fm_block *b;
    switch (fm_below(r, 12)) {
    case 0: fm_move_op(r, p, a, false); break;          /* move */
    case 1: fm_move_op(r, p, a, true); break;           /* duplicate */
    case 2:                                             /* drop */
        if ((b = fm_some_block(r, p, true)) != NULL) {
            size_t i = fm_below(r, b->n_ops);
            memmove(b->ops + i, b->ops + i + 1, (b->n_ops - i - 1) * sizeof *b->ops);
            b->n_ops--;
        }
        break;
    case 3:
    case 4: fm_rename_arg(r, p, a); break;
    case 5: fm_retype_attr(r, p); break;
    case 6: fm_repoint_block(r, p, a); break;
    case 7:                                             /* parent */
        if ((b = fm_some_block(r, p, false)) != NULL)
            b->parent_idx = fm_block_ref(r, p);
        break;
    case 8:                                             /* idx */
        if ((b = fm_some_block(r, p, false)) != NULL)
            b->idx = fm_block_ref(r, p);
        break;
    case 9: fm_add_block(r, p, a); break;
    case 10: fm_extreme_dim(r, p); break;
    default: fm_flip_role(r, p); break;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                               unsigned int seed)
{
    fm_rng r = {seed * 2654435761ULL + 1};
    if (fm_below(&r, 8) == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    fm_arena a = {NULL, 0, 0};
    fm_program *p = fm_decode(&a, data, size);
    size_t out = 0;
    if (p) {
        size_t rounds = 1 + fm_below(&r, 3);
        for (size_t i = 0; i < rounds; i++)
            fm_mutate_once(&r, p, &a);
        size_t n = protobuf_c_message_get_packed_size(&p->base);
        if (n <= max_size)
            out = protobuf_c_message_pack(&p->base, data);
    }
    fm_arena_free(&a);
    return out ? out : LLVMFuzzerMutate(data, size, max_size);
}

#endif
