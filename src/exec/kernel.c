/* kernel.c - the kernel registry, the op loop and the helpers kernels
 * share. */
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exec.h"
#include "ir/env.h"
#include "ir/util.h"

/* Sub-blocks (conditional_block) nest; a program deeper than this is
 * refused rather than recursed into without bound. */
#define EX_MAX_DEPTH 32

static const ex_kernel *const kernel_tables[] = {
    ex_kernels_math, ex_kernels_act, ex_kernels_misc, ex_kernels_table,
    ex_kernels_optim, ex_kernels_nn, ex_kernels_loss, ex_kernels_nce,
    ex_kernels_while, ex_kernels_coalesce,
};

ex_kernel_fn ex_kernel_find(const char *type)
{
    /* Keyed by interned names: in the env, which ends with them. */
    pmap *map = pdt_env_get(PDT_ENV_KERNELS);
    if (!map) {
        map = pdt_env_put(PDT_ENV_KERNELS, xcalloc(1, sizeof *map), pdt_env_free_pmap);
        for (size_t t = 0; t < G_N_ELEMENTS(kernel_tables); t++)
            for (const ex_kernel *k = kernel_tables[t]; k->type; k++)
                pmap_put(map, ir_intern(k->type), (void *)k);
    }
    const ex_kernel *k = pmap_get(map, ir_intern(type));
    return k ? k->fn : NULL;
}

void ex_ctx_init(ex_ctx *x, const ir_program *prog, ex_scope *scope, uint64_t seed)
{
    memset(x, 0, sizeof *x);
    x->prog = prog;
    x->scope = scope;
    ex_rng_seed(&x->rng, seed);
}

bool ex_fail(ex_ctx *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
    return false;
}

static bool is_dist_op(const char *type)
{
    static const char *const dist[] = {
        "send", "recv", "send_barrier", "fetch_barrier", "listen_and_serv",
        "prefetch", "distributed_lookup_table", "c_allreduce_sum",
        "c_broadcast", "c_sync_calc_stream", "c_sync_comm_stream",
        "c_gen_nccl_id", "c_comm_init", "c_comm_init_all",
        "c_comm_init_multitrainer", "gen_nccl_id", "checkpoint_notify",
        "fake_init", "lookup_sparse_table", "ref_by_trainer_id", "nce", NULL};
    for (size_t i = 0; dist[i]; i++)
        if (!strcmp(type, dist[i]))
            return true;
    return false;
}

/* A grad op's input S@GRAD holds the gradient of its input S: both dense,
 * they have as many elements (every kernel indexes one by the other's
 * size).  Checked once here, before any kernel runs. */
static const char *slot_arg(const ir_slot *s, size_t i);

static bool grads_fit_their_vars(ex_ctx *x, const ir_op *op)
{
    /* a sub-block's grad (while_grad) pairs its lists in its own order */
    if (ir_op_attr(op, "sub_block"))
        return true;
    for (uint32_t i = 0; i < op->n_inputs; i++) {
        const ir_slot *g = &ir_op_ins(op)[i];
        size_t len = strlen(g->name);
        if (len <= 5 || strcmp(g->name + len - 5, "@GRAD"))
            continue;
        char fwd[128];
        if (len - 5 >= sizeof fwd)
            continue;
        memcpy(fwd, g->name, len - 5);
        fwd[len - 5] = '\0';
        const ir_slot *v = ir_op_input(op, fwd);
        for (uint32_t k = 0; v && k < g->n_args && k < v->n_args; k++) {
            const ex_tensor *gt = ex_scope_get(x->scope, slot_arg(g, k));
            const ex_tensor *vt = ex_scope_get(x->scope, slot_arg(v, k));
            if (gt && vt && gt->kind == EX_DENSE && vt->kind == EX_DENSE &&
                gt->numel != vt->numel)
                return ex_fail(x, "input '%s' has %zu elements, but '%s' has %zu", g->name,
                               gt->numel, fwd, vt->numel);
        }
    }
    return true;
}

bool ex_run_op(ex_ctx *x, const ir_op *op)
{
    ex_where_op(x->block ? x->block->idx : 0, x->op_idx, op->type);
    ex_work(1);
    if (x->dist && is_dist_op(op->type))
        return x->dist->op(x, op, x->dist->user);
    ex_kernel_fn fn = ex_kernel_find(op->type);
    if (!fn)
        return ex_fail(x, "the executor has no kernel for this op");
    if (!grads_fit_their_vars(x, op))
        return false;
    return fn(x, op);
}

bool ex_run_block(ex_ctx *x, int32_t idx, ex_op_filter filter)
{
    const ir_block *b = ir_program_block(x->prog, idx);
    if (!b)
        return ex_fail(x, "no block %d", idx);
    if (x->depth >= EX_MAX_DEPTH)
        return ex_fail(x, "block %d: sub-blocks nest deeper than %d", idx, EX_MAX_DEPTH);
    const ir_block *saved_block = x->block;
    size_t saved_idx = x->op_idx;
    x->depth++;
    bool ok = true;
    for (size_t i = 0; ok && i < b->n_ops; i++) {
        const ir_op *op = b->ops[i];
        if (filter && !filter(op))
            continue;
        x->block = b;
        x->op_idx = i;
        if (!ex_run_op(x, op)) {
            /* nested failures already carry their own location */
            if (strncmp(x->err, "block ", 6)) {
                /* truncation is fine: x->err is a bounded message */
                char msg[sizeof x->err];
                memcpy(msg, x->err, sizeof msg);
                g_snprintf(x->err, sizeof x->err, "block %d, op %zu '%s': %s", b->idx, i,
                           op->type, msg);
            }
            ok = false;
        }
    }
    x->depth--;
    x->block = saved_block;
    x->op_idx = saved_idx;
    if (saved_block)
        ex_where_op(saved_block->idx, saved_idx, saved_block->ops[saved_idx]->type);
    return ok;
}

