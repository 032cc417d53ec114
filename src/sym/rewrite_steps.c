/* rewrite_steps.c - the steps of `verify rewrite --symbolic` and what is
 * compared after each (rewrite.h): the persistable vars by name (the
 * memory passes never rename them), and the targets.  Fetch ops' inputs
 * are compared when the fetch ops pair; without fetch ops the targets are
 * the vars of BEFORE's block 0 an op writes and none reads, as the
 * numeric check takes them, each against what AFTER's paired op wrote
 * (its buffer may be reused later: nothing reads it).  Vars that hold no
 * tensor (Scope, readers, feed and fetch lists) are never compared. */
#include <string.h>

#include "../ir/util.h"
#include "rewrite_internal.h"

static bool persistable_in(ir_program *p, const char *name)
{
    ir_var *v = ir_block_find_var_recursive(ir_program_block(p, 0), name);
    for (size_t b = 1; !v && b < p->n_blocks; b++)
        for (size_t i = 0; !v && i < p->blocks[b]->n_vars; i++)
            if (p->blocks[b]->vars[i]->name == name)
                v = p->blocks[b]->vars[i];
    return v && v->persistable;
}

/* A new step: Paddle's executor drops the run's local scope. */
static void reset(sym_proc *p, ir_program *prog)
{
    pmap vals = PMAP_INIT, sites = PMAP_INIT;
    PMAP_FOR(&p->vals, e)
        if (persistable_in(prog, e->key)) {
            pmap_put(&vals, e->key, e->val);
            pmap_put(&sites, e->key, pmap_get(&p->sites, e->key));
        }
    sym_proc_clear(p);
    p->vals = vals;
    p->sites = sites;
}

static bool same_persistables(rw *r, size_t *count)
{
    ir_program *bp = r->in->progs[0];
    ir_block *b0 = ir_program_block(bp, 0), *a0 = ir_program_block(r->in->progs[1], 0);
    pmap seen = PMAP_INIT;
    *count = 0;
    for (size_t b = 0; b < bp->n_blocks; b++)
        for (size_t i = 0; i < bp->blocks[b]->n_vars; i++) {
            const ir_var *v = bp->blocks[b]->vars[i];
            if (v->removed || !v->persistable || !sym_is_tensor_type(v->type) ||
                !pmap_add(&seen, v->name))
                continue;
            ++*count;
            if (sym_read(&r->c, &r->p[0], b0, v->name) == sym_read(&r->c, &r->p[1], a0, v->name))
                continue;
            GString *a = g_string_new(NULL), *x = g_string_new(NULL);
            rw_writer_desc(a, &r->p[1], v->name);
            rw_writer_desc(x, &r->p[0], v->name);
            snprintf(r->c.err, sizeof r->c.err,
                     "%s: persistable var '%s' holds %s after step %d, but in BEFORE (%s) %s",
                     r->in->labels[1], v->name, a->str, r->step + 1, r->in->labels[0], x->str);
            g_string_free(a, TRUE);
            g_string_free(x, TRUE);
            r->rc = 1;
            pmap_free(&seen);
            return false;
        }
    pmap_free(&seen);
    return true;
}

static bool has_fetch(ir_block *b)
{
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "fetch"))
            return true;
    return false;
}

/* Block 0's vars an op writes and none reads (tensors), in declaration order. */
static GPtrArray *unread_targets(ir_block *b)
{
    GPtrArray *t = g_ptr_array_new();
    pmap read = PMAP_INIT, wrote = PMAP_INIT;
    for (size_t i = 0; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        for (uint32_t k = 0; k < op->n_inputs; k++)
            for (uint32_t j = 0; j < ir_op_ins(op)[k].n_args; j++)
                pmap_add(&read, ir_op_ins(op)[k].args[j]);
        for (uint32_t k = 0; k < op->n_outputs; k++)
            for (uint32_t j = 0; j < ir_op_outs(op)[k].n_args; j++)
                pmap_add(&wrote, ir_op_outs(op)[k].args[j]);
    }
    for (size_t i = 0; i < b->n_vars; i++) {
        const ir_var *v = b->vars[i];
        if (!v->removed && !pmap_has(&read, v->name) && pmap_has(&wrote, v->name) &&
            sym_is_tensor_type(v->type))
            g_ptr_array_add(t, (void *)v->name);
    }
    pmap_free(&read);
    pmap_free(&wrote);
    return t;
}

