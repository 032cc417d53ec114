/* rewrite.c - a program and its memory_optimize / release_memory rewrite
 * run symbolically side by side (rewrite.h; README.md, "verify rewrite").
 *
 * Each var is a buffer: a name holds the term the last op wrote into it.
 * memory_optimize renames an op's output into a dead var's buffer; if the
 * buffer was still live, a later op reads the new term where BEFORE's op
 * reads the old one.  release_memory's delete_var puts a "deleted" leaf
 * into the buffer, so a later read differs too.  The two programs keep
 * their ops (but delete_var), so ops pair one to one, and an op whose
 * inputs are the same terms computes the same outputs: the first paired
 * op that reads another term is the difference, named in AFTER's terms.
 * Sub-blocks are run, not named (their vars are renamed too): rewrite_sub.c. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/attr_format.h"
#include "../ir/util.h"
#include "rewrite_internal.h"
#include "run.h" /* sym_attr_is_semantic */

bool sym_is_tensor_type(int type)
{
    switch (type) {
    case IR_FEED_MINIBATCH: case IR_FETCH_LIST: case IR_STEP_SCOPES: case IR_LOD_RANK_TABLE:
    case IR_PLACE_LIST: case IR_READER: case IR_RAW: case IR_TUPLE: case IR_FEED_LIST:
    case IR_VOCAB: case IR_STRING_T: case IR_STRINGS_T: case IR_PSTRING:
        return false;
    default:
        return true;
    }
}

bool rw_is_tensor_var(ir_block *b, const char *name)
{
    ir_var *v = ir_block_find_var_recursive(b, name);
    return !v || sym_is_tensor_type(v->type);
}

static int by_attr_name(const void *x, const void *y)
{
    return strcmp((*(const ir_attr *const *)x)->name, (*(const ir_attr *const *)y)->name);
}

void rw_sem_attrs(GString *g, const ir_op *op)
{
    ir_attr *attrs = ir_op_attrs(op);
    const ir_attr **v = xmalloc_n(op->n_attrs + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < op->n_attrs; i++)
        if (sym_attr_is_semantic(op, &attrs[i]) && attrs[i].type != IR_ATTR_BLOCK &&
            attrs[i].type != IR_ATTR_BLOCKS)
            v[n++] = &attrs[i];
    qsort(v, n, sizeof *v, by_attr_name);
    for (size_t i = 0; i < n; i++) {
        g_string_append_printf(g, "%s%s=", i ? ", " : "", v[i]->name);
        ir_attr_format(g, v[i]);
    }
    free(v);
}

/* What a buffer holds, for messages: who wrote it. */
void rw_writer_desc(GString *g, sym_proc *p, const char *name)
{
    const sym_site *s = pmap_get(&p->sites, name);
    if (!s || !s->op)
        g_string_append(g, "its value before any op (a feed or a parameter)");
    else if (!strcmp(s->op->type, "delete_var"))
        g_string_append_printf(g, "nothing: block %d, op %d 'delete_var' deleted it", s->block,
                               s->index);
    else
        g_string_append_printf(g, "what block %d, op %d '%s' wrote", s->block, s->index,
                               s->op->type);
}

static void fail_read(rw *r, const rw_pos *at, const char *slot, uint32_t k, const char *bn,
                      const char *an)
{
    GString *a = g_string_new(NULL), *b = g_string_new(NULL);
    rw_writer_desc(a, &r->p[1], an);
    rw_writer_desc(b, &r->p[0], bn);
    sym_fail(&r->c, r->in->labels[1], at->block[1], at->idx[1], at->op[1],
             "input %s[%u] '%s' holds %s at step %d, but BEFORE's op (%s block %d, op %zu) "
             "reads '%s', %s%s",
             slot, k, an, a->str, r->step + 1, r->in->labels[0], at->block[0], at->idx[0], bn,
             b->str,
             strstr(a->str, "delete_var") ? " (a delete_var too early)"
                                          : " (a reuse of a buffer still live)");
    g_string_free(a, TRUE);
    g_string_free(b, TRUE);
    r->rc = 1;
}

/* Every tensor input of the paired ops holds one term on both sides. */
static bool same_inputs(rw *r, const rw_pos *at)
{
    const ir_op *bo = at->op[0], *ao = at->op[1];
    ir_block *bb = ir_program_block(r->in->progs[0], at->block[0]);
    ir_block *ab = ir_program_block(r->in->progs[1], at->block[1]);
    for (int side = 0; side < 2; side++) {      /* slots only one side has */
        const ir_op *x = side ? ao : bo, *y = side ? bo : ao;
        for (uint32_t i = 0; i < x->n_inputs; i++) {
            const ir_slot *o = ir_op_input(y, ir_op_ins(x)[i].name);
            if (ir_op_ins(x)[i].n_args != (o ? o->n_args : 0)) {
                sym_fail(&r->c, r->in->labels[1], at->block[1], at->idx[1], ao,
                         "input %s has %u args, BEFORE's op (%s block %d, op %zu) %u",
                         ir_op_ins(x)[i].name, side ? ir_op_ins(x)[i].n_args : o ? o->n_args : 0,
                         r->in->labels[0], at->block[0], at->idx[0],
                         side ? (o ? o->n_args : 0) : ir_op_ins(x)[i].n_args);
                r->rc = 1;
                return false;
            }
        }
    }
    for (uint32_t i = 0; i < bo->n_inputs; i++) {
        const ir_slot *bs = &ir_op_ins(bo)[i], *as = ir_op_input(ao, bs->name);
        for (uint32_t k = 0; k < bs->n_args; k++) {
            const char *bn = bs->args[k], *an = as->args[k];
            if (!rw_is_tensor_var(bb, bn))
                continue;
            if (sym_read(&r->c, &r->p[0], bb, bn) != sym_read(&r->c, &r->p[1], ab, an)) {
                fail_read(r, at, bs->name, k, bn, an);
                return false;
            }
        }
    }
    return true;
}

