/* job.c - the job's processes run symbolically (job.h): send, recv and
 * the barriers move terms between them by endpoint and var name; a
 * pserver runs its listen_and_serv's optimize blocks at the send barrier
 * (sync), or a grad's block from grad_to_block_id when it arrives
 * (async).  A trainer the folder lacks runs the first present trainer's
 * programs with its `.trainer_<k>` names as `.trainer_<id>` (what
 * transpile writes for it). */
#include <stdlib.h>
#include <string.h>

#include "../ir/util.h"
#include "job.h"
#include "table.h"
#include "remote_prefetch.h"

static sym_proc *pserver_at(sym_job *j, const char *ep)
{
    for (size_t k = 0; k < j->n_ps; k++)
        if (j->ps[k].endpoint && !strcmp(j->ps[k].endpoint, ep))
            return &j->ps[k];
    return NULL;
}

/* The name trainer p gives var `v` on the wire: an emulated trainer's
 * `.trainer_<from>` names end in its own id. */
static const char *wire_name(sym_proc *p, const char *v)
{
    if (p->emulate_from < 0)
        return v;
    char suf[32];
    int k = snprintf(suf, sizeof suf, ".trainer_%d", p->emulate_from);
    size_t n = strlen(v);
    /* a table grad's shard: NAME.trainer_K.pserver_P */
    const char *mid = strstr(v, suf);
    if (mid && !strncmp(mid + k, ".pserver_", 9))
        return ir_internf("%.*s.trainer_%d%s", (int)(mid - v), v, p->trainer, mid + k);
    if (n < (size_t)k || strcmp(v + n - (size_t)k, suf))
        return v;
    return ir_internf("%.*s.trainer_%d", (int)(n - (size_t)k), v, p->trainer);
}

static ir_op *listen_op(sym_proc *ps)
{
    ir_block *b = ir_program_block(ps->main, 0);
    for (size_t i = 0; b && i < b->n_ops; i++)
        if (!strcmp(b->ops[i]->type, "listen_and_serv"))
            return b->ops[i];
    return NULL;
}

static bool accepts(sym_proc *ps, const char *name)
{
    ir_op *l = listen_op(ps);
    const ir_slot *x = l ? ir_op_input(l, "X") : NULL;
    for (uint32_t k = 0; x && k < x->n_args; k++)
        if (x->args[k] == name)
            return true;
    return sym_table_accepts(ps, name);
}

/* The block that listen_and_serv's ATTR (strings "NAME:BLOCK":
 * grad_to_block_id, prefetch_var_name_to_block_id) gives `name`, or -1. */
int sym_listen_block(sym_proc *ps, const char *attr, const char *name)
{
    ir_op *l = listen_op(ps);
    ir_attr *a = l ? ir_op_attr(l, attr) : NULL;
    size_t n = strlen(name);
    for (size_t k = 0; a && a->type == IR_ATTR_STRINGS && k < a->n_strings; k++) {
        const ir_bytes *s = &a->strings[k];
        if (s->len > n + 1 && !memcmp(s->data, name, n) && s->data[n] == ':')
            return atoi((const char *)s->data + n + 1);
    }
    return -1;
}

static bool run_ps_block(sym_job *j, sym_proc *ps, int block)
{
    if (!sym_run_block(&j->c, ps, ps->main, ps->label, block))
        return false;
    return true;
}

static const char *nth_ep(ir_op *op, size_t k, ir_arena *a, size_t *n)
{
    const char **eps = ir_op_get_names(op, "epmap", n, a);
    return k < *n ? eps[k] : NULL;
}

/* Delivers term t, written by `site` as trainer p's var `v`, to the
 * pserver at `ep` as `w`; async and half-async run its grad block. */
