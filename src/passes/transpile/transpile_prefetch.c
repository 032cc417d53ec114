/* transpile_prefetch.c - remote_prefetch tables: the seed's
 * _get_all_remote_sparse_update_op, sparse_param_to_height_sections and
 * _update_remote_sparse_update_op.
 *
 * A param read by a lookup_table / lookup_table_v2 / nce op whose attr
 * remote_prefetch is true, and whose grad is SELECTED_ROWS, stays on the
 * pservers: the trainer sends its grad as usual but never receives it (no
 * recv, not among fetch_barrier's outputs, no concat).  For the lookup types
 * the ops reading it are replaced by ONE distributed_lookup_table that asks
 * the pservers for the rows; an nce op keeps running as it is (the seed only
 * drops the recv).  The trainer startup then treats a lookup-type table like
 * an is_sparse one (fake_init, no recv), because the seed's
 * _get_sparse_table_names sees the distributed_lookup_table op.
 * A 1.4-1.6 target also counts hierarchical_sigmoid (its transpiler's
 * remote types, v1.4.0-v1.6.3): v1.5.2-v1.6.3 drop its W's recv as an
 * nce's and set nothing on it, so its kernel (hierarchical_sigmoid_op.h:
 * prefetch only with a non-empty epmap) reads a W the trainer never
 * receives again.  pdtrans keeps the recv and warns (research 4z11, README
 * deviations): the table is checked against the target as a remote one,
 * then received like any param.
 *
 * Everything is decided here from the input program; insert_send_recv.c
 * asks tp_prefetch_emit for the new ops while it assembles the trainer. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../era/era.h"
#include "builders.h"

typedef struct {
    size_t pair;            /* index into pairs */
    size_t seq;             /* order the seed handles it in (pair order) */
    const char *type;       /* lookup_table or lookup_table_v2 */
    int64_t padding_idx;    /* padding_idx of the first op */
    size_t n_ops;
    const size_t *pos;      /* the replaced ops, by index in block 0 */
    /* Ids[0] and Out[0] of each, as planned: make_op reads them again,
     * after insert_send_recv's NAME.trainer_<id> renames. */
    const char **ids, **outs;
    long anchor;            /* the new op goes right after this op (-1: first) */
} remote_table;

struct tp_prefetch {
    size_t n;
    remote_table *tables;   /* in emit order, see compare_emit */
};

static bool is_lookup(const char *type)
{
    return type == ir_intern("lookup_table") || type == ir_intern("lookup_table_v2");
}

/* `op.attr('remote_prefetch') is True`: only a BOOLEAN true counts (an INT 1
 * is not `True` in Python); a missing attr counts as false.  V2: the
 * target's _get_all_remote_sparse_update_op lists lookup_table_v2 (v1.8.3
 * on); before, such a lookup is an ordinary one, its table received.  HS:
 * it lists hierarchical_sigmoid (v1.4.0-v1.6.3). */
static bool is_remote_op(const ir_op *op, bool v2, bool hs)
{
    if (op->type == ir_intern("lookup_table_v2") && !v2)
        return false;
    bool hsigmoid = op->type == ir_intern("hierarchical_sigmoid");
    if (hsigmoid ? !hs : !is_lookup(op->type) && op->type != ir_intern("nce"))
        return false;
    const ir_attr *a = ir_op_attr(op, "remote_prefetch");
    return a && a->type == IR_ATTR_BOOLEAN && a->b;
}

/* The seed inserts each table's op at max(last writer of an Ids var) + 1,
 * one table after another in param order.  So the ops sharing an anchor end
 * up in reverse param order, all of them before the split/send ops that
 * transpile() put after the same anchor earlier. */
static int compare_emit(const void *a, const void *b)
{
    const remote_table *x = a, *y = b;
    if (x->anchor != y->anchor)
        return x->anchor < y->anchor ? -1 : 1;
    return x->seq > y->seq ? -1 : x->seq < y->seq;
}

