/* rewrite_sub.c - sub-block ops in `verify rewrite --symbolic`.
 *
 * The job check (run.c) names a sub-block by the text of its ops; here the
 * sub-block's own vars are renamed by memory_optimize, so it is run: its
 * ops pair one to one like block 0's, in a scope where the vars the block
 * declares (not persistable) are its own, as Paddle's child scope makes
 * them.  Each var of the parent the block writes then holds
 * TYPE(guard, value before, value after the block): the guard (the Cond or
 * Condition input) decides, and which way is unknown.  A `while` body runs
 * twice (bounded, as Alive2 unrolls loops), so a buffer reused across
 * iterations shows; its vars hold TYPE(guard, before, after 1, after 2).
 * The block's own vars are kept under the op's Scope (StepScopes) output
 * var, where a conditional_block_grad / while_grad (same Scope input)
 * finds them, as Paddle's grad op runs in the forward op's scope. */
#include <string.h>

#include "../ir/util.h"
#include "rewrite_internal.h"

/* Sub-blocks nest at most MAX_DEPTH deep (a deeper or cyclic nesting is
 * refused); while bodies inside MAX_LOOPS others run once, so nested
 * loops cost at most 2^MAX_LOOPS runs of the innermost body. */
enum { MAX_DEPTH = 16, MAX_LOOPS = 3 };

static int sub_block_of(const ir_op *op)
{
    const ir_attr *a = ir_op_block_attr(op, "sub_block");
    return a && a->type == IR_ATTR_BLOCK ? a->block_idx : -1;
}

/* Non-persistable vars declared in block b: the child scope's. */
static bool is_local(ir_block *b, const char *name)
{
    for (size_t i = 0; i < b->n_vars; i++)
        if (b->vars[i]->name == name)
            return !b->vars[i]->removed && !b->vars[i]->persistable;
    return false;
}

/* The names block `idx` writes that outlive it (nested blocks' locals not). */
static void written(ir_program *p, int idx, GPtrArray *out, pmap *seen, int depth)
{
    ir_block *b = ir_program_block(p, idx);
    if (!b || depth > MAX_DEPTH)
        return;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        int sub = sub_block_of(op);
        if (sub > 0 && sub != idx) {
            GPtrArray *inner = g_ptr_array_new();
            pmap iseen = PMAP_INIT;
            written(p, sub, inner, &iseen, depth + 1);
            ir_block *sb = ir_program_block(p, sub);
            for (guint k = 0; k < inner->len; k++)
                if (!is_local(sb, inner->pdata[k]) && pmap_add(seen, inner->pdata[k]))
                    g_ptr_array_add(out, inner->pdata[k]);
            g_ptr_array_free(inner, TRUE);
            pmap_free(&iseen);
        }
        for (uint32_t s = 0; s < op->n_outputs; s++)
            for (uint32_t k = 0; k < ir_op_outs(op)[s].n_args; k++) {
                const char *v = ir_op_outs(op)[s].args[k];
                if (*v && strcmp(ir_op_outs(op)[s].name, "Scope") &&
                    strcmp(ir_op_outs(op)[s].name, "StepScopes") && pmap_add(seen, v))
                    g_ptr_array_add(out, (void *)v);
            }
    }
}

/* One side's state around the sub-block run. */
typedef struct {
    ir_block *parent, *sub;
    GPtrArray *w;               /* names written */
    sym_term **old, **iter1;    /* per name: before the op, after one iteration */
    const sym_site **old_site;
    bool *had;                  /* per name: the buffer held a value before the op */
    sym_term **guard;
    uint32_t n_guard;
} side;

static const char *scope_var(const ir_op *op, bool input)
{
    const char *s = input ? ir_op_input1(op, "Scope") : ir_op_output1(op, "Scope");
    if (!s)
        s = input ? ir_op_input1(op, "StepScopes") : ir_op_output1(op, "StepScopes");
    return s;
}

static void enter(rw *r, int k, const rw_pos *at, side *s)
{
    sym_proc *p = &r->p[k];
    ir_program *prog = r->in->progs[k];
    s->parent = ir_program_block(prog, at->block[k]);
    s->sub = ir_program_block(prog, sub_block_of(at->op[k]));
    s->w = g_ptr_array_new();
    pmap seen = PMAP_INIT;
    written(prog, s->sub->idx, s->w, &seen, 0);
    pmap_free(&seen);
    s->old = xcalloc(s->w->len + 1, sizeof *s->old);
    s->iter1 = xcalloc(s->w->len + 1, sizeof *s->iter1);
    s->old_site = xcalloc(s->w->len + 1, sizeof *s->old_site);
    s->had = xcalloc(s->w->len + 1, sizeof *s->had);
    for (guint j = 0; j < s->w->len; j++) {
        const char *v = s->w->pdata[j];
        s->had[j] = pmap_get(&p->vals, v) != NULL;
        s->old[j] = sym_read(&r->c, p, s->parent, v);
        s->old_site[j] = pmap_get(&p->sites, v);
        if (is_local(s->sub, v)) {          /* a fresh child scope */
            pmap_remove(&p->vals, v);
            pmap_remove(&p->sites, v);
        }
    }
    const ir_slot *g = ir_op_input(at->op[k], "Cond");
    if (!g)
        g = ir_op_input(at->op[k], "Condition");
    s->n_guard = g ? g->n_args : 0;
    s->guard = xcalloc(s->n_guard + 1, sizeof *s->guard);
    for (uint32_t j = 0; j < s->n_guard; j++)
        s->guard[j] = sym_read(&r->c, p, s->parent, g->args[j]);
    const char *sc = scope_var(at->op[k], true);
    pmap *saved = sc ? pmap_get(&r->scopes[k], sc) : NULL;
    if (saved)                              /* a grad op: the forward's locals */
        PMAP_FOR(saved, e) sym_write(p, e->key, e->val, NULL);
}

