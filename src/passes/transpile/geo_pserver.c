/* geo_pserver.c - pass 'geo_pserver' (--geo): GeoSgdTranspiler's
 * get_pserver_program.  A GEO pserver holds param slices only; each
 * trainer trains on its own and pushes, every PUSH_NUMS steps, the change
 * of each slice as SLICE.delta, which the pserver adds in: one optimize
 * block per slice, holding one `sum` of the slice and its delta.  The
 * startup program is build_pserver_startup's, as get_pserver_programs
 * calls get_startup_program. */
#include <string.h>

#include "../../diag.h"
#include "builders.h"

const char *tp_geo_delta_name(const char *var)
{
    return ir_internf("%s.delta", var);
}

/* The delta of a slice of param p: SELECTED_ROWS for a sparse param,
 * otherwise the param's own type; create_var(name, persistable=False,
 * type, dtype, shape) sets no lod_level. */
void tp_geo_declare_delta(ir_block *b, const tp_pair *p, const char *name,
                          const int64_t *dims, size_t n_dims)
{
    const ir_var *pv = p->param.var;
    int type = p->sparse_grad ? IR_SELECTED_ROWS : pv->type;
    tp_create_var(b, name, type, pv->dtype, dims, n_dims, -1, 0);
}

/* The slices placed on ep, as _clone_var declares them (persistable). */
static void declare_slices(const tp_placement *pl, size_t ep, ir_block *g)
{
    const tp_endpoint *e = &pl->epl[ep];
    for (size_t i = 0; i < e->n; i++) {
        const tp_pair *p = &pl->pairs[e->refs[i].pair];
        const tp_slice *s = &p->param.slices[e->refs[i].slice];
        const ir_var *pv = p->param.var;
        /* a split slice is a new var (lod_level 0); a whole param keeps its own */
        int lod = p->param.n_slices > 1 ? 0 : (pv->has_lod_level ? pv->lod_level : 0);
        tp_create_var(g, s->name, pv->type, pv->dtype, s->dims, s->n_dims, lod, 1);
    }
}

static void serv_op(const tp_placement *pl, const tp_inputs *in, size_t ep, ir_block *g,
                    GArray *blocks, GPtrArray *g2b, GPtrArray *sparse)
{
    const pdt_runtime *rt = &in->o->runtime;
    ir_op *op = ir_block_append_op(g, "listen_and_serv");
    ir_op_set_input(op, "X", NULL, 0);
    ir_op_set_blocks(op, "optimize_blocks", (const int32_t *)(void *)blocks->data, blocks->len);
    ir_op_set_string(op, "endpoint", pl->eps[ep]);
    ir_op_set_int(op, "Fanin", in->o->trainers);
    ir_op_set_int(op, "distributed_mode", TP_DM_GEO);
    ir_op_set_strings(op, "grad_to_block_id", (const char *const *)g2b->pdata, g2b->len);
    ir_op_set_strings(op, "sparse_grad_to_param", (const char *const *)sparse->pdata,
                      sparse->len);
    ir_op_set_int(op, "rpc_get_thread_num", rt->rpc_get_threads);
    ir_op_set_int(op, "rpc_send_thread_num", rt->rpc_send_threads);
    ir_op_set_int(op, "rpc_prefetch_thread_num", rt->rpc_prefetch_threads);
    ir_op_set_role(op, IR_ROLE_FORWARD);
}

ir_program *tp_build_geo_pserver(const tp_placement *pl, const tp_inputs *in, size_t ep)
{
    ir_program *p = tp_new_program(in->main);
    ir_block *g = p->blocks[0];
    declare_slices(pl, ep, g);
    const tp_endpoint *e = &pl->epl[ep];
    GArray *blocks = g_array_new(FALSE, FALSE, sizeof(int32_t));
    GPtrArray *g2b = g_ptr_array_new(), *sparse = g_ptr_array_new();
    for (size_t i = 0; i < e->n; i++) {
        const tp_pair *pr = &pl->pairs[e->refs[i].pair];
        const tp_slice *s = &pr->param.slices[e->refs[i].slice];
        /* every block's parent is block 0 (pre_block_idx before the loop) */
        ir_block *blk = ir_program_add_block(p, 0);
        g_array_append_val(blocks, blk->idx);
        const char *delta = tp_geo_delta_name(s->name);
        tp_geo_declare_delta(g, pr, delta, s->dims, s->n_dims);
        if (pr->sparse_grad)
            g_ptr_array_add(sparse, (void *)ir_internf("%s:%s", delta, s->name));
        const char *xs[2] = {s->name, delta};
        ir_op *sum = ir_block_append_op(blk, "sum");
        ir_op_set_input(sum, "X", xs, 2);
        ir_op_set_output1(sum, "Out", s->name);
        ir_op_set_role(sum, IR_ROLE_FORWARD);
        g_ptr_array_add(g2b, (void *)ir_internf("%s:%d", delta, blk->idx));
    }
    if (e->n == 0)
        pdt_warning("pserver '%s' holds no param slice (more pservers than slices?); its "
                    "listen_and_serv has no optimize block", pl->eps[ep]);
    serv_op(pl, in, ep, g, blocks, g2b, sparse);
    g_array_free(blocks, TRUE);
    g_ptr_array_free(g2b, TRUE);
    g_ptr_array_free(sparse, TRUE);
    return p;
}

int pass_geo_pserver(pdt_ctx *ctx)
{
    return tp_build_pservers(ctx, "geo_pserver", tp_build_geo_pserver);
}
