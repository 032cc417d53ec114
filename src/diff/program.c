/* program.c - the differences of two programs (pdiff_programs, diff.h):
 * program fields, then block by block (by index) its fields, its ops
 * (aligned by align.c) and its vars (vars.c). */
#include <string.h>

#include "../ir/attr_format.h"
#include "../ir/util.h"
#include "diff_internal.h"

void pdiff_emit(pdiff_cmp *c, pdiff_kind kind, const ir_op *x, long ia, const ir_op *y, long ib,
                const char *what, const char *a, const char *b)
{
    const ir_op *op = x ? x : y;
    const char *out = NULL;
    if (op && op->n_outputs && ir_op_outs(op)[0].n_args)
        out = ir_op_outs(op)[0].args[0];
    pdiff_item it = {kind, c->path_a, c->path_b, c->block, ia, ib,
                     op ? op->type : NULL, out, what, a, b};
    pdiff_report_add(c->r, &it);
}

/* "[a, b]", or NULL for an absent slot. */
static const char *slot_text(GString *g, const ir_slot *s)
{
    if (!s)
        return NULL;
    g_string_truncate(g, 0);
    g_string_append_c(g, '[');
    for (uint32_t k = 0; k < s->n_args; k++)
        g_string_append_printf(g, "%s%s", k ? ", " : "", s->args[k]);
    g_string_append_c(g, ']');
    return g->str;
}

/* Slots and attrs match by name and occurrence: the k-th of a name in one
 * op with the k-th of that name in the other (a file may repeat a name). */
static uint32_t slot_occurrence(const ir_slot *s, uint32_t i)
{
    uint32_t k = 0;
    for (uint32_t j = 0; j < i; j++)
        k += s[j].name == s[i].name;
    return k;
}

static const ir_slot *find_slot(const ir_slot *s, uint32_t n, const char *name, uint32_t k)
{
    for (uint32_t i = 0; i < n; i++)
        if (s[i].name == name && k-- == 0)
            return &s[i];
    return NULL;
}

static bool slot_equal(const ir_slot *s, const ir_slot *t)
{
    return s->n_args == t->n_args &&
           (!s->n_args || !memcmp(s->args, t->args, s->n_args * sizeof *s->args));
}

/* Every slot by name: changed, only in x, only in y. */
static void compare_slots(pdiff_cmp *c, const ir_op *x, long ia, const ir_op *y, long ib,
                          bool out)
{
    const ir_slot *sx = out ? ir_op_outs(x) : ir_op_ins(x), *sy = out ? ir_op_outs(y) : ir_op_ins(y);
    uint32_t nx = out ? x->n_outputs : x->n_inputs, ny = out ? y->n_outputs : y->n_inputs;
    pdiff_kind kind = out ? PDIFF_OUTPUT : PDIFF_INPUT;
    const char *word = out ? "output" : "input";
    for (uint32_t i = 0; i < nx; i++) {
        const ir_slot *t = find_slot(sy, ny, sx[i].name, slot_occurrence(sx, i));
        if (t && slot_equal(&sx[i], t))
            continue;
        g_string_printf(c->what, "%s %s", word, sx[i].name);
        pdiff_emit(c, kind, x, ia, y, ib, c->what->str, slot_text(c->va, &sx[i]),
                   slot_text(c->vb, t));
    }
    for (uint32_t i = 0; i < ny; i++) {
        if (find_slot(sx, nx, sy[i].name, slot_occurrence(sy, i)))
            continue;
        g_string_printf(c->what, "%s %s", word, sy[i].name);
        pdiff_emit(c, kind, x, ia, y, ib, c->what->str, NULL, slot_text(c->vb, &sy[i]));
    }
}

static bool attr_ignored(const pdiff_cmp *c, const char *name)
{
    if (!c->o->callstack && !strcmp(name, "op_callstack"))
        return true;
    for (size_t i = 0; i < c->o->n_ignore_attrs; i++)
        if (c->o->ignore_attrs[i] == name)
            return true;
    return false;
}

static uint32_t attr_occurrence(const ir_attr *a, uint32_t i)
{
    uint32_t k = 0;
    for (uint32_t j = 0; j < i; j++)
        k += a[j].name == a[i].name;
    return k;
}

static const ir_attr *find_attr(const ir_attr *a, uint32_t n, const char *name, uint32_t k)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i].name == name && k-- == 0)
            return &a[i];
    return NULL;
}

/* The attr's value as text, its type first when WITH_TYPE. */
static const char *attr_text(GString *g, const ir_attr *a, bool with_type)
{
    if (!a)
        return NULL;
    g_string_truncate(g, 0);
    if (with_type)
        g_string_append_printf(g, "%s ", ir_attr_type_name(a->type));
    ir_attr_format(g, a);
    return g->str;
}

/* Every attr by name, with its type: a value is equal only when its type
 * and its text are (floats print so that equal text is equal bits). */
