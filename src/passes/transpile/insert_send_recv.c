/* insert_send_recv.c - pass 'insert_send_recv': the trainer's main and
 * startup programs as transpile() leaves them: the grads split and sent,
 * the barriers, the params received and concatenated, the lookup table's
 * prefetch (transpile_table.c), and _get_trainer_startup_program.  It
 * takes ctx->main and ctx->startup over and rewrites them in place;
 * 'delete_optimizer' then finishes them. */
#include <string.h>

#include "../../diag.h"
#include "builders.h"

typedef struct {
    const char **v;
    size_t cap;
} name_buf;

typedef struct {
    ir_op *a, *b;           /* b only, or a then b */
    uint32_t next;          /* the group added before it at its anchor */
} tp_group;

typedef struct {
    const tp_placement *pl;
    const tp_inputs *in;
    ir_program *p, *s;      /* trainer main and startup (the inputs, taken over) */
    ir_block *b, *sb;       /* their block 0 */
    unsigned ctl;           /* __control_var counter */
    /* The split/send groups, each chained to the one added before it at
     * the same anchor: head[anchor + 1] is the newest (index + 1; 0: none).
     * A GPtrArray per group and per anchor was 1.4 MB of the bench MLP's
     * peak, all freed right after (issue 33). */
    tp_group *grp;
    uint32_t *head;
    uint32_t n_grp;
    GPtrArray *tail;        /* ops appended after the last original op */
    const char *table_dummy;    /* the lookup table's send dummy, or NULL */
    size_t prefetch_next;       /* tp_prefetch_emit's cursor */
    name_buf names;             /* for ep_names and slice_names */
} trainer;

/* Room for the names handed to one setter, which copies them: the
 * endpoints or slices of each new op, kept in the plan's arena until the
 * end, were 6 arrays per param (issue 33). */
static const char **name_room(name_buf *nb, size_t n)
{
    if (n > nb->cap) {
        nb->v = xrealloc_n(nb->v, n, sizeof *nb->v);
        nb->cap = n;
    }
    return nb->v;
}

/* Valid until the next call with nb. */
static const char **ep_names(name_buf *nb, const tp_placement *pl, const tp_pair *p)
{
    const char **eps = name_room(nb, p->param.n_slices);
    for (size_t k = 0; k < p->param.n_slices; k++)
        eps[k] = pl->eps[p->ep[k]];
    return eps;
}

/* Valid until the next call with nb. */
static const char **slice_names(name_buf *nb, const tp_dvar *d)
{
    const char **n = name_room(nb, d->n_slices);
    for (size_t k = 0; k < d->n_slices; k++)
        n[k] = d->slices[k].name;
    return n;
}

/* ---- renaming unsplit grads to NAME.trainer_<id> ---- */

/* Block::_rename_var for many vars at once: one walk over every op instead
 * of one per var.  Like Paddle's OpDesc::RenameInput/RenameOutput, entries
 * of op_role_var are renamed too. */
static void rename_many(ir_program *p, const pmap *map, const GPtrArray *from_order,
                        ir_arena *a)
{
    if (map->n == 0)
        return;
    ir_block *b0 = p->blocks[0];
    /* Re-keying a VarDesc moves it among the vars added later, as Paddle's
     * BlockDesc::Flush does (added vars are written sorted by name); the
     * vars are re-keyed in pair order all the same, never in map order. */
    for (guint i = 0; i < from_order->len; i++) {
        const char *from = from_order->pdata[i];
        const char *to = pmap_get(map, from);
        ir_var *v = ir_block_find_var(b0, from);
        if (!v)
            continue;
        ir_var *nv = ir_block_clone_var(b0, v, to);
        /* _rename_var makes a new Variable(stop_gradient=old value), which
         * writes the field even where the input had none. */
        nv->has_stop_gradient = true;
        ir_block_remove_var(b0, from);
    }
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        ir_block *b = p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_op *op = b->ops[k];
            bool touched = false;
            for (int io = 0; io < 2; io++) {
                size_t n = io ? op->n_outputs : op->n_inputs;
                for (size_t s = 0; s < n; s++) {
                    ir_slot *sl = io ? &ir_op_outs(op)[s] : &ir_op_ins(op)[s];
                    bool hit = false;
                    for (size_t i = 0; i < sl->n_args && !hit; i++)
                        hit = pmap_has(map, sl->args[i]);
                    if (!hit)
                        continue;
                    touched = true;
                    const char **args = ir_arena_alloc(a, sl->n_args * sizeof *args);
                    for (size_t i = 0; i < sl->n_args; i++) {
                        const char *r = pmap_get(map, sl->args[i]);
                        args[i] = r ? r : sl->args[i];
                    }
                    if (io)
                        ir_op_set_output(op, sl->name, args, sl->n_args);
                    else
                        ir_op_set_input(op, sl->name, args, sl->n_args);
                }
            }
            /* op_role_var names a grad only on ops that read or write it
             * (its producer, clip and optimize ops), so only those are
             * looked at; Paddle renames the entry on every op. */
            if (!touched)
                continue;
            size_t n_rv = 0;
            const char **rv = ir_op_get_names(op, "op_role_var", &n_rv, a);
            bool hit = false;
            for (size_t i = 0; i < n_rv; i++) {
                const char *r = pmap_get(map, rv[i]);
                if (r) {
                    rv[i] = r;
                    hit = true;
                }
            }
            if (hit)
                ir_op_set_strings(op, "op_role_var", rv, n_rv);
        }
    }
}

