/* backward_prune.c - _find_not_need_ops: drops the grad sub-graphs that
 * start at a "head" (a grad op reading neither a forward var nor the output
 * of an earlier grad op) and never join the rest of the backward graph
 * (../shared/seeds/backward.py.txt). */
#include <stdlib.h>

#include "../../ir/util.h"
#include "backward_internal.h"

/* A grow-only array of size_t. */
typedef struct {
    size_t *v;
    size_t n, cap;
} zvec;

static void zpush(zvec *z, size_t x)
{
    if (z->n == z->cap) {
        z->cap = z->cap ? z->cap * 2 : 64;
        z->v = xrealloc(z->v, z->cap * sizeof *z->v);
    }
    z->v[z->n++] = x;
}

/* The seed builds a graph of versioned var nodes: reading a name uses its
 * latest version, writing one makes a new version.  Here nodes and edges
 * live in flat arrays: op i reads nodes in_ids[in_at[i] .. in_at[i+1]) and
 * writes out_ids[out_at[i] .. out_at[i+1]); a node's readers form a linked
 * list (first_reader / next_reader over edge ids) in creation order. */
typedef struct {
    size_t n;                   /* grad ops */
    size_t *in_at, *out_at;     /* per op, n + 1 */
    bool *head;                 /* per op: reads only names new to the graph */
    zvec in_ids, out_ids;
    zvec first_reader, last_reader; /* per node: edge id + 1, 0 = none */
    zvec edge_op, next_reader;      /* per edge */
} var_graph;

static size_t new_node(var_graph *g)
{
    zpush(&g->first_reader, 0);
    zpush(&g->last_reader, 0);
    return g->first_reader.n - 1;
}

/* Op i reads node: one edge, appended to the node's reader list. */
static void add_read(var_graph *g, size_t node, size_t i)
{
    size_t edge = g->edge_op.n;
    zpush(&g->edge_op, i);
    zpush(&g->next_reader, 0);
    if (g->last_reader.v[node])
        g->next_reader.v[g->last_reader.v[node] - 1] = edge + 1;
    else
        g->first_reader.v[node] = edge + 1;
    g->last_reader.v[node] = edge + 1;
    zpush(&g->in_ids, node);
}

/* Does op (inputs in `ins`) read only names that are neither forward vars
 * nor written by an earlier grad op?  Repeated names count once. */
static bool reads_only_new(GPtrArray *ins, const pmap *fwd_vars, const pmap *bwd_vars)
{
    size_t n_uniq = 0, n_new = 0;
    for (size_t k = 0; k < ins->len; k++) {
        bool dup = false;
        for (size_t j = 0; j < k && !dup; j++)
            dup = ins->pdata[j] == ins->pdata[k];
        if (dup)
            continue;
        n_uniq++;
        if (!pmap_has(fwd_vars, ins->pdata[k]) && !pmap_has(bwd_vars, ins->pdata[k]))
            n_new++;
    }
    return n_new == n_uniq;
}

static void graph_build(var_graph *g, GPtrArray *grad_ops, const pmap *fwd_vars)
{
    size_t n = g->n = grad_ops->len;
    g->in_at = xcalloc(n + 1, sizeof *g->in_at);
    g->out_at = xcalloc(n + 1, sizeof *g->out_at);
    g->head = xcalloc(n + 1, sizeof *g->head);
    pmap *bwd_vars = pmap_new();
    pmap *latest = pmap_new();     /* name -> its latest node + 1 */
    GPtrArray *buf = g_ptr_array_new();
    for (size_t i = 0; i < n; i++) {
        const ir_op *op = grad_ops->pdata[i];
        bw_arg_names(op, false, buf);
        g->head[i] = reads_only_new(buf, fwd_vars, bwd_vars);
        g->in_at[i] = g->in_ids.n;
        for (size_t k = 0; k < buf->len; k++) {
            size_t id = GPOINTER_TO_SIZE(pmap_get(latest, buf->pdata[k]));
            if (!id) {
                id = new_node(g) + 1;
                pmap_put(latest, buf->pdata[k], GSIZE_TO_POINTER(id));
            }
            add_read(g, id - 1, i);
        }
        bw_arg_names(op, true, buf);
        g->out_at[i] = g->out_ids.n;
        for (size_t k = 0; k < buf->len; k++) {
            pmap_add(bwd_vars, buf->pdata[k]);
            size_t node = new_node(g);
            pmap_put(latest, buf->pdata[k], GSIZE_TO_POINTER(node + 1));
            zpush(&g->out_ids, node);
        }
    }
    g->in_at[n] = g->in_ids.n;
    g->out_at[n] = g->out_ids.n;
    g_ptr_array_free(buf, TRUE);
    pmap_destroy(bwd_vars);
    pmap_destroy(latest);
}

