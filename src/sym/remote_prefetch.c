/* remote_prefetch.c - remote prefetch in `verify job` (remote_prefetch.h).
 * A param W that MAIN's lookup_table, lookup_table_v2 or nce reads with
 * remote_prefetch is sliced by rows onto the pservers like any param
 * (W.block0, W.block1, ... each updated there by MAIN's optimizer on its
 * section of the SelectedRows grad), but the trainer never receives it
 * (seed `_get_all_remote_sparse_update_op`, research-modes.md 2B).  The
 * trainer's lookups are one `distributed_lookup_table(Ids, W) -> Outputs`:
 * Paddle's parameter_prefetch.cc sends id to the section j whose
 * height_sections range holds it, as id - start_j, to pserver endpoints[j],
 * which looks it up in its dense block table_names[j].  So Outputs[q] is
 * MAIN's own lookup of Ids[q] in the slices put together by the sections,
 * which is W[ids] exactly when each section is its slice's rows and each
 * endpoint holds its slice.  The param's value is its slices put together,
 * compared with the reference's (which adopts them after the startups). */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "remote_prefetch.h"

#define MAX_SLICES 64

typedef struct {
    int idx;
    sym_proc *ps;
    const char *var;
} slice;

static const char *label_of(sym_proc *p, ir_program *prog)
{
    return prog == p->main ? p->label : p->startup_label;
}

static bool is_lookup(const char *t)
{
    return !strcmp(t, "lookup_table") || !strcmp(t, "lookup_table_v2");
}

/* The table a remote reader reads (W, nce's Weight), or NULL. */
static const char *remote_table(const ir_op *op)
{
    bool nce = !strcmp(op->type, "nce");
    /* a distributed table (is_distributed) is table.c's: the transpiler
     * gives it split_ids / prefetch / merge_ids whatever remote_prefetch */
    if ((!nce && !is_lookup(op->type)) || !ir_op_get_bool(op, "remote_prefetch", false) ||
        ir_op_get_bool(op, "is_distributed", false))
        return NULL;
    const char *w = ir_op_input1(op, nce ? "Weight" : "W");
    return w && *w ? w : NULL;
}

static bool main_remote(sym_job *j, const char *name)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++) {
        const char *w = remote_table(b->ops[i]);
        if (w && !strcmp(w, name))
            return true;
    }
    return false;
}

/* The slice index of pserver param `param` of `name`: 0 for name itself,
 * K for name.blockK, else -1. */
static int slice_index(const char *name, const char *param)
{
    size_t n = strlen(name);
    if (!strcmp(param, name))
        return 0;
    if (strncmp(param, name, n) || strncmp(param + n, ".block", 6) || !param[n + 6])
        return -1;
    for (const char *c = param + n + 6; *c; c++)
        if (*c < '0' || *c > '9')
            return -1;
    return atoi(param + n + 6);
}

/* The slices of `name` the pservers' optimize blocks update, by index. */
static int find_slices(sym_job *j, const char *name, slice *out)
{
    int m = 0;
    for (size_t k = 0; k < j->n_ps; k++) {
        sym_proc *ps = &j->ps[k];
        for (size_t bi = 1; bi < ps->main->n_blocks; bi++) {
            ir_block *b = ir_program_block(ps->main, (int32_t)bi);
            for (size_t i = 0; b && i < b->n_ops; i++) {
                const char *param = ir_op_input1(b->ops[i], "Param");
                int idx = param && *param ? slice_index(name, param) : -1;
                bool seen = false;
                for (int q = 0; idx >= 0 && q < m; q++)
                    seen |= out[q].ps == ps && !strcmp(out[q].var, param);
                if (idx < 0 || seen || m == MAX_SLICES)
                    continue;
                int at = m++;   /* insertion by index: the slices in row order */
                while (at > 0 && out[at - 1].idx > idx) {
                    out[at] = out[at - 1];
                    at--;
                }
                out[at] = (slice){idx, ps, param};
            }
        }
    }
    return m;
}

static sym_term *slice_val(sym_job *j, const slice *s)
{
    return sym_read(&j->c, s->ps, ir_program_block(s->ps->main, 0), s->var);
}

