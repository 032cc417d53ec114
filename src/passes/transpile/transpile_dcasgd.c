/* transpile_dcasgd.c - DC-ASGD (DistributeTranspilerConfig.enable_dc_asgd):
 * the pserver keeps a backup of each param slice per trainer and corrects
 * every incoming grad for the trainer's staleness before the optimizer runs
 * (get_pserver_program step 3.3, _append_dc_asgd_ops, get_startup_program).
 * The trainer programs do not change. */
#include "../../diag.h"
#include "builders.h"

static const char *bak_name(const char *param_slice, int trainer)
{
    return ir_internf("%s.trainer_%d_bak", param_slice, trainer);
}

void tp_dc_declare_baks(const tp_placement *pl, const tp_inputs *in, ir_block *g, size_t ep)
{
    const tp_endpoint *e = &pl->epl[ep];
    for (size_t i = 0; i < e->n; i++) {
        const tp_pair *p = &pl->pairs[e->refs[i].pair];
        const tp_slice *s = &p->param.slices[e->refs[i].slice];
        for (int t = 0; t < in->o->trainers; t++)
            tp_create_var(g, bak_name(s->name, t), p->param.var->type, p->param.var->dtype,
                          s->dims, s->n_dims, -1, -1);
    }
}

/* A var of the optimize block, persistable=False as the seed gives it. */
static const char *local_var(ir_block *blk, const char *name, const ir_var *like,
                             const tp_slice *s)
{
    tp_create_var(blk, name, like->type, like->dtype, s->dims, s->n_dims, -1, 0);
    return name;
}

static void binary(ir_block *blk, const char *type, const char *x, const char *y,
                   const char *out)
{
    ir_op *op = ir_block_append_op(blk, type);
    ir_op_set_input1(op, "X", x);
    ir_op_set_input1(op, "Y", y);
    ir_op_set_output1(op, "Out", out);
    ir_op_set_role(op, IR_ROLE_FORWARD);
}

const char *tp_dc_append(const tp_inputs *in, ir_block *blk, const tp_pair *p, const tp_slice *s,
                         const char *grad, unsigned *tmp_counter)
{
    const ir_var *pv = p->param.var;
    const char *bak = local_var(blk, ir_internf("%s.local_bak", s->name), pv, s);
    const char *tid = ir_intern("@TRAINER_ID@");
    int64_t one = 1;
    tp_create_var(blk, tid, IR_LOD_TENSOR, IR_INT64, &one, 1, -1, 0);
    int n = in->o->trainers;
    const char **refs = ir_arena_alloc(in->arena, (size_t)n * sizeof *refs);
    for (int t = 0; t < n; t++)
        refs[t] = bak_name(s->name, t);
    ir_op *ref = ir_block_append_op(blk, "ref_by_trainer_id");
    ir_op_set_input(ref, "X", refs, (size_t)n);
    ir_op_set_input1(ref, "TrainerId", tid);
    ir_op_set_output1(ref, "Out", bak);
    ir_op_set_role(ref, IR_ROLE_FORWARD);
    /* unique_name.generate("tmp_dc_output") counts per process in Paddle,
     * so names would depend on which pservers were built before; pdtrans
     * counts per pserver program, from past the input's highest
     * (tp_build_pserver starts the counter). */
    const char *o[4];
    for (int i = 0; i < 4; i++)
        o[i] = local_var(blk, ir_internf("tmp_dc_output_%u", (*tmp_counter)++), pv, s);
    binary(blk, "elementwise_sub", s->name, bak, o[0]);
    binary(blk, "elementwise_mul", o[0], grad, o[1]);
    binary(blk, "elementwise_mul", o[1], grad, o[2]);
    binary(blk, "elementwise_add", grad, o[2], o[3]);
    return o[3];
}

void tp_dc_startup_assigns(const tp_placement *pl, const tp_inputs *in, size_t ep, GPtrArray *ops,
                           ir_program *s)
{
    const tp_endpoint *e = &pl->epl[ep];
    for (size_t i = 0; i < e->n; i++) {
        const tp_pair *p = &pl->pairs[e->refs[i].pair];
        const char *name = p->param.slices[e->refs[i].slice].name;
        for (int t = 0; t < in->o->trainers; t++) {
            ir_op *op = ir_op_new(s, "assign");
            ir_op_set_input1(op, "X", name);
            ir_op_set_output1(op, "Out", bak_name(name, t));
            ir_op_set_role(op, IR_ROLE_FORWARD);
            g_ptr_array_add(ops, op);
        }
    }
}
