/* op.c - ops and their slots: creating, placing, editing, renaming
 * (attributes are in attr.c, copies of ops and programs in clone.c). */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "util.h"

_Static_assert(sizeof(ir_slot) <= 24, "a slot fits in 24 bytes");
_Static_assert(sizeof(ir_op) <= 80, "an op's public fields fit in 80 bytes");
_Static_assert(sizeof(ir_op_box) <= 104, "an op with its encoding state fits in 104 bytes");

/* Detached ops find their program through their encoding state, so that
 * setters can allocate before the op is attached. */
ir_arena *ir_op_arena(const ir_op *op)
{
    return op->block ? op->block->program->arena : ir_enc(op)->program->arena;
}

ir_op *ir_op_new_bare(ir_program *p, const char *type)
{
    ir_op_box *box = ir_arena_alloc(p->arena, sizeof *box);
    box->enc.program = p;
    box->op.type = ir_intern(type);
    box->op.enc_dirty_ = true;  /* new: written sorted, as Paddle flushes it */
    return &box->op;
}

void ir_op_mark_dirty(ir_op *op)
{
    /* A dirty op's bytes, if any, are only the source of its attrs (attr.c's
     * overlay), which stay. */
    ir_op_enc *e = ir_enc(op);
    if (ir_enc_op(e)->enc_dirty_)
        return;
    ir_op_ins(op);          /* slots still bytes: decoded before anything */
    ir_enc_op(e)->enc_dirty_ = true;
    /* Attrs still bytes with sorted names stay so: the op's own bytes become
     * their source, as a borrower's are (attr.c), and the rest of the op is
     * written from its fields.  Decoded, they were 5% of transpile's peak:
     * the passes rename op_role_var and slots of thousands of input ops. */
    if (ir_enc_op(e)->enc_attrs_pending_ && ir_enc_op(e)->enc_attrs_sorted_)
        return;
    ir_op_attrs(op);        /* decoded from the bytes about to be dropped */
    e->wire = NULL;
    ir_enc_op(e)->enc_wire_len_ = 0;
}

bool ir_op_changed(const ir_op *op)
{
    return op->enc_dirty_;
}

typedef struct {
    ir_slot slot;
    size_t pos;
} placed_slot;

static int cmp_placed_slot(const void *x, const void *y)
{
    const placed_slot *a = x, *b = y;
    int c = strcmp(a->slot.name, b->slot.name);
    return c ? c : (a->pos < b->pos ? -1 : a->pos > b->pos);
}

/* Slots by name, equal names in place: qsort past a few (an op copied
 * from the input may have as many slots as it has). */
static void sort_slots(ir_slot *s, size_t n)
{
    size_t i = 1;
    while (i < n && strcmp(s[i - 1].name, s[i].name) <= 0)
        i++;
    if (i >= n)
        return;
    placed_slot stackbuf[16];
    placed_slot *p = n <= 16 ? stackbuf : xmalloc_n(n, sizeof *p);
    for (i = 0; i < n; i++)
        p[i] = (placed_slot){s[i], i};
    qsort(p, n, sizeof *p, cmp_placed_slot);
    for (i = 0; i < n; i++)
        s[i] = p[i].slot;
    if (p != stackbuf)
        free(p);
}

typedef struct {
    ir_attr attr;
    int rank;
    size_t pos;
} ranked_attr;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked_attr *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    int c = strcmp(a->attr.name, b->attr.name);
    if (c)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* An op's attrs by ascending RANK (NULL: all 0), then name, then place:
 * O(n log n), as a made op may copy all of an input op's attrs. */
