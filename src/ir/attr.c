/* attr.c - the op attribute API: setters replace in place, getters read
 * by type, attrs kept as bytes are decoded when asked for, and borrowed
 * (values and their copies are attr_value.c). */
#include "ir.h"

#include <glib.h>
#include <string.h>

#include "ir_internal.h"
#include "util.h"

/* ---- the op attribute API ---- */

/* ---- borrowed attrs ----
 * (An op read from a file whose attrs are sorted bytes is marked dirty the
 * same way: its own bytes are then the source, ir_op_mark_dirty.)
 * A grad op copies every attr of its forward op and then sets two or three
 * (op_role, op_role_var, op_device): decoded, those copies were a quarter
 * of backward's peak memory (issue 14).  When the forward op's attrs are
 * still bytes, with sorted names (so no name twice), the copy borrows them:
 * it points `wire` at the same bytes, stays attrs_pending, and keeps what
 * is set on it afterwards in a small overlay (`attrs`, n_overlay entries)
 * that replaces the borrowed attr of the same name or adds one.  Only a
 * dirty op of the same program borrows: a dirty op's `wire` is never
 * written as the op, and the bytes live as long as the program.  No BLOCK,
 * BLOCKS, VAR or VARS attr enters an overlay (ir_op_may_name_blocks stays
 * right), and nothing is removed from one: those setters decode the attrs
 * first, as for any pending op.  pbenc.c writes a borrower's kept attrs as
 * their bytes. */

/* The attr of that name among n: names are interned, so a pointer compare
 * answers, unless the caller's name is not interned. */
static ir_attr *find_attr(ir_attr *attrs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (attrs[i].name == name)
            return &attrs[i];
    if (!n || ir_is_interned(name))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(attrs[i].name, name) == 0)
            return &attrs[i];
    return NULL;
}

static ir_attr *overlay_find(const ir_op *op, const char *name)
{
    return op->enc_attrs_pending_ ? find_attr(op->attrs, op->enc_n_overlay_, name) : NULL;
}

const ir_attr *ir_op_overlay(const ir_op *op, size_t *n)
{
    *n = op->enc_attrs_pending_ ? op->enc_n_overlay_ : 0;
    return *n ? op->attrs : NULL;
}

/* Room for `need` overlay entries, `have` of them already in op->attrs. */
static void overlay_room(ir_op *op, size_t have, size_t need)
{
    if (need <= op->cap_attrs)
        return;
    ir_attr *attrs = ir_arena_alloc_raw(ir_op_arena(op), need * sizeof *attrs);
    if (have)
        memcpy(attrs, op->attrs, have * sizeof *attrs);
    if (op->attrs)
        ir_op_array_moved();
    op->attrs = attrs;
    op->cap_attrs = ir_count32(need);
    ir_op_shape_note_attr_room(op);
}

/* All the op's attrs into out (n_attrs entries, lists and strings in a):
 * the kept ones, each replaced by the overlay's of the same name, then the
 * overlay's others. */
static void decode_merged(const ir_op *op, ir_arena *a, ir_attr *out)
{
    size_t k = ir_op_decode_kept(op, a, out, NULL);
    if (op->enc_role_set_) {
        ir_attr *role = find_attr(out, k, IR_WK(op_role));
        if (!role)
            abort();    /* role_set is only taken where the bytes have one */
        *role = *ir_enc(op)->pending_role;
    }
    for (size_t i = 0; i < op->enc_n_overlay_; i++) {
        const ir_attr *o = &op->attrs[i];
        size_t j = 0;
        while (j < k && out[j].name != o->name)
            j++;
        if (j == k && k++ == op->n_attrs)
            abort();    /* n_attrs counts every overlay entry the bytes lack */
        ir_attr_copy(a, &out[j], o);
    }
    if (k != op->n_attrs)
        abort();
}

