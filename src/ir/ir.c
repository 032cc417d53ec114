/* ir.c - programs, blocks and vars; see ir.h for the contracts. */
#include "ir.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ckd.h"
#include "env_internal.h"
#include "ir_internal.h"
#include "pmap.h"
#include "util.h"

ir_program *ir_program_new(void)
{
    ir_arena *a = ir_arena_new();
    ir_arena_expect(a, pdt_env_current->program_expect);
    pdt_env_current->program_expect = 0;    /* for this program only */
    ir_program *p = ir_arena_alloc(a, sizeof *p);
    p->arena = a;
    return p;
}

void ir_program_free(ir_program *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_blocks; i++) {
        ir_block *b = p->blocks[i];
        if (b->var_map) {
            pmap_free(b->var_map);
            free(b->var_map);
        }
        free(b->vars);
        free(b->ops);
    }
    ir_scope_free(p);
    pmap_destroy(p->copy_notes);
    if (p->input_free)
        p->input_free(p->input_bytes);
    else
        free(p->input_bytes);
    ir_arena_free(p->arena);
}

ir_block *ir_program_add_block(ir_program *p, int32_t parent_idx)
{
    p->blocks = ir_grow(p->arena, p->blocks, sizeof *p->blocks, p->n_blocks,
                        &p->cap_blocks, p->n_blocks + 1);
    ir_block *b = ir_arena_alloc(p->arena, sizeof *b);
    b->program = p;
    b->idx = (int32_t)p->n_blocks;
    b->parent_idx = parent_idx;
    b->forward_block_idx = -1;
    b->var_map = xcalloc(1, sizeof(pmap));
    p->blocks[p->n_blocks++] = b;
    return b;
}

ir_block *ir_program_block(const ir_program *p, int32_t idx)
{
    if (idx < 0 || (size_t)idx >= p->n_blocks)
        return NULL;
    return p->blocks[idx];
}

ir_block *ir_block_parent(const ir_block *b)
{
    if (b->idx == 0 || b->parent_idx == b->idx)
        return NULL;
    return ir_program_block(b->program, b->parent_idx);
}

/* ---- vars ---- */

ir_var *ir_block_find_var(const ir_block *b, const char *name)
{
    return pmap_get(b->var_map, ir_intern(name));
}

void ir_block_prefetch_args(const ir_block *b, const ir_op *op)
{
    for (size_t s = 0; s < op->n_inputs; s++)
        for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++)
            pmap_prefetch(b->var_map, ir_op_ins(op)[s].args[a]);
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
            pmap_prefetch(b->var_map, ir_op_outs(op)[s].args[a]);
}

ir_var *ir_block_find_var_recursive(const ir_block *b, const char *name)
{
    name = ir_intern(name);
    ir_var *own = pmap_get(b->var_map, name);
    if (own)
        return own;
    bool answered;
    ir_var *found = ir_scope_lookup(b, name, &answered);
    if (answered)
        return found;
    size_t hops = 0;
    for (; b && hops <= b->program->n_blocks; b = ir_block_parent(b), hops++) {
        ir_var *v = pmap_get(b->var_map, name);
        if (v)
            return v;
    }
    return NULL;
}

/* A block's var array lives outside the arena (xmalloc, freed with the
 * program): growing it leaves no copy behind, and a reserve sizes it
 * exactly (issue 14 point 2). */
static void vars_room(ir_block *b, size_t cap)
{
    if (cap <= b->cap_vars)
        return;
    b->vars = xrealloc_n(b->vars, cap, sizeof *b->vars);
    b->cap_vars = cap;
}

ir_var *ir_block_add_var_raw(ir_block *b, const char *name)
{
    ir_program *p = b->program;
    ir_var *v = ir_arena_alloc(p->arena, sizeof *v);
    v->name = ir_intern(name);
    /* 4G vars would take over 200 GB: the sequence cannot wrap. */
    v->order = (uint32_t)p->var_seq++;
    if (b->n_vars == b->cap_vars)
        vars_room(b, b->cap_vars > 2 ? 2 * b->cap_vars : 4);
    b->vars[b->n_vars++] = v;
    if (!pmap_get(b->var_map, v->name))
        ir_scope_declare(b, v->name);
    pmap_put(b->var_map, v->name, v);
    return v;
}

void ir_block_reserve_vars(ir_block *b, size_t n)
{
    vars_room(b, b->n_vars + n);
    pmap_reserve(b->var_map, n);
}

ir_var *ir_block_var(ir_block *b, const char *name)
{
    ir_var *v = ir_block_find_var(b, name);
    if (v)
        return v;
    v = ir_block_add_var_raw(b, name);
    v->type = IR_LOD_TENSOR;
    v->tensor_slot = IR_TD_LOD_TENSOR;
    v->dtype = IR_FP32;
    v->has_persistable = true;
    return v;
}

_Static_assert(sizeof(ir_var) <= 48, "an ordinary var fits in 48 bytes");

