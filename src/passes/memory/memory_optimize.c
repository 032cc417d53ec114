/* memory_optimize.c - Paddle's memory_optimize (memory-passes.md §1-5, §10):
 * an output takes over the name, and so the buffer, of a var that died
 * earlier.
 *
 * Paddle renames x -> c in every later op of the list at once, and edits
 * its per-op live sets the same way: O(ops) per rename.  Here a rename is
 * an event on classes of original names: each class has one current name
 * (its label), and op k is rewritten only when the walk reaches it, with
 * the labels of that moment, which are exactly the renames that began at
 * or before k.  Classes merge small into large, so every name changes class
 * O(log n) times.  What Paddle reads from its edited sets is answered from
 * the classes:
 *  - "c in live_out[i]": some member's next mention after i reads it
 *    (n_live counts those members);
 *  - "c is written by some op": an op at or before i wrote c (the set
 *    `written`), or a member is written after i (max_def);
 *  - the order of defs[i]: Paddle's ordered sets move a renamed name to
 *    the end, so outputs are ordered by the time of their last move (each
 *    member keeps it, with one per-class time for a class that moved as a
 *    whole), then by their original position. */
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/util.h"
#include "memory.h"
#include "memory_pool.h"

typedef struct {
    const char *label;
    size_t *members;
    size_t n, cap;
    size_t n_live;
    long max_def;
    unsigned long long last_move;
    size_t use_stamp;           /* i + 1: one of op i's inputs is a member */
    size_t seen_stamp;          /* scratch, to list each class once */
} mo_class;

typedef struct {
    size_t cls;
    unsigned long long own, joined;
    bool live;
} mo_node;

typedef struct {
    pdt_ctx *ctx;
    mem_cfg *cfg;
    mem_index ix;
    mo_class *classes;
    mo_node *nodes;
    pmap class_of;              /* label -> class + 1 */
    pmap written;               /* current outputs of ops already passed */
    mem_pool *pool;
    unsigned long long time;    /* number of renames so far */
    GString *log;
    unsigned counter;
} mo_state;

static void push_member(mo_class *c, size_t node)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 2;
        c->members = xrealloc(c->members, c->cap * sizeof *c->members);
    }
    c->members[c->n++] = node;
}

static unsigned long long move_time(const mo_state *st, size_t node)
{
    const mo_node *m = &st->nodes[node];
    const mo_class *c = &st->classes[m->cls];
    return c->last_move > m->joined ? c->last_move : m->own;
}

static size_t class_of_label(const mo_state *st, const char *name)
{
    return (size_t)(uintptr_t)pmap_get(&st->class_of, name) - 1;
}

static void state_init(mo_state *st, pdt_ctx *ctx, mem_cfg *cfg)
{
    memset(st, 0, sizeof *st);
    st->ctx = ctx;
    st->cfg = cfg;
    mem_index_build(&st->ix, cfg);
    size_t n = st->ix.n_nodes;
    st->classes = xcalloc(n ? n : 1, sizeof *st->classes);
    st->nodes = xcalloc(n ? n : 1, sizeof *st->nodes);
    pmap_reserve(&st->class_of, n);
    for (size_t k = 0; k < n; k++) {
        mo_class *c = &st->classes[k];
        c->label = st->ix.names[k];
        push_member(c, k);
        c->max_def = st->ix.max_def[k];
        /* Before its first mention a name is live iff that mention reads it. */
        st->nodes[k].cls = k;
        st->nodes[k].live = st->ix.occ[st->ix.first_occ[k]].use;
        c->n_live = st->nodes[k].live;
        pmap_put(&st->class_of, c->label, (void *)(uintptr_t)(k + 1));
    }
    st->pool = mem_pool_new(ctx->memory.level);
    if (ctx->memory.print_log)
        st->log = g_string_new(NULL);
}

static void state_free(mo_state *st)
{
    for (size_t k = 0; k < st->ix.n_nodes; k++)
        free(st->classes[k].members);
    free(st->classes);
    free(st->nodes);
    pmap_free(&st->class_of);
    pmap_free(&st->written);
    mem_pool_free(st->pool);
    mem_index_free(&st->ix);
    if (st->log)
        g_string_free(st->log, TRUE);
}