static const char *op_where(tp_plan *st, size_t pos)
{
    return ir_internf("%s: block 0, op %zu '%s'", st->ctx->main_path, pos,
                      st->in.b0->ops[pos]->type);
}

/* Fills a lookup table's new-op description and checks that one op can
 * serve all of its lookups.  The seed places it after the last writer of
 * any Ids var and requires min(last reader of each output) to come later;
 * an output nobody reads gives -1 there and a ValueError, and a first
 * reader that comes before the insertion point passes its check although
 * the program then reads that output before it is written.  What the op
 * needs is: every Ids var written before it, every output read after it.
 * So outputs without readers are fine, and any reader at or before the
 * insertion point is refused, naming both ops. */
static int plan_table(tp_plan *st, const ir_defuse *du, remote_table *t, const size_t *ops)
{
    tp_placement *pl = st->draft;
    const ir_block *b = st->in.b0;
    const char *param = pl->pairs[t->pair].param.name;
    long anchor = -1, writer_of = -1;
    size_t anchor_op = ops[0];
    for (size_t k = 0; k < t->n_ops; k++) {
        const ir_op *op = b->ops[ops[k]];
        const char *ids = ir_op_input1(op, "Ids"), *out = ir_op_output1(op, "Out");
        const char *missing = !ids ? "input 'Ids'" : !out ? "output 'Out'"
                            : k == 0 && !ir_op_input1(op, "W") ? "input 'W'" : NULL;
        if (missing) {
            pdt_error("%s: remote_prefetch table '%s': %s is empty or absent",
                      op_where(st, ops[k]), param, missing);
            return PDT_EBADINPUT;
        }
        const char *undeclared = !ir_block_find_var(b, ids) ? ids
                               : !ir_block_find_var(b, out) ? out : NULL;
        if (undeclared) {
            pdt_error("%s: remote_prefetch table '%s': var '%s' is not declared in block 0",
                      op_where(st, ops[k]), param, undeclared);
            return PDT_EBADINPUT;
        }
        t->ids[k] = ids;
        t->outs[k] = out;
        size_t n;
        const size_t *w = ir_defuse_writers(du, ids, &n);
        if (n && (long)w[n - 1] > anchor) {
            anchor = (long)w[n - 1];
            anchor_op = ops[k];
            writer_of = (long)k;
        }
    }
    for (size_t k = 0; k < t->n_ops; k++) {
        size_t n;
        const size_t *r = ir_defuse_readers(du, t->outs[k], &n);
        if (n && (long)r[0] <= anchor) {
            pdt_error("%s: remote_prefetch table '%s': its output '%s' is read by op %zu '%s' "
                      "before op %zu writes '%s', the ids of op %zu '%s'; one "
                      "distributed_lookup_table cannot serve both lookups",
                      op_where(st, ops[k]), param, t->outs[k], r[0], b->ops[r[0]]->type,
                      (size_t)anchor, t->ids[writer_of], anchor_op, b->ops[anchor_op]->type);
            return PDT_EBADINPUT;
        }
    }
    const ir_op *first = b->ops[ops[0]];
    t->padding_idx = ir_op_get_int(first, "padding_idx", -1);
    t->anchor = anchor;
    return PDT_OK;
}

/* uses[pair]: positions of the remote ops naming the pair's param as an
 * input; NULL when the block has no remote op. */