/* The slices of `name` put together, or NULL when it is not remote. */
static sym_term *remote_value(sym_job *j, const char *name)
{
    slice s[MAX_SLICES];
    int m = j->n_ps && main_remote(j, name) ? find_slices(j, name, s) : 0;
    if (!m)
        return NULL;
    sym_term **parts = xmalloc_n((size_t)m, sizeof *parts);
    for (int k = 0; k < m; k++)
        parts[k] = slice_val(j, &s[k]);
    sym_term *r = m == 1 ? parts[0] : sym_concat(j->c.st, parts, (uint32_t)m);
    free(parts);
    return r;
}

sym_term *sym_remote_value(sym_job *j, const char *name)
{
    return j->remote && pmap_get(j->remote, name) ? remote_value(j, name) : NULL;
}

bool sym_remote_setup(sym_job *j)
{
    /* which params are remote, once: the steps ask for every param */
    j->remote = pmap_new();
    for (guint k = 0; k < j->params->len; k++) {
        const char *p = j->params->pdata[k];
        sym_term *v = remote_value(j, p);
        if (!v)
            continue;
        pmap_put(j->remote, p, (void *)p);
        slice s[MAX_SLICES];
        find_slices(j, p, s);
        /* the pservers' initial slices put together, adopted as the
         * reference adopts the params a trainer receives */
        const sym_site *site = pmap_get(&s[0].ps->sites, s[0].var);
        sym_write(&j->ref, p, v, site);
        for (size_t t = 0; t < j->n_tr; t++)
            sym_write(&j->view[t], p, v, site);
        if (pmap_add(&j->shared_set, p))
            g_ptr_array_add(j->shared, (void *)p);
    }
    return true;
}

sym_term *sym_sections(sym_store *s, sym_term **parts, const int64_t *rows,
                       const int64_t *heights, int n)
{
    for (int k = 0; k < n; k++)
        if (rows[k] <= 0 || rows[k] != heights[k])
            return NULL;
    return n == 1 ? parts[0] : n > 1 ? sym_concat(s, parts, (uint32_t)n) : NULL;
}

/* The table op i reads remotely: table_names[k] from the pserver its
 * `ep_attr` entry k names, put together by height_sections; NULL after
 * sym_fail (no such pserver, or it does not hold the slice: Paddle's
 * prefetch handler would find no var). */
static sym_term *fetch_table(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                             ir_op *op, const char *ep_attr)
{
    sym_job *j = c->job;
    const char *label = label_of(p, prog);
    ir_arena *a = ir_arena_new();
    size_t nn = 0, ne = 0;
    const char **names = ir_op_get_names(op, "table_names", &nn, a);
    const char **eps = ir_op_get_names(op, ep_attr, &ne, a);
    ir_attr *h = ir_op_attr(op, "height_sections");
    size_t nh = h && h->type == IR_ATTR_LONGS ? h->n_longs : 0;
    sym_term *r = NULL;
    if (!nn || ne != nn || nh != nn) {
        sym_fail(c, label, block, i, op, "has %zu table_names, %zu %s and %zu height_sections",
                 nn, ne, ep_attr, nh);
        ir_arena_free(a);
        return NULL;
    }
    sym_term **parts = xmalloc_n(nn, sizeof *parts);
    int64_t *rows = xmalloc_n(nn, sizeof *rows);
    size_t k = 0;
    for (; k < nn; k++) {
        sym_proc *ps = sym_pserver_at(j, eps[k]);
        ir_block *b0 = ps ? ir_program_block(ps->main, 0) : NULL;
        sym_term *t = ps ? pmap_get(&ps->vals, names[k]) : NULL;
        ir_var *v = b0 && !t ? ir_block_find_var(b0, names[k]) : NULL;
        if (v && v->persistable)   /* no startup op wrote it: its initial value */
            t = sym_read(c, ps, b0, names[k]);
        if (!ps) {
            sym_fail(c, label, block, i, op, "prefetches '%s' from '%s', which no pserver of the "
                     "job serves", names[k], eps[k]);
            break;
        }
        if (!t) {
            sym_fail(c, label, block, i, op, "prefetches '%s' from '%s' (%s), which does not hold "
                     "it", names[k], eps[k], ps->label);
            break;
        }
        parts[k] = t;
        rows[k] = sym_var_rows(b0, names[k]);
    }
    if (k == nn && !(r = sym_sections(c->st, parts, rows, h->longs, (int)nn))) {
        /* Paddle sends id to the section whose range holds it, as id - start:
         * a wrong section reads other rows, or rows a slice lacks */
        GString *hs = g_string_new(NULL);
        for (k = 0; k < nn; k++)
            g_string_append_printf(hs, "%s%lld", k ? ", " : "", (long long)h->longs[k]);
        for (k = 0; k < nn && rows[k] == h->longs[k]; k++)
            ;
        sym_fail(c, label, block, i, op, "puts the slices together by height_sections [%s], but "
                 "'%s' on '%s' has %lld rows: its ids would read other rows", hs->str,
                 names[k < nn ? k : 0], eps[k < nn ? k : 0], (long long)rows[k < nn ? k : 0]);
        g_string_free(hs, TRUE);
    }
    free(parts);
    free(rows);
    ir_arena_free(a);
    return r;
}