/* Rename x -> c from the current op on (_rename_arg_ + _update_graph). */
static void rename_event(mo_state *st, const char *x, const char *c)
{
    size_t k = class_of_label(st, x), l = class_of_label(st, c);
    unsigned long long t = ++st->time;
    pmap_remove(&st->class_of, x);
    mo_class *K = &st->classes[k];
    if (l == MEM_NONE) {
        K->label = c;
        K->last_move = t;
        pmap_put(&st->class_of, c, (void *)(uintptr_t)(k + 1));
        return;
    }
    mo_class *L = &st->classes[l];
    size_t dst;
    if (K->n <= L->n) {
        for (size_t m = 0; m < K->n; m++) {
            mo_node *nd = &st->nodes[K->members[m]];
            nd->cls = l;
            nd->own = nd->joined = t;
            push_member(L, K->members[m]);
        }
        dst = l;
    } else {
        for (size_t m = 0; m < L->n; m++) {
            mo_node *nd = &st->nodes[L->members[m]];
            nd->own = move_time(st, L->members[m]);
            nd->joined = t;
            nd->cls = k;
            push_member(K, L->members[m]);
        }
        K->last_move = t;
        K->label = c;
        dst = k;
    }
    mo_class *D = &st->classes[dst], *S = &st->classes[dst == k ? l : k];
    D->n_live = K->n_live + L->n_live;
    D->max_def = K->max_def > L->max_def ? K->max_def : L->max_def;
    D->use_stamp = K->use_stamp > L->use_stamp ? K->use_stamp : L->use_stamp;
    free(S->members);
    S->members = NULL;
    S->n = S->cap = 0;
    pmap_put(&st->class_of, c, (void *)(uintptr_t)(dst + 1));
}

/* Op i's mentions now look past op i: refresh their members' liveness. */
static void advance_liveness(mo_state *st, size_t i)
{
    for (size_t o = st->ix.occ_start[i]; o < st->ix.occ_start[i + 1]; o++) {
        mo_node *nd = &st->nodes[st->ix.occ[o].node];
        bool live = mem_live_after(&st->ix, o);
        if (live != nd->live) {
            st->classes[nd->cls].n_live += live ? 1 : (size_t)-1;
            nd->live = live;
        }
    }
    for (size_t u = st->ix.uses_start[i]; u < st->ix.uses_start[i + 1]; u++)
        st->classes[st->nodes[st->ix.occ[st->ix.uses[u]].node].cls].use_stamp = i + 1;
}

typedef struct {
    size_t cls;
    unsigned long long time;
    size_t pos;
} def_item;