/* The ops pair: one type, one set of semantic attrs. */
static bool same_op(rw *r, const rw_pos *at)
{
    if (at->op[0]->type == at->op[1]->type) {
        GString *a = g_string_new(NULL), *b = g_string_new(NULL);
        rw_sem_attrs(b, at->op[0]);
        rw_sem_attrs(a, at->op[1]);
        bool same = !strcmp(a->str, b->str);
        if (!same)
            sym_fail(&r->c, r->in->labels[1], at->block[1], at->idx[1], at->op[1],
                     "its attrs (%.300s) are not those of BEFORE's op (%s block %d, op %zu: "
                     "%.300s)", a->str, r->in->labels[0], at->block[0], at->idx[0], b->str);
        g_string_free(a, TRUE);
        g_string_free(b, TRUE);
        r->rc = same ? 0 : 1;
        return same;
    }
    sym_fail(&r->c, r->in->labels[1], at->block[1], at->idx[1], at->op[1],
             "pairs with BEFORE's op %zu '%s' (%s block %d): the programs do not hold the same "
             "ops; --symbolic checks rewrites that keep them (memory-optimize, release-memory)",
             at->idx[0], at->op[0]->type, r->in->labels[0], at->block[0]);
    r->rc = -1;
    return false;
}

static void run_delete(rw *r, int k, int block, size_t i, const ir_op *op)
{
    const sym_site *site = sym_site_make(r->c.st, r->in->labels[k], block, (int)i, op);
    const ir_slot *x = ir_op_input(op, "X");
    for (uint32_t a = 0; x && a < x->n_args; a++)
        sym_write(&r->p[k], x->args[a],
                  sym_leaf(r->c.st, ir_internf("deleted:%s@%d.%zu", x->args[a], block, i), -1),
                  site);
}

/* A feed op's output is the step's feed of its column, whatever the name. */
static void run_feed(rw *r, int k, int block, size_t i, const ir_op *op)
{
    const sym_site *site = sym_site_make(r->c.st, r->in->labels[k], block, (int)i, op);
    const char *out = ir_op_output1(op, "Out");
    if (out)
        sym_write(&r->p[k], out,
                  sym_leaf(r->c.st, ir_internf("feed:%lld@s%d", (long long)ir_op_get_int(op, "col", 0),
                                               r->step + 1), -1), site);
}

/* Block 0: where AFTER holds each output of BEFORE's op, and its term. */
static void note_outputs(rw *r, const rw_pos *at)
{
    const ir_op *bo = at->op[0], *ao = at->op[1];
    for (uint32_t i = 0; i < bo->n_outputs; i++) {
        const ir_slot *as = ir_op_output(ao, ir_op_outs(bo)[i].name);
        for (uint32_t k = 0; as && k < ir_op_outs(bo)[i].n_args && k < as->n_args; k++) {
            pmap_put(&r->after_name, ir_op_outs(bo)[i].args[k], (void *)as->args[k]);
            pmap_put(&r->captured, ir_op_outs(bo)[i].args[k], pmap_get(&r->p[1].vals,
                                                                     as->args[k]));
        }
    }
}

static bool run_pair(rw *r, const rw_pos *at)
{
    if (!strcmp(at->op[0]->type, "feed")) {
        for (int k = 0; k < 2; k++)
            run_feed(r, k, at->block[k], at->idx[k], at->op[k]);
    } else if (ir_op_has_attr(at->op[0], "sub_block")) {
        if (!rw_run_sub(r, at))
            return false;
    } else {
        for (int k = 0; k < 2; k++)
            if (!sym_run_op(&r->c, &r->p[k], r->in->progs[k], r->in->labels[k], at->block[k],
                            at->idx[k])) {
                r->rc = -1;
                return false;
            }
    }
    if (at->block[0] == 0)
        note_outputs(r, at);
    r->paired++;
    return true;
}

bool rw_run_blocks(rw *r, int bblock, int ablock)
{
    ir_block *b[2] = {ir_program_block(r->in->progs[0], bblock),
                      ir_program_block(r->in->progs[1], ablock)};
    size_t i[2] = {0, 0};
    for (;;) {
        for (int k = 0; k < 2; k++)
            while (i[k] < b[k]->n_ops && !strcmp(b[k]->ops[i[k]]->type, "delete_var")) {
                run_delete(r, k, b[k]->idx, i[k], b[k]->ops[i[k]]);
                i[k]++;
            }
        bool end0 = i[0] == b[0]->n_ops, end1 = i[1] == b[1]->n_ops;
        if (end0 && end1)
            return true;
        if (end0 || end1) {
            snprintf(r->c.err, sizeof r->c.err,
                     "%s: block %d has %s ops than BEFORE's block %d (%s), besides delete_var; "
                     "--symbolic checks rewrites that keep the ops (memory-optimize, "
                     "release-memory)", r->in->labels[1], ablock, end1 ? "fewer" : "more",
                     bblock, r->in->labels[0]);
            r->rc = -1;
            return false;
        }
        rw_pos at = {{b[0]->ops[i[0]], b[1]->ops[i[1]]}, {bblock, ablock}, {i[0], i[1]}};
        if (!same_op(r, &at) || !same_inputs(r, &at) || !run_pair(r, &at))
            return false;
        i[0]++;
        i[1]++;
    }
}
