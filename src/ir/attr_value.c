/* attr_value.c - the compact attribute value and its full wire-shaped
 * form: moving between them, deep copies, and the shared op_role values of
 * ops whose attrs are bytes (the op attribute API that uses them is
 * attr.c). */
#include "ir.h"

#include <string.h>

#include "env.h"
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

/* A string value that is an interned name (what the setters store: see
 * attr.c) is shared, not copied: the intern table outlives every program. */
static ir_bytes value_copy(ir_arena *a, ir_bytes s)
{
    const char *c = (const char *)s.data;
    if (c && ir_is_interned(c) && strlen(c) == s.len)
        return s;
    return ir_bytes_copy(a, s);
}

static ir_bytes *strings_copy(ir_arena *a, const ir_bytes *s, size_t n)
{
    if (!n)
        return NULL;
    ir_bytes *r = ir_arena_alloc_raw(a, n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = value_copy(a, s[i]);
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
    case IR_ATTR_STRING: dst->s = value_copy(a, src->s); break;
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

/* Ops whose attrs stay bytes keep their op_role decoded (pending_role):
 * an ir_attr of 40 bytes per op (7 MiB at 100k ops), though a program has
 * a handful of values.  A plain INT attr (only `i` set, nothing more kept)
 * is shared instead: one per name and value for the process, dropped with
 * the intern table whose names they hold.  Nothing writes through them: a
 * setter either points pending_role at another one (op_role on a pending
 * op, attr.c's set_pending_role) or decodes the attrs, which drops it. */
enum { MAX_SHARED = 64 };
typedef struct {
    ir_attr shared[MAX_SHARED];
    size_t n_shared;
} shared_attrs;             /* in the env (env.h): they hold interned names */

const ir_attr *ir_attr_shared(const ir_attr *a)
{
    if (a->type != IR_ATTR_INT || a->more || !a->has_i || a->has_f || a->has_s || a->has_b ||
        a->has_block_idx || a->has_l || a->has_var_name || a->has_float64 || a->has_scalar)
        return NULL;
    shared_attrs *st = pdt_env_get(PDT_ENV_SHARED_ATTRS);
    if (!st)
        st = pdt_env_put(PDT_ENV_SHARED_ATTRS, xcalloc(1, sizeof *st), NULL);
    ir_attr *shared = st->shared;
    size_t n_shared = st->n_shared;
    for (size_t k = 0; k < n_shared; k++)
        if (shared[k].name == a->name && shared[k].i == a->i)
            return &shared[k];
    if (n_shared == MAX_SHARED)
        return NULL;
    shared[n_shared] = *a;
    st->n_shared = n_shared + 1;
    return &shared[n_shared];
}
