/* attr.c - the compact attribute value, its full wire-shaped form, and the
 * op attribute API (setters replace in place, getters read by type). */
#include "ir.h"

#include <string.h>

#include "ir_internal.h"
#include "util.h"

/* Bit k: the file held the field that an attr of type k uses (the
 * AttrType numbers name the fields one to one). */
static uint32_t kinds_present(const ir_attr_full *f)
{
    uint32_t m = 0;
#define K(t, cond) if (cond) m |= 1u << (t)
    K(IR_ATTR_INT, f->has_i);
    K(IR_ATTR_FLOAT, f->has_f);
    K(IR_ATTR_STRING, f->has_s);
    K(IR_ATTR_INTS, f->n_ints);
    K(IR_ATTR_FLOATS, f->n_floats);
    K(IR_ATTR_STRINGS, f->n_strings);
    K(IR_ATTR_BOOLEAN, f->has_b);
    K(IR_ATTR_BOOLEANS, f->n_bools);
    K(IR_ATTR_BLOCK, f->has_block_idx);
    K(IR_ATTR_LONG, f->has_l);
    K(IR_ATTR_BLOCKS, f->n_blocks_idx);
    K(IR_ATTR_LONGS, f->n_longs);
    K(IR_ATTR_FLOAT64S, f->n_float64s);
    K(IR_ATTR_VAR, f->has_var_name);
    K(IR_ATTR_VARS, f->n_vars_name);
    K(IR_ATTR_FLOAT64, f->has_float64);
    K(IR_ATTR_SCALAR, f->has_scalar);
    K(IR_ATTR_SCALARS, f->n_scalars);
#undef K
    return m;
}

/* Moves the value of the attr's own type between the two forms; `to_full`
 * picks the direction.  The scalar is the one value kept by pointer. */
static void move_typed(ir_arena *a, ir_attr *c, ir_attr_full *f, bool to_full)
{
#define V(flag, field) \
    if (to_full) { f->flag = c->flag; f->field = c->field; } \
    else { c->flag = f->flag; c->field = f->field; } break
#define L(count, field) \
    if (to_full) { f->count = c->count; f->field = c->field; } \
    else { c->count = f->count; c->field = f->field; } break
    switch (c->type) {
    case IR_ATTR_INT: V(has_i, i);
    case IR_ATTR_FLOAT: V(has_f, f);
    case IR_ATTR_STRING: V(has_s, s);
    case IR_ATTR_INTS: L(n_ints, ints);
    case IR_ATTR_FLOATS: L(n_floats, floats);
    case IR_ATTR_STRINGS: L(n_strings, strings);
    case IR_ATTR_BOOLEAN: V(has_b, b);
    case IR_ATTR_BOOLEANS: L(n_bools, bools);
    case IR_ATTR_BLOCK: V(has_block_idx, block_idx);
    case IR_ATTR_LONG: V(has_l, l);
    case IR_ATTR_BLOCKS: L(n_blocks_idx, blocks_idx);
    case IR_ATTR_LONGS: L(n_longs, longs);
    case IR_ATTR_FLOAT64S: L(n_float64s, float64s);
    case IR_ATTR_VAR: V(has_var_name, var_name);
    case IR_ATTR_VARS: L(n_vars_name, vars_name);
    case IR_ATTR_FLOAT64: V(has_float64, float64);
    case IR_ATTR_SCALARS: L(n_scalars, scalars);
    case IR_ATTR_SCALAR:
        if (to_full) {
            f->has_scalar = c->has_scalar;
            if (c->has_scalar)
                f->scalar = *c->scalar;
        } else if (f->has_scalar) {
            c->has_scalar = true;
            c->scalar = ir_arena_dup(a, &f->scalar, sizeof f->scalar);
        }
        break;
    }
#undef V
#undef L
}

void ir_attr_compact(ir_arena *a, ir_attr *dst, const ir_attr_full *src)
{
    memset(dst, 0, sizeof *dst);
    dst->name = src->name;
    dst->type = src->type;
    move_typed(a, dst, (ir_attr_full *)(uintptr_t)src, false);
    uint32_t own = (unsigned)src->type < 32 ? 1u << src->type : 0;
    if ((kinds_present(src) & ~own) || src->unknown.len)
        dst->more = ir_arena_dup(a, src, sizeof *src);
}

void ir_attr_widen(const ir_attr *src, ir_attr_full *dst)
{
    if (src->more)
        *dst = *src->more;
    else
        memset(dst, 0, sizeof *dst);
    dst->name = src->name;
    dst->type = src->type;
    move_typed(NULL, (ir_attr *)(uintptr_t)src, dst, true);
}