static int deliver(sym_job *j, sym_proc *p, const char *label, int block, size_t i, ir_op *op,
                   const char *ep, const char *v, const char *w, sym_term *t,
                   const sym_site *site)
{
    sym_proc *ps = ep ? pserver_at(j, ep) : NULL;
    if (!ps) {
        sym_fail(&j->c, label, block, i, op, "sends '%s' to %s%s%s, which no pserver of the job serves",
                 v, ep ? "'" : "no endpoint (epmap has ", ep ? ep : "too few", ep ? "'" : ")");
        return -1;
    }
    if (!accepts(ps, w)) {
        sym_fail(&j->c, label, block, i, op, "sends '%s' to %s, whose listen_and_serv does not receive it (%s)",
                 w, ep, ps->label);
        return -1;
    }
    sym_write(ps, w, t, site);
    sym_dc_deliver(j, p, ps, site);
    int gb = j->async || j->half ? sym_listen_block(ps, "grad_to_block_id", w) : -2;
    int rc = 1;
    if (gb == -1) {
        sym_fail(&j->c, label, block, i, op, "sends '%s' to %s (%s), whose grad_to_block_id has no block for it",
                 w, ep, ps->label);
        rc = -1;
    } else if (gb >= 0 && !run_ps_block(j, ps, gb)) {
        rc = -1;
    }
    sym_store_set_site(j->c.st, NULL);
    return rc;
}

static int64_t nth_long(ir_op *op, const char *name, size_t k)
{
    ir_attr *a = ir_op_attr(op, name);
    if (a && a->type == IR_ATTR_LONGS && k < a->n_longs)
        return a->longs[k];
    if (a && a->type == IR_ATTR_INTS && k < a->n_ints)
        return a->ints[k];
    return -1;
}

/* A send: each X arg to its epmap entry; with `send_varnames` (half-async,
 * the communicator's send) X's rows split by `sections`, part k sent as
 * send_varnames[k] to epmap[k]. */
static int do_send(sym_job *j, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    const char *label = prog == p->main ? p->label : p->startup_label;
    const ir_slot *x = ir_op_input(op, "X");
    ir_arena *a = ir_arena_new();
    bool notify = !ir_op_get_bool(op, "use_send_handler", true);
    if (notify) {
        ir_arena_free(a);
        return sym_lr_notify(j, p, prog, block, i, op);
    }
    size_t nv = 0, n;
    const char **vn = ir_op_get_names(op, "send_varnames", &nv, a);
    ir_block *b = ir_program_block(prog, block);
    int rc = 1;
    int64_t off = 0;
    if (nv && (!x || x->n_args != 1)) {
        sym_fail(&j->c, label, block, i, op, "has send_varnames but %u X args (one expected)",
                 x ? x->n_args : 0);
        rc = -1;
    }
    for (size_t k = 0; x && k < (nv ? nv : x->n_args) && rc > 0 && !notify; k++) {
        const char *v = x->args[nv ? 0 : k], *ep = nth_ep(op, k, a, &n);
        sym_term *t = sym_read(&j->c, p, b, v);
        int64_t rows = nv ? nth_long(op, "sections", k) : -1;
        if (nv && rows < 0 && nv > 1) {
            sym_fail(&j->c, label, block, i, op, "has no sections entry for '%s'", vn[k]);
            rc = -1;
            break;
        }
        if (nv && nv > 1)
            t = sym_slice(j->c.st, t, off, rows);
        off += rows;
        rc = deliver(j, p, label, block, i, op, ep, nv ? vn[k] : v, wire_name(p, nv ? vn[k] : v),
                     t, pmap_get(&p->sites, v));
    }
    ir_arena_free(a);
    return rc;
}

/* A recv: each Out arg from its epmap entry; with `recv_varnames`
 * (half-async) Out is the row concat of recv_varnames[k] from epmap[k]. */