/* ---- the ops transpile() adds ---- */

static ir_op *new_op(trainer *t, const char *type, int role)
{
    ir_op *op = ir_op_new(t->p, type);
    ir_op_set_role(op, role);
    return op;
}

static void add_group(trainer *t, long anchor, ir_op *a, ir_op *b)
{
    tp_group *g = &t->grp[t->n_grp++];
    g->a = a;
    g->b = b;
    g->next = t->head[anchor + 1];
    t->head[anchor + 1] = t->n_grp;
}

/* For each pair, the last op of the input's block 0 that writes its grad
 * (find_op_by_output_arg with reverse=True), or -1: one scan over the ops
 * instead of a search per grad. */
static long *last_writers(const tp_placement *pl, const tp_inputs *in)
{
    long *at = ir_arena_alloc(in->arena, (pl->n_pairs + 1) * sizeof *at);
    for (size_t i = 0; i < pl->n_pairs; i++)
        at[i] = -1;
    for (size_t k = 0; k < in->b0->n_ops; k++) {
        const ir_op *op = in->b0->ops[k];
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++) {
                const tp_pair *p = tp_pair_of_grad(pl, ir_op_outs(op)[s].args[a]);
                if (p)
                    at[p - pl->pairs] = (long)k;
            }
    }
    return at;
}

/* Step 2 of transpile(): split and send each grad right after its last
 * writer.  Returns the send ops' dummy outputs, per pair. */
static const char **insert_sends(trainer *t, const long *anchors)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    const char **dummy = ir_arena_alloc(in->arena, (pl->n_pairs + 1) * sizeof *dummy);
    for (size_t q = 0; q < pl->n_pairs; q++) {
        size_t pi = pl->send_order[q];
        const tp_pair *p = &pl->pairs[pi];
        const tp_dvar *g = &p->grad;
        const char *sent = g->n_slices == 1 ? g->slices[0].name : g->name;
        long anchor = anchors[pi];
        ir_op *split = NULL;
        if (g->n_slices > 1 && !pl->runtime_split) {
            bool rows = g->var->type == IR_SELECTED_ROWS;
            split = new_op(t, rows ? "split_selected_rows" : "split_byref", IR_ROLE_DIST);
            ir_op_set_input1(split, "X", g->name);
            ir_op_set_output(split, "Out", slice_names(&t->names, g), g->n_slices);
            if (rows) {
                int64_t *h = ir_arena_alloc(in->arena, g->n_slices * sizeof *h);
                for (size_t k = 0; k < g->n_slices; k++)
                    h[k] = g->slices[k].dims[0];
                ir_op_set_longs(split, "height_sections", h, g->n_slices);
            } else {
                int32_t *h = ir_arena_alloc(in->arena, g->n_slices * sizeof *h);
                for (size_t k = 0; k < g->n_slices; k++)
                    h[k] = (int32_t)g->slices[k].dims[0];
                ir_op_set_ints(split, "sections", h, g->n_slices);
            }
        }
        dummy[pi] = tp_control_var(t->b, &t->ctl);
        ir_op *send = new_op(t, "send", IR_ROLE_RPC);
        ir_op_set_output1(send, "Out", dummy[pi]);
        ir_op_set_strings(send, "epmap", ep_names(&t->names, pl, p), g->n_slices);
        if (pl->runtime_split) {
            int64_t *h = ir_arena_alloc(in->arena, g->n_slices * sizeof *h);
            for (size_t k = 0; k < g->n_slices; k++)
                h[k] = g->slices[k].dims[0];
            ir_op_set_input1(send, "X", sent);
            ir_op_set_longs(send, "sections", h, g->n_slices);
            ir_op_set_strings(send, "send_varnames", slice_names(&t->names, g), g->n_slices);
        } else {
            ir_op_set_input(send, "X", slice_names(&t->names, g), g->n_slices);
            ir_op_set_longs(send, "sections", NULL, 0);
            ir_op_set_strings(send, "send_varnames", NULL, 0);
        }
        const char *rv[2] = {p->param.name, sent};
        ir_op_set_strings(send, "op_role_var", rv, 2);
        add_group(t, anchor, split, send);
    }
    return dummy;
}