static ir_scalar *scalars_copy(ir_arena *a, const ir_scalar *s, size_t n)
{
    if (!n)
        return NULL;
    ir_scalar *r = ir_arena_dup(a, s, n * sizeof *s);
    for (size_t i = 0; i < n; i++)
        r[i].unknown = ir_bytes_copy(a, s[i].unknown);
    return r;
}

static ir_bytes *strings_copy(ir_arena *a, const ir_bytes *s, size_t n)
{
    if (!n)
        return NULL;
    ir_bytes *r = ir_arena_alloc_raw(a, n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = ir_bytes_copy(a, s[i]);
    return r;
}

#define DUP(dst, src, f, n) \
    (dst)->f = (src)->n ? ir_arena_memdup(a, (src)->f, (src)->n * sizeof *(src)->f) : NULL

static ir_attr_full *full_copy(ir_arena *a, const ir_attr_full *src)
{
    ir_attr_full *dst = ir_arena_dup(a, src, sizeof *src);
    DUP(dst, src, ints, n_ints);
    DUP(dst, src, floats, n_floats);
    DUP(dst, src, bools, n_bools);
    DUP(dst, src, blocks_idx, n_blocks_idx);
    DUP(dst, src, longs, n_longs);
    DUP(dst, src, float64s, n_float64s);
    DUP(dst, src, vars_name, n_vars_name);
    dst->strings = strings_copy(a, src->strings, src->n_strings);
    dst->s = ir_bytes_copy(a, src->s);
    dst->scalar.unknown = ir_bytes_copy(a, src->scalar.unknown);
    dst->scalars = scalars_copy(a, src->scalars, src->n_scalars);
    dst->unknown = ir_bytes_copy(a, src->unknown);
    return dst;
}

void ir_attr_copy(ir_arena *a, ir_attr *dst, const ir_attr *src)
{
    *dst = *src;
    switch (src->type) {
    case IR_ATTR_STRING: dst->s = ir_bytes_copy(a, src->s); break;
    case IR_ATTR_INTS: DUP(dst, src, ints, n_ints); break;
    case IR_ATTR_FLOATS: DUP(dst, src, floats, n_floats); break;
    case IR_ATTR_STRINGS: dst->strings = strings_copy(a, src->strings, src->n_strings); break;
    case IR_ATTR_BOOLEANS: DUP(dst, src, bools, n_bools); break;
    case IR_ATTR_BLOCKS: DUP(dst, src, blocks_idx, n_blocks_idx); break;
    case IR_ATTR_LONGS: DUP(dst, src, longs, n_longs); break;
    case IR_ATTR_FLOAT64S: DUP(dst, src, float64s, n_float64s); break;
    case IR_ATTR_VARS: DUP(dst, src, vars_name, n_vars_name); break;
    case IR_ATTR_SCALARS: dst->scalars = scalars_copy(a, src->scalars, src->n_scalars); break;
    case IR_ATTR_SCALAR:
        if (src->has_scalar)
            dst->scalar = scalars_copy(a, src->scalar, 1);
        break;
    default: break;
    }
    if (src->more)
        dst->more = full_copy(a, src->more);
}
#undef DUP

/* ---- the op attribute API ---- */

static size_t (*attrs_decoder)(const ir_op *op, ir_arena *a, ir_attr *out,
                               const char *only);
static bool (*attrs_probe)(const ir_op *op, const char *name);

void ir_op_set_attrs_loader(size_t (*decode)(const ir_op *op, ir_arena *a, ir_attr *out,
                                             const char *only),
                            bool (*probe)(const ir_op *op, const char *name))
{
    attrs_decoder = decode;
    attrs_probe = probe;
}

/* Decoding pending attrs changes no value, so it is allowed on a const op. */
static void load_attrs(const ir_op *op)
{
    if (!op->attrs_pending)
        return;
    ir_op *w = (ir_op *)(uintptr_t)op;
    ir_arena *a = ir_op_arena(w);
    ir_attr *attrs = ir_arena_alloc(a, w->n_attrs * sizeof *attrs);
    attrs_decoder(w, a, attrs, NULL);
    w->attrs = attrs;
    w->cap_attrs = w->n_attrs;
    w->attrs_pending = false;
    w->pending_role = NULL;
}

ir_attr *ir_op_attrs(const ir_op *op)
{
    load_attrs(op);
    return op->attrs;
}

bool ir_op_may_name_blocks(const ir_op *op)
{
    return !op->attrs_pending;
}

/* Ops whose attrs stay bytes keep their op_role decoded (pending_role):
 * an ir_attr of 40 bytes per op (7 MiB at 100k ops), though a program has
 * a handful of values.  A plain INT attr (only `i` set, nothing more kept)
 * is shared instead: one per name and value for the process, dropped with
 * the intern table whose names they hold.  Nothing writes through them:
 * every setter decodes the op's attrs first, which drops pending_role. */
enum { MAX_SHARED = 64 };
static ir_attr shared[MAX_SHARED];
static size_t n_shared;
static unsigned shared_generation;

const ir_attr *ir_attr_shared(const ir_attr *a)
{
    if (a->type != IR_ATTR_INT || a->more || !a->has_i || a->has_f || a->has_s || a->has_b ||
        a->has_block_idx || a->has_l || a->has_var_name || a->has_float64 || a->has_scalar)
        return NULL;
    if (shared_generation != ir_intern_generation()) {
        n_shared = 0;
        shared_generation = ir_intern_generation();
    }
    for (size_t k = 0; k < n_shared; k++)
        if (shared[k].name == a->name && shared[k].i == a->i)
            return &shared[k];
    if (n_shared == MAX_SHARED)
        return NULL;
    shared[n_shared] = *a;
    return &shared[n_shared++];
}

/* op_role of an op whose attrs are still bytes: read without decoding them
 * (passes ask every op for it).  The pointer is not into op->attrs. */
static bool pending_role(const ir_op *op, const char *name, ir_attr **out)
{
    if (!op->attrs_pending)
        return false;
    const char *role = IR_NAME("op_role");
    if (name != role && (ir_is_interned(name) || strcmp(name, role) != 0))
        return false;
    *out = (ir_attr *)(uintptr_t)op->pending_role;
    return true;
}

ir_attr *ir_op_attr(const ir_op *op, const char *name)
{
    ir_attr *role;
    if (pending_role(op, name, &role))
        return role;
    /* Passes ask every op for attrs few have: no need to decode them all. */
    if (op->attrs_pending && !attrs_probe(op, name))
        return NULL;
    load_attrs(op);
    for (size_t i = 0; i < op->n_attrs; i++)
        if (op->attrs[i].name == name)
            return &op->attrs[i];
    if (!op->n_attrs || ir_is_interned(name))
        return NULL;
    for (size_t i = 0; i < op->n_attrs; i++)
        if (strcmp(op->attrs[i].name, name) == 0)
            return &op->attrs[i];
    return NULL;
}

bool ir_op_has_attr(const ir_op *op, const char *name)
{
    return ir_op_attr(op, name) != NULL;
}

/* The getters' view of one attr.  Of an op whose attrs are still bytes,
 * only that attr is decoded, into *out with its lists and strings in
 * *scratch (the caller frees it): passes read one attr of every op
 * (find_optimize's is_clip_op reads op_namescope), and decoding them all
 * would keep every op's attrs twice, bytes and structs. */
static const ir_attr *read_one(const ir_op *op, const char *name, ir_attr *out,
                               ir_arena **scratch)
{
    ir_attr *role;
    *scratch = NULL;
    if (pending_role(op, name, &role))
        return role;
    if (!op->attrs_pending)
        return ir_op_attr(op, name);
    if (!attrs_probe(op, name))
        return NULL;
    *scratch = ir_arena_new();
    return attrs_decoder(op, *scratch, out, name) == 1 ? out : NULL;
}

void ir_op_remove_attr(ir_op *op, const char *name)
{
    load_attrs(op);
    ir_attr *at = ir_op_attr(op, name);
    if (!at)
        return;
    size_t i = (size_t)(at - op->attrs);
    memmove(op->attrs + i, op->attrs + i + 1, (op->n_attrs - i - 1) * sizeof *at);
    op->n_attrs--;
    ir_op_mark_dirty(op);
}

/* A cleared attr of the given name and type, in place or appended. */
static ir_attr *fresh_attr(ir_op *op, const char *name, ir_attr_type type)
{
    load_attrs(op);
    ir_attr *at = ir_op_attr(op, name);
    if (!at) {
        ir_attr *old = op->attrs;
        op->attrs = ir_grow32(ir_op_arena(op), op->attrs, sizeof *op->attrs,
                              op->n_attrs, &op->cap_attrs, (size_t)op->n_attrs + 1);
        if (old && op->attrs != old)
            ir_op_array_moved();
        at = &op->attrs[op->n_attrs++];
        ir_op_shape_note(op);
    }
    memset(at, 0, sizeof *at);
    at->name = ir_intern(name);
    at->type = type;
    ir_op_mark_dirty(op);
    return at;
}

void ir_op_set_int(ir_op *op, const char *name, int32_t v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_INT);
    at->has_i = true;
    at->i = v;
}

