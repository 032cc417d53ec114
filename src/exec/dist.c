/* dist.c - a transpiled cluster in one process.  Trainers run op by op;
 * barrier and collective ops are sync points where every trainer must
 * stop at the same op type before any goes on.  Pservers never run their
 * listen_and_serv block: the scheduler runs their optimize blocks (all of
 * them at a send_barrier in sync mode, the grad's own block on each send
 * otherwise).  send/recv copy tensors between scopes by endpoint. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "dist.h"

static bool is_sync_op(const ir_op *op)
{
    const char *ty = op->type;
    return !strcmp(ty, "send_barrier") || !strcmp(ty, "fetch_barrier") ||
           !strncmp(ty, "c_allreduce_", 12) || !strcmp(ty, "c_broadcast");
}

static bool has_role(const ir_op *op, int bit)
{
    int role = ir_op_role(op);
    return role >= 0 && (role & bit);
}

/* nccl2 programs hold no collective ops: Paddle's ParallelExecutor
 * allreduces each grad right after the backward op that makes it, so the
 * grads are averaged after the last backward op, before any optimizer op,
 * whether or not the program has one (a program without backward ops: at
 * its first optimizer op); SIZE_MAX when nothing is averaged. */
static size_t average_point(const ir_block *b)
{
    size_t at = SIZE_MAX;
    for (size_t i = b ? b->n_ops : 0; at == SIZE_MAX && i-- > 0;)
        if (has_role(b->ops[i], IR_ROLE_BACKWARD))
            at = i + 1;
    for (size_t i = 0; at == SIZE_MAX && b && i < b->n_ops; i++)
        if (has_role(b->ops[i], IR_ROLE_OPTIMIZE))
            at = i;
    return at;
}

static bool averages_here(const ex_proc *t)
{
    return !t->synced && t->pc == t->average_at;
}

ex_proc *ex_pserver_at(ex_cluster *c, const char *ep)
{
    for (size_t k = 0; k < c->n_pservers; k++)
        if (c->pservers[k].endpoint && !strcmp(c->pservers[k].endpoint, ep))
            return &c->pservers[k];
    return NULL;
}

const ir_op *ex_listen_op(const ex_proc *p)
{
    const ir_block *b = ir_program_block(p->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "listen_and_serv"))
            return b->ops[i];
    return NULL;
}

bool ex_pserver_run_block(ex_cluster *c, ex_proc *p, int32_t blk)
{
    if (ex_run_block(&p->ctx, blk, NULL))
        return true;
    g_snprintf(c->err, sizeof c->err, "pserver %s: %s", p->endpoint, p->ctx.err);
    return false;
}

/* Sync mode: every optimize block, in the listed order (the LR-decay block
 * first when there is one). */
static bool pserver_round(ex_cluster *c, ex_proc *p)
{
    const ir_op *ls = ex_listen_op(p);
    const ir_attr *a = ls ? ir_op_attr(ls, "optimize_blocks") : NULL;
    for (size_t i = 0; a && a->type == IR_ATTR_BLOCKS && i < a->n_blocks_idx; i++)
        if (!ex_pserver_run_block(c, p, a->blocks_idx[i]))
            return false;
    return true;
}

/* Async: the block that grad_to_block_id names for `grad`.  Paddle's
 * RequestSendHandler runs that block unchecked (a var without one would
 * run a null block), so a var without one is an error here. */
static bool pserver_on_grad(ex_cluster *c, ex_proc *p, const char *grad)
{
    int32_t blk = ex_named_block(ex_listen_op(p), "grad_to_block_id", grad);
    if (blk >= 0)
        return ex_pserver_run_block(c, p, blk);
    g_snprintf(c->err, sizeof c->err, "pserver %s: grad_to_block_id names no block for '%s'",
               p->endpoint, grad);
    return false;
}

static void accept_inputs(ex_proc *p, const ir_block *b)
{
    const ir_block *b0 = ir_program_block(p->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++)
        for (size_t s = 0; s < b->ops[i]->n_inputs; s++) {
            const ir_slot *in = &ir_op_ins(b->ops[i])[s];
            for (size_t a = 0; a < in->n_args; a++) {
                const ir_var *v = ir_block_find_var(b0, in->args[a]);
                if (v && !v->persistable)
                    pmap_add(&p->accepts, in->args[a]);
            }
        }
}