/* transpile(), sync_mode=False: each step counter goes to every pserver,
 * which sums the trainers' counters in its LR block.  Returns the sends'
 * dummy outputs. */
static const char **send_lr_counters(trainer *t)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    const char **decay_out =
        ir_arena_alloc(in->arena, (pl->n_lr_counters + 1) * sizeof *decay_out);
    for (size_t i = 0; !pl->sync && i < pl->n_lr_counters; i++) {
        const char *c = pl->lr_counters[i];
        decay_out[i] = tp_control_var(t->b, &t->ctl);
        ir_op *op = new_op(t, "send", IR_ROLE_RPC);
        ir_op_set_input1(op, "X", c);
        ir_op_set_output1(op, "Out", decay_out[i]);
        ir_op_set_strings(op, "epmap", pl->eps, pl->n_eps);
        ir_op_set_longs(op, "sections", NULL, 0);
        ir_op_set_strings(op, "send_varnames", &c, pl->runtime_split ? 1 : 0);
        ir_op_set_bool(op, "merge_add", true);
        ir_op_set_bool(op, "use_send_handler", false);
        const char *rv[2] = {c, c};
        ir_op_set_strings(op, "op_role_var", rv, 2);
        g_ptr_array_add(t->tail, op);
    }
    return decay_out;
}

/* One recv per param (its slices), then fetch_barrier in sync mode. */
static void recv_params(trainer *t, const char *barrier_out, const char **dummy)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    int tid = in->o->trainer_id;
    GPtrArray *recv_outs = g_ptr_array_new();
    for (size_t pi = 0; pi < pl->n_pairs; pi++) {
        const tp_pair *p = &pl->pairs[pi];
        if (p->remote)
            continue;   /* the pservers keep it (transpile_prefetch.c) */
        ir_op *op = new_op(t, "recv", IR_ROLE_RPC);
        ir_op_set_input1(op, "X", pl->sync ? barrier_out : dummy[pi]);
        const char *rv_grad = p->grad.n_slices == 1 ? p->grad.slices[0].name : p->grad.name;
        if (pl->runtime_split) {
            ir_op_set_output1(op, "Out", p->param.name);
            ir_op_set_strings(op, "recv_varnames", slice_names(&t->names, &p->param),
                              p->param.n_slices);
            g_ptr_array_add(recv_outs, (void *)p->param.name);
        } else {
            ir_op_set_output(op, "Out", slice_names(&t->names, &p->param), p->param.n_slices);
            ir_op_set_strings(op, "recv_varnames", NULL, 0);
            for (size_t k = 0; k < p->param.n_slices; k++)
                g_ptr_array_add(recv_outs, (void *)p->param.slices[k].name);
        }
        ir_op_set_strings(op, "epmap", ep_names(&t->names, pl, p), p->param.n_slices);
        ir_op_set_int(op, "trainer_id", tid);
        const char *rv[2] = {p->param.name, rv_grad};
        ir_op_set_strings(op, "op_role_var", rv, 2);
        g_ptr_array_add(t->tail, op);
    }
    if (pl->sync) {
        ir_op *op = new_op(t, "fetch_barrier", IR_ROLE_RPC);
        ir_op_set_input1(op, "X", barrier_out);
        ir_op_set_output(op, "Out", (const char *const *)recv_outs->pdata, recv_outs->len);
        ir_op_set_strings(op, "endpoints", pl->eps, pl->n_eps);
        ir_op_set_int(op, "trainer_id", tid);
        g_ptr_array_add(t->tail, op);
    }
    g_ptr_array_free(recv_outs, TRUE);
}