void ir_op_set_long(ir_op *op, const char *name, int64_t v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_LONG);
    at->has_l = true;
    at->l = v;
}

void ir_op_set_float(ir_op *op, const char *name, float v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_FLOAT);
    at->has_f = true;
    at->f = v;
}

void ir_op_set_float64(ir_op *op, const char *name, double v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_FLOAT64);
    at->has_float64 = true;
    at->float64 = v;
}

void ir_op_set_bool(ir_op *op, const char *name, bool v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_BOOLEAN);
    at->has_b = true;
    at->b = v;
}

void ir_op_set_string(ir_op *op, const char *name, const char *v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_STRING);
    at->has_s = true;
    at->s.len = strlen(v);
    at->s.data = ir_arena_dup(ir_op_arena(op), v, at->s.len);
}

void ir_op_set_block(ir_op *op, const char *name, int32_t block_idx)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_BLOCK);
    at->has_block_idx = true;
    at->block_idx = block_idx;
}

#define LIST_SETTER(fn, T, kind, field, count)                               \
    void fn(ir_op *op, const char *name, const T *v, size_t n)               \
    {                                                                        \
        ir_attr *at = fresh_attr(op, name, kind);                            \
        at->count = n;                                                       \
        at->field = n ? ir_arena_memdup(ir_op_arena(op), v, n * sizeof *v) : NULL; \
    }