/* What a pserver takes from trainers: its listen_and_serv's X, the grads
 * of grad_to_block_id, and, for a grad it does not list in X (a
 * distributed table's), the non-persistable inputs of that grad's block
 * (the trainers' shards the sync table block sums). */
static void pserver_accepts(ex_proc *p)
{
    const ir_op *ls = ex_listen_op(p);
    const ir_slot *in = ls ? ir_op_input(ls, "X") : NULL;
    for (size_t i = 0; in && i < in->n_args; i++)
        pmap_add(&p->accepts, in->args[i]);
    const ir_attr *a = ls ? ir_op_attr(ls, "grad_to_block_id") : NULL;
    for (size_t i = 0; a && a->type == IR_ATTR_STRINGS && i < a->n_strings; i++) {
        const char *s = (const char *)a->strings[i].data, *colon = memchr(s, ':', a->strings[i].len);
        if (!colon)
            continue;
        const char *grad = ir_intern_n(s, (size_t)(colon - s));
        if (pmap_add(&p->accepts, grad))
            accept_inputs(p, ir_program_block(p->main, (int32_t)g_ascii_strtoll(colon + 1, NULL, 10)));
    }
}

/* One tensor from a trainer to the pserver at `ep`. */
bool ex_pserver_deliver(ex_ctx *x, ex_cluster *c, const char *ep, const char *name, ex_tensor *t)
{
    ex_proc *p = ex_pserver_at(c, ep);
    if (!p) {
        ex_tensor_free(t);
        return ex_fail(x, "no pserver listens at '%s' (sending '%s')", ep, name);
    }
    if (!pmap_has(&p->accepts, ir_intern(name))) {
        ex_tensor_free(t);
        return ex_fail(x, "pserver '%s' does not expect '%s'", ep, name);
    }
    ex_scope_put(p->scope, name, t);
    int64_t one = 1;
    ex_tensor *id = ex_tensor_new(IR_INT64, 1, &one);
    id->data[0] = (double)c->cur_trainer;
    ex_scope_put(p->scope, "@TRAINER_ID@", id);
    if (c->dist_mode != 0 && !pserver_on_grad(c, p, name))
        return ex_fail(x, "%s", c->err);
    return true;
}

static bool op_strings(const ir_op *op, const char *attr, const char ***out, size_t *n)
{
    const ir_attr *a = ir_op_attr(op, attr);
    *n = a && a->type == IR_ATTR_STRINGS ? a->n_strings : 0;
    *out = xcalloc(*n + 1, sizeof(const char *));
    for (size_t i = 0; i < *n; i++)
        (*out)[i] = ir_intern_n((const char *)a->strings[i].data, a->strings[i].len);
    return a != NULL;
}

/* One notified var at the pserver at `ep`.  Paddle's RequestNotifyHandler
 * acts only on a name holding @LR_DECAY_COUNTER@: it adds the sent count to
 * the pserver's own counter and runs the LR-decay block.  Any other name
 * is received and dropped. */
static bool notify(ex_ctx *x, ex_cluster *c, const char *ep, const char *name, const ex_tensor *t)
{
    ex_proc *p = ex_pserver_at(c, ep);
    if (!p)
        return ex_fail(x, "no pserver listens at '%s' (notifying '%s')", ep, name);
    if (!strstr(name, "@LR_DECAY_COUNTER@"))
        return true;
    const ex_tensor *own = ex_scope_get(p->scope, name);
    if (!own || !own->numel || !t->numel)
        return ex_fail(x, "pserver '%s' holds no step counter '%s'", ep, name);
    const ir_op *ls = ex_listen_op(p);
    int64_t lr = ls ? ir_op_get_int(ls, "lr_decay_block_id", -1) : -1;
    if (lr <= 0)
        return ex_fail(x, "pserver '%s' has no LR-decay block for '%s'", ep, name);
    ex_tensor *sum = ex_tensor_copy(own);
    sum->data[0] += t->data[0];
    ex_scope_put(p->scope, name, sum);
    return ex_pserver_run_block(c, p, (int32_t)lr) || ex_fail(x, "%s", c->err);
}