/* The rest of transpile(): barriers, recvs and concats at the end. */
static void append_recvs(trainer *t, const char **dummy)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    int tid = in->o->trainer_id;
    const char *barrier_out = tp_control_var(t->b, &t->ctl);
    const char *table_dummy = t->table_dummy = tp_table_send_dummy(pl, t->b, &t->ctl);
    const char **decay_out = send_lr_counters(t);
    if (pl->sync || (pl->runtime_split && pl->half_async)) {
        ir_op *op = new_op(t, "send_barrier", IR_ROLE_RPC);
        const char **deps = ir_arena_alloc(
            in->arena, (pl->n_pairs + pl->n_lr_counters + 2) * sizeof *deps);
        size_t nd = 0;
        for (size_t q = 0; q < pl->n_pairs; q++)
            deps[nd++] = dummy[pl->send_order[q]];
        if (table_dummy)
            deps[nd++] = table_dummy;
        for (size_t i = 0; !pl->sync && i < pl->n_lr_counters; i++)
            deps[nd++] = decay_out[i];
        ir_op_set_input(op, "X", deps, nd);
        ir_op_set_output1(op, "Out", barrier_out);
        ir_op_set_strings(op, "endpoints", pl->eps, pl->n_eps);
        ir_op_set_int(op, "trainer_id", tid);
        ir_op_set_bool(op, "half_async", !pl->sync);
        g_ptr_array_add(t->tail, op);
    }
    recv_params(t, barrier_out, dummy);
    for (size_t pi = 0; pi < pl->n_pairs && !pl->runtime_split; pi++) {
        const tp_pair *p = &pl->pairs[pi];
        if (p->param.n_slices <= 1 || p->remote)
            continue;
        ir_op *op = new_op(t, "concat", IR_ROLE_DIST);
        ir_op_set_input(op, "X", slice_names(&t->names, &p->param), p->param.n_slices);
        /* Python's Operator writes a dispensable input left out as an
         * empty slot. */
        ir_op_set_input(op, "AxisTensor", NULL, 0);
        ir_op_set_output1(op, "Out", p->param.name);
        ir_op_set_int(op, "axis", 0);
        g_ptr_array_add(t->tail, op);
    }
}

/* _get_trainer_startup_program: fetch every param from the pservers. */
void tp_trainer_startup_recvs(const tp_placement *pl, const tp_inputs *in, ir_block *sb,
                              unsigned *ctl)
{
    name_buf nb = {NULL, 0};
    for (size_t pi = 0; pi < pl->n_pairs; pi++) {
        const tp_pair *p = &pl->pairs[pi];
        if (p->sparse_table)
            continue;
        for (size_t k = 0; k < p->param.n_slices; k++) {
            const tp_slice *s = &p->param.slices[k];
            if (!ir_block_find_var(sb, s->name))
                tp_create_var(sb, s->name, p->param.var->type, p->param.var->dtype,
                              s->dims, s->n_dims, 0, 0);
        }
        ir_op *op = ir_block_append_op(sb, "recv");
        ir_op_set_input(op, "X", NULL, 0);
        ir_op_set_output(op, "Out", slice_names(&nb, &p->param), p->param.n_slices);
        ir_op_set_strings(op, "epmap", ep_names(&nb, pl, p), p->param.n_slices);
        ir_op_set_int(op, "trainer_id", in->o->trainer_id);
        ir_op_set_role(op, IR_ROLE_RPC);
    }
    ir_op *fb = ir_block_append_op(sb, "fetch_barrier");
    ir_op_set_input(fb, "X", NULL, 0);     /* inputs={}: the dispensable X, empty */
    ir_op_set_output1(fb, "Out", tp_control_var(sb, ctl));
    ir_op_set_strings(fb, "endpoints", pl->eps, pl->n_eps);
    ir_op_set_int(fb, "trainer_id", in->o->trainer_id);
    ir_op_set_role(fb, IR_ROLE_RPC);
    for (size_t pi = 0; pi < pl->n_pairs; pi++) {
        const tp_pair *p = &pl->pairs[pi];
        if (p->sparse_table || p->param.n_slices <= 1)
            continue;
        if (!ir_block_find_var(sb, p->param.name)) {
            const ir_var *v = p->param.var;
            tp_create_var(sb, p->param.name, v->type, v->dtype, v->dims, v->n_dims, -1,
                          v->has_persistable ? v->persistable : -1);
        }
        ir_op *op = ir_block_append_op(sb, "concat");
        ir_op_set_input(op, "X", slice_names(&nb, &p->param), p->param.n_slices);
        ir_op_set_input(op, "AxisTensor", NULL, 0);
        ir_op_set_output1(op, "Out", p->param.name);
        ir_op_set_int(op, "axis", 0);
        ir_op_set_role(op, IR_ROLE_FORWARD);
    }
    free(nb.v);
}

