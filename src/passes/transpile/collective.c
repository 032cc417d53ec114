/* collective.c - pass 'collective' (--mode=collective): the seed's
 * _transpile_collective, which hands both programs to Paddle's
 * paddle.distributed.transpiler.collective: GradAllReduce
 * (collective_mode grad_allreduce) or LocalSGD (local_sgd), each with
 * nccl_comm_num rings.
 *
 * Startup (Collective._transpile_startup_program): per ring a RAW var
 * nccl_id_<n>, c_gen_nccl_id and c_comm_init; then one c_broadcast per
 * parameter (rings taken in turn) and one c_sync_comm_stream per ring.
 * LocalSGD also snapshots every parameter (PARAM@SNAPSHOT, assign).
 * SingleProcessMultiThread is in transpile_collective_spmt.c.
 *
 * Main: GradAllReduce scales each loss grad by 1/nranks and allreduces each
 * grad after the op that carries it in op_role_var; LocalSGD allreduces the
 * update (snapshot - param) after each optimizer op and re-applies the mean.
 *
 * Where Python follows runtime state (wait_server_ready, the CUDA/XPU build,
 * unique_name's process-wide counter) or fails on its own leftovers (a name
 * bound only inside a loop that ran zero times), what pdtrans does instead is
 * stated at the place and in the README. */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "../../diag.h"
#include "../../ir/unique.h"
#include "builders.h"
#include "transpile_collective.h"

/* ---- checks, on the unmodified block, so that messages name input ops ---- */

/* _is_update_op: the op has the slots Param, Grad and LearningRate. */
static bool is_update_op(const ir_op *op)
{
    return ir_op_input(op, IR_WK(Param)) && ir_op_input(op, IR_WK(Grad)) &&
           ir_op_input(op, IR_WK(LearningRate));
}

static int check_var(const tp_coll *c, const ir_block *b, size_t k, const char *what,
                     const char *name)
{
    if (name && ir_block_find_var(b, name))
        return PDT_OK;
    if (name)
        pdt_error("%s: block 0, op %zu '%s': %s '%s' is not a var of block 0", c->path, k,
                  b->ops[k]->type, what, name);
    else
        pdt_error("%s: block 0, op %zu '%s': %s is empty", c->path, k, b->ops[k]->type, what);
    return PDT_EBADINPUT;
}

static int check_grad_allreduce(const tp_coll *c, const ir_block *b)
{
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        if (tp_coll_is_loss_grad_op(op) && check_var(c, b, k, "loss grad output", tp_coll_first_output(op)))
            return PDT_EBADINPUT;
        if (!tp_coll_role_bit(op, IR_ROLE_BACKWARD))
            continue;
        const ir_attr *rv = ir_op_attr(op, IR_WK(op_role_var));
        if (!rv || rv->type != IR_ATTR_STRINGS)
            continue;
        if (rv->n_strings % 2) {
            pdt_error("%s: block 0, op %zu '%s': op_role_var holds %zu names, not (param, grad) "
                      "pairs", c->path, k, op->type, rv->n_strings);
            return PDT_EBADINPUT;
        }
        for (size_t i = 0; i < rv->n_strings; i++) {
            const char *name = ir_intern_n((const char *)rv->strings[i].data, rv->strings[i].len);
            if (check_var(c, b, k, i % 2 ? "op_role_var grad" : "op_role_var param", name))
                return PDT_EBADINPUT;
        }
    }
    return PDT_OK;
}

static int check_local_sgd(const tp_coll *c, const ir_block *b)
{
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        if (is_update_op(op) && check_var(c, b, k, "input 'Param'", ir_op_input1(op, "Param")))
            return PDT_EBADINPUT;
    }
    return PDT_OK;
}

/* ---- GradAllReduce._transpile_main_program ---- */

/* _insert_allreduce_ops.  Python walks the ops backwards; for each Backward
 * op with op_role_var it inserts, right after the op, c_sync_calc_stream on
 * the first pair's grad and then, for each pair in order, c_allreduce_sum at
 * one fixed position, so that the op ends up followed by the sync and the
 * allreduces of its pairs in reverse pair order.  Rings are taken in turn in
 * that backward walk.  Before the first Optimize op go nrings
 * c_sync_comm_stream ops (ring 0 first) on the grad seen last in the walk. */