static void graph_free(var_graph *g)
{
    zvec *all[] = {&g->in_ids, &g->out_ids, &g->first_reader, &g->last_reader, &g->edge_op,
                   &g->next_reader};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(all[i]->v);
    free(g->in_at);
    free(g->out_at);
    free(g->head);
}

/* Marks in drop[] the ops reachable from each head whose every op has all
 * its inputs ready (the seed's walk from each head); returns how many. */
static size_t graph_mark_unneeded(const var_graph *g, bool *drop)
{
    size_t n = g->n, n_drop = 0;
    unsigned *ready = xcalloc(g->first_reader.n + 1, sizeof *ready);
    unsigned *passed = xcalloc(n + 1, sizeof *passed);
    zvec queue = {0}, list = {0};
    unsigned stamp = 0;
    for (size_t h = 0; h < n; h++) {
        if (!g->head[h])
            continue;
        stamp++;
        queue.n = list.n = 0;
        zpush(&queue, h);
        zpush(&list, h);
        for (size_t k = g->in_at[h]; k < g->in_at[h + 1]; k++)
            ready[g->in_ids.v[k]] = stamp;
        bool remove = true;
        for (size_t q = 0; q < queue.n && remove; q++) {
            size_t o = queue.v[q];
            if (passed[o] == stamp)
                continue;
            bool ok = g->in_at[o + 1] > g->in_at[o];
            for (size_t k = g->in_at[o]; k < g->in_at[o + 1] && ok; k++)
                ok = ready[g->in_ids.v[k]] == stamp;
            remove = ok;
            if (!ok)
                break;
            passed[o] = stamp;
            for (size_t k = g->out_at[o]; k < g->out_at[o + 1]; k++) {
                size_t node = g->out_ids.v[k];
                for (size_t e = g->first_reader.v[node]; e; e = g->next_reader.v[e - 1]) {
                    zpush(&queue, g->edge_op.v[e - 1]);
                    zpush(&list, g->edge_op.v[e - 1]);
                }
                ready[node] = stamp;
            }
        }
        for (size_t k = 0; remove && k < list.n; k++)
            if (!drop[list.v[k]]) {
                drop[list.v[k]] = true;
                n_drop++;
            }
    }
    free(queue.v);
    free(list.v);
    free(ready);
    free(passed);
    return n_drop;
}

static GPtrArray *prune(GPtrArray *grad_ops, const pmap *fwd_vars, bool any_head)
{
    size_t n = grad_ops->len;
    GPtrArray *res = g_ptr_array_sized_new((guint)n);
    if (!any_head) {
        for (size_t i = 0; i < n; i++)
            g_ptr_array_add(res, grad_ops->pdata[i]);
        return res;
    }
    var_graph g = {0};
    graph_build(&g, grad_ops, fwd_vars);
    bool *drop = xcalloc(n + 1, sizeof *drop);
    size_t n_drop = graph_mark_unneeded(&g, drop);
    /* Everything unneeded: the seed keeps the list as it is. */
    for (size_t i = 0; i < n; i++)
        if (!drop[i] || n_drop == n)
            g_ptr_array_add(res, grad_ops->pdata[i]);
    free(drop);
    graph_free(&g);
    return res;
}

/* A candidate head reads only names that are neither forward vars nor
 * written by an earlier grad op.  Most grad ops read a forward var, so the
 * cheap test is first: an op with one is no head. */
