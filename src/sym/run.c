/* run.c - the symbolic run of one process's ops (run.h).  An op the job
 * does not model (job.c's dist hook) and that is not sum, scale, a row
 * split or a row concat is an uninterpreted function: its type, its
 * input slots and their arg counts, and its semantic attrs (framework
 * attrs such as op_role, op_role_var, op_namescope, op_callstack and
 * op_device excluded) make its identity; a sub-block it runs is part of
 * that identity as the text of its ops.  Each output is a projection. */
#include <glib.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/attr_format.h"
#include "../passes/era/era.h" /* pdt_era_extra_at_default: an extra at its default */
#include "../ir/util.h"
#include "run.h"

void sym_fail(sym_ctx *c, const char *label, int block, size_t i, const ir_op *op,
              const char *fmt, ...)
{
    int n = snprintf(c->err, sizeof c->err, "%s: block %d, op %zu '%s': ", label, block, i,
                     op->type);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < sizeof c->err)
        vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
    va_end(ap);
}

void sym_proc_clear(sym_proc *p)
{
    pmap_free(&p->vals);
    pmap_free(&p->sites);
}

int64_t sym_var_rows(ir_block *b, const char *name)
{
    ir_var *v = b ? ir_block_find_var_recursive(b, name) : NULL;
    return v && v->n_dims && v->dims[0] > 0 ? v->dims[0] : -1;
}

sym_term *sym_read(sym_ctx *c, sym_proc *p, ir_block *b, const char *name)
{
    sym_term *t = pmap_get(&p->vals, name);
    if (t)
        return t;
    ir_var *v = b ? ir_block_find_var_recursive(b, name) : NULL;
    int64_t rows = sym_var_rows(b, name);
    if (v && v->persistable)
        return sym_leaf(c->st, name, rows);
    if (p->feed_tag)
        return sym_leaf(c->st, ir_internf("%s@%s", name, p->feed_tag), rows);
    return sym_leaf(c->st, ir_internf("unset:%s", name), rows);
}

void sym_write(sym_proc *p, const char *name, sym_term *t, const sym_site *site)
{
    pmap_put(&p->vals, name, t);
    pmap_put(&p->sites, name, (void *)site);
}

static int by_name(const void *x, const void *y)
{
    return strcmp((*(const ir_attr *const *)x)->name, (*(const ir_attr *const *)y)->name);
}

/* fill_constant's str_value, when set, is the value the kernel parses
 * (fill_constant_op.h from 1.7); one that parses to `value` adds nothing
 * (2.2's ConstantInitializer writes str(float(value)), older ones ""). */
static bool str_value_redundant(const ir_op *op, const ir_attr *a)
{
    if (strcmp(op->type, "fill_constant") || strcmp(a->name, "str_value") ||
        a->type != IR_ATTR_STRING)
        return false;
    if (!a->s.len)
        return true;
    char buf[64];
    if (a->s.len >= sizeof buf)
        return false;
    memcpy(buf, a->s.data, a->s.len);
    buf[a->s.len] = '\0';
    char *end;
    float f = strtof(buf, &end);
    const ir_attr *v = ir_op_attr(op, "value");
    float want = v && v->type == IR_ATTR_FLOAT ? v->f : 0.0f;
    return *end == '\0' && f == want;
}

bool sym_attr_is_semantic(const ir_op *op, const ir_attr *a)
{
    return !ir_attr_is_framework(a->name) && !ir_attr_is_default_kernel_choice(a) &&
           !pdt_era_extra_at_default(op->type, a) && !str_value_redundant(op, a);
}

static void block_text(GString *g, ir_program *prog, int idx, int depth);

/* The semantic attrs, sorted by name; a block attr as its ops' text;
 * fill_constant's shape without its first dim (the rows, kept apart). */