static void sort_attrs(ir_op *op, int (*rank)(const ir_attr *attr, void *ctx), void *ctx)
{
    size_t n = op->n_attrs;
    ranked_attr stackbuf[32];
    ranked_attr *r = n <= 32 ? stackbuf : xmalloc_n(n, sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = (ranked_attr){op->attrs[i], rank ? rank(&op->attrs[i], ctx) : 0, i};
    qsort(r, n, sizeof *r, cmp_ranked);
    for (size_t i = 0; i < n; i++)
        op->attrs[i] = r[i].attr;
    if (r != stackbuf)
        free(r);
}

/* A dirty op holds its attrs decoded (ir_op_mark_dirty) and no bytes of its
 * own: once sorted it counts as clean and is written as it now stands.  One
 * whose attrs are still bytes (a borrower, an input op edited in place)
 * stays dirty: the writer sorts it the same way.  (Moved here from the
 * backward passes, which called an op clean themselves: issue 28.) */
void ir_op_settle(ir_op *op)
{
    ir_op_enc *e = ir_enc(op);
    if (!ir_enc_op(e)->enc_dirty_ || ir_enc_op(e)->enc_attrs_pending_)
        return;
    sort_slots(ir_op_ins(op), op->n_inputs);
    sort_slots(ir_op_outs(op), op->n_outputs);
    size_t a = 1;
    while (a < op->n_attrs && strcmp(op->attrs[a - 1].name, op->attrs[a].name) < 0)
        a++;
    if (a < op->n_attrs)
        sort_attrs(op, NULL, NULL);
    ir_enc_op(e)->enc_dirty_ = false;
}

/* Unlike ir_op_settle, this one works on any op (a borrower's kept attrs
 * are decoded, a clean one's bytes dropped): the era step orders every op
 * pdtrans made as the target version's OpDesc::Flush does. */
void ir_op_settle_ranked(ir_op *op, int (*rank)(const ir_attr *attr, void *ctx), void *ctx)
{
    ir_op_mark_dirty(op);
    ir_op_enc *e = ir_enc(op);
    ir_op_attrs(op);
    e->wire = NULL;
    ir_enc_op(e)->enc_wire_len_ = 0;
    sort_slots(ir_op_ins(op), op->n_inputs);
    sort_slots(ir_op_outs(op), op->n_outputs);
    sort_attrs(op, rank, ctx);
    ir_enc_op(e)->enc_dirty_ = false;
}

/* A clean op's bytes are the whole op; a dirty one's are at most the
 * source of its attrs. */
bool ir_op_same_bytes(const ir_op *x, const ir_op *y)
{
    const ir_op_enc *ex = ir_enc(x), *ey = ir_enc(y);
    return !ir_enc_op(ex)->enc_dirty_ && !ir_enc_op(ey)->enc_dirty_ && ir_enc_op(ex)->enc_wire_len_ && ir_enc_op(ex)->enc_wire_len_ == ir_enc_op(ey)->enc_wire_len_ &&
           memcmp(ex->wire, ey->wire, ir_enc_op(ex)->enc_wire_len_) == 0;
}

/* Room for as many slots and attrs as ops of this type have had, so that
 * filling the op in never leaves a copy behind (op_shape.c). */
ir_op *ir_op_new(ir_program *p, const char *type)
{
    ir_op *op = ir_op_new_bare(p, type);
    op->made = true;
    ir_op_shape s = ir_op_shape_of(op->type);
    if (s.n_inputs) {
        op->inputs_ = ir_arena_alloc_raw(p->arena, s.n_inputs * sizeof *op->inputs_);
        op->cap_inputs = s.n_inputs;
    }
    if (s.n_outputs) {
        op->outputs_ = ir_arena_alloc_raw(p->arena, s.n_outputs * sizeof *op->outputs_);
        op->cap_outputs = s.n_outputs;
    }
    if (s.n_attrs) {
        op->attrs = ir_arena_alloc_raw(p->arena, s.n_attrs * sizeof *op->attrs);
        op->cap_attrs = s.n_attrs;
    }
    ir_op_add_new_op_attrs(op, p);
    return op;
}

/* ---- placing ops ---- */

/* A block's op array lives outside the arena (xmalloc, freed with the
 * program), so replacing or growing it leaves no copy behind; it is sized
 * exactly when replaced whole (issue 14 point 2). */
void ir_block_set_ops(ir_block *b, ir_op *const *ops, size_t n)
{
    ir_op **arr = n ? xmalloc_n(n, sizeof *arr) : NULL;
    for (size_t i = 0; i < n; i++) {
        arr[i] = ops[i];
        arr[i]->block = b;
    }
    free(b->ops);
    b->ops = arr;
    b->n_ops = n;
    b->cap_ops = n;
}

/* Room for `need` ops: doubling, so that appending one op at a time stays
 * linear; realloc moves or extends in place and frees the old array. */
static void ops_room(ir_block *b, size_t need)
{
    if (need <= b->cap_ops)
        return;
    size_t cap = b->cap_ops > 2 ? 2 * b->cap_ops : 4;
    if (cap < need)
        cap = need;
    b->ops = xrealloc_n(b->ops, cap, sizeof *b->ops);
    b->cap_ops = cap;
}

void ir_block_splice(ir_block *b, size_t pos, size_t n_remove,
                     ir_op *const *new_ops, size_t n_new)
{
    if (pos > b->n_ops)
        pos = b->n_ops;
    if (n_remove > b->n_ops - pos)
        n_remove = b->n_ops - pos;
    size_t n = b->n_ops - n_remove + n_new;
    ops_room(b, n);
    if (b->n_ops - pos - n_remove)
        memmove(b->ops + pos + n_new, b->ops + pos + n_remove,
                (b->n_ops - pos - n_remove) * sizeof *b->ops);
    for (size_t i = 0; i < n_new; i++) {
        b->ops[pos + i] = new_ops[i];
        new_ops[i]->block = b;
    }
    b->n_ops = n;
}

ir_op *ir_block_insert_op(ir_block *b, size_t pos, const char *type)
{
    ir_op *op = ir_op_new(b->program, type);
    if (pos > b->n_ops)
        pos = b->n_ops;
    ops_room(b, b->n_ops + 1);
    if (b->n_ops > pos)
        memmove(b->ops + pos + 1, b->ops + pos, (b->n_ops - pos) * sizeof *b->ops);
    b->ops[pos] = op;
    b->n_ops++;
    op->block = b;
    return op;
}

ir_op *ir_block_append_op(ir_block *b, const char *type)
{
    return ir_block_insert_op(b, b->n_ops, type);
}

void ir_block_remove_op(ir_block *b, size_t pos)
{
    if (pos >= b->n_ops)
        return;
    b->ops[pos]->block = NULL;
    memmove(b->ops + pos, b->ops + pos + 1, (b->n_ops - pos - 1) * sizeof *b->ops);
    b->n_ops--;
}

/* ---- slots ---- */

/* Slot and attr names are looked up by pointer first; a name that is not
 * interned (usually a string literal) is compared by content instead of
 * being interned, which would hash it on every call. */
static ir_slot *find_slot(ir_slot *slots, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (slots[i].name == name)
            return &slots[i];
    if (!n || ir_is_interned(name))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(slots[i].name, name) == 0)
            return &slots[i];
    return NULL;
}