static int do_recv(sym_job *j, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    const char *label = prog == p->main ? p->label : p->startup_label;
    const ir_slot *o = ir_op_output(op, "Out");
    size_t nv = 0;
    ir_arena *a = ir_arena_new();
    const char **vn = ir_op_get_names(op, "recv_varnames", &nv, a);
    int rc = 1;
    if (nv && (!o || o->n_args != 1)) {
        sym_fail(&j->c, label, block, i, op, "has recv_varnames but %u Out args (one expected)",
                 o ? o->n_args : 0);
        rc = -1;
    }
    const sym_site *site = sym_site_make(j->c.st, label, block, (int)i, op);
    size_t cnt = nv ? nv : o ? o->n_args : 0;
    sym_term **parts = xcalloc(cnt + 1, sizeof *parts);
    for (size_t k = 0; k < cnt && rc > 0; k++) {
        size_t n;
        const char *ep = nth_ep(op, k, a, &n), *w = wire_name(p, nv ? vn[k] : o->args[k]);
        sym_proc *ps = ep ? pserver_at(j, ep) : NULL;
        sym_term *t = ps ? pmap_get(&ps->vals, w) : NULL;
        ir_var *pv = ps && !t ? ir_block_find_var(ir_program_block(ps->main, 0), w) : NULL;
        if (pv && pv->persistable)   /* no startup op wrote it: its initial value */
            t = sym_read(&j->c, ps, ir_program_block(ps->main, 0), w);
        if (!t) {
            sym_fail(&j->c, label, block, i, op, "receives '%s' from %s%s%s, %s", w,
                     ep ? "'" : "", ep ? ep : "no endpoint", ep ? "'" : "",
                     ps ? "which never holds it" : "which no pserver of the job serves");
            rc = -1;
        } else if (!nv) {
            sym_write(p, o->args[k], t, site);
        }
        if (t)
            sym_dc_recv(j, p, ps, w, t, site);
        parts[k] = t;
    }
    if (rc > 0 && nv)
        sym_write(p, o->args[0], nv == 1 ? parts[0] : sym_concat(j->c.st, parts, (uint32_t)nv), site);
    free(parts);
    ir_arena_free(a);
    return rc;
}

/* A hierarchical_sigmoid with remote_prefetch but no epmap computes on
 * the trainer's own W (hierarchical_sigmoid_op.h prefetches only with a
 * non-empty epmap in v1.4.0-v1.6.3, never from v1.7.0): an ordinary op, whose W is
 * whatever the trainer holds (the transpiler receives it; one that did
 * not would show as a difference). */
static bool local_hsigmoid(const ir_op *op)
{
    const ir_attr *ep = ir_op_attr(op, "epmap");
    return !strcmp(op->type, "hierarchical_sigmoid") &&
           (!ep || (ep->type == IR_ATTR_STRINGS && ep->n_strings == 0));
}

static int dist_op(sym_ctx *c, sym_proc *p, ir_program *prog, int block, size_t i, ir_op *op)
{
    static const char *const unmodelled[] = {
        "c_allreduce_sum", "c_allreduce_max", "c_allreduce_min",
        "c_allreduce_prod", "c_broadcast", "allreduce", "broadcast", NULL};
    sym_job *j = c->job;
    const char *t = op->type;
    int r = j->in->mode != SYM_PSERVER ? sym_coll_op(c, p, prog, block, i, op) : 0;
    if (r)
        return r;
    if (j->geo && (r = sym_geo_op(c, p, prog, block, i, op)))
        return r;
    if (!strcmp(t, "send"))
        return do_send(j, p, prog, block, i, op);
    if (!strcmp(t, "recv"))
        return do_recv(j, p, prog, block, i, op);
    if ((r = sym_table_op(c, p, prog, block, i, op)))
        return r;
    if ((r = sym_remote_op(c, p, prog, block, i, op)))   /* remote_prefetch.c */
        return r;
    /* communicator set-up: no value a program computes depends on it */
    if (!strcmp(t, "send_barrier") || !strcmp(t, "fetch_barrier") ||
        !strcmp(t, "listen_and_serv") || !strcmp(t, "gen_nccl_id") ||
        !strcmp(t, "c_gen_nccl_id") || !strncmp(t, "c_comm_init", 11))
        return 1;
    if (ir_op_get_bool(op, "remote_prefetch", false) && !local_hsigmoid(op)) {
        /* its table lives on the pservers */
        sym_fail(c, prog == p->main ? p->label : p->startup_label, block, i, op,
                 "remote_prefetch (a table on the pservers) is not modelled by verify job yet");
        return -1;
    }
    for (size_t k = 0; unmodelled[k]; k++)
        if (!strcmp(t, unmodelled[k])) {
            sym_fail(c, prog == p->main ? p->label : p->startup_label, block, i, op,
                     "not modelled by verify job yet");
            return -1;
        }
    return 0;
}