/* Decoding pending attrs changes no value, so it is allowed on a const op. */
static void load_attrs(const ir_op *op)
{
    if (!op->enc_attrs_pending_)
        return;
    ir_op *w = (ir_op *)(uintptr_t)op;
    ir_arena *a = ir_op_arena(w);
    ir_attr *attrs = ir_arena_alloc(a, w->n_attrs * sizeof *attrs);
    decode_merged(w, a, attrs);
    w->attrs = attrs;
    w->cap_attrs = w->n_attrs;
    ir_op_enc *e = ir_enc(w);
    ir_enc_op(e)->enc_attrs_pending_ = false;
    e->pending_role = NULL;
    ir_enc_op(e)->enc_role_set_ = false;
    ir_enc_op(e)->enc_n_overlay_ = 0;
    if (ir_enc_op(e)->enc_dirty_) {
        e->wire = NULL;         /* a borrower's: only its attrs' source */
        ir_enc_op(e)->enc_wire_len_ = 0;
    }
}

static bool names_block_or_var(ir_attr_type type)
{
    return type == IR_ATTR_BLOCK || type == IR_ATTR_BLOCKS || type == IR_ATTR_VAR ||
           type == IR_ATTR_VARS;
}

/* The overlay entry a setter on a borrower writes, added if need be; NULL
 * when the attrs must be decoded instead. */
static ir_attr *overlay_slot(ir_op *op, const char *name, ir_attr_type type)
{
    if (!op->enc_attrs_pending_ || !op->enc_dirty_ || names_block_or_var(type))
        return NULL;
    ir_attr *at = overlay_find(op, name);
    if (at)
        return at;
    if (op->enc_n_overlay_ == UINT16_MAX || op->n_attrs == UINT32_MAX)
        return NULL;
    if (!ir_op_probe_kept(op, name))
        op->n_attrs++;
    overlay_room(op, op->enc_n_overlay_, (size_t)op->enc_n_overlay_ + 1);
    return &op->attrs[op->enc_n_overlay_++];
}

/* op borrows src's attrs (see above) when it may; op's own attrs that src
 * lacks, and src's overlay, make op's overlay. */
static bool borrow_attrs(ir_op *op, const ir_op *src)
{
    ir_op_enc *e = ir_enc(op);
    const ir_op_enc *se = ir_enc(src);
    if (!ir_enc_op(se)->enc_attrs_pending_ || !ir_enc_op(se)->enc_attrs_sorted_ || !ir_enc_op(e)->enc_dirty_ || ir_enc_op(e)->enc_attrs_pending_ ||
        ir_op_arena(op) != ir_op_arena(src) || (size_t)op->n_attrs + ir_enc_op(se)->enc_n_overlay_ + 2 >
        UINT16_MAX || (size_t)op->n_attrs + src->n_attrs > UINT32_MAX)
        return false;
    size_t own = 0;
    for (size_t i = 0; i < op->n_attrs; i++) {
        const char *name = op->attrs[i].name;
        if (!overlay_find(src, name) && !ir_op_probe_kept(src, name))
            op->attrs[own++] = op->attrs[i];
    }
    /* and room for op_role_var, which a grad op may get next (its op_role
     * goes to pending_role: ir_op_set_int) */
    overlay_room(op, own, own + ir_enc_op(se)->enc_n_overlay_ + 1);
    for (size_t i = 0; i < ir_enc_op(se)->enc_n_overlay_; i++)
        ir_attr_copy(ir_op_arena(op), &op->attrs[own + i], &src->attrs[i]);
    ir_enc_op(e)->enc_n_overlay_ = (uint16_t)(own + ir_enc_op(se)->enc_n_overlay_);
    op->n_attrs = ir_count32(own + src->n_attrs);
    e->wire = se->wire;
    ir_enc_op(e)->enc_wire_len_ = ir_enc_op(se)->enc_wire_len_;
    ir_enc_op(e)->enc_attrs_pending_ = true;
    ir_enc_op(e)->enc_attrs_sorted_ = true;
    e->pending_role = se->pending_role;
    ir_enc_op(e)->enc_role_set_ = ir_enc_op(se)->enc_role_set_;
    return true;
}