static void attrs_text(GString *g, ir_program *prog, const ir_op *op, int depth)
{
    ir_attr *attrs = ir_op_attrs(op);
    const ir_attr **v = xmalloc_n(op->n_attrs + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < op->n_attrs; i++)
        if (sym_attr_is_semantic(op, &attrs[i]))
            v[n++] = &attrs[i];
    qsort(v, n, sizeof *v, by_name);
    bool fill = !strcmp(op->type, "fill_constant");
    for (size_t i = 0; i < n; i++) {
        const ir_attr *a = v[i];
        g_string_append_printf(g, "%s%s=", i ? ", " : "", a->name);
        if (a->type == IR_ATTR_BLOCK) {
            block_text(g, prog, a->block_idx, depth + 1);
        } else if (a->type == IR_ATTR_BLOCKS) {
            for (size_t k = 0; k < a->n_blocks_idx; k++)
                block_text(g, prog, a->blocks_idx[k], depth + 1);
        } else if (fill && !strcmp(a->name, "shape") &&
                   (a->type == IR_ATTR_INTS || a->type == IR_ATTR_LONGS)) {
            size_t nd = a->type == IR_ATTR_INTS ? a->n_ints : a->n_longs;
            g_string_append(g, "[rows");
            for (size_t k = 1; k < nd; k++)
                g_string_append_printf(g, ", %lld",
                                       (long long)(a->type == IR_ATTR_INTS ? a->ints[k]
                                                                           : a->longs[k]));
            g_string_append_c(g, ']');
        } else {
            ir_attr_format(g, a);
        }
    }
    free(v);
}

static void slots_text(GString *g, const ir_slot *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        g_string_append_printf(g, " %s=", s[i].name);
        for (uint32_t k = 0; k < s[i].n_args; k++)
            g_string_append_printf(g, "%s%s", k ? "," : "", s[i].args[k]);
    }
}

/* A sub-block's ops as text: part of the identity of the op running it. */
static void block_text(GString *g, ir_program *prog, int idx, int depth)
{
    ir_block *b = ir_program_block(prog, idx);
    if (!b || depth > 16) {
        g_string_append_printf(g, "{block %d?}", idx);
        return;
    }
    g_string_append_c(g, '{');
    for (size_t i = 0; i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        g_string_append_printf(g, "%s%s(", i ? "; " : "", op->type);
        slots_text(g, ir_op_ins(op), op->n_inputs);
        g_string_append(g, " ->");
        slots_text(g, ir_op_outs(op), op->n_outputs);
        g_string_append(g, " | ");
        attrs_text(g, prog, op, depth);
        g_string_append_c(g, ')');
    }
    g_string_append_c(g, '}');
}

static int by_slot(const void *x, const void *y)
{
    return strcmp((*(const ir_slot *const *)x)->name, (*(const ir_slot *const *)y)->name);
}

/* Input args in slot-name order, with their slots, writers and vars. */
typedef struct {
    sym_term **args;
    const char **slots, **vars;
    const sym_site **sites;
    uint32_t n;
} sym_ins;

static void gather(sym_ctx *c, sym_proc *p, ir_block *b, const ir_slot *const *sl, uint32_t ns,
                   sym_ins *in)
{
    size_t total = 0;
    for (uint32_t i = 0; i < ns; i++)
        total += sl[i]->n_args;
    in->args = xmalloc_n(total + 1, sizeof *in->args);
    in->slots = xmalloc_n(total + 1, sizeof *in->slots);
    in->vars = xmalloc_n(total + 1, sizeof *in->vars);
    in->sites = xmalloc_n(total + 1, sizeof *in->sites);
    in->n = 0;
    for (uint32_t i = 0; i < ns; i++)
        for (uint32_t k = 0; k < sl[i]->n_args; k++) {
            const char *v = sl[i]->args[k];
            in->args[in->n] = sym_read(c, p, b, v);
            in->slots[in->n] = sl[i]->name;
            in->vars[in->n] = v;
            in->sites[in->n++] = pmap_get(&p->sites, v);
        }
}

static void ins_free(sym_ins *in)
{
    free(in->args);
    free(in->slots);
    free(in->vars);
    free(in->sites);
}

static bool is_random_init(const ir_op *op)
{
    static const char *const t[] = {"uniform_random", "gaussian_random",
                                    "truncated_gaussian_random", "randint", "randperm", NULL};
    for (size_t i = 0; t[i]; i++)
        if (!strcmp(op->type, t[i]))
            return true;
    return false;
}

static int64_t fill_rows(const ir_op *op)
{
    ir_attr *a = strcmp(op->type, "fill_constant") ? NULL : ir_op_attr(op, "shape");
    if (a && a->type == IR_ATTR_INTS && a->n_ints)
        return a->ints[0];
    if (a && a->type == IR_ATTR_LONGS && a->n_longs)
        return a->longs[0];
    return -1;
}