/* MAIN's lookup writing `out`, or NULL. */
static ir_op *main_lookup(sym_job *j, const char *out)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++) {
        ir_op *op = b->ops[i];
        const char *o = ir_op_output1(op, "Out");
        if (is_lookup(op->type) && o && !strcmp(o, out) && ir_op_input1(op, "Ids") &&
            ir_op_input1(op, "W"))
            return op;
    }
    return NULL;
}

/* MAIN's nce writing Cost `cost`, or NULL. */
static ir_op *main_nce(sym_job *j, const char *cost)
{
    ir_block *b = ir_program_block(j->in->main, 0);
    for (size_t i = 0; cost && b && i < b->n_ops; i++) {
        const char *o = ir_op_output1(b->ops[i], "Cost");
        if (!strcmp(b->ops[i]->type, "nce") && o && !strcmp(o, cost))
            return b->ops[i];
    }
    return NULL;
}

/* distributed_lookup_table: Outputs[q] is MAIN's lookup of Ids[q] in the
 * table the pservers' slices make. */
static int do_dlt(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    sym_job *j = c->job;
    ir_block *b = ir_program_block(prog, block);
    const ir_slot *ids = ir_op_input(op, "Ids"), *outs = ir_op_output(op, "Outputs");
    const char *label = label_of(p, prog);
    if (!ids || !outs || !ids->n_args || ids->n_args != outs->n_args) {
        sym_fail(c, label, block, i, op, "has %u Ids and %u Outputs", ids ? ids->n_args : 0,
                 outs ? outs->n_args : 0);
        return -1;
    }
    const sym_site *site = sym_site_make(c->st, label, block, (int)i, op);
    sym_store_set_site(c->st, site);
    sym_term *w = fetch_table(c, p, prog, block, i, op, "endpoints");
    if (!w)
        return -1;
    for (uint32_t q = 0; q < outs->n_args; q++) {
        ir_op *mop = main_lookup(j, outs->args[q]);
        if (!mop) {
            sym_fail(c, label, block, i, op, "writes '%s', which no lookup_table of %s writes",
                     outs->args[q], j->in->main_label);
            return -1;
        }
        sym_proc tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.trainer = p->trainer;
        tmp.emulate_from = -1;
        sym_write(&tmp, ir_op_input1(mop, "Ids"), sym_read(c, p, b, ids->args[q]),
                  pmap_get(&p->sites, ids->args[q]));
        sym_write(&tmp, ir_op_input1(mop, "W"), w, site);
        sym_run_generic(c, &tmp, j->in->main, ir_program_block(j->in->main, 0), mop, site);
        sym_write(p, outs->args[q], pmap_get(&tmp.vals, outs->args[q]), site);
        sym_proc_clear(&tmp);
    }
    sym_store_set_site(c->st, site);
    return 1;
}