ir_attr *ir_op_attrs(const ir_op *op)
{
    load_attrs(op);
    return op->attrs;
}

/* name is "op_role" (interned or not). */
static bool names_role(const char *name)
{
    const char *role = IR_WK(op_role);
    return name == role || (!ir_is_interned(name) && strcmp(name, role) == 0);
}

/* op_role of an op whose attrs are still bytes: read without decoding them
 * (passes ask every op for it).  The pointer is not into op->attrs. */
static bool pending_role(const ir_op *op, const char *name, ir_attr **out)
{
    if (!op->enc_attrs_pending_ || !names_role(name))
        return false;
    ir_attr *o = overlay_find(op, IR_WK(op_role));
    *out = o ? o : (ir_attr *)(uintptr_t)ir_enc(op)->pending_role;
    return true;
}

ir_attr *ir_op_attr(const ir_op *op, const char *name)
{
    ir_attr *role;
    if (pending_role(op, name, &role))
        return role;
    /* Passes ask every op for attrs few have: no need to decode them all. */
    if (op->enc_attrs_pending_) {
        ir_attr *o = overlay_find(op, name);
        if (o || !ir_op_probe_kept(op, name))
            return o;
    }
    load_attrs(op);
    return find_attr(op->attrs, op->n_attrs, name);
}

bool ir_op_has_attr(const ir_op *op, const char *name)
{
    return ir_op_attr(op, name) != NULL;
}

/* The getters' view of one attr.  Of an op whose attrs are still bytes,
 * only that attr is decoded, into *out with its lists and strings in
 * *scratch (the caller frees it): passes read one attr of every op
 * (ir_op_is_grad_clip reads op_namescope), and decoding them all
 * would keep every op's attrs twice, bytes and structs. */
const ir_attr *ir_op_read_one_attr(const ir_op *op, const char *name, ir_attr *out,
                                   ir_arena **scratch)
{
    ir_attr *role;
    *scratch = NULL;
    if (pending_role(op, name, &role))
        return role;
    if (!op->enc_attrs_pending_)
        return ir_op_attr(op, name);
    ir_attr *o = overlay_find(op, name);
    if (o)
        return o;
    /* One walk over the bytes: decoding the named attr finds it or tells
     * it is absent, as the probe would, so the probe first was a second
     * walk to every attr found (issue 33 point 2).  The scratch arena is
     * only a calloc until something is decoded into it. */
    *scratch = ir_arena_new();
    if (ir_op_decode_kept(op, *scratch, out, name) == 1)
        return out;
    ir_arena_free(*scratch);
    *scratch = NULL;
    return NULL;
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
/* A new last attr slot (uninitialised) in an op whose attrs are decoded. */
static ir_attr *append_attr(ir_op *op)
{
    ir_attr *old = op->attrs;
    op->attrs = ir_grow32(ir_op_arena(op), op->attrs, sizeof *op->attrs, op->n_attrs,
                          &op->cap_attrs, (size_t)op->n_attrs + 1);
    if (old && op->attrs != old)
        ir_op_array_moved();
    ir_attr *at = &op->attrs[op->n_attrs++];
    ir_op_shape_note(op);
    return at;
}

static ir_attr *fresh_attr(ir_op *op, const char *name, ir_attr_type type)
{
    /* dirty first: an op whose attrs are sorted bytes keeps them so, and the
     * setting goes to its overlay (ir_op_mark_dirty) */
    if (!names_block_or_var(type))
        ir_op_mark_dirty(op);
    ir_attr *at = overlay_slot(op, name, type);
    if (!at)
        load_attrs(op), at = ir_op_attr(op, name);
    if (!at)
        at = append_attr(op);
    memset(at, 0, sizeof *at);
    at->name = ir_intern(name);
    at->type = type;
    ir_op_mark_dirty(op);
    return at;
}

/* The names of op's attrs, for a copy of N_NEW attrs into it: fresh_attr
 * looks each name up in the op, so copying all of an input op's attrs
 * (a grad maker) would be quadratic in them.  NULL (fresh_attr's lookup
 * is used) for a few attrs, or an op whose attrs are still bytes. */
static GHashTable *attr_names(ir_op *op, size_t n_new)
{
    if (n_new <= 16)
        return NULL;
    load_attrs(op);
    ir_op_mark_dirty(op);
    if (op->enc_attrs_pending_)
        return NULL;
    GHashTable *h = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; i < op->n_attrs; i++)
        g_hash_table_add(h, (void *)op->attrs[i].name);
    return h;
}