ir_slot *ir_op_input(const ir_op *op, const char *slot)
{
    return find_slot(ir_op_ins(op), op->n_inputs, slot);
}

ir_slot *ir_op_output(const ir_op *op, const char *slot)
{
    return find_slot(ir_op_outs(op), op->n_outputs, slot);
}

const char *ir_op_input1(const ir_op *op, const char *slot)
{
    ir_slot *s = ir_op_input(op, slot);
    return s && s->n_args ? s->args[0] : NULL;
}

const char *ir_op_output1(const ir_op *op, const char *slot)
{
    ir_slot *s = ir_op_output(op, slot);
    return s && s->n_args ? s->args[0] : NULL;
}

/* ---- unknown fields (ir_op_rare) ---- */

ir_bytes ir_op_unknown(const ir_op *op)
{
    return op->rare ? op->rare->unknown : (ir_bytes){NULL, 0};
}

/* How many slot entries of that side the op's rare part has room for. */
static size_t rare_cap(const ir_op *op, bool out)
{
    const ir_op_rare *r = op->rare;
    return r ? (out ? r->cap_out : r->cap_in) : 0;
}

ir_bytes ir_slot_unknown(const ir_op *op, bool out, size_t i)
{
    ir_op_ins(op);          /* slots still bytes: their unknown fields come with them */
    if (i >= rare_cap(op, out))
        return (ir_bytes){NULL, 0};
    return (out ? op->rare->out : op->rare->in)[i];
}