bool ex_is_forward_op(const ir_op *op)
{
    int r = ir_op_role(op);
    return r <= 0 || r == IR_ROLE_LOSS;
}

bool ex_is_not_optimize_op(const ir_op *op)
{
    int r = ir_op_role(op);
    return r < 0 || !(r & (IR_ROLE_OPTIMIZE | IR_ROLE_RPC | IR_ROLE_DIST | IR_ROLE_LRSCHED));
}

bool ex_is_feed_fetch(const ir_op *op)
{
    return !strcmp(op->type, "feed") || !strcmp(op->type, "fetch");
}

/* ---- helpers ----------------------------------------------------------- */

static const char *slot_arg(const ir_slot *s, size_t i)
{
    if (!s || i >= s->n_args)
        return NULL;
    const char *a = s->args[i];
    return a && *a && strcmp(a, "@EMPTY@") ? a : NULL;
}

size_t ex_n_in(const ir_op *op, const char *slot)
{
    const ir_slot *s = ir_op_input(op, slot);
    return s ? s->n_args : 0;
}

size_t ex_n_out(const ir_op *op, const char *slot)
{
    const ir_slot *s = ir_op_output(op, slot);
    return s ? s->n_args : 0;
}

const ex_tensor *ex_in_at(ex_ctx *x, const ir_op *op, const char *slot, size_t i)
{
    const char *name = slot_arg(ir_op_input(op, slot), i);
    if (!name) {
        ex_fail(x, "input '%s' has no var", slot);
        return NULL;
    }
    const ex_tensor *t = ex_scope_get(x->scope, name);
    if (!t)
        ex_fail(x, "input '%s' reads var '%s', which holds no value", slot, name);
    return t;
}

const ex_tensor *ex_in(ex_ctx *x, const ir_op *op, const char *slot)
{
    return ex_in_at(x, op, slot, 0);
}

const ex_tensor *ex_in_opt(ex_ctx *x, const ir_op *op, const char *slot, bool *ok)
{
    *ok = true;
    const char *name = slot_arg(ir_op_input(op, slot), 0);
    if (!name)
        return NULL;
    const ex_tensor *t = ex_scope_get(x->scope, name);
    if (!t) {
        ex_fail(x, "input '%s' reads var '%s', which holds no value", slot, name);
        *ok = false;
    }
    return t;
}

const char *ex_out_name(const ir_op *op, const char *slot, size_t i)
{
    return slot_arg(ir_op_output(op, slot), i);
}

void ex_put(ex_ctx *x, const ir_op *op, const char *slot, size_t i, ex_tensor *t)
{
    const char *name = ex_out_name(op, slot, i);
    if (!name) {
        ex_tensor_free(t);
        return;
    }
    ex_scope_put(x->scope, name, t);
}

size_t ex_attr_ints(const ir_op *op, const char *name, int64_t *out, size_t max)
{
    const ir_attr *a = ir_op_attr(op, name);
    if (!a)
        return 0;
    size_t n = 0;
    if (a->type == IR_ATTR_INTS)
        for (; n < a->n_ints && n < max; n++)
            out[n] = a->ints[n];
    else if (a->type == IR_ATTR_LONGS)
        for (; n < a->n_longs && n < max; n++)
            out[n] = a->longs[n];
    else if (a->type == IR_ATTR_INT && max)
        out[n++] = a->i;
    else if (a->type == IR_ATTR_LONG && max)
        out[n++] = a->l;
    return n;
}

size_t ex_attr_floats(const ir_op *op, const char *name, double *out, size_t max)
{
    const ir_attr *a = ir_op_attr(op, name);
    if (!a)
        return 0;
    size_t n = 0;
    if (a->type == IR_ATTR_FLOATS)
        for (; n < a->n_floats && n < max; n++)
            out[n] = a->floats[n];
    else if (a->type == IR_ATTR_FLOAT64S)
        for (; n < a->n_float64s && n < max; n++)
            out[n] = a->float64s[n];
    else if (a->type == IR_ATTR_FLOAT && max)
        out[n++] = a->f;
    return n;
}

bool ex_dtype_is_int(int dtype)
{
    return dtype == IR_BOOL || dtype == IR_INT16 || dtype == IR_INT32 || dtype == IR_INT64 ||
           dtype == IR_UINT8 || dtype == IR_INT8 || dtype == IR_SIZE_T;
}

bool ex_attr_axis(ex_ctx *x, const ir_op *op, const char *name, int64_t def, int nd,
                  bool end_ok, int *axis)
{
    int64_t a = ir_op_get_int(op, name, def), hi = end_ok ? nd : nd - 1;
    int64_t n = a < 0 ? a + nd : a;
    if (n < 0 || n > hi)
        return ex_fail(x, "attr '%s' (%lld) is outside [%d, %lld] for %d dims", name,
                       (long long)a, -nd, (long long)hi, nd);
    *axis = (int)n;
    return true;
}