static void build_startup(trainer *t)
{
    tp_trainer_startup_recvs(t->pl, t->in, t->sb, &t->ctl);
}

/* _init_splited_vars: the slice vars, and NAME.trainer_<id> renames.
 * Returns, per pair, the last op writing its grad (before the renames). */
static const long *init_split_vars(trainer *t)
{
    const tp_placement *pl = t->pl;
    pmap renames = PMAP_INIT;   /* name -> NAME.trainer_<id> */
    GPtrArray *renamed = g_ptr_array_new();     /* its keys in pair order */
    for (size_t pi = 0; pi < pl->n_pairs; pi++) {
        const tp_pair *p = &pl->pairs[pi];
        const tp_dvar *ds[2] = {&p->param, &p->grad};
        for (int w = 0; w < 2; w++) {
            const tp_dvar *d = ds[w];
            if (d->n_slices == 1) {
                if (d->slices[0].name == d->name)
                    continue;
                if (!pmap_has(&renames, d->name))
                    g_ptr_array_add(renamed, (void *)d->name);
                pmap_put(&renames, d->name, (void *)d->slices[0].name);
                continue;
            }
            for (size_t k = 0; k < d->n_slices; k++)
                tp_create_var(t->b, d->slices[k].name, d->var->type, d->var->dtype,
                              d->slices[k].dims, d->slices[k].n_dims, -1, 0);
        }
    }
    const long *anchors = last_writers(pl, t->in);
    /* its lists are read once: a scratch arena, not the plan's, which
     * lives to the end of the run (290 KB on the bench MLP; issue 33) */
    ir_arena *scratch = ir_arena_new();
    rename_many(t->p, &renames, renamed, scratch);
    ir_arena_free(scratch);
    g_ptr_array_free(renamed, TRUE);
    pmap_free(&renames);
    return anchors;
}

/* Builds the final op list of block 0: the original ops (but the remote
 * prefetch lookups, replaced) with the split/send groups after their
 * anchors, then the tail.  The optimize and LR ops stay for
 * 'delete_optimizer'. */
static void assemble(trainer *t)
{
    const tp_placement *pl = t->pl;
    const tp_inputs *in = t->in;
    size_t n0 = in->b0->n_ops;
    GPtrArray *ops = g_ptr_array_sized_new((guint)(n0 + t->tail->len + 2 * pl->n_pairs + 1));
    for (long i = -1; i < (long)n0; i++) {
        if (i >= 0) {
            uint8_t k = pl->op_kind[i];
            if (k != TP_OP_PREFETCHED)
                g_ptr_array_add(ops, t->b->ops[i]);
        }
        tp_prefetch_emit(pl, in, t->p, i, ops, &t->prefetch_next);
        /* Each grad's ops went in at anchor + 1, so a later grad with the
         * same anchor lands before an earlier one: newest first. */
        for (uint32_t g = t->head[i + 1]; g; g = t->grp[g - 1].next) {
            if (t->grp[g - 1].a)
                g_ptr_array_add(ops, t->grp[g - 1].a);
            g_ptr_array_add(ops, t->grp[g - 1].b);
        }
    }
    for (guint k = 0; k < t->tail->len; k++)
        g_ptr_array_add(ops, t->tail->pdata[k]);
    ir_block_set_ops(t->b, (ir_op *const *)ops->pdata, ops->len);
    g_ptr_array_free(ops, TRUE);
}