static const ir_var_rare no_rare;

const ir_var_rare *ir_var_rare_of(const ir_var *v)
{
    return v->rare ? v->rare : &no_rare;
}

ir_var_rare *ir_var_rare_mut(ir_program *p, ir_var *v)
{
    if (!v->rare)
        v->rare = ir_arena_alloc(p->arena, sizeof *v->rare);
    return v->rare;
}

static bool rare_is_empty(const ir_var_rare *r)
{
    return !r->has_reader && !r->has_tuple && !r->reader_raw.len && !r->tuple_raw.len &&
           !r->type_unknown.len && !r->tensor_unknown.len && !r->lod_unknown.len &&
           !r->n_var_attrs && !r->unknown.len;
}

void ir_var_set_rare(ir_arena *a, ir_var *v, const ir_var_rare *r)
{
    v->rare = rare_is_empty(r) ? NULL : ir_arena_dup(a, r, sizeof *r);
}

static ir_var_rare *rare_copy(ir_arena *a, const ir_var_rare *src)
{
    ir_var_rare *r = ir_arena_alloc(a, sizeof *r);
    r->has_reader = src->has_reader;
    r->has_tuple = src->has_tuple;
    r->reader_raw = ir_bytes_copy(a, src->reader_raw);
    r->tuple_raw = ir_bytes_copy(a, src->tuple_raw);
    r->type_unknown = ir_bytes_copy(a, src->type_unknown);
    r->tensor_unknown = ir_bytes_copy(a, src->tensor_unknown);
    r->lod_unknown = ir_bytes_copy(a, src->lod_unknown);
    r->n_var_attrs = src->n_var_attrs;
    if (src->n_var_attrs) {
        r->var_attrs = ir_arena_alloc(a, src->n_var_attrs * sizeof *r->var_attrs);
        for (size_t i = 0; i < src->n_var_attrs; i++)
            ir_attr_copy(a, &r->var_attrs[i], &src->var_attrs[i]);
    }
    r->unknown = ir_bytes_copy(a, src->unknown);
    return r;
}

void ir_var_copy_desc(ir_arena *a, ir_var *dst, const ir_var *src)
{
    const char *name = dst->name;
    uint32_t order = dst->order;
    bool from_input = dst->from_input;
    *dst = *src;
    dst->name = name;
    dst->order = order;
    dst->from_input = from_input;
    dst->removed = false;
    dst->dims = src->n_dims ? ir_arena_memdup(a, src->dims, src->n_dims * sizeof(int64_t)) : NULL;
    dst->rare = src->rare ? rare_copy(a, src->rare) : NULL;
}

ir_var *ir_block_clone_var(ir_block *b, const ir_var *src, const char *name)
{
    ir_var *v = ir_block_find_var(b, name);
    if (!v)
        v = ir_block_add_var_raw(b, name);
    ir_var_copy_desc(b->program->arena, v, src);
    return v;
}

size_t ir_block_n_var_names(const ir_block *b)
{
    return ((const pmap *)b->var_map)->n;
}

void ir_block_remove_var(ir_block *b, const char *name)
{
    ir_var *v = ir_block_find_var(b, name);
    if (!v)
        return;
    v->removed = true;
    pmap_remove(b->var_map, v->name);
    ir_scope_undeclare(b, v->name);
}

size_t ir_block_live_vars(const ir_block *b, ir_var ***out, ir_arena *scratch)
{
    ir_var **list = ir_arena_alloc(scratch, (b->n_vars + 1) * sizeof *list);
    size_t n = 0;
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed)
            list[n++] = b->vars[i];
    *out = list;
    return n;
}

void ir_var_share_dims(ir_var *dst, const ir_var *src)
{
    dst->dims = src->dims;
    dst->n_dims = src->n_dims;
    if (dst->tensor_slot == IR_TD_NONE)
        dst->tensor_slot = dst->type == IR_SELECTED_ROWS ? IR_TD_SELECTED_ROWS : IR_TD_LOD_TENSOR;
}

void ir_var_set_dims(ir_program *p, ir_var *v, const int64_t *dims, size_t n)
{
    if (n > UINT32_MAX) {  /* the decoders refuse such vars */
        fprintf(stderr, "pdtrans: fatal: var '%s' given %zu dims\n", v->name, n);
        abort();
    }
    v->dims = n ? ir_arena_memdup(p->arena, dims, n * sizeof *dims) : NULL;
    v->n_dims = (uint32_t)n;
    if (v->tensor_slot == IR_TD_NONE)
        v->tensor_slot = v->type == IR_SELECTED_ROWS ? IR_TD_SELECTED_ROWS
                                                     : IR_TD_LOD_TENSOR;
}