static void snapshot(rw *r, int k, side *s)
{
    for (guint j = 0; j < s->w->len; j++)
        s->iter1[j] = sym_read(&r->c, &r->p[k], s->sub, s->w->pdata[j]);
}

static void keep_locals(rw *r, int k, const ir_op *op, side *s)
{
    const char *sc = scope_var(op, false);
    if (!sc)
        return;
    pmap *m = pmap_new();
    for (guint j = 0; j < s->w->len; j++)
        if (is_local(s->sub, s->w->pdata[j]))
            pmap_put(m, s->w->pdata[j], sym_read(&r->c, &r->p[k], s->sub, s->w->pdata[j]));
    pmap_destroy(pmap_get(&r->scopes[k], sc));
    pmap_put(&r->scopes[k], sc, m);
}

static void leave(rw *r, int k, const rw_pos *at, side *s, bool loop)
{
    sym_proc *p = &r->p[k];
    keep_locals(r, k, at->op[k], s);
    const sym_site *site = sym_site_make(r->c.st, r->in->labels[k], at->block[k],
                                         (int)at->idx[k], at->op[k]);
    GString *key = g_string_new("guarded | ");
    rw_sem_attrs(key, at->op[k]);
    const char *ikey = ir_intern(key->str);
    g_string_free(key, TRUE);
    uint32_t n = s->n_guard + (loop ? 3 : 2);
    sym_term **args = xcalloc(n + 1, sizeof *args);
    const char **slots = xcalloc(n + 1, sizeof *slots);
    for (uint32_t j = 0; j < s->n_guard; j++) {
        args[j] = s->guard[j];
        slots[j] = "Guard";
    }
    for (guint j = 0; j < s->w->len; j++) {
        const char *v = s->w->pdata[j];
        if (is_local(s->sub, v)) {          /* the child scope is gone */
            pmap_remove(&p->vals, v);
            pmap_remove(&p->sites, v);
            if (s->had[j])
                sym_write(p, v, s->old[j], s->old_site[j]);
            continue;
        }
        uint32_t a = s->n_guard;
        slots[a] = "Before";
        args[a++] = s->old[j];
        if (loop) {
            slots[a] = "Iteration1";
            args[a++] = s->iter1[j];
        }
        slots[a] = "After";
        args[a++] = sym_read(&r->c, p, s->sub, v);
        sym_write(p, v, sym_app(r->c.st, at->op[k]->type, ikey, args, slots, n, -1), site);
    }
    free(args);
    free(slots);
}

static void side_free(side *s)
{
    g_ptr_array_free(s->w, TRUE);
    free(s->old);
    free(s->iter1);
    free(s->old_site);
    free(s->had);
    free(s->guard);
}

bool rw_run_sub(rw *r, const rw_pos *at)
{
    int sb[2] = {sub_block_of(at->op[0]), sub_block_of(at->op[1])};
    for (int k = 0; k < 2; k++)
        if (sb[k] <= 0 || sb[k] == at->block[k] ||
            !ir_program_block(r->in->progs[k], sb[k])) {
            sym_fail(&r->c, r->in->labels[k], at->block[k], at->idx[k], at->op[k],
                     "its sub_block names no block it could run");
            r->rc = -1;
            return false;
        }
    if (r->depth >= MAX_DEPTH) {
        sym_fail(&r->c, r->in->labels[1], at->block[1], at->idx[1], at->op[1],
                 "sub-blocks nest more than %d deep (or in a cycle)", MAX_DEPTH);
        r->rc = -1;
        return false;
    }
    bool loop = !strcmp(at->op[0]->type, "while");
    int runs = loop && r->loops < MAX_LOOPS ? 2 : 1;
    r->depth++;
    r->loops += loop;
    side s[2];
    for (int k = 0; k < 2; k++)
        enter(r, k, at, &s[k]);
    bool ok = true;
    for (int it = 0; ok && it < runs; it++) {
        ok = rw_run_blocks(r, sb[0], sb[1]);
        for (int k = 0; ok && loop && it == 0 && k < 2; k++)
            snapshot(r, k, &s[k]);
    }
    r->depth--;
    r->loops -= loop;
    for (int k = 0; k < 2; k++) {
        if (ok)
            leave(r, k, at, &s[k], loop);
        side_free(&s[k]);
    }
    return ok;
}