static GArray **remote_uses(const tp_plan *st)
{
    tp_placement *pl = st->draft;
    const ir_block *b = st->in.b0;
    GArray **uses = NULL;
    bool v2 = !st->ctx || tp_era_remote_v2(st->ctx);
    bool hs = st->ctx && tp_era_remote_hsigmoid(st->ctx);
    for (size_t i = 0; i < b->n_ops; i++) {
        ir_block_prefetch_op(b, i);
        const ir_op *op = b->ops[i];
        if (!is_remote_op(op, v2, hs))
            continue;
        /* With is_distributed too (PaddleRec's CTR-DNN sets both), the
         * table has already left the pairs (tp_table_find), so nothing
         * below matches it: the distributed-table rewrite wins, as in the
         * seed, whose send loop never reaches the table's grad. */
        if (!uses)
            uses = xcalloc(pl->n_pairs + 1, sizeof(GArray *));
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++) {
                const tp_pair *p = tp_pair_of_param(pl, ir_op_ins(op)[s].args[a]);
                if (!p)
                    continue;
                GArray **u = &uses[p - pl->pairs];
                if (!*u)
                    *u = g_array_new(FALSE, FALSE, sizeof(size_t));
                if ((*u)->len == 0 || g_array_index(*u, size_t, (*u)->len - 1) != i)
                    g_array_append_val(*u, i);
            }
    }
    return uses;
}

/* Pair pi's remote ops, at pos[0..n): all of one type, or an error. */
static int check_one_type(tp_plan *st, const tp_pair *p, const size_t *pos, size_t n)
{
    const ir_block *b = st->in.b0;
    const char *type = b->ops[pos[0]]->type;
    for (size_t k = 1; k < n; k++)
        if (b->ops[pos[k]]->type != type) {
            /* The seed rewrites only the ops of the first op's type and
             * leaves the others reading a table the trainer never
             * receives. */
            pdt_error("%s: remote_prefetch table '%s' is also read by op %zu '%s' "
                      "with remote_prefetch; all remote ops of one table must have one type",
                      op_where(st, pos[k]), p->param.name, pos[0], type);
            return PDT_EBADINPUT;
        }
    return PDT_OK;
}

/* A 1.4-1.6 target's remote hierarchical_sigmoid table: received (see
 * the head comment), said once per table. */
static void hsigmoid_kept(const tp_plan *st, const char *param)
{
    char v[16];
    pdt_era_format(st->ctx->settings.era, v, sizeof v);
    pdt_warning("remote_prefetch table '%s' (read by hierarchical_sigmoid): Paddle %s's "
                "transpiler (v1.5.2-v1.6.3) drops its recv but sets no epmap on the op, so the "
                "trainer would train with a '%s' it never receives again; pdtrans keeps "
                "receiving it", param, v, param);
}

int tp_find_remote_prefetch(tp_plan *st)
{
    tp_placement *pl = st->draft;
    const ir_block *b = st->in.b0;
    GArray **uses = remote_uses(st);
    if (!uses)
        return PDT_OK;
    int rc = PDT_OK;
    ir_defuse *du = NULL;
    GArray *tables = g_array_new(FALSE, TRUE, sizeof(remote_table));
    bool target_checked = false; /* the target's form is checked at the first remote table */
    for (size_t pi = 0; pi < pl->n_pairs && rc == PDT_OK; pi++) {
        tp_pair *p = &st->draft_pairs[pi];
        GArray *u = uses[pi];
        /* transpile()'s send loop: only a SELECTED_ROWS grad makes the
         * param a remote table (sparse_param_to_height_sections). */
        if (!u || p->grad.var->type != IR_SELECTED_ROWS)
            continue;
        const size_t *pos = (const size_t *)u->data;
        if ((rc = check_one_type(st, p, pos, u->len)))
            break;
        const char *type = b->ops[pos[0]]->type;
        if (!target_checked && st->ctx && (rc = tp_era_check_remote(st->ctx, p->param.name, type)))
            break;
        target_checked = true;
        if (type == ir_intern("hierarchical_sigmoid")) {
            hsigmoid_kept(st, p->param.name);
            continue;
        }
        p->remote = true;
        if (!is_lookup(type))
            continue;   /* nce: only the recv goes */
        p->sparse_table = true;     /* _get_sparse_table_names sees the new op */
        remote_table t;
        memset(&t, 0, sizeof t);
        t.pair = pi;
        t.seq = tables->len;
        t.type = type;
        t.n_ops = u->len;
        t.ids = ir_arena_alloc(pl->arena, u->len * sizeof *t.ids);
        t.outs = ir_arena_alloc(pl->arena, u->len * sizeof *t.outs);
        t.pos = ir_arena_dup(pl->arena, pos, u->len * sizeof *pos);
        if (!du)
            du = ir_defuse_build(b);
        rc = plan_table(st, du, &t, pos);
        if (rc)
            break;
        for (size_t k = 0; k < u->len; k++)
            st->draft_op_kind[pos[k]] = TP_OP_PREFETCHED;
        g_array_append_val(tables, t);
    }
    if (rc == PDT_OK && tables->len) {
        struct tp_prefetch *pf = ir_arena_alloc(pl->arena, sizeof *pf);
        pf->n = tables->len;
        pf->tables = ir_arena_dup(pl->arena, tables->data,
                                  tables->len * sizeof(remote_table));
        qsort(pf->tables, tables->len, sizeof(remote_table), compare_emit);
        pl->prefetch = pf;
    }
    if (du)
        ir_defuse_free(du);
    g_array_free(tables, TRUE);
    for (size_t pi = 0; pi < pl->n_pairs; pi++)
        if (uses[pi])
            g_array_free(uses[pi], TRUE);
    free(uses);
    return rc;
}