LIST_SETTER(ir_op_set_ints, int32_t, IR_ATTR_INTS, ints, n_ints)
LIST_SETTER(ir_op_set_longs, int64_t, IR_ATTR_LONGS, longs, n_longs)
LIST_SETTER(ir_op_set_floats, float, IR_ATTR_FLOATS, floats, n_floats)
LIST_SETTER(ir_op_set_bools, bool, IR_ATTR_BOOLEANS, bools, n_bools)
LIST_SETTER(ir_op_set_blocks, int32_t, IR_ATTR_BLOCKS, blocks_idx, n_blocks_idx)
#undef LIST_SETTER

void ir_op_set_strings(ir_op *op, const char *name, const char *const *v, size_t n)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_STRINGS);
    ir_arena *a = ir_op_arena(op);
    at->n_strings = n;
    at->strings = n ? ir_arena_alloc(a, n * sizeof *at->strings) : NULL;
    for (size_t i = 0; i < n; i++) {
        at->strings[i].len = strlen(v[i]);
        at->strings[i].data = ir_arena_dup(a, v[i], at->strings[i].len);
    }
}

void ir_op_copy_attr(ir_op *op, const ir_attr *src)
{
    ir_attr *at = fresh_attr(op, src->name, src->type);
    ir_attr_copy(ir_op_arena(op), at, src);
}

/* Room in op for the attrs of `from` it lacks, and for op_role_var when
 * neither has it (the backward pass adds it to the last writer of each
 * grad after every grad op exists, when the array is no longer at the
 * arena's top): attrs are large, and growing by doubling leaves copies. */
static void reserve_for(ir_op *op, const ir_attr *from, size_t n)
{
    const char *role_var = IR_NAME("op_role_var");
    size_t need = op->n_attrs, i, k;
    bool has_role_var = false;
    for (i = 0; i < n; i++) {
        for (k = 0; k < op->n_attrs && op->attrs[k].name != from[i].name; k++)
            ;
        need += k == op->n_attrs;
        has_role_var |= from[i].name == role_var;
    }
    for (k = 0; k < op->n_attrs; k++)
        has_role_var |= op->attrs[k].name == role_var;
    need += !has_role_var;
    if (need <= op->cap_attrs)
        return;
    ir_attr *attrs = ir_arena_alloc_raw(ir_op_arena(op), need * sizeof *attrs);
    if (op->n_attrs)
        memcpy(attrs, op->attrs, op->n_attrs * sizeof *attrs);
    if (op->attrs)
        ir_op_array_moved();
    op->attrs = attrs;
    op->cap_attrs = ir_count32(need);
    ir_op_shape_note_attr_room(op);
}

static void copy_all(ir_op *op, const ir_attr *from, size_t n)
{
    reserve_for(op, from, n);
    for (size_t i = 0; i < n; i++)
        ir_op_copy_attr(op, &from[i]);
}