int64_t ir_var_numel(const ir_var *v)
{
    int64_t n = 1;
    bool unknown = false, overflow = false, zero = false;
    for (size_t i = 0; i < v->n_dims; i++) {
        if (v->dims[i] < 0)
            unknown = true;
        else if (v->dims[i] == 0)
            zero = true;
        else
            overflow |= ckd_mul_i64(&n, n, v->dims[i]);
    }
    return unknown ? -1 : zero ? 0 : overflow ? -2 : n;
}

bool ir_var_has_dims_below_minus_one(const ir_var *v)
{
    for (size_t i = 0; i < v->n_dims; i++)
        if (v->dims[i] < -1)
            return true;
    return false;
}

const char *ir_dims_text(const int64_t *dims, size_t n, char *buf, size_t len)
{
    if (!len)
        return buf;
    size_t used = 0;
    buf[0] = '\0';
    /* Room kept for "...]" and the NUL, so a cut shape still says so. */
    size_t keep = len > 5 ? len - 5 : 0;
    used += (size_t)snprintf(buf, len, "[");
    for (size_t i = 0; i < n && used < len; i++) {
        char one[24];
        int w = snprintf(one, sizeof one, "%s%" PRId64, i ? ", " : "", dims[i]);
        if (used + (size_t)w > keep) {
            snprintf(buf + used, len - used, "...]");
            return buf;
        }
        memcpy(buf + used, one, (size_t)w + 1);
        used += (size_t)w;
    }
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

/* ---- renaming across blocks ---- */

static bool descends_from(const ir_block *b, const ir_block *root)
{
    int below = ir_scope_below(b, root);
    if (below >= 0)
        return below;
    size_t hops = 0;
    for (; b && hops <= b->program->n_blocks; b = ir_block_parent(b), hops++)
        if (b == root)
            return true;
    return false;
}

void ir_block_rename_var(ir_block *b, const char *from, const char *to)
{
    from = ir_intern(from);
    to = ir_intern(to);
    if (from == to)
        return;
    ir_program *p = b->program;
    ir_var *v = ir_block_find_var(b, from);
    if (v) {
        pmap_remove(b->var_map, from);
        ir_scope_undeclare(b, from);
        ir_var *clash = ir_block_find_var(b, to);
        if (clash)
            ir_block_remove_var(b, to);
        /* Paddle's RenameVar re-keys the var, so Flush writes it among the
         * new vars: mirror that by re-adding it at the end. */
        ir_var *nv = ir_block_add_var_raw(b, to);
        ir_var_copy_desc(p->arena, nv, v);
        nv->from_input = false;
        v->removed = true;
    }
    for (size_t i = 0; i < p->n_blocks; i++) {
        ir_block *blk = p->blocks[i];
        if (!descends_from(blk, b))
            continue;
        for (size_t k = 0; k < blk->n_ops; k++) {
            ir_op_rename_input(blk->ops[k], from, to);
            ir_op_rename_output(blk->ops[k], from, to);
        }
    }
}

/* ---- def-use ---- */

typedef struct {
    GArray *writers, *readers;
} defuse_entry;

struct ir_defuse {
    pmap map;               /* interned name -> defuse_entry* */
};

static void entry_free(defuse_entry *e)
{
    g_array_free(e->writers, TRUE);
    g_array_free(e->readers, TRUE);
    free(e);
}

static void defuse_add(pmap *map, const char *name, size_t pos, bool write)
{
    defuse_entry *e = pmap_get(map, name);
    if (!e) {
        e = xmalloc(sizeof *e);
        e->writers = g_array_new(FALSE, FALSE, sizeof(size_t));
        e->readers = g_array_new(FALSE, FALSE, sizeof(size_t));
        pmap_put(map, name, e);
    }
    GArray *arr = write ? e->writers : e->readers;
    if (arr->len && g_array_index(arr, size_t, arr->len - 1) == pos)
        return;
    g_array_append_val(arr, pos);
}

ir_defuse *ir_defuse_build(const ir_block *b)
{
    ir_defuse *d = xcalloc(1, sizeof *d);
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
                defuse_add(&d->map, ir_op_ins(op)[s].args[k], i, false);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
                defuse_add(&d->map, ir_op_outs(op)[s].args[k], i, true);
    }
    return d;
}

void ir_defuse_free(ir_defuse *d)
{
    if (!d)
        return;
    PMAP_FOR(&d->map, slot)
        entry_free(slot->val);
    pmap_free(&d->map);
    free(d);
}

const size_t *ir_defuse_writers(const ir_defuse *d, const char *name, size_t *n)
{
    defuse_entry *e = pmap_get(&d->map, ir_intern(name));
    *n = e ? e->writers->len : 0;
    return e && e->writers->len ? (const size_t *)(void *)e->writers->data : NULL;
}

const size_t *ir_defuse_readers(const ir_defuse *d, const char *name, size_t *n)
{
    defuse_entry *e = pmap_get(&d->map, ir_intern(name));
    *n = e ? e->readers->len : 0;
    return e && e->readers->len ? (const size_t *)(void *)e->readers->data : NULL;
}