void tp_coll_insert_allreduce(ir_block *b, int nrings)
{
    size_t n = b->n_ops;
    GPtrArray **after = xcalloc(n ? n : 1, sizeof(GPtrArray *));
    const char *grad = NULL;
    int ring = -1;
    for (size_t k = n; k-- > 0;) {
        const ir_op *op = b->ops[k];
        if (!tp_coll_role_bit(op, IR_ROLE_BACKWARD))
            continue;
        const ir_attr *rv = ir_op_attr(op, IR_WK(op_role_var));
        if (!rv || rv->type != IR_ATTR_STRINGS || rv->n_strings < 2)
            continue;
        size_t pairs = rv->n_strings / 2;
        ir_op **group = xmalloc_n(pairs + 1, sizeof(ir_op *));
        for (size_t i = 0; i < pairs; i++) {
            grad = ir_intern_n((const char *)rv->strings[2 * i + 1].data,
                               rv->strings[2 * i + 1].len);
            if (i == 0)
                group[0] = tp_coll_inplace_op(b->program, "c_sync_calc_stream", grad,
                                              IR_ROLE_BACKWARD);
            ring = (ring + 1) % nrings;
            ir_op *ar = tp_coll_inplace_op(b->program, "c_allreduce_sum", grad, IR_ROLE_BACKWARD);
            ir_op_set_int(ar, "ring_id", ring);
            group[pairs - i] = ar;
        }
        for (size_t i = 0; i <= pairs; i++)
            tp_coll_push_after(after, k, group[i]);
        free(group);
    }
    GPtrArray *before = NULL;
    size_t first_opt = n;
    for (size_t k = 0; grad && k < n; k++)
        if (tp_coll_role_bit(b->ops[k], IR_ROLE_OPTIMIZE)) {
            first_opt = k;
            break;
        }
    if (first_opt < n) {
        before = g_ptr_array_new();
        for (int r = 0; r < nrings; r++) {
            ir_op *op = tp_coll_inplace_op(b->program, "c_sync_comm_stream", grad,
                                           IR_ROLE_BACKWARD);
            ir_op_set_int(op, "ring_id", r);
            g_ptr_array_add(before, op);
        }
    }
    tp_coll_rebuild(b, after, first_opt, before);
    if (before)
        g_ptr_array_free(before, TRUE);
    tp_coll_free_after(after, n);
}

/* ---- LocalSGD._transpile_main_program ---- */

static const char *snapshot_name(const char *param)
{
    return ir_internf("%s@SNAPSHOT", param);
}

/* block.create_var(name=PARAM@SNAPSHOT, shape, persistable=True,
 * stop_gradient=True, dtype) as a LoDTensor. */
static void snapshot_var(ir_block *b, const ir_var *param)
{
    ir_var *v = tp_create_var(b, snapshot_name(param->name), IR_LOD_TENSOR, param->dtype,
                              param->dims, param->n_dims, -1, 1);
    v->has_stop_gradient = true;
    v->stop_gradient = true;
}