static void run_generic(sym_ctx *c, sym_proc *p, ir_program *prog, ir_block *b, ir_op *op,
                        const sym_site *site)
{
    const ir_slot **sl = xmalloc_n(op->n_inputs + 1, sizeof *sl);
    uint32_t ns = 0;
    for (uint32_t i = 0; i < op->n_inputs; i++)
        if (ir_op_ins(op)[i].n_args)
            sl[ns++] = &ir_op_ins(op)[i];
    /* a sub-block may leave an output as it was (conditional_block with a
     * false Cond): the outputs' values before the op are inputs too (not
     * the Scope output, which holds no value) */
    bool sub = ir_op_has_attr(op, "sub_block");
    ir_slot *prev = sub ? xcalloc(op->n_outputs + 1, sizeof *prev) : NULL;
    const ir_slot **all = xmalloc_n(op->n_inputs + op->n_outputs + 1, sizeof *all);
    memcpy(all, sl, ns * sizeof *sl);
    free(sl);
    sl = all;
    for (uint32_t i = 0; sub && i < op->n_outputs; i++)
        if (ir_op_outs(op)[i].n_args && strcmp(ir_op_outs(op)[i].name, "Scope")) {
            prev[i] = ir_op_outs(op)[i];
            prev[i].name = ir_internf("%s@before", ir_op_outs(op)[i].name);
            sl[ns++] = &prev[i];
        }
    qsort(sl, ns, sizeof *sl, by_slot);
    sym_ins in;
    gather(c, p, b, sl, ns, &in);
    GString *key = g_string_new(NULL);
    for (uint32_t i = 0; i < ns; i++)
        g_string_append_printf(key, "%s%s:%u", i ? "," : "", sl[i]->name, sl[i]->n_args);
    g_string_append(key, " | ");
    attrs_text(key, prog, op, 0);
    int64_t fr = in.n ? -1 : fill_rows(op);
    if (!in.n && is_random_init(op))   /* two params' initialisers are two values */
        for (uint32_t i = 0; i < op->n_outputs; i++)
            for (uint32_t k = 0; k < ir_op_outs(op)[i].n_args; k++)
                g_string_append_printf(key, " -> %s", ir_op_outs(op)[i].args[k]);
    sym_term *app = sym_app(c->st, op->type, ir_intern(key->str), in.args, in.slots, in.n,
                            fr > 0 ? fr : -1);
    sym_note_args(c->st, app, in.sites, in.vars);
    for (uint32_t i = 0; i < op->n_outputs; i++)
        for (uint32_t k = 0; k < ir_op_outs(op)[i].n_args; k++) {
            const char *v = ir_op_outs(op)[i].args[k];
            if (!*v)
                continue;
            sym_term *t = in.n || fr <= 0 ? sym_proj(c->st, app, ir_op_outs(op)[i].name, k,
                                                     sym_var_rows(b, v))
                                          : app;
            sym_write(p, v, t, site);
        }
    g_string_free(key, TRUE);
    ins_free(&in);
    free(sl);
    free(prev);
}

void sym_run_generic(sym_ctx *c, sym_proc *p, ir_program *prog, ir_block *b, ir_op *op,
                     const sym_site *site)
{
    run_generic(c, p, prog, b, op, site);
}

/* sum and scale (without a ScaleTensor), the interpreted arithmetic. */
static bool run_arith(sym_ctx *c, sym_proc *p, ir_block *b, ir_op *op, const sym_site *site)
{
    const ir_slot *x = ir_op_input(op, "X"), *st = ir_op_input(op, "ScaleTensor");
    const char *out = ir_op_output1(op, "Out");
    bool sum = !strcmp(op->type, "sum"), scale = !strcmp(op->type, "scale");
    if (!(sum || (scale && (!st || !st->n_args))) || !x || !x->n_args || !out ||
        (scale && x->n_args != 1))
        return false;
    sym_ins in;
    gather(c, p, b, &x, 1, &in);
    sym_term *t = sum ? sym_sum(c->st, in.args, in.n)
                      : sym_scale(c->st, in.args[0], ir_op_get_float(op, "scale", 1.0),
                                  ir_op_get_float(op, "bias", 0.0),
                                  ir_op_get_bool(op, "bias_after_scale", true));
    if (t->n == in.n && (t->kind == SYM_SUM || t->kind == SYM_SCALE))
        sym_note_args(c->st, t, in.sites, in.vars);
    sym_write(p, out, t, site);
    ins_free(&in);
    return true;
}

/* split_byref, split and split_selected_rows along rows, by `sections`
 * (`height_sections`) or into `num` equal parts. */