static void drop_input(const trainer *t)
{
    if (t->in->drop_input)
        t->in->drop_input(t->p);
}

int tp_insert_send_recv(const tp_placement *pl, const tp_inputs *in, ir_program *main,
                        ir_program *startup)
{
    trainer t;
    memset(&t, 0, sizeof t);
    t.pl = pl;
    t.in = in;
    t.p = main;
    t.s = startup;
    t.b = t.p->blocks[0];
    t.sb = t.s->blocks[0];
    size_t n0 = in->b0->n_ops;
    t.head = xcalloc(n0 + 1, sizeof *t.head);
    t.grp = xmalloc_n(pl->n_pairs + 1, sizeof *t.grp);
    t.tail = g_ptr_array_new();

    for (size_t i = 0; i < n0; i++)
        if (pl->op_kind[i] == TP_OP_CLIP)
            ir_op_set_role(t.b->ops[i], IR_ROLE_BACKWARD);
    /* Each step reads kept bytes of most ops (attrs such as op_role_var)
     * and so faults most of the main input's pages back in; given back
     * after each, they do not sit beside the trainer at its highest
     * point (issue 33: 1M ops of transpile_gen, 1146 -> 1048 MB). */
    const long *anchors = init_split_vars(&t);
    drop_input(&t);
    const char **dummy = insert_sends(&t, anchors);
    drop_input(&t);
    append_recvs(&t, dummy);
    drop_input(&t);
    /* The startup's recvs after the main's op list is assembled: that
     * list is built beside the block's old one and copied, the run's
     * highest point on the bench MLP, 2 MB lower without the startup's
     * 6 000 recvs yet (issue 33).  They read neither list. */
    assemble(&t);
    drop_input(&t);
    build_startup(&t);
    tp_table_trainer(pl, in, t.b, t.table_dummy);
    g_ptr_array_free(t.tail, TRUE);
    free(t.head);
    free(t.grp);
    free(t.names.v);
    return PDT_OK;
}

/* Puts a program taken over back where it was (a builder refused it). */
static void give_back(ir_program **slot, ir_program *p)
{
    ir_program_free(*slot);
    *slot = p;
}

/* Builds the trainer's main and startup with BUILD and stages them as
 * trainer_<id> (insert_send_recv and geo_trainer). */
int tp_build_trainer(pdt_ctx *ctx, const char *pass, tp_trainer_builder build)
{
    tp_plan *st = tp_plan_need(ctx, pass, TP_PLAN_SPLIT);
    if (!st)
        return PDT_EINTERNAL;
    if (ctx->transpile.role == PDT_ROLE_PSERVER)
        return PDT_OK;  /* no trainer asked for */
    if (st->trainer_main)
        return tp_order_bug(pass);
    /* The trainer is built last, so it may take the inputs over instead of
     * copying them (a copy of a 100000-op program costs as much as the
     * rest of the trainer).  The placement stays valid: it holds its own
     * copies of the var descs; in.b0 is now the trainer's block 0. */
    ir_program *m = tp_take_over(&ctx->main), *s = tp_take_over(&ctx->startup);
    /* The pservers are written and freed: the main input's pages they read
     * go back before the trainer grows to the run's peak (issue 33); what
     * the trainer and the writer read again faults back in from the page
     * cache. */
    if (ctx->settings.drop_input_pages)
        ctx->settings.drop_input_pages(m);
    int rc = build(st->pl, &st->in, m, s);
    if (rc) {
        give_back(&ctx->main, m);
        give_back(&ctx->startup, s);
        return rc;
    }
    st->trainer_main = m;
    st->trainer_startup = s;
    tp_era_warn_unregistered(ctx, m, s);
    int id = ctx->transpile.trainer_id;
    pdt_ctx_stage_output(ctx, ir_internf("trainer_%d", id), st->trainer_main);
    pdt_ctx_stage_output(ctx, ir_internf("trainer_%d.startup", id), st->trainer_startup);
    st->trainer_written = true;
    ir_program *progs[2] = {st->trainer_main, st->trainer_startup};
    tp_plan_outputs_changed(st, progs, 2);
    return PDT_OK;
}

int pass_insert_send_recv(pdt_ctx *ctx)
{
    return tp_build_trainer(ctx, "insert_send_recv", tp_insert_send_recv);
}