void ir_op_copy_attrs(ir_op *op, const ir_op *src)
{
    load_attrs(op);
    if (!src->attrs_pending) {
        copy_all(op, src->attrs, src->n_attrs);
        return;
    }
    /* Decoded into src, its attrs would be held twice (bytes and structs)
     * for the rest of the run: the grad makers copy every forward op's.
     * Decoded straight into op's arena instead, they need no second copy. */
    size_t n = src->n_attrs;
    ir_attr stackbuf[16];
    ir_attr *tmp = n <= 16 ? stackbuf : xmalloc_n(n, sizeof *tmp);
    attrs_decoder(src, ir_op_arena(op), tmp, NULL);
    reserve_for(op, tmp, n);
    for (size_t i = 0; i < n; i++) {
        ir_attr *at = fresh_attr(op, tmp[i].name, tmp[i].type);
        const char *name = at->name;
        *at = tmp[i];
        at->name = name;
    }
    if (tmp != stackbuf)
        free(tmp);
}

bool ir_op_copy_attr_from(ir_op *op, const ir_op *src, const char *name)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = read_one(src, name, &tmp, &scratch);
    if (at)
        ir_op_copy_attr(op, at);
    ir_arena_free(scratch);
    return at != NULL;
}

void ir_program_set_new_op_attrs(ir_program *p, const ir_attr *attrs, size_t n)
{
    p->new_op_attrs = n ? ir_arena_alloc(p->arena, n * sizeof *attrs) : NULL;
    for (size_t i = 0; i < n; i++) {
        ir_attr_copy(p->arena, &p->new_op_attrs[i], &attrs[i]);
        p->new_op_attrs[i].name = ir_intern(attrs[i].name);
    }
    p->n_new_op_attrs = n;
}

void ir_op_add_new_op_attrs(ir_op *op, const ir_program *p)
{
    for (size_t i = 0; i < p->n_new_op_attrs; i++)
        if (!ir_op_attr(op, p->new_op_attrs[i].name))
            ir_op_copy_attr(op, &p->new_op_attrs[i]);
}

int64_t ir_op_get_int(const ir_op *op, const char *name, int64_t dflt)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = read_one(op, name, &tmp, &scratch);
    int64_t v = dflt;
    switch (at ? at->type : IR_ATTR_STRING) {
    case IR_ATTR_INT: v = at->i; break;
    case IR_ATTR_LONG: v = at->l; break;
    case IR_ATTR_BOOLEAN: v = at->b; break;
    case IR_ATTR_BLOCK: v = at->block_idx; break;
    default: break;
    }
    ir_arena_free(scratch);
    return v;
}

double ir_op_get_float(const ir_op *op, const char *name, double dflt)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = read_one(op, name, &tmp, &scratch);
    double v = dflt;
    switch (at ? at->type : IR_ATTR_STRING) {
    case IR_ATTR_FLOAT: v = at->f; break;
    case IR_ATTR_FLOAT64: v = at->float64; break;
    case IR_ATTR_INT: v = at->i; break;
    case IR_ATTR_LONG: v = (double)at->l; break;
    default: break;
    }
    ir_arena_free(scratch);
    return v;
}

bool ir_op_get_bool(const ir_op *op, const char *name, bool dflt)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = read_one(op, name, &tmp, &scratch);
    bool v = dflt;
    if (at && at->type == IR_ATTR_BOOLEAN)
        v = at->b;
    else if (at && at->type == IR_ATTR_INT)
        v = at->i != 0;
    ir_arena_free(scratch);
    return v;
}

const char *ir_op_get_string(const ir_op *op, const char *name)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = read_one(op, name, &tmp, &scratch);
    const char *v = NULL;
    if (at && at->type == IR_ATTR_STRING)
        v = ir_intern_n((const char *)at->s.data, at->s.len);
    ir_arena_free(scratch);
    return v;
}

const char **ir_op_get_names(const ir_op *op, const char *name, size_t *n, ir_arena *a)
{
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = read_one(op, name, &tmp, &scratch);
    const char **out = NULL;
    *n = 0;
    if (at && at->type == IR_ATTR_STRINGS && at->n_strings) {
        out = ir_arena_alloc(a, at->n_strings * sizeof *out);
        for (size_t i = 0; i < at->n_strings; i++)
            out[i] = ir_intern_n((const char *)at->strings[i].data, at->strings[i].len);
        *n = at->n_strings;
    }
    ir_arena_free(scratch);
    return out;
}

void ir_op_decode_attrs_into(const ir_op *op, ir_arena *a, ir_attr *out)
{
    attrs_decoder(op, a, out, NULL);
}

int ir_op_role(const ir_op *op)
{
    return (int)ir_op_get_int(op, IR_NAME("op_role"), -1);
}

void ir_op_set_role(ir_op *op, int role)
{
    ir_op_set_int(op, IR_NAME("op_role"), role);
}