static bool run_split(sym_ctx *c, sym_proc *p, ir_block *b, ir_op *op, const sym_site *site)
{
    bool sr = !strcmp(op->type, "split_selected_rows");
    if (!sr && strcmp(op->type, "split_byref") && strcmp(op->type, "split"))
        return false;
    const ir_slot *out = ir_op_output(op, "Out");
    const char *xn = ir_op_input1(op, "X");
    if (!out || !out->n_args || !xn || ir_op_get_int(op, "axis", 0) != 0)
        return false;
    sym_term *x = sym_read(c, p, b, xn);
    ir_attr *sec = ir_op_attr(op, sr ? "height_sections" : "sections");
    size_t ns = !sec ? 0 : sec->type == IR_ATTR_INTS ? sec->n_ints
                       : sec->type == IR_ATTR_LONGS ? sec->n_longs : 0;
    if (ns && ns != out->n_args)
        return false;
    if (!ns && (x->rows <= 0 || x->rows % out->n_args))
        return false;
    int64_t off = 0;
    for (uint32_t k = 0; k < out->n_args; k++) {
        int64_t r = !ns ? x->rows / out->n_args
                  : sec->type == IR_ATTR_INTS ? sec->ints[k] : sec->longs[k];
        sym_write(p, out->args[k], sym_slice(c->st, x, off, r), site);
        off += r;
    }
    return true;
}

static bool run_concat(sym_ctx *c, sym_proc *p, ir_block *b, ir_op *op, const sym_site *site)
{
    const ir_slot *x = ir_op_input(op, "X"), *at = ir_op_input(op, "AxisTensor");
    const char *out = ir_op_output1(op, "Out");
    if (strcmp(op->type, "concat") || !x || !x->n_args || !out || (at && at->n_args) ||
        ir_op_get_int(op, "axis", 0) != 0)
        return false;
    sym_ins in;
    gather(c, p, b, &x, 1, &in);
    for (uint32_t k = 0; k < in.n; k++)
        if (in.args[k]->rows < 0)
            in.args[k]->rows = sym_var_rows(b, in.vars[k]);
    sym_write(p, out, sym_concat(c->st, in.args, in.n), site);
    ins_free(&in);
    return true;
}

bool sym_run_op(sym_ctx *c, sym_proc *p, ir_program *prog, const char *label, int block,
                size_t i)
{
    ir_block *b = ir_program_block(prog, block);
    ir_op *op = b->ops[i];
    if (!strcmp(op->type, "feed") || !strcmp(op->type, "fetch") ||
        !strcmp(op->type, "delete_var"))
        return true;
    const sym_site *site = sym_site_make(c->st, label, block, (int)i, op);
    sym_store_set_site(c->st, site);
    int d = c->dist ? c->dist(c, p, prog, block, i, op) : 0;
    if (d)
        return d > 0;
    if (!strcmp(op->type, "c_sync_calc_stream") || !strcmp(op->type, "c_sync_comm_stream")) {
        const ir_slot *x = ir_op_input(op, "X"), *o = ir_op_output(op, "Out");
        for (uint32_t k = 0; x && o && k < x->n_args && k < o->n_args; k++)
            sym_write(p, o->args[k], sym_read(c, p, b, x->args[k]), pmap_get(&p->sites, x->args[k]));
        return true;
    }
    if (!sym_fold_int(c, p, b, op, site) && !run_arith(c, p, b, op, site) &&
        !run_split(c, p, b, op, site) && !run_concat(c, p, b, op, site))
        run_generic(c, p, prog, b, op, site);
    sym_store_set_site(c->st, NULL);
    return true;
}

bool sym_run_block(sym_ctx *c, sym_proc *p, ir_program *prog, const char *label, int block)
{
    ir_block *b = ir_program_block(prog, block);
    if (!b) {
        snprintf(c->err, sizeof c->err, "%s: no block %d", label, block);
        return false;
    }
    for (size_t i = 0; i < b->n_ops; i++)
        if (!sym_run_op(c, p, prog, label, block, i))
            return false;
    return true;
}

/* Runs op with its var `w` holding `t` for the op only. */
void sym_run_with(sym_ctx *c, sym_proc *p, ir_program *prog, ir_block *b, ir_op *op,
                  const sym_site *site, const char *w, sym_term *t, const sym_site *t_site)
{
    sym_term *old = pmap_get(&p->vals, w);
    const sym_site *old_site = pmap_get(&p->sites, w);
    sym_write(p, w, t, t_site);
    sym_run_generic(c, p, prog, b, op, site);
    if (old) {
        sym_write(p, w, old, old_site);
    } else {
        pmap_remove(&p->vals, w);
        pmap_remove(&p->sites, w);
    }
}