/* fresh_attr, with the names of op's attrs in HAVE (attr_names). */
static ir_attr *fresh_attr_in(ir_op *op, const char *name, ir_attr_type type, GHashTable *have)
{
    if (!have || g_hash_table_contains(have, name))
        return fresh_attr(op, name, type);
    ir_attr *at = append_attr(op);
    memset(at, 0, sizeof *at);
    at->name = ir_intern(name);
    at->type = type;
    g_hash_table_add(have, (void *)at->name);
    return at;
}

/* op_role set on a dirty op whose attrs are sorted bytes that hold one (a
 * grad op borrowing its forward op's, an edited input op) goes to
 * pending_role, one shared attr per value, instead of an overlay entry of
 * 40 bytes per op: every grad op gets one (4 MB at backward's 100k ops).
 * The encoder and decode_merged put it in place of the bytes' op_role. */
static bool set_pending_role(ir_op *op, const char *name, int32_t v)
{
    if (!names_role(name))
        return false;
    ir_op_mark_dirty(op);
    const char *role = IR_WK(op_role);
    ir_op_enc *e = ir_enc(op);
    if (!ir_enc_op(e)->enc_attrs_pending_ || !ir_enc_op(e)->enc_attrs_sorted_ || overlay_find(op, role) ||
        !ir_op_probe_kept(op, role))
        return false;
    ir_attr at = {.name = role, .type = IR_ATTR_INT, .has_i = true, .i = v};
    const ir_attr *shared_role = ir_attr_shared(&at);
    if (!shared_role)
        return false;
    e->pending_role = shared_role;
    ir_enc_op(e)->enc_role_set_ = true;
    return true;
}