/* A lookup or nce with remote_prefetch.  A reference view reads the
 * shared (live) param, as a prefetch reads the pservers' current rows.  A
 * trainer's nce with an epmap prefetches the rows of Weight its sampled
 * labels name (nce_op.h): nce on those rows is nce on the table the
 * slices make.  Otherwise the op reads its own W: on a trainer the
 * fake_init value it never receives, as Paddle's kernel does (an nce the
 * transpiler leaves without an epmap: a difference). */
static int do_reader(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    sym_job *j = c->job;
    const char *w = remote_table(op);
    if (!w)
        return 0;
    ir_block *b = ir_program_block(prog, block);
    const sym_site *site = sym_site_make(c->st, label_of(p, prog), block, (int)i, op);
    size_t ne = 0;
    ir_arena *a = ir_arena_new();
    ir_op_get_names(op, "epmap", &ne, a);
    ir_arena_free(a);
    if (j->view && p >= j->view && p < j->view + j->n_tr) {
        sym_run_with(c, p, prog, b, op, site, w, sym_read(c, &j->ref, b, w),
                 pmap_get(&j->ref.sites, w));
    } else if (!strcmp(op->type, "nce") && ne && p != &j->ref) {
        sym_store_set_site(c->st, site);
        sym_term *t = fetch_table(c, p, prog, block, i, op, "epmap");
        if (!t)
            return -1;
        /* MAIN's own nce (the same Cost): where the rows come from (epmap,
         * table_names, height_sections) is modelled, not an attr */
        ir_op *mop = main_nce(j, ir_op_output1(op, "Cost"));
        if (mop)
            sym_run_with(c, p, j->in->main, ir_program_block(j->in->main, 0), mop, site, w, t, site);
        else
            sym_run_with(c, p, prog, b, op, site, w, t, site);
    } else {
        sym_run_generic(c, p, prog, b, op, site);
    }
    sym_store_set_site(c->st, site);
    return 1;
}

/* nce_grad without Input@GRAD reads only Weight's dims (nce_op.h: the
 * Bias and Weight grads are of the sampled logits and Input): Weight is a
 * leaf named by the var on every side, as for lookup_table_grad. */
static int do_nce_grad(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i,
                       ir_op *op)
{
    const ir_slot *xg = ir_op_output(op, "Input@GRAD");
    const char *w = ir_op_input1(op, "Weight");
    if ((xg && xg->n_args && *xg->args[0]) || !w || !*w)
        return 0;
    ir_block *b = ir_program_block(prog, block);
    const sym_site *site = sym_site_make(c->st, label_of(p, prog), block, (int)i, op);
    sym_run_with(c, p, prog, b, op, site, w, sym_leaf(c->st, ir_internf("dims:%s", w),
                                                   sym_var_rows(b, w)),
             pmap_get(&p->sites, w));
    return 1;
}

int sym_remote_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    if (!strcmp(op->type, "distributed_lookup_table"))
        return do_dlt(c, p, prog, block, i, op);
    if (!strcmp(op->type, "nce_grad"))
        return do_nce_grad(c, p, prog, block, i, op);
    return do_reader(c, p, prog, block, i, op);
}

void sym_remote_explain(sym_job *j, GString *g, const char *name, sym_term *want)
{
    slice s[MAX_SLICES];
    int m = find_slices(j, name, s);
    int64_t off = 0;
    g_string_append_printf(g, "the pservers' %d slice%s of '%s' put together differ: ", m,
                           m == 1 ? "" : "s", name);
    for (int k = 0; k < m; k++) {
        int64_t rows = sym_var_rows(ir_program_block(s[k].ps->main, 0), s[k].var);
        if (rows <= 0)
            break;
        sym_term *exp = sym_slice_in(j->c.st, want, off, rows);
        if (slice_val(j, &s[k]) != exp) {
            g_string_append_printf(g, "'%s' on %s (rows %lld to %lld): ", s[k].var, s[k].ps->label,
                                   (long long)off, (long long)(off + rows));
            sym_explain(j, g, s[k].ps, s[k].var, exp);
            return;
        }
        off += rows;
    }
    sym_term *got = sym_remote_value(j, name);
    sym_short(g, got, 3);
    g_string_append(g, " where single-process training has ");
    sym_short(g, want, 3);
}