/* A send with use_send_handler false is Paddle's notify RPC (the async LR
 * step counters): every var of X goes to every endpoint of epmap. */
static bool do_notify(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    const char **ep;
    size_t n_ep;
    op_strings(op, "epmap", &ep, &n_ep);
    bool ok = true;
    for (size_t i = 0; ok && i < ex_n_in(op, "X"); i++) {
        const ex_tensor *t = ex_in_at(x, op, "X", i);
        ok = t != NULL;
        for (size_t e = 0; ok && e < n_ep; e++)
            ok = notify(x, c, ep[e], ir_op_input(op, "X")->args[i], t);
    }
    free(ep);
    return ok;
}

/* A var the trainer sends and never reads again this step goes to the
 * pserver instead of a copy: with a copy each trainer's grads lived twice,
 * in its own scope and the pserver's (issue 27 point 3: a third of verify
 * transpile's memory per trainer).  Only a var the block declares not
 * persistable (Paddle drops those after each run too) and that no later
 * op of the block reads; the scan is counted as work. */
static bool sent_for_good(ex_ctx *x, const char *name)
{
    const ir_block *b = x->block;
    if (!b || x->op_idx >= b->n_ops)
        return false;
    const ir_var *v = ir_block_find_var(b, name);
    if (!v || v->persistable)
        return false;
    name = ir_intern(name);
    ex_work(b->n_ops - x->op_idx);
    for (size_t i = x->op_idx + 1; i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        for (uint32_t k = 0; k < op->n_inputs; k++)
            for (uint32_t a = 0; a < ir_op_ins(op)[k].n_args; a++)
                if (ir_op_ins(op)[k].args[a] == name)
                    return false;
    }
    return true;
}

static bool do_send(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    if (!ir_op_get_bool(op, "use_send_handler", true))
        return do_notify(x, c, op);
    const char **ep, **names;
    size_t n_ep, n_names;
    op_strings(op, "epmap", &ep, &n_ep);
    op_strings(op, "send_varnames", &names, &n_names);
    bool ok = true;
    int64_t sec[256];
    size_t ns = ex_attr_ints(op, "sections", sec, 256);
    if (n_names) {
        /* one var split by rows into send_varnames (runtime_split_send_recv) */
        const ex_tensor *X = ex_in(x, op, "X");
        ok = X && ns == n_names && n_ep == n_names;
        if (X && !ok)
            ex_fail(x, "send_varnames, sections and epmap differ in length");
        ex_tensor *d = ok ? ex_densify(X) : NULL;
        size_t w = d && d->dims[0] ? d->numel / (size_t)d->dims[0] : 0;
        int64_t at = 0;
        for (size_t i = 0; ok && i < n_names; i++) {
            int64_t dims[EX_MAX_DIMS];
            memcpy(dims, d->dims, sizeof dims);
            dims[0] = sec[i];
            if (at + sec[i] > d->dims[0]) {
                ok = ex_fail(x, "sections exceed the %lld rows of '%s'", (long long)d->dims[0],
                             ir_op_input1(op, "X"));
                break;
            }
            ex_tensor *part = ex_tensor_new(d->dtype, d->nd, dims);
            memcpy(part->data, d->data + (size_t)at * w, (size_t)sec[i] * w * sizeof *part->data);
            at += sec[i];
            ok = ex_pserver_deliver(x, c, ep[i], names[i], part);
        }
        if (ok && at != d->dims[0])
            ok = ex_fail(x, "sections cover %lld of the %lld rows of '%s'", (long long)at,
                         (long long)d->dims[0], ir_op_input1(op, "X"));
        ex_tensor_free(d);
    } else {
        size_t n = ex_n_in(op, "X");
        if (n != n_ep)
            ok = ex_fail(x, "%zu inputs but %zu endpoints in epmap", n, n_ep);
        for (size_t i = 0; ok && i < n; i++) {
            const ex_tensor *t = ex_in_at(x, op, "X", i);
            const char *name = ir_op_input(op, "X")->args[i];
            ex_tensor *moved = t && sent_for_good(x, name) ? ex_scope_take(x->scope, name) : NULL;
            ok = t && ex_pserver_deliver(x, c, ep[i], name, moved ? moved : ex_tensor_copy(t));
        }
    }
    free(ep);
    free(names);
    return ok;
}