/* r0 (trainer `from`) stands in for a trainer r the folder lacks. */
static void init_proc(sym_proc *p, const sym_role *r, int trainer, const sym_role *r0, int from)
{
    memset(p, 0, sizeof *p);
    const sym_role *use = r && r->main ? r : r0;
    p->label = use->label;
    p->startup_label = use->startup_label;
    p->main = use->main;
    p->startup = use->startup;
    p->endpoint = r ? r->endpoint : NULL;
    p->trainer = trainer;
    p->emulate_from = use == r ? -1 : from;
    if (p->emulate_from >= 0)
        p->label = ir_internf("%s (as trainer %d)", use->label, trainer);
}

/* Each pserver's listen_and_serv runs the job's mode: a sync loop in an
 * async job (or a GEO pserver run as sync, which waits for barriers GEO
 * trainers never send) is another job, not one to model as the manifest's
 * (a fuzz finding: the attr was never read, and such jobs verified equal). */
/* The mode a listen_and_serv runs: distributed_mode (1.7 on), or 1.4-1.6's
 * BOOLEAN sync_mode (pdtrans writes it for those targets, era.def), whose
 * false ran RunAsyncLoop for every asynchronous job: it matches MODE when
 * that is not sync. */
static int64_t listen_mode(const ir_op *l, int mode)
{
    const ir_attr *sync = ir_op_attr(l, "sync_mode");
    if (!ir_op_attr(l, "distributed_mode") && sync && sync->type == IR_ATTR_BOOLEAN)
        return sync->b ? 0 : (mode ? mode : 1);
    return ir_op_get_int(l, "distributed_mode", 0);
}

static bool listen_modes(sym_job *j, int mode)
{
    for (size_t k = 0; k < j->n_ps; k++) {
        ir_block *b = ir_program_block(j->ps[k].main, 0);
        for (size_t i = 0; b && i < b->n_ops; i++) {
            ir_op *l = b->ops[i];
            int64_t m = strcmp(l->type, "listen_and_serv") ? mode : listen_mode(l, mode);
            if (m != mode) {
                snprintf(j->c.err, sizeof j->c.err, "%s: block 0, op %zu 'listen_and_serv': "
                         "runs distributed_mode %lld, but the manifest's job is "
                         "distributed_mode %d", j->ps[k].label, i, (long long)m, mode);
                return false;
            }
        }
    }
    return true;
}

bool sym_job_setup(sym_job *j, const sym_job_in *in)
{
    memset(j, 0, sizeof *j);
    j->in = in;
    j->c.st = sym_store_new();
    j->c.dist = dist_op;
    j->c.job = j;
    j->async = in->dist_mode == 2;
    j->half = in->dist_mode == 1;
    j->n_tr = in->n_trainers;
    j->n_ps = in->n_pservers;
    j->tr = xcalloc(j->n_tr + 1, sizeof *j->tr);
    j->ps = xcalloc(j->n_ps + 1, sizeof *j->ps);
    size_t from = 0;    /* the first trainer DIR holds (checked by the caller) */
    while (from + 1 < j->n_tr && !in->trainers[from].main)
        from++;
    for (size_t t = 0; t < j->n_tr; t++)
        init_proc(&j->tr[t], &in->trainers[t], (int)t, &in->trainers[from], (int)from);
    for (size_t k = 0; k < j->n_ps; k++)
        init_proc(&j->ps[k], &in->pservers[k], -1, &in->pservers[k], -1);
    if (!listen_modes(j, in->dist_mode))
        return false;
    if (in->dist_mode == 3)     /* GEO: the communicator around the programs (geo.c) */
        return sym_geo_setup(j);
    return ((!j->async && !j->half) || sym_lr_setup(j)) && sym_dc_setup(j);
}