static bool same_targets(rw *r, GPtrArray *t)
{
    ir_block *b0 = ir_program_block(r->in->progs[0], 0);
    for (guint i = 0; i < t->len; i++) {
        const char *n = t->pdata[i], *an = pmap_get(&r->after_name, n);
        if (sym_read(&r->c, &r->p[0], b0, n) == pmap_get(&r->captured, n))
            continue;
        snprintf(r->c.err, sizeof r->c.err,
                 "%s: target '%s' (held in '%s') is not what BEFORE (%s) computes at step %d",
                 r->in->labels[1], n, an ? an : n, r->in->labels[0], r->step + 1);
        r->rc = 1;
        return false;
    }
    return true;
}

/* The fetch ops' inputs of block b, in op order. */
static GPtrArray *fetched(ir_block *b)
{
    GPtrArray *t = g_ptr_array_new();
    for (size_t i = 0; i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "fetch") && ir_op_input1(b->ops[i], "X"))
            g_ptr_array_add(t, (void *)ir_op_input1(b->ops[i], "X"));
    return t;
}

static void print_equal(rw *r, FILE *out, GPtrArray *t, GPtrArray *after_t, size_t n_pers)
{
    for (guint i = 0; i < t->len; i++) {
        const char *an = after_t ? (i < after_t->len ? after_t->pdata[i] : t->pdata[i])
                                 : pmap_get(&r->after_name, t->pdata[i]);
        fprintf(out, "%s (after: %s): equal (%d steps)\n", (const char *)t->pdata[i],
                an ? an : (const char *)t->pdata[i], r->in->steps);
    }
    fprintf(out, "persistable vars: %zu equal (%d steps, %zu op pairs)\n", n_pers,
            r->in->steps, r->paired);
}

static bool run_steps(rw *r, GPtrArray *targets, bool fetch, size_t *n_pers)
{
    for (r->step = 0; r->step < r->in->steps; r->step++) {
        if (r->in->on_step)
            r->in->on_step(r->step);
        for (int k = 0; k < 2; k++) {
            r->p[k].feed_tag = ir_internf("s%d", r->step + 1);
            reset(&r->p[k], r->in->progs[k]);
        }
        pmap_clear(&r->after_name);
        pmap_clear(&r->captured);
        if (!rw_run_blocks(r, 0, 0) || !same_persistables(r, n_pers) ||
            (!fetch && !same_targets(r, targets)))
            return false;
    }
    return true;
}

int sym_verify_rewrite(const sym_rewrite_in *in, FILE *out, char *err, size_t errlen)
{
    for (int k = 0; k < 2; k++)
        if (!ir_program_block(in->progs[k], 0)) {
            snprintf(err, errlen, "%s: no block 0", in->labels[k]);
            return -1;
        }
    rw r = {.in = in};
    r.c.st = sym_store_new();
    for (int k = 0; k < 2; k++)
        r.p[k] = (sym_proc){.label = in->labels[k], .main = in->progs[k], .trainer = -1,
                            .emulate_from = -1};
    ir_block *b0 = ir_program_block(in->progs[0], 0);
    bool fetch = has_fetch(b0);
    GPtrArray *targets = fetch ? fetched(b0) : unread_targets(b0);
    GPtrArray *after_t = fetch ? fetched(ir_program_block(in->progs[1], 0)) : NULL;
    size_t n_pers = 0;
    if (run_steps(&r, targets, fetch, &n_pers))
        print_equal(&r, out, targets, after_t, n_pers);
    else
        snprintf(err, errlen, "%s", r.c.err);
    for (int k = 0; k < 2; k++) {
        sym_proc_clear(&r.p[k]);
        PMAP_FOR(&r.scopes[k], e) pmap_destroy(e->val);
        pmap_free(&r.scopes[k]);
    }
    pmap_free(&r.after_name);
    pmap_free(&r.captured);
    g_ptr_array_free(targets, TRUE);
    if (after_t)
        g_ptr_array_free(after_t, TRUE);
    sym_store_free(r.c.st);
    return r.rc;
}