static bool do_recv(ex_ctx *x, ex_cluster *c, const ir_op *op)
{
    const char **ep, **names;
    size_t n_ep, n_names;
    op_strings(op, "epmap", &ep, &n_ep);
    op_strings(op, "recv_varnames", &names, &n_names);
    size_t n = n_names ? n_names : ex_n_out(op, "Out");
    bool ok = n == n_ep || ex_fail(x, "%zu vars but %zu endpoints in epmap", n, n_ep);
    ex_tensor **parts = xcalloc(n + 1, sizeof(ex_tensor *));
    for (size_t i = 0; ok && i < n; i++) {
        const char *name = n_names ? names[i] : ir_op_output(op, "Out")->args[i];
        ex_proc *p = ex_pserver_at(c, ep[i]);
        const ex_tensor *t = p ? ex_scope_get(p->scope, name) : NULL;
        if (!t)
            ok = ex_fail(x, p ? "pserver '%s' holds no '%s'" : "no pserver listens at '%s' (for '%s')",
                         ep[i], name);
        else
            parts[i] = ex_tensor_copy(t);
        /* DC-ASGD: the pserver keeps what each trainer last fetched */
        const ir_op *ls = p ? ex_listen_op(p) : NULL;
        if (t && ls && ir_op_get_bool(ls, "dc_asgd", false)) {
            const char *bak = ir_internf("%s.trainer_%zu_bak", name, c->cur_trainer);
            if (ex_scope_get(p->scope, bak))
                ex_scope_put(p->scope, bak, ex_tensor_copy(t));
        }
    }
    if (ok && n_names) {
        /* slices concatenated by rows into the one Out */
        int64_t rows = 0;
        for (size_t i = 0; i < n; i++)
            rows += parts[i]->dims[0];
        int64_t dims[EX_MAX_DIMS];
        memcpy(dims, parts[0]->dims, sizeof dims);
        dims[0] = rows;
        ex_tensor *all = ex_tensor_new(parts[0]->dtype, parts[0]->nd, dims);
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            memcpy(all->data + at, parts[i]->data, parts[i]->numel * sizeof *all->data);
            at += parts[i]->numel;
        }
        ex_put(x, op, "Out", 0, all);
    } else if (ok) {
        for (size_t i = 0; i < n; i++) {
            ex_put(x, op, "Out", i, parts[i]);
            parts[i] = NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        ex_tensor_free(parts[i]);
    free(parts);
    free(ep);
    free(names);
    return ok;
}

static bool dist_op(ex_ctx *x, const ir_op *op, void *user)
{
    ex_cluster *c = user;
    const char *ty = op->type;
    if (!strcmp(ty, "send"))
        return c->dist_mode == 3 ? ex_geo_send(x, c, op) : do_send(x, c, op);
    if (!strcmp(ty, "recv"))
        return do_recv(x, c, op);
    if (!strcmp(ty, "prefetch"))
        return ex_dist_prefetch(x, c, op);
    if (!strcmp(ty, "distributed_lookup_table"))
        return ex_dist_lookup_table(x, c, op);
    if (!strcmp(ty, "nce"))
        return ex_dist_nce(x, c, op);
    if (!strcmp(ty, "fake_init")) {
        int64_t dims[EX_MAX_DIMS];
        size_t nd = ex_attr_ints(op, "shape", dims, EX_MAX_DIMS);
        ex_put(x, op, "Out", 0, ex_tensor_new(IR_FP32, (int)nd, dims));
        return true;
    }
    static const char *const noop[] = {"c_sync_calc_stream", "c_sync_comm_stream", "c_gen_nccl_id",
                                       "c_comm_init", "c_comm_init_all", "c_comm_init_multitrainer",
                                       "gen_nccl_id", "checkpoint_notify", NULL};
    for (size_t i = 0; noop[i]; i++)
        if (!strcmp(ty, noop[i]))
            return true;
    return ex_fail(x, "verify transpile does not simulate this op");
}

/* ---- the scheduler ------------------------------------------------------ */

/* Runs trainer t until a sync op (left at pc) or the end. */
static bool advance(ex_cluster *c, ex_proc *t, const ir_program *prog, size_t ti)
{
    const ir_block *b = ir_program_block(prog, 0);
    ex_ctx *x = &t->ctx;
    x->prog = prog;
    c->cur_trainer = ti;
    while (b && t->pc < b->n_ops && !averages_here(t)) {
        const ir_op *op = b->ops[t->pc];
        if (is_sync_op(op))
            return true;
        /* the seeded feeds stand in for feed ops */
        if (ex_is_feed_fetch(op)) {
            t->pc++;
            continue;
        }
        x->block = b;
        x->op_idx = t->pc;
        if (!ex_run_op(x, op)) {
            g_snprintf(c->err, sizeof c->err, "trainer %zu: block 0, op %zu '%s': %s", ti, t->pc,
                       op->type, x->err);
            return false;
        }
        t->pc++;
    }
    return true;
}

static bool allreduce(ex_cluster *c, const char *name, bool average)
{
    ex_tensor *sum = NULL;
    for (size_t t = 0; t < c->n_trainers; t++) {
        const ex_tensor *v = ex_scope_get(c->trainers[t].scope, name);
        if (!v) {
            ex_tensor_free(sum);
            g_snprintf(c->err, sizeof c->err, "trainer %zu holds no '%s' to allreduce", t, name);
            return false;
        }
        ex_tensor *d = ex_densify(v);
        if (!sum) {
            sum = d;
            continue;
        }
        if (d->numel != sum->numel) {
            ex_tensor_free(d);
            ex_tensor_free(sum);
            g_snprintf(c->err, sizeof c->err, "trainers hold '%s' in different sizes", name);
            return false;
        }
        for (size_t i = 0; i < sum->numel; i++)
            sum->data[i] += d->data[i];
        ex_tensor_free(d);
    }
    /* Paddle's nccl2 scales the loss grad by a float 1/devices
     * (ScaleLossGradOpHandle) before its allreduce sum */
    for (size_t i = 0; average && i < sum->numel; i++)
        sum->data[i] *= ex_mean_factor(c->n_trainers);
    for (size_t t = 0; t < c->n_trainers; t++)
        ex_scope_put(c->trainers[t].scope, name, ex_tensor_copy(sum));
    ex_tensor_free(sum);
    return true;
}

static bool sync_point(ex_cluster *c, const ir_op *op)
{
    const char *ty = op->type;
    if (!strcmp(ty, "send_barrier")) {
        for (size_t k = 0; k < c->n_pservers; k++)
            if (c->dist_mode == 0 && !pserver_round(c, &c->pservers[k]))
                return false;
        return true;
    }
    if (!strcmp(ty, "fetch_barrier"))
        return true;
    if (!strncmp(ty, "c_allreduce_", 12)) {
        if (strcmp(ty, "c_allreduce_sum")) {
            g_snprintf(c->err, sizeof c->err, "'%s' is not simulated", ty);
            return false;
        }
        for (size_t i = 0; i < ex_n_in(op, "X"); i++)
            if (!allreduce(c, ir_op_input(op, "X")->args[i], false))
                return false;
        return true;
    }
    if (!strcmp(ty, "c_broadcast")) {
        size_t root = (size_t)ir_op_get_int(op, "root", 0);
        const char *name = ir_op_input1(op, "X");
        const ex_tensor *v = root < c->n_trainers ? ex_scope_get(c->trainers[root].scope, name) : NULL;
        if (!v) {
            g_snprintf(c->err, sizeof c->err, "c_broadcast: root %zu holds no '%s'", root, name);
            return false;
        }
        for (size_t t = 0; t < c->n_trainers; t++)
            if (t != root)
                ex_scope_put(c->trainers[t].scope, ir_op_output1(op, "Out"), ex_tensor_copy(v));
        return true;
    }
    g_snprintf(c->err, sizeof c->err, "'%s' is not a sync point", ty);
    return false;
}

/* nccl2: every parameter grad averaged over the trainers. */
static bool average_grads(ex_cluster *c)
{
    for (size_t i = 0; i < c->n_grads; i++)
        if (!allreduce(c, c->grads[i], true))
            return false;
    for (size_t t = 0; t < c->n_trainers; t++)
        c->trainers[t].synced = true;
    return true;
}

/* What trainer `p` (stopped by advance) waits at: an op type, the nccl2
 * average, or NULL when its program has ended. */
static const char *waits_at(const ex_proc *p, const ir_block *b)
{
    if (averages_here(p))
        return "(the nccl2 gradient average)";
    return b && p->pc < b->n_ops ? b->ops[p->pc]->type : NULL;
}

/* Runs every trainer's `startup` or `main` program to its end. */
static bool run_trainers(ex_cluster *c, bool startup)
{
    for (size_t t = 0; t < c->n_trainers; t++) {
        ex_proc *p = &c->trainers[t];
        p->pc = 0;
        p->synced = false;
        p->average_at = c->mode == EX_CL_NCCL2 && !startup
                            ? average_point(ir_program_block(p->main, 0)) : SIZE_MAX;
    }
    for (;;) {
        const char *at = NULL;
        const ir_op *at_op = NULL;
        size_t done = 0;
        for (size_t t = 0; t < c->n_trainers; t++) {
            ex_proc *p = &c->trainers[t];
            const ir_program *prog = startup ? p->startup : p->main;
            if (!advance(c, p, prog, t))
                return false;
            const ir_block *b = ir_program_block(prog, 0);
            const char *w = waits_at(p, b);
            if (!w) {
                done++;
                continue;
            }
            if (at && strcmp(at, w)) {
                g_snprintf(c->err, sizeof c->err,
                           "trainer %zu waits at op %zu '%s' while another waits at '%s'", t,
                           p->pc, w, at);
                return false;
            }
            at = w;
            at_op = averages_here(p) ? NULL : b->ops[p->pc];
        }
        if (done == c->n_trainers)
            return true;
        if (done) {
            g_snprintf(c->err, sizeof c->err, "a trainer ended while others wait at '%s'", at);
            return false;
        }
        if (!at_op) {
            if (!average_grads(c))      /* sets synced: the same pc goes on */
                return false;
            continue;
        }
        if (!sync_point(c, at_op))
            return false;
        for (size_t t = 0; t < c->n_trainers; t++)
            c->trainers[t].pc++;
    }
}

bool ex_cluster_startup(ex_cluster *c, uint64_t seed)
{
    c->hooks.user = c;
    c->hooks.op = dist_op;
    ex_tables_find(c);
    for (size_t k = 0; k < c->n_pservers; k++) {
        ex_proc *p = &c->pservers[k];
        p->scope = ex_scope_new();
        pserver_accepts(p);
        ex_ctx_init(&p->ctx, p->startup, p->scope, seed + 1000 + k);
        if (!ex_run_block(&p->ctx, 0, NULL)) {
            g_snprintf(c->err, sizeof c->err, "pserver %s startup: %s", p->endpoint, p->ctx.err);
            return false;
        }
        ex_tables_shard(c, k);
        p->ctx.prog = p->main;
        /* async: the learning rate exists before the first grad arrives */
        const ir_op *ls = ex_listen_op(p);
        int64_t lr = ls ? ir_op_get_int(ls, "lr_decay_block_id", -1) : -1;
        if (c->dist_mode != 0 && lr > 0 && !ex_pserver_run_block(c, p, (int32_t)lr))
            return false;
    }
    for (size_t t = 0; t < c->n_trainers; t++) {
        ex_proc *p = &c->trainers[t];
        p->scope = ex_scope_new();
        /* the same seed on every trainer, as identical startups on real
         * machines draw from generators seeded alike */
        ex_ctx_init(&p->ctx, p->startup, p->scope, seed);
        p->ctx.dist = &c->hooks;
    }
    return run_trainers(c, true);
}

bool ex_cluster_step(ex_cluster *c)
{
    return run_trainers(c, false);
}