void ir_op_set_int(ir_op *op, const char *name, int32_t v)
{
    if (set_pending_role(op, name, v))
        return;
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

/* A string a setter is given is interned, not copied into the op's arena:
 * passes set the same few names and endpoints on thousands of ops (send's
 * epmap, op_role_var), and those copies were the largest thing insert_send
 * made (7.6 MB at 100k ops).  The value then is read as before (ir_bytes,
 * NUL after it); copies share it (attr_value.c). */
static ir_bytes interned_value(const char *v)
{
    const char *s = ir_intern(v);
    return (ir_bytes){(const uint8_t *)s, strlen(s)};
}

void ir_op_set_string(ir_op *op, const char *name, const char *v)
{
    ir_attr *at = fresh_attr(op, name, IR_ATTR_STRING);
    at->has_s = true;
    at->s = interned_value(v);
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
    for (size_t i = 0; i < n; i++)
        at->strings[i] = interned_value(v[i]);
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
    const char *role_var = IR_WK(op_role_var);
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
    GHashTable *have = attr_names(op, n);
    for (size_t i = 0; i < n; i++)
        ir_attr_copy(ir_op_arena(op), fresh_attr_in(op, from[i].name, from[i].type, have), &from[i]);
    if (have)
        g_hash_table_destroy(have);
}

void ir_op_copy_attrs(ir_op *op, const ir_op *src)
{
    load_attrs(op);
    if (borrow_attrs(op, src))
        return;
    if (!src->enc_attrs_pending_) {
        copy_all(op, src->attrs, src->n_attrs);
        return;
    }
    /* Decoded into src, its attrs would be held twice (bytes and structs)
     * for the rest of the run: the grad makers copy every forward op's.
     * Decoded straight into op's arena instead, they need no second copy. */
    size_t n = src->n_attrs;
    ir_attr stackbuf[16];
    ir_attr *tmp = n <= 16 ? stackbuf : xmalloc_n(n, sizeof *tmp);
    decode_merged(src, ir_op_arena(op), tmp);
    reserve_for(op, tmp, n);
    GHashTable *have = attr_names(op, n);
    for (size_t i = 0; i < n; i++) {
        ir_attr *at = fresh_attr_in(op, tmp[i].name, tmp[i].type, have);
        const char *name = at->name;
        *at = tmp[i];
        at->name = name;
    }
    if (have)
        g_hash_table_destroy(have);
    if (tmp != stackbuf)
        free(tmp);
}

bool ir_op_copy_attr_from(ir_op *op, const ir_op *src, const char *name)
{
    /* A borrower already holds what its source keeps as bytes. */
    const ir_op_enc *e = ir_enc(op), *se = ir_enc(src);
    if (ir_enc_op(e)->enc_attrs_pending_ && ir_enc_op(se)->enc_attrs_pending_ && e->wire == se->wire &&
        !overlay_find(op, name) && !overlay_find(src, name) &&
        (e->pending_role == se->pending_role || !names_role(name)))
        return ir_op_probe_kept(src, name);
    ir_attr tmp;
    ir_arena *scratch;
    const ir_attr *at = ir_op_read_one_attr(src, name, &tmp, &scratch);
    if (at)
        ir_op_copy_attr(op, at);
    ir_arena_free(scratch);
    return at != NULL;
}

void ir_program_set_new_op_attrs(ir_program *p, const ir_attr *attrs, size_t n)
{
    p->new_op_attrs = n ? ir_arena_alloc(p->arena, n * sizeof *attrs) : NULL;
    for (size_t i = 0; i < n; i++) {
        ir_attr *at = &p->new_op_attrs[i];
        ir_attr_copy(p->arena, at, &attrs[i]);
        at->name = ir_intern(attrs[i].name);
        /* An interned value is shared by every op's copy (attr_value.c's
         * value_copy) instead of copied into each: op_namescope "/" and
         * op_device "" on the 18 000 ops of the bench MLP's trainer were
         * 288 KB (issue 33 point 4). */
        if (at->type == IR_ATTR_STRING && at->s.data && !memchr(at->s.data, 0, at->s.len))
            at->s.data = (const uint8_t *)ir_intern_bytes((const char *)at->s.data, at->s.len);
    }
    p->n_new_op_attrs = n;
}

void ir_op_add_new_op_attrs(ir_op *op, const ir_program *p)
{
    for (size_t i = 0; i < p->n_new_op_attrs; i++)
        if (!ir_op_attr(op, p->new_op_attrs[i].name))
            ir_op_copy_attr(op, &p->new_op_attrs[i]);
}

void ir_op_decode_attrs_into(const ir_op *op, ir_arena *a, ir_attr *out)
{
    decode_merged(op, a, out);
}

int ir_op_role(const ir_op *op)
{
    return (int)ir_op_get_int(op, IR_WK(op_role), -1);
}

void ir_op_set_role(ir_op *op, int role)
{
    ir_op_set_int(op, IR_WK(op_role), role);
}

bool ir_op_is_grad_clip(const ir_op *op)
{
    const char *ns = ir_op_get_string(op, "op_namescope");
    return ns && (strstr(ns, "@CLIP") || strstr(ns, "gradient_clip") ||
                  strstr(ns, "/append_clip") || strstr(ns, "/append_graident_clip"));
}