static void compare_attrs(pdiff_cmp *c, const ir_op *x, long ia, const ir_op *y, long ib)
{
    const ir_attr *ax = ir_op_attrs(x), *ay = ir_op_attrs(y);
    for (uint32_t i = 0; i < x->n_attrs; i++) {
        if (attr_ignored(c, ax[i].name))
            continue;
        const ir_attr *t = find_attr(ay, y->n_attrs, ax[i].name, attr_occurrence(ax, i));
        bool typed = t && t->type != ax[i].type;
        const char *va = attr_text(c->va, &ax[i], typed), *vb = attr_text(c->vb, t, typed);
        if (vb && !strcmp(va, vb))
            continue;
        g_string_printf(c->what, "attr %s", ax[i].name);
        pdiff_emit(c, PDIFF_ATTR, x, ia, y, ib, c->what->str, va, vb);
    }
    for (uint32_t i = 0; i < y->n_attrs; i++) {
        if (attr_ignored(c, ay[i].name) ||
            find_attr(ax, x->n_attrs, ay[i].name, attr_occurrence(ay, i)))
            continue;
        g_string_printf(c->what, "attr %s", ay[i].name);
        pdiff_emit(c, PDIFF_ATTR, x, ia, y, ib, c->what->str, NULL,
                   attr_text(c->vb, &ay[i], false));
    }
}

static const char *bytes_text(GString *g, ir_bytes b)
{
    g_string_printf(g, "<%zu bytes>", b.len);
    return g->str;
}

static bool bytes_equal(ir_bytes x, ir_bytes y)
{
    return x.len == y.len && (!x.len || !memcmp(x.data, y.data, x.len));
}

static const char *opt_bool(bool has, bool v)
{
    return has ? (v ? "true" : "false") : "(unset)";
}

/* A matched pair of ops.  Two ops read from binary files with the same
 * bytes are equal, whatever is ignored: no attr is decoded. */
static void compare_op(pdiff_cmp *c, const ir_op *x, size_t ia, const ir_op *y, size_t ib)
{
    if (ir_op_same_bytes(x, y))
        return;
    compare_slots(c, x, (long)ia, y, (long)ib, false);
    compare_slots(c, x, (long)ia, y, (long)ib, true);
    if (c->o->ops_only)
        return;
    compare_attrs(c, x, (long)ia, y, (long)ib);
    if (x->has_is_target != y->has_is_target || x->is_target != y->is_target)
        pdiff_emit(c, PDIFF_OP, x, (long)ia, y, (long)ib, "is_target",
                   opt_bool(x->has_is_target, x->is_target),
                   opt_bool(y->has_is_target, y->is_target));
    ir_bytes ux = ir_op_unknown(x), uy = ir_op_unknown(y);
    if (!bytes_equal(ux, uy))
        pdiff_emit(c, PDIFF_OP, x, (long)ia, y, (long)ib, "unknown fields",
                   bytes_text(c->va, ux), bytes_text(c->vb, uy));
}

/* "X=a,b Y=c -> Out=d": an op inserted or removed, as dump --ops shows it. */
static const char *op_text(GString *g, const ir_op *op)
{
    g_string_truncate(g, 0);
    for (uint32_t i = 0; i < op->n_inputs + op->n_outputs; i++) {
        bool out = i >= op->n_inputs;
        const ir_slot *s = out ? &ir_op_outs(op)[i - op->n_inputs] : &ir_op_ins(op)[i];
        if (out && i == op->n_inputs)
            g_string_append(g, g->len ? " ->" : "->");
        g_string_append_printf(g, "%s%s=", g->len ? " " : "", s->name);
        for (uint32_t k = 0; k < s->n_args; k++)
            g_string_append_printf(g, "%s%s", k ? "," : "", s->args[k]);
    }
    if (!op->n_outputs)
        g_string_append(g, g->len ? " ->" : "->");
    return g->str;
}

/* The ops between two matched pairs: those of one type at the same
 * distance from the gap's start are one op changed (an output renamed);
 * the rest were removed from A or inserted in B. */
static void gap(pdiff_cmp *c, const ir_block *x, size_t a0, size_t a1, const ir_block *y,
                size_t b0, size_t b1)
{
    while (a0 < a1 && b0 < b1 && x->ops[a0]->type == y->ops[b0]->type) {
        compare_op(c, x->ops[a0], a0, y->ops[b0], b0);
        a0++, b0++;
    }
    for (size_t i = a0; i < a1; i++)
        pdiff_emit(c, PDIFF_OP_REMOVED, x->ops[i], (long)i, NULL, -1, "",
                   op_text(c->va, x->ops[i]), NULL);
    for (size_t j = b0; j < b1; j++)
        pdiff_emit(c, PDIFF_OP_INSERTED, NULL, -1, y->ops[j], (long)j, "", NULL,
                   op_text(c->vb, y->ops[j]));
}