static bool has_head(GPtrArray *grad_ops, const pmap *fwd_vars)
{
    pmap *bwd_vars = NULL;
    bool found = false;
    for (size_t i = 0; i < grad_ops->len && !found; i++) {
        const ir_op *op = grad_ops->pdata[i];
        bool head = true;
        for (size_t s = 0; s < op->n_inputs && head; s++)
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args && head; k++)
                head = !pmap_has(fwd_vars, ir_op_ins(op)[s].args[k]);
        if (head) {
            if (!bwd_vars) {
                bwd_vars = pmap_new();
                for (size_t j = 0; j < i; j++) {
                    const ir_op *w = grad_ops->pdata[j];
                    for (size_t s = 0; s < w->n_outputs; s++)
                        for (size_t k = 0; k < ir_op_outs(w)[s].n_args; k++)
                            pmap_add(bwd_vars, ir_op_outs(w)[s].args[k]);
                }
            }
            for (size_t s = 0; s < op->n_inputs && head; s++)
                for (size_t k = 0; k < ir_op_ins(op)[s].n_args && head; k++)
                    head = !pmap_has(bwd_vars, ir_op_ins(op)[s].args[k]);
            found = head;
        }
        if (bwd_vars)
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
                    pmap_add(bwd_vars, ir_op_outs(op)[s].args[k]);
    }
    if (bwd_vars)
        pmap_destroy(bwd_vars);
    return found;
}

static void add_fwd_vars(pmap *fwd_vars, GPtrArray *fwd_ops)
{
    pmap_reserve(fwd_vars, fwd_ops->len * 2);
    for (size_t i = 0; i < fwd_ops->len; i++) {
        const ir_op *op = fwd_ops->pdata[i];
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t k = 0; k < ir_op_ins(op)[s].n_args; k++)
                pmap_add(fwd_vars, ir_op_ins(op)[s].args[k]);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t k = 0; k < ir_op_outs(op)[s].n_args; k++)
                pmap_add(fwd_vars, ir_op_outs(op)[s].args[k]);
    }
}

GPtrArray *bw_prune_not_needed(bw_run *r, GPtrArray *grad_ops, GPtrArray *fwd_ops)
{
    (void)r;
    pmap fwd_vars = PMAP_INIT;
    add_fwd_vars(&fwd_vars, fwd_ops);
    GPtrArray *res = prune(grad_ops, &fwd_vars, has_head(grad_ops, &fwd_vars));
    pmap_free(&fwd_vars);
    return res;
}

/* has_head, looking only at the candidates of a scan of exactly ops. */
static bool scan_has_head(const bw_scan *s, GPtrArray *ops, const pmap *fwd_vars)
{
    pmap bwd_vars = PMAP_INIT;
    size_t filled = 0;
    bool found = false;
    for (size_t c = 0; c < s->head_cands->len && !found; c++) {
        size_t i = g_array_index(s->head_cands, size_t, c);
        const ir_op *op = ops->pdata[i];
        bool head = true;
        for (size_t a = 0; a < op->n_inputs && head; a++)
            for (size_t k = 0; k < ir_op_ins(op)[a].n_args && head; k++)
                head = !pmap_has(fwd_vars, ir_op_ins(op)[a].args[k]);
        if (!head)
            continue;
        for (; filled < i; filled++) {
            const ir_op *w = ops->pdata[filled];
            for (size_t a = 0; a < w->n_outputs; a++)
                for (size_t k = 0; k < ir_op_outs(w)[a].n_args; k++)
                    pmap_add(&bwd_vars, ir_op_outs(w)[a].args[k]);
        }
        for (size_t a = 0; a < op->n_inputs && head; a++)
            for (size_t k = 0; k < ir_op_ins(op)[a].n_args && head; k++)
                head = !pmap_has(&bwd_vars, ir_op_ins(op)[a].args[k]);
        found = head;
    }
    pmap_free(&bwd_vars);
    return found;
}

/* scanned: grad_ops is exactly the list s was gathered on; then, with no
 * candidate head, the forward vars are not even collected. */
GPtrArray *bw_prune_scanned(bw_run *r, GPtrArray *grad_ops, GPtrArray *fwd_ops,
                            const bw_scan *s, bool scanned)
{
    if (!scanned)
        return bw_prune_not_needed(r, grad_ops, fwd_ops);
    pmap fwd_vars = PMAP_INIT;
    if (s->head_cands->len)
        add_fwd_vars(&fwd_vars, fwd_ops);
    GPtrArray *res = prune(grad_ops, &fwd_vars,
                           s->head_cands->len && scan_has_head(s, grad_ops, &fwd_vars));
    pmap_free(&fwd_vars);
    return res;
}
