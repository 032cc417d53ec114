/* clone.c - deep copies of ops and whole programs into another arena. */
#include "ir.h"

#include <stdlib.h>

#include "ir_codec.h"
#include "ir_internal.h"
#include "pmap.h"
#include "util.h"

static void slot_copy(ir_arena *a, ir_slot *dst, const ir_slot *src)
{
    *dst = *src;
    dst->cap_args = src->n_args;
    dst->args = src->n_args ? ir_arena_memdup(a, src->args, src->n_args * sizeof *src->args) : NULL;
}

/* The unknown fields of src and its slots, copied into op (ir_op_rare). */
static void rare_copy(ir_op *op, const ir_op *src)
{
    ir_arena *a = ir_op_arena(op);
    op->rare = NULL;
    ir_op_set_unknown(op, ir_bytes_copy(a, ir_op_unknown(src)));
    for (size_t i = 0; i < src->n_inputs; i++)
        ir_op_set_slot_unknown(op, false, i, ir_bytes_copy(a, ir_slot_unknown(src, false, i)));
    for (size_t i = 0; i < src->n_outputs; i++)
        ir_op_set_slot_unknown(op, true, i, ir_bytes_copy(a, ir_slot_unknown(src, true, i)));
}

static size_t at_least(size_t n, size_t room)
{
    return room > n ? room : n;
}

/* `room`: the arrays' capacity when more than the source's counts (an op
 * a pass copies and then extends, as ir_op_new gives; op_shape.c). */
static ir_op *op_copy_into(ir_program *p, const ir_op *src, ir_op_shape room)
{
    ir_op *op = ir_op_new_bare(p, src->type);
    ir_arena *a = p->arena;
    ir_op_ins(src);         /* slots still bytes: decoded, then copied */
    ir_op tmp = *src;
    tmp.block = NULL;
    /* the encoding state's small parts (ir.h's enc_*_) stay the new op's */
    tmp.enc_dirty_ = op->enc_dirty_;
    tmp.enc_attrs_pending_ = op->enc_attrs_pending_;
    tmp.enc_attrs_sorted_ = op->enc_attrs_sorted_;
    tmp.enc_role_set_ = op->enc_role_set_;
    tmp.enc_slots_pending_ = op->enc_slots_pending_;
    tmp.enc_n_overlay_ = op->enc_n_overlay_;
    tmp.enc_wire_len_ = op->enc_wire_len_;
    *op = tmp;
    /* Of the encoding state only dirtiness is copied.  The bytes belong to
     * the source's program, which may die first; a clean copy is encoded
     * from its fields, to the same bytes.  The copy holds the attrs
     * decoded; a source whose attrs are still bytes keeps them so (decoding
     * them into it would hold both forms). */
    op->enc_dirty_ = src->enc_dirty_;
    /* A copy into another program is an op Python's append_op built there
     * (Operator.__init__ gives it that version's framework attrs): made,
     * for the era step.  A copy within the program keeps the source's. */
    op->made = src->made || ir_enc(src)->program != p;
    op->cap_inputs = at_least(op->n_inputs, room.n_inputs);
    op->inputs_ = op->cap_inputs ? ir_arena_alloc(a, op->cap_inputs * sizeof(ir_slot)) : NULL;
    for (size_t i = 0; i < src->n_inputs; i++)
        slot_copy(a, &op->inputs_[i], &ir_op_ins(src)[i]);
    op->cap_outputs = at_least(op->n_outputs, room.n_outputs);
    op->outputs_ = op->cap_outputs ? ir_arena_alloc(a, op->cap_outputs * sizeof(ir_slot)) : NULL;
    for (size_t i = 0; i < src->n_outputs; i++)
        slot_copy(a, &op->outputs_[i], &ir_op_outs(src)[i]);
    op->cap_attrs = at_least(op->n_attrs, room.n_attrs);
    op->attrs = op->cap_attrs ? ir_arena_alloc(a, op->cap_attrs * sizeof(ir_attr)) : NULL;
    if (src->enc_attrs_pending_)
        ir_op_decode_attrs_into(src, a, op->attrs);
    else
        for (size_t i = 0; i < src->n_attrs; i++)
            ir_attr_copy(a, &op->attrs[i], &src->attrs[i]);
    if (src->rare)
        rare_copy(op, src);
    return op;
}