static void compare_ops(pdiff_cmp *c, const ir_block *x, const ir_block *y)
{
    pdiff_pair *pairs;
    size_t n = pdiff_align(x->ops, x->n_ops, y->ops, y->n_ops, &pairs);
    size_t a = 0, b = 0;
    for (size_t k = 0; k <= n; k++) {
        size_t pa = k < n ? pairs[k].a : x->n_ops, pb = k < n ? pairs[k].b : y->n_ops;
        gap(c, x, a, pa, y, b, pb);
        if (k < n) {
            compare_op(c, x->ops[pa], pa, y->ops[pb], pb);
            a = pa + 1, b = pb + 1;
        }
    }
    g_free(pairs);
}

static void compare_block_fields(pdiff_cmp *c, const ir_block *x, const ir_block *y)
{
    if (x->parent_idx != y->parent_idx) {
        g_string_printf(c->va, "%d", (int)x->parent_idx);
        g_string_printf(c->vb, "%d", (int)y->parent_idx);
        pdiff_emit(c, PDIFF_BLOCK, NULL, -1, NULL, -1, "parent_idx", c->va->str, c->vb->str);
    }
    if (x->has_forward_block_idx != y->has_forward_block_idx ||
        (x->has_forward_block_idx && x->forward_block_idx != y->forward_block_idx)) {
        g_string_printf(c->va, "%d", (int)x->forward_block_idx);
        g_string_printf(c->vb, "%d", (int)y->forward_block_idx);
        pdiff_emit(c, PDIFF_BLOCK, NULL, -1, NULL, -1, "forward_block_idx",
                   x->has_forward_block_idx ? c->va->str : "(unset)",
                   y->has_forward_block_idx ? c->vb->str : "(unset)");
    }
    if (!bytes_equal(x->unknown, y->unknown))
        pdiff_emit(c, PDIFF_BLOCK, NULL, -1, NULL, -1, "unknown fields",
                   bytes_text(c->va, x->unknown), bytes_text(c->vb, y->unknown));
}

static const char *block_text(GString *g, const ir_block *b)
{
    g_string_printf(g, "parent %d, %zu ops, %zu vars", (int)b->parent_idx, b->n_ops, b->n_vars);
    return g->str;
}

static void compare_program_fields(pdiff_cmp *c, const ir_program *a, const ir_program *b)
{
    if (a->has_version != b->has_version || a->version != b->version) {
        g_string_printf(c->va, "%" G_GINT64_FORMAT, (gint64)a->version);
        g_string_printf(c->vb, "%" G_GINT64_FORMAT, (gint64)b->version);
        pdiff_emit(c, PDIFF_PROGRAM, NULL, -1, NULL, -1, "program version",
                   a->has_version ? c->va->str : "(unset)",
                   b->has_version ? c->vb->str : "(unset)");
    }
    if (a->has_op_version_map != b->has_op_version_map ||
        !bytes_equal(a->op_version_map, b->op_version_map))
        pdiff_emit(c, PDIFF_PROGRAM, NULL, -1, NULL, -1, "program op_version_map",
                   a->has_op_version_map ? bytes_text(c->va, a->op_version_map) : NULL,
                   b->has_op_version_map ? bytes_text(c->vb, b->op_version_map) : NULL);
    if (!bytes_equal(a->unknown, b->unknown) || !bytes_equal(a->version_unknown, b->version_unknown))
        pdiff_emit(c, PDIFF_PROGRAM, NULL, -1, NULL, -1, "program unknown fields",
                   bytes_text(c->va, a->unknown), bytes_text(c->vb, b->unknown));
}

size_t pdiff_programs(const ir_program *a, const ir_program *b, const char *path_a,
                      const char *path_b, const pdiff_opts *o, pdiff_report *r)
{
    pdiff_cmp c = {o, r, path_a, path_b, -1, g_string_new(NULL), g_string_new(NULL),
                   g_string_new(NULL)};
    size_t before = pdiff_report_count(r);
    if (!o->ops_only)
        compare_program_fields(&c, a, b);
    size_t n = a->n_blocks > b->n_blocks ? a->n_blocks : b->n_blocks;
    for (size_t i = 0; i < n; i++) {
        c.block = (long)i;
        if (i >= b->n_blocks) {
            pdiff_emit(&c, PDIFF_BLOCK_REMOVED, NULL, -1, NULL, -1, "",
                       block_text(c.va, a->blocks[i]), NULL);
        } else if (i >= a->n_blocks) {
            pdiff_emit(&c, PDIFF_BLOCK_ADDED, NULL, -1, NULL, -1, "", NULL,
                       block_text(c.vb, b->blocks[i]));
        } else {
            if (!o->ops_only)
                compare_block_fields(&c, a->blocks[i], b->blocks[i]);
            compare_ops(&c, a->blocks[i], b->blocks[i]);
            if (!o->ops_only)
                pdiff_compare_vars(&c, a->blocks[i], b->blocks[i]);
        }
    }
    g_string_free(c.va, TRUE);
    g_string_free(c.vb, TRUE);
    g_string_free(c.what, TRUE);
    return pdiff_report_count(r) - before;
}