static ir_op_rare *rare_of(ir_op *op)
{
    if (!op->rare)
        op->rare = ir_arena_alloc(ir_op_arena(op), sizeof *op->rare);
    return op->rare;
}

void ir_op_set_unknown(ir_op *op, ir_bytes b)
{
    if (b.len || op->rare)
        rare_of(op)->unknown = b;
}

/* Room for slot `i`'s entry in the op's parallel array of that side: as
 * many as the op has room for slots (at least i + 1). */
static ir_bytes *rare_slots(ir_op *op, bool out, size_t i)
{
    ir_op_rare *r = rare_of(op);
    ir_bytes **arr = out ? &r->out : &r->in;
    uint32_t *cap = out ? &r->cap_out : &r->cap_in;
    if (i >= *cap) {
        size_t want = out ? op->cap_outputs : op->cap_inputs;
        if (want <= i)
            want = i + 1;
        ir_bytes *fresh = ir_arena_alloc(ir_op_arena(op), want * sizeof *fresh);
        if (*cap)
            memcpy(fresh, *arr, *cap * sizeof *fresh);
        *arr = fresh;
        *cap = ir_count32(want);
    }
    return *arr;
}

void ir_op_set_slot_unknown(ir_op *op, bool out, size_t i, ir_bytes b)
{
    if (!b.len && i >= rare_cap(op, out))
        return;
    rare_slots(op, out, i)[i] = b;
}

/* A slot removed at i: the entries after it move down with the slots. */
static void rare_slot_removed(ir_op *op, bool out, size_t i)
{
    size_t cap = rare_cap(op, out);
    if (i >= cap)
        return;
    ir_bytes *arr = out ? op->rare->out : op->rare->in;
    memmove(arr + i, arr + i + 1, (cap - i - 1) * sizeof *arr);
    arr[cap - 1] = (ir_bytes){NULL, 0};
}

static ir_slot *get_or_add_slot(ir_op *op, bool out, const char *name)
{
    ir_op_ins(op);          /* the fields below, built if still bytes */
    ir_slot **slots = out ? &op->outputs_ : &op->inputs_;
    uint32_t *n = out ? &op->n_outputs : &op->n_inputs;
    uint32_t *cap = out ? &op->cap_outputs : &op->cap_inputs;
    ir_slot *s = find_slot(*slots, *n, name);
    if (s)
        return s;
    ir_slot *old = *slots;
    *slots = ir_grow32(ir_op_arena(op), *slots, sizeof **slots, *n, cap, (size_t)*n + 1);
    if (old && *slots != old)
        ir_op_array_moved();
    s = &(*slots)[(*n)++];
    memset(s, 0, sizeof *s);
    s->name = ir_intern(name);
    ir_op_shape_note(op);
    return s;
}

static void slot_set(ir_op *op, bool out, const char *slot,
                     const char *const *args, size_t n)
{
    ir_slot *s = get_or_add_slot(op, out, slot);
    ir_arena *a = ir_op_arena(op);
    s->args = n ? ir_arena_alloc(a, n * sizeof *s->args) : NULL;
    for (size_t i = 0; i < n; i++)
        s->args[i] = ir_intern(args[i]);
    s->n_args = s->cap_args = ir_count32(n);
    ir_op_mark_dirty(op);
}

void ir_op_set_input(ir_op *op, const char *slot, const char *const *args, size_t n)
{
    slot_set(op, false, slot, args, n);
}

void ir_op_set_output(ir_op *op, const char *slot, const char *const *args, size_t n)
{
    slot_set(op, true, slot, args, n);
}

void ir_op_set_input1(ir_op *op, const char *slot, const char *arg)
{
    slot_set(op, false, slot, &arg, 1);
}

void ir_op_set_output1(ir_op *op, const char *slot, const char *arg)
{
    slot_set(op, true, slot, &arg, 1);
}