/* _update_remote_sparse_update_op's new op for one table.  Like the seed,
 * which runs after _init_splited_vars renamed the grads, it takes the
 * names the lookups have now: a lookup writing a var that is also a grad
 * (fuzzing built one) writes NAME.trainer_<id> by then. */
static ir_op *make_op(const tp_placement *pl, const tp_inputs *in, ir_program *p,
                      const remote_table *t)
{
    const ir_block *b = p->blocks[0];
    const char **ids = ir_arena_alloc(in->arena, t->n_ops * sizeof *ids);
    const char **outs = ir_arena_alloc(in->arena, t->n_ops * sizeof *outs);
    for (size_t k = 0; k < t->n_ops; k++) {
        ids[k] = ir_op_input1(b->ops[t->pos[k]], "Ids");
        outs[k] = ir_op_output1(b->ops[t->pos[k]], "Out");
    }
    const tp_pair *pr = &pl->pairs[t->pair];
    size_t n = pr->param.n_slices;
    const char **names = ir_arena_alloc(in->arena, n * sizeof *names);
    const char **eps = ir_arena_alloc(in->arena, n * sizeof *eps);
    int64_t *heights = ir_arena_alloc(in->arena, n * sizeof *heights);
    for (size_t k = 0; k < n; k++) {
        names[k] = pr->param.slices[k].name;
        eps[k] = pl->eps[pr->ep[k]];
        heights[k] = pr->grad.slices[k].dims[0];
    }
    ir_op *op = ir_op_new(p, "distributed_lookup_table");
    ir_op_set_input(op, "Ids", ids, t->n_ops);
    ir_op_set_input1(op, "W", ir_op_input1(b->ops[t->pos[0]], "W"));
    ir_op_set_output(op, "Outputs", outs, t->n_ops);
    ir_op_set_strings(op, "table_names", names, n);
    ir_op_set_longs(op, "height_sections", heights, n);
    ir_op_set_strings(op, "endpoints", eps, n);
    ir_op_set_long(op, "padding_idx", t->padding_idx);
    ir_op_set_int(op, "trainer_id", in->o->trainer_id);
    ir_op_set_string(op, "lookup_table_version", t->type);
    /* The seed passes no op_role; Python's Operator adds Program._op_role,
     * Forward outside any role guard. */
    ir_op_set_role(op, IR_ROLE_FORWARD);
    return op;
}

void tp_prefetch_emit(const tp_placement *pl, const tp_inputs *in, ir_program *p, long anchor,
                      GPtrArray *ops, size_t *next)
{
    const struct tp_prefetch *pf = pl->prefetch;
    while (pf && *next < pf->n && pf->tables[*next].anchor == anchor)
        g_ptr_array_add(ops, make_op(pl, in, p, &pf->tables[(*next)++]));
}