ir_op *ir_op_clone(ir_program *p, const ir_op *src)
{
    ir_op *op = op_copy_into(p, src, ir_op_shape_of(src->type));
    ir_op_add_new_op_attrs(op, p);
    return op;
}

ir_program *ir_program_clone(const ir_program *src)
{
    ir_program *p = ir_program_new();
    ir_arena *a = p->arena;
    p->has_version = src->has_version;
    p->version = src->version;
    p->version_has_value = src->version_has_value;
    p->version_unknown = ir_bytes_copy(a, src->version_unknown);
    p->has_op_version_map = src->has_op_version_map;
    p->op_version_map = ir_bytes_copy(a, src->op_version_map);
    p->unknown = ir_bytes_copy(a, src->unknown);
    for (size_t i = 0; i < src->n_blocks; i++) {
        const ir_block *sb = src->blocks[i];
        ir_block *b = ir_program_add_block(p, sb->parent_idx);
        b->idx = sb->idx;
        b->has_forward_block_idx = sb->has_forward_block_idx;
        b->forward_block_idx = sb->forward_block_idx;
        b->unknown = ir_bytes_copy(a, sb->unknown);
        size_t live = 0;
        for (size_t k = 0; k < sb->n_vars; k++)
            live += !sb->vars[k]->removed;
        ir_block_reserve_vars(b, live);
        for (size_t k = 0; k < sb->n_vars; k++) {
            const ir_var *sv = sb->vars[k];
            if (sv->removed)
                continue;
            ir_var *v = ir_block_add_var_raw(b, sv->name);
            ir_var_copy_desc(a, v, sv);
            v->from_input = sv->from_input;
        }
        ir_op **ops = sb->n_ops ? xmalloc_n(sb->n_ops, sizeof *ops) : NULL;
        for (size_t k = 0; k < sb->n_ops; k++)
            ops[k] = op_copy_into(p, sb->ops[k], (ir_op_shape){0, 0, 0});
        ir_block_set_ops(b, ops, sb->n_ops);
        free(ops);
    }
    p->var_seq = src->var_seq > p->var_seq ? src->var_seq : p->var_seq;
    return p;
}

/* What a copy's source had (ir_op_note_copy): its attr names, interned,
 * or all of them. */
typedef struct {
    bool all;
    size_t n;
    const char **names;
} copy_note;

void ir_op_note_copy(ir_op *copy, const ir_op *src)
{
    ir_program *p = ir_enc(copy)->program;
    ir_arena *a = p->arena;
    copy_note *note = ir_arena_alloc(a, sizeof *note);
    note->all = src->made;
    note->n = note->all ? 0 : src->n_attrs;
    note->names = note->n ? ir_arena_alloc(a, note->n * sizeof *note->names) : NULL;
    const ir_attr *attrs = note->n ? ir_op_attrs(src) : NULL;
    for (size_t i = 0; i < note->n; i++)
        note->names[i] = ir_intern(attrs[i].name);
    if (!p->copy_notes)
        p->copy_notes = pmap_new();
    pmap_put(p->copy_notes, copy, note);
}

int ir_op_copy_had(const ir_op *op, const char *name)
{
    ir_program *p = ir_enc(op)->program;
    const copy_note *note = p && p->copy_notes ? pmap_get(p->copy_notes, op) : NULL;
    if (!note)
        return -1;
    if (note->all)
        return 1;
    const char *key = ir_intern(name);
    for (size_t i = 0; i < note->n; i++)
        if (note->names[i] == key)
            return 1;
    return 0;
}