void tp_coll_local_sgd_main(ir_block *b, int nranks, int nrings)
{
    size_t n = b->n_ops;
    GPtrArray **after = xcalloc(n ? n : 1, sizeof(GPtrArray *));
    GPtrArray *updated = g_ptr_array_new();     /* params in program order */
    const char *last = NULL;
    int ring = -1;
    ir_program *p = b->program;
    for (size_t k = n; k-- > 0;) {
        if (!is_update_op(b->ops[k]))
            continue;
        const char *param = ir_op_input1(b->ops[k], "Param");
        const char *snap = snapshot_name(param);
        snapshot_var(b, ir_block_find_var(b, param));
        ir_op *sub = tp_coll_op(p, "elementwise_sub", IR_ROLE_OPTIMIZE);
        ir_op_set_input1(sub, "X", snap);
        ir_op_set_input1(sub, "Y", param);
        ir_op_set_output1(sub, "Out", param);
        tp_coll_push_after(after, k, sub);
        tp_coll_push_after(after, k, tp_coll_inplace_op(p, "c_sync_calc_stream", param, IR_ROLE_OPTIMIZE));
        ring = (ring + 1) % nrings;
        ir_op *ar = tp_coll_inplace_op(p, "c_allreduce_sum", param, IR_ROLE_OPTIMIZE);
        ir_op_set_int(ar, "ring_id", ring);
        tp_coll_push_after(after, k, ar);
        g_ptr_array_add(updated, (void *)param);
        last = param;
    }
    tp_coll_rebuild(b, after, 0, NULL);
    tp_coll_free_after(after, n);
    /* Python appends the stream syncs on `param` after the loop, a name
     * unbound (NameError) when no op updates a param; then there is
     * nothing to wait for, so pdtrans appends none. */
    for (int r = 0; last && r < nrings; r++) {
        ir_op *op = tp_coll_inplace_op(p, "c_sync_comm_stream", last, IR_ROLE_OPTIMIZE);
        ir_op_set_int(op, "ring_id", r);
        ir_block_splice(b, b->n_ops, 0, &op, 1);
    }
    GPtrArray *tail = g_ptr_array_new();
    for (guint i = updated->len; i-- > 0;) {
        const char *param = updated->pdata[i];
        const char *snap = snapshot_name(param);
        g_ptr_array_add(tail, tp_coll_scale_op(p, param, 1.0 / nranks, IR_ROLE_OPTIMIZE));
        ir_op *sub = tp_coll_op(p, "elementwise_sub", IR_ROLE_OPTIMIZE);
        ir_op_set_input1(sub, "X", snap);
        ir_op_set_input1(sub, "Y", param);
        ir_op_set_output1(sub, "Out", param);
        g_ptr_array_add(tail, sub);
        ir_op *as = tp_coll_op(p, "assign", IR_ROLE_OPTIMIZE);
        ir_op_set_input1(as, "X", param);
        ir_op_set_output1(as, "Out", snap);
        g_ptr_array_add(tail, as);
    }
    ir_block_splice(b, b->n_ops, 0, (ir_op *const *)tail->pdata, tail->len);
    g_ptr_array_free(tail, TRUE);
    g_ptr_array_free(updated, TRUE);
}

/* ---- Collective._transpile_startup_program ---- */

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* block.iter_parameters() of the startup as Paddle sees it after loading:
 * the vars of block 0 that are parameters, in name order (BlockDesc keeps
 * its vars in a name-ordered map).  Startup programs often lack the
 * is_parameter flag that the main program has (and programs from Paddle
 * 1.x have it nowhere), so a startup var counts as a parameter when either
 * program marks it, when it is an optimizer's Param in main, or when an op
 * of main names it as the param of an op_role_var pair.  None is
 * distributed: is_distributed is Python-only state that a ProgramDesc does
 * not keep. */
GPtrArray *tp_coll_startup_params(const ir_program *main, const ir_program *startup)
{
    const ir_block *sb = startup->blocks[0], *mb = main->blocks[0];
    pmap opt = PMAP_INIT;
    for (size_t k = 0; k < mb->n_ops; k++) {
        const ir_op *op = mb->ops[k];
        if (is_update_op(op) && ir_op_input1(op, "Param"))
            pmap_add(&opt, ir_op_input1(op, "Param"));
        const ir_attr *rv = ir_op_attr(op, IR_WK(op_role_var));
        for (size_t i = 0; rv && rv->type == IR_ATTR_STRINGS && i + 1 < rv->n_strings; i += 2)
            pmap_add(&opt, ir_intern_n((const char *)rv->strings[i].data, rv->strings[i].len));
    }
    GPtrArray *out = g_ptr_array_new();
    for (size_t i = 0; i < sb->n_vars; i++) {
        const ir_var *v = sb->vars[i];
        if (v->removed)
            continue;
        const ir_var *m = ir_block_find_var(mb, v->name);
        if (v->is_parameter || (m && m->is_parameter) || pmap_has(&opt, v->name))
            g_ptr_array_add(out, (void *)v->name);
    }
    if (out->len > 1)
        qsort(out->pdata, out->len, sizeof *out->pdata, cmp_name);
    pmap_free(&opt);
    return out;
}