void sym_job_free(sym_job *j)
{
    for (size_t t = 0; t < j->n_tr; t++)
        sym_proc_clear(&j->tr[t]);
    for (size_t k = 0; k < j->n_ps; k++)
        sym_proc_clear(&j->ps[k]);
    for (size_t t = 0; j->view && t < j->n_tr; t++)
        sym_proc_clear(&j->view[t]);
    sym_proc_clear(&j->ref);
    free(j->tr);
    free(j->ps);
    free(j->view);
    if (j->params)
        g_ptr_array_free(j->params, TRUE);
    if (j->grads)
        g_ptr_array_free(j->grads, TRUE);
    if (j->shared)
        g_ptr_array_free(j->shared, TRUE);
    pmap_free(&j->shared_set);
    sym_lr_free(j);
    sym_dc_free(j);
    pmap_destroy(j->remote);
    sym_geo_free(j);
    sym_store_free(j->c.st);
}

/* Pservers' startups, then the trainers' (which recv from them). */
bool sym_job_startups(sym_job *j)
{
    for (size_t k = 0; k < j->n_ps; k++)
        if (j->ps[k].startup &&
            !sym_run_block(&j->c, &j->ps[k], j->ps[k].startup, j->ps[k].startup_label, 0))
            return false;
    if (!sym_lr_startup(j))
        return false;
    for (size_t t = 0; t < j->n_tr; t++)
        if (j->tr[t].startup &&
            !sym_run_block(&j->c, &j->tr[t], j->tr[t].startup, j->tr[t].startup_label, 0))
            return false;
    return true;
}

/* Runs trainer p's main block 0 from p->pc, up to and including a
 * send_barrier when `to_barrier`, else to its end. */
static bool run_trainer(sym_job *j, sym_proc *p, bool to_barrier)
{
    ir_block *b = ir_program_block(p->main, 0);
    while (b && p->pc < b->n_ops) {
        ir_op *op = b->ops[p->pc];
        if (!sym_run_op(&j->c, p, p->main, p->label, 0, p->pc++))
            return false;
        if (to_barrier && !strcmp(op->type, "send_barrier"))
            return true;
    }
    return true;
}

static bool run_optimize_blocks(sym_job *j, sym_proc *ps)
{
    ir_op *l = listen_op(ps);
    ir_attr *a = l ? ir_op_attr(l, "optimize_blocks") : NULL;
    if (!l) {
        snprintf(j->c.err, sizeof j->c.err, "%s: block 0 has no listen_and_serv op", ps->label);
        return false;
    }
    for (size_t k = 0; a && a->type == IR_ATTR_BLOCKS && k < a->n_blocks_idx; k++)
        if (!run_ps_block(j, ps, a->blocks_idx[k]))
            return false;
    return true;
}

bool sym_job_step(sym_job *j, int step, int only)
{
    if (j->in->mode != SYM_PSERVER)
        return sym_coll_step(j, step);
    for (size_t t = 0; t < j->n_tr; t++) {
        j->tr[t].pc = 0;
        j->tr[t].feed_tag = ir_internf("t%zu.s%d", t, step);
    }
    if (only >= 0)
        return run_trainer(j, &j->tr[only], false);
    for (size_t t = 0; t < j->n_tr; t++)
        if (!run_trainer(j, &j->tr[t], true))
            return false;
    for (size_t k = 0; k < j->n_ps && !j->half; k++)   /* half-async: ran at each send */
        if (!run_optimize_blocks(j, &j->ps[k]))
            return false;
    for (size_t t = 0; t < j->n_tr; t++)
        if (!run_trainer(j, &j->tr[t], false))
            return false;
    return true;
}

sym_proc *sym_pserver_at(sym_job *j, const char *ep)
{
    return pserver_at(j, ep);
}

const char *sym_wire_name(sym_proc *p, const char *v)
{
    return wire_name(p, v);
}

ir_op *sym_listen_op(sym_proc *ps)
{
    return listen_op(ps);
}