static int cmp_def_item(const void *pa, const void *pb)
{
    const def_item *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* defs[i] as Paddle's ordered set holds it now: each class once, at the
 * earliest (move time, position) of its members.  Returns the count. */
static size_t current_defs(mo_state *st, size_t i, def_item **out)
{
    size_t b = st->ix.defs_start[i], n = st->ix.defs_start[i + 1] - b;
    def_item *items = xcalloc(n ? n : 1, sizeof *items);
    for (size_t d = 0; d < n; d++) {
        size_t node = st->ix.occ[st->ix.defs[b + d]].node;
        items[d] = (def_item){st->nodes[node].cls, move_time(st, node), d};
    }
    qsort(items, n, sizeof *items, cmp_def_item);
    size_t kept = 0;
    for (size_t d = 0; d < n; d++) {
        mo_class *c = &st->classes[items[d].cls];
        if (c->seen_stamp == i + 1)
            continue;
        c->seen_stamp = i + 1;
        items[kept++] = items[d];
    }
    *out = items;
    return kept;
}

static void reuse_outputs(mo_state *st, size_t i)
{
    def_item *items;
    size_t n = current_defs(st, i, &items);
    const char **xs = xcalloc(n ? n : 1, sizeof *xs);
    ir_var **xvs = xcalloc(n ? n : 1, sizeof *xvs);
    size_t m = 0;
    for (size_t d = 0; d < n; d++) {
        const char *x = st->classes[items[d].cls].label;
        if (mem_valid(st->cfg, i, x, &xvs[m]))
            xs[m++] = x;
    }
    for (size_t d = 0; d < m; d++) {
        size_t k = class_of_label(st, xs[d]);
        if (k != MEM_NONE && st->classes[k].use_stamp == i + 1)
            continue;   /* x is also an input of the op */
        const char *c = mem_pool_take(st->pool, st->cfg, i, xs[d], xvs[d], st->log,
                                      &st->counter);
        if (c)
            rename_event(st, xs[d], c);
    }
    free(items);
    free(xs);
    free(xvs);
}

static const char *label_of_name(const mo_state *st, const char *name)
{
    size_t node = mem_node(&st->ix, name);
    return node == MEM_NONE ? name : st->classes[st->nodes[node].cls].label;
}

static void rewrite_role_var(mo_state *st, ir_op *op)
{
    const ir_attr *a = ir_op_attr(op, "op_role_var");
    if (!a || a->type != IR_ATTR_STRINGS || !a->n_strings)
        return;
    size_t n = a->n_strings;
    const char **v = xcalloc(n, sizeof *v);
    bool changed = false;
    for (size_t k = 0; k < n; k++) {
        const char *s = ir_intern_n((const char *)a->strings[k].data, a->strings[k].len);
        v[k] = label_of_name(st, s);
        changed |= v[k] != s;
    }
    if (changed)
        ir_op_set_strings(op, "op_role_var", v, n);
    free(v);
}

/* Op i is final: give it the current names (Paddle's RenameInput/Output
 * touch op_role_var too and mark every op from the first rename on as
 * changed), and record what it writes. */
static void finish_op(mo_state *st, size_t i)
{
    ir_op *op = st->cfg->ops[i];
    if (st->time) {
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++)
                ir_op_ins(op)[s].args[a] = label_of_name(st, ir_op_ins(op)[s].args[a]);
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
                ir_op_outs(op)[s].args[a] = label_of_name(st, ir_op_outs(op)[s].args[a]);
        rewrite_role_var(st, op);
        ir_op_mark_dirty(op);
    }
    for (size_t s = 0; s < op->n_outputs; s++)
        for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
            pmap_add(&st->written, ir_op_outs(op)[s].args[a]);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* _fill_pool: the inputs that die at op i, by name, that some op of the
 * list writes. */
static void fill_pool(mo_state *st, size_t i)
{
    size_t b = st->ix.uses_start[i], n = st->ix.uses_start[i + 1] - b, m = 0;
    const char **dead = xcalloc(n ? n : 1, sizeof *dead);
    for (size_t u = 0; u < n; u++) {
        size_t k = st->nodes[st->ix.occ[st->ix.uses[b + u]].node].cls;
        mo_class *c = &st->classes[k];
        if (c->n_live || c->seen_stamp == i + 1 + st->cfg->n_ops)
            continue;
        c->seen_stamp = i + 1 + st->cfg->n_ops;
        dead[m++] = c->label;
    }
    qsort(dead, m, sizeof *dead, cmp_name);
    for (size_t d = 0; d < m; d++) {
        ir_var *v;
        if (!mem_valid(st->cfg, i, dead[d], &v))
            continue;
        const int64_t *dims;
        size_t nd = mem_var_dims(v, &dims);
        if (mem_pool_has(st->pool, dead[d], dims, nd))
            continue;
        size_t k = class_of_label(st, dead[d]);
        bool written = pmap_has(&st->written, dead[d]) ||
                       (k != MEM_NONE && st->classes[k].max_def > (long)i);
        if (written)
            mem_pool_add(st->pool, dead[d], dims, nd, v->dtype);
    }
    free(dead);
}

static void optimize_cfg(pdt_ctx *ctx, mem_cfg *cfg)
{
    mo_state st;
    state_init(&st, ctx, cfg);
    for (size_t i = 0; i < cfg->n_ops; i++) {
        advance_liveness(&st, i);
        if (i == cfg->forward_num && i > 0)
            mem_pool_reindex(st.pool, cfg, i);
        if (mem_is_sub_block_op(cfg->ops[i])) {
            finish_op(&st, i);
            continue;
        }
        if (mem_pool_size(st.pool))
            reuse_outputs(&st, i);
        finish_op(&st, i);
        fill_pool(&st, i);
    }
    if (st.log && st.log->len) {
        pdt_memory_opts *o = &ctx->memory;
        o->log = xrealloc(o->log, o->log_len + st.log->len + 1);
        memcpy(o->log + o->log_len, st.log->str, st.log->len + 1);
        o->log_len += st.log->len;
    }
    state_free(&st);
}

/* skip_grads: the first grad of op_role_var of every op of block 0 whose
 * op_role is exactly Optimize. */
static bool add_grad_skips(pdt_ctx *ctx)
{
    const ir_block *b = ctx->main->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        const ir_attr *a = ir_op_attr(op, "op_role_var");
        if (ir_op_role(op) != IR_ROLE_OPTIMIZE || !a || a->type != IR_ATTR_STRINGS ||
            !a->n_strings)
            continue;
        if (a->n_strings < 2) {
            pdt_error("%s: block 0, op %zu '%s': op_role_var has one entry, so it names no "
                      "gradient (--skip-grads)", ctx->main_path, k, op->type);
            return false;
        }
        const char *g = ir_intern_n((const char *)a->strings[1].data, a->strings[1].len);
        pdt_list *l = &ctx->memory.skip;
        l->items = xrealloc(l->items, (l->n + 1) * sizeof *l->items);
        l->items[l->n++] = g;
    }
    return true;
}

int pass_memory_optimize(pdt_ctx *ctx)
{
    if (ctx->memory.level != 0 && ctx->memory.level != 1) {
        /* The option table's range (0 to 1) refused any other value. */
        pdt_error("BUG: memory_optimize: level %d passed the option table", ctx->memory.level);
        return PDT_EINTERNAL;
    }
    if (!ctx->main || !ctx->main->n_blocks)
        return PDT_OK;
    if (ctx->memory.skip_grads && !add_grad_skips(ctx))
        return PDT_EBADINPUT;
    mem_cfg_list cfgs;
    if (!mem_cfgs_build(ctx, &cfgs))
        return PDT_EBADINPUT;
    for (size_t c = 0; c < cfgs.n; c++) {
        mem_cfg_add_run_skips(&cfgs.cfgs[c], &ctx->memory.skip);
        optimize_cfg(ctx, &cfgs.cfgs[c]);
    }
    mem_cfgs_free(&cfgs);
    return PDT_OK;
}