static void slot_add(ir_op *op, bool out, const char *slot, const char *arg)
{
    ir_slot *s = get_or_add_slot(op, out, slot);
    s->args = ir_grow32(ir_op_arena(op), s->args, sizeof *s->args, s->n_args,
                        &s->cap_args, (size_t)s->n_args + 1);
    s->args[s->n_args++] = ir_intern(arg);
    ir_op_mark_dirty(op);
}

void ir_op_add_input_arg(ir_op *op, const char *slot, const char *arg)
{
    slot_add(op, false, slot, arg);
}

void ir_op_add_output_arg(ir_op *op, const char *slot, const char *arg)
{
    slot_add(op, true, slot, arg);
}

static void slot_remove(ir_op *op, bool out, const char *name)
{
    ir_slot *slots = out ? ir_op_outs(op) : ir_op_ins(op);
    uint32_t *n = out ? &op->n_outputs : &op->n_inputs;
    ir_slot *s = find_slot(slots, *n, name);
    if (!s)
        return;
    size_t i = (size_t)(s - slots);
    memmove(slots + i, slots + i + 1, (*n - i - 1) * sizeof *slots);
    (*n)--;
    rare_slot_removed(op, out, i);
    ir_op_mark_dirty(op);
}

void ir_op_remove_input(ir_op *op, const char *slot)
{
    slot_remove(op, false, slot);
}

void ir_op_remove_output(ir_op *op, const char *slot)
{
    slot_remove(op, true, slot);
}

static bool rename_in(ir_slot *slots, size_t n, const char *from, const char *to)
{
    bool changed = false;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < slots[i].n_args; k++)
            if (slots[i].args[k] == from) {
                slots[i].args[k] = to;
                changed = true;
            }
    return changed;
}

static bool rename_attrs(ir_op *op, const char *from, const char *to)
{
    bool changed = false;
    if (!ir_op_may_name_blocks(op))
        return false;       /* no VAR or VARS attr */
    for (size_t i = 0; i < op->n_attrs; i++) {
        ir_attr *at = &op->attrs[i];
        if (at->type == IR_ATTR_VAR && at->has_var_name && at->var_name == from) {
            at->var_name = to;
            changed = true;
        }
        for (size_t k = 0; at->type == IR_ATTR_VARS && k < at->n_vars_name; k++)
            if (at->vars_name[k] == from) {
                at->vars_name[k] = to;
                changed = true;
            }
    }
    return changed;
}

bool ir_op_rename_input(ir_op *op, const char *from, const char *to)
{
    from = ir_intern(from);
    to = ir_intern(to);
    bool changed = rename_in(ir_op_ins(op), op->n_inputs, from, to);
    changed |= rename_attrs(op, from, to);
    if (changed)
        ir_op_mark_dirty(op);
    return changed;
}

bool ir_op_rename_output(ir_op *op, const char *from, const char *to)
{
    from = ir_intern(from);
    to = ir_intern(to);
    bool changed = rename_in(ir_op_outs(op), op->n_outputs, from, to);
    if (changed)
        ir_op_mark_dirty(op);
    return changed;
}

static bool slots_mention(const ir_slot *slots, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < slots[i].n_args; k++)
            if (slots[i].args[k] == name)
                return true;
    return false;
}

bool ir_op_reads(const ir_op *op, const char *name)
{
    return slots_mention(ir_op_ins(op), op->n_inputs, ir_intern(name));
}

bool ir_op_writes(const ir_op *op, const char *name)
{
    return slots_mention(ir_op_outs(op), op->n_outputs, ir_intern(name));
}

const char *ir_op_trainer_counter_sum(const ir_op *op)
{
    const ir_slot *x = ir_op_input(op, "X");
    const char *out = ir_op_output1(op, "Out");
    if (strcmp(op->type, "sum") || !x || !x->n_args || !out)
        return NULL;
    size_t n = strlen(out);
    for (uint32_t k = 0; k < x->n_args; k++) {
        const char *a = x->args[k];
        if (strncmp(a, out, n) || strncmp(a + n, ".trainer_", 9) || !a[n + 9] ||
            strspn(a + n + 9, "0123456789") != strlen(a + n + 9))
            return NULL;
    }
    return out;
}