void tp_coll_startup(ir_block *b, const GPtrArray *params, int nranks, int rank, int nrings,
                     const char *endpoint, const char *const *others, size_t n_others,
                     bool local_sgd)
{
    tp_coll c = {.nranks = nranks, .rank = rank, .nrings = nrings, .endpoint = endpoint,
                 .others = (const char **)others, .n_others = n_others};
    /* unique_name.generate('nccl_id') continues past the input's */
    unsigned counter = (unsigned)ir_unique_next(b->program, "nccl_id");
    for (int r = 0; r < nrings; r++)
        tp_coll_init_communicator(&c, b, r, &counter, false);
    GPtrArray *ops = g_ptr_array_new();
    int ring = -1;
    for (guint i = 0; i < params->len; i++) {
        ring = (ring + 1) % nrings;
        ir_op *op = tp_coll_inplace_op(b->program, "c_broadcast", params->pdata[i],
                                       IR_ROLE_FORWARD);
        ir_op_set_int(op, "ring_id", ring);
        ir_op_set_int(op, "root", 0);
        g_ptr_array_add(ops, op);
    }
    /* Python syncs on `param`, the loop variable, which is unbound
     * (NameError) without parameters; then nothing was broadcast and
     * pdtrans adds no sync. */
    for (int r = 0; params->len && r < nrings; r++) {
        ir_op *op = tp_coll_inplace_op(b->program, "c_sync_comm_stream",
                                       params->pdata[params->len - 1], IR_ROLE_FORWARD);
        ir_op_set_int(op, "ring_id", r);
        g_ptr_array_add(ops, op);
    }
    for (guint i = 0; local_sgd && i < params->len; i++) {
        /* Python's startup create_var passes no dtype; the assign appended
         * right after gives the snapshot the param's, as Operator runs its
         * var-type inference (SyncTypeAndDataType X -> Out). */
        snapshot_var(b, ir_block_find_var(b, params->pdata[i]));
        ir_op *op = tp_coll_op(b->program, "assign", IR_ROLE_FORWARD);
        ir_op_set_input1(op, "X", params->pdata[i]);
        ir_op_set_output1(op, "Out", snapshot_name(params->pdata[i]));
        g_ptr_array_add(ops, op);
    }
    ir_block_splice(b, b->n_ops, 0, (ir_op *const *)ops->pdata, ops->len);
    g_ptr_array_free(ops, TRUE);
}

/* ---- the mode ---- */

int tp_build_collective(const tp_collective_plan *cp, ir_program *m, ir_program *s)
{
    const pdt_transpile_opts *o = cp->o;
    const pdt_list *eps = &o->trainer_endpoints;
    const char *ep = cp->endpoint;
    tp_coll c = {.path = cp->main_path ? cp->main_path : "main", .nranks = (int)eps->n,
                 .rank = o->trainer_id, .nrings = o->nccl_comm_num, .endpoint = ep};
    bool local_sgd = o->collective_mode == PDT_COLL_LOCAL_SGD;
    const ir_block *b0 = m->blocks[0];
    int rc = local_sgd ? check_local_sgd(&c, b0) : check_grad_allreduce(&c, b0);
    if (rc)
        return rc;
    if (o->collective_mode == PDT_COLL_SPMT) {
        int nranks = 1;
        tp_spmt_startup(s->blocks[0], eps, ep, c.rank, &nranks);
        tp_spmt_main(m->blocks[0], nranks, &cp->spmt);
        return PDT_OK;
    }
    size_t n_others;
    const char **others = tp_coll_others(eps, ep, &n_others);
    GPtrArray *params = tp_coll_startup_params(m, s);
    tp_coll_startup(s->blocks[0], params, c.nranks, c.rank, c.nrings, ep, others, n_others,
                    local_sgd);
    if (local_sgd) {
        tp_coll_local_sgd_main(m->blocks[0], c.nranks, c.nrings);
    } else {
        tp_coll_scale_loss_grads(m->blocks[0], 1.0 / c.nranks);
        tp_coll_insert_allreduce(m->blocks[0], c.nrings);
    }
    g_ptr_array_free(params, TRUE);
    free(others);
    return PDT_OK;
}

int pass_collective(pdt_ctx *ctx)
{
    int rc = ctx->transpile.mode == PDT_MODE_COLLECTIVE ? tp_era_check_modes(ctx) : PDT_OK;
    if (rc)
        return rc;
    return tp_stage_trainer_rewrite(ctx, "collective", PDT_MODE_COLLECTIVE, tp_build_collective);
}
