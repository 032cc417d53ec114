/* build_pserver_startup.c - pass 'build_pserver_startup': get_startup_program,
 * the startup program of each pserver 'build_pserver' built.
 * It keeps the input startup's init ops for the vars the pserver holds,
 * writing the slice instead of the whole param and resetting the shape attr
 * of random/constant initializers to the slice shape, and the ops such an
 * op reads from (copy_set: Paddle raises KeyError there).  The input
 * startup is read, never edited, so the trainer's startup keeps the full
 * shapes (seed defect 3). */
#include <string.h>

#include "../../diag.h"
#include "builders.h"

static bool is_init_op(const char *type)
{
    return !strcmp(type, "gaussian_random") || !strcmp(type, "fill_constant") ||
           !strcmp(type, "uniform_random") || !strcmp(type, "truncated_gaussian_random");
}

/* _get_splited_name_and_shape: the slice of a split param held here. */
static const tp_slice *split_slice_here(const tp_placement *pl, size_t ep, const char *name)
{
    const tp_pair *p = tp_pair_of_param(pl, name);
    if (!p)
        return NULL;
    if (p->param.n_slices < 2)
        return NULL;
    for (size_t i = 0; i < p->param.n_slices; i++)
        if (p->ep[i] == (int)ep)
            return &p->param.slices[i];
    return NULL;
}

static void set_shape(ir_op *op, const ir_var *v)
{
    const ir_attr *old = ir_op_attr(op, "shape");
    if (old && old->type == IR_ATTR_LONGS) {
        ir_op_set_longs(op, "shape", v->dims, v->n_dims);
        return;
    }
    int32_t *d = xmalloc_n(v->n_dims + 1, sizeof(int32_t));
    for (size_t i = 0; i < v->n_dims; i++)
        d[i] = (int32_t)v->dims[i];
    ir_op_set_ints(op, "shape", d, v->n_dims);
    free(d);
}

/* What get_startup_program makes of origin startup op k on this pserver:
 * NAMES[o], its output slot o's var here (NULL: not held); HELD, an output
 * is held (Paddle copies it); SLICED, one is a slice NAME.block<i>;
 * NEEDED, a held op's input comes from it (see copy_set). */
typedef struct {
    const char **names;
    bool held, sliced, needed;
} op_plan;

static void plan_held(const tp_placement *pl, size_t ep, const ir_block *ob, const ir_block *pg,
                      ir_arena *arena, op_plan *plans)
{
    for (size_t k = 0; k < ob->n_ops; k++) {
        const ir_op *src = ob->ops[k];
        op_plan *pk = &plans[k];
        if (!strcmp(src->type, "recv") || !strcmp(src->type, "fetch_barrier") ||
            !strcmp(src->type, "concat"))
            continue;
        /* The seed keeps an op when one of its outputs is held here. */
        pk->names = ir_arena_alloc(arena, (src->n_outputs + 1) * sizeof *pk->names);
        for (size_t o = 0; o < src->n_outputs; o++) {
            const ir_slot *sl = &ir_op_outs(src)[o];
            pk->names[o] = NULL;
            if (sl->n_args == 0)
                continue;
            const tp_slice *sp = split_slice_here(pl, ep, sl->args[0]);
            pk->names[o] = sp ? sp->name : ir_block_find_var(pg, sl->args[0]) ? sl->args[0] : NULL;
            pk->held |= pk->names[o] != NULL;
            pk->sliced |= sp != NULL;
        }
    }
}

/* The ops to copy.  The seed's _get_input_map_from_op looks each input of
 * a held op up in the pserver's vars and raises KeyError for any other
 * (v1.4.1-v2.3.2): so Paddle writes no pserver startup when an initializer
 * computes the param from startup temporaries (an FP16 param's cast,
 * 2.3's paddle.nn.initializer Dirac scatter and Orthogonal scale; research
 * 4z11).  pdtrans copies what such a held op reads from too, each earlier
 * writer of the var (in-place chains included): the pserver initialises
 * the param as the trainer's startup does.  A slice cannot be computed so
 * (the ops work on the whole param): refused, naming the op and the var. */
static int copy_set(const ir_block *ob, const ir_block *pg, op_plan *plans)
{
    ir_defuse *du = NULL;
    int rc = PDT_OK;
    for (size_t k = ob->n_ops; k-- > 0 && !rc;) {
        const ir_op *op = ob->ops[k];
        if (!plans[k].held && !plans[k].needed)
            continue;
        for (size_t i = 0; i < op->n_inputs && !rc; i++)
            for (size_t a = 0; a < ir_op_ins(op)[i].n_args && !rc; a++) {
                const char *v = ir_op_ins(op)[i].args[a];
                if (ir_block_find_var(pg, v))
                    continue;
                if (plans[k].sliced) {
                    pdt_error("the startup program: block 0, op %zu '%s' initialises a slice of a param split "
                              "across pservers from '%s', which the pserver does not hold: a "
                              "slice cannot be computed so (Paddle's get_startup_program "
                              "raises KeyError); pass --no-slice or initialise the param "
                              "without startup temporaries",
                              k, op->type, v);
                    rc = PDT_EBADINPUT;
                    break;
                }
                if (!du)
                    du = ir_defuse_build(ob);
                size_t n;
                const size_t *w = ir_defuse_writers(du, v, &n);
                for (size_t j = 0; j < n && w[j] < k; j++)
                    plans[w[j]].needed = !plans[w[j]].held;
            }
    }
    if (du)
        ir_defuse_free(du);
    return rc;
}

/* Declares ARG (a var of the origin startup OB) in SB unless it is. */
static void declare(ir_block *sb, const ir_block *ob, const char *arg)
{
    const ir_var *v = ir_block_find_var(ob, arg);
    if (!ir_block_find_var(sb, arg) && v)
        tp_clone_variable(sb, v, NULL);
}

/* The copy of origin op SRC (plan PK) in S. */
static ir_op *copy_op(ir_program *s, const ir_block *ob, const ir_op *src, const op_plan *pk)
{
    ir_block *sb = s->blocks[0];
    ir_op *op = ir_op_clone(s, src);
    tp_copied_op(op);
    const ir_var *out_var = NULL;
    for (size_t o = 0; pk->held && o < src->n_outputs; o++) {
        const char *slot = ir_op_outs(src)[o].name;
        if (!pk->names[o]) {
            ir_op_remove_output(op, slot);
            continue;
        }
        /* Only the slot's first var is carried over, as in the seed. */
        ir_op_set_output1(op, slot, pk->names[o]);
        if (slot == ir_intern("Out"))
            out_var = ir_block_find_var(sb, pk->names[o]);
    }
    for (size_t o = 0; !pk->held && o < src->n_outputs; o++)
        for (size_t a = 0; a < ir_op_outs(src)[o].n_args; a++)
            declare(sb, ob, ir_op_outs(src)[o].args[a]);
    for (size_t i = 0; i < src->n_inputs; i++)
        for (size_t a = 0; a < ir_op_ins(src)[i].n_args; a++)
            declare(sb, ob, ir_op_ins(src)[i].args[a]);
    /* The seed resets the shape of the copies it makes (held ops) only. */
    if (is_init_op(src->type) && out_var)
        set_shape(op, out_var);
    return op;
}

ir_program *tp_build_pserver_startup(const tp_placement *pl, const tp_inputs *in, size_t ep,
                                     const ir_program *pmain)
{
    const ir_block *pg = pmain->blocks[0];
    const ir_block *ob = in->startup->blocks[0];
    op_plan *plans = xcalloc(ob->n_ops + 1, sizeof *plans);
    plan_held(pl, ep, ob, pg, in->arena, plans);
    if (copy_set(ob, pg, plans)) {
        free(plans);
        return NULL;
    }
    ir_program *s = tp_new_program(in->startup);
    ir_block *sb = s->blocks[0];
    ir_var **vars = NULL;
    size_t nv = ir_block_live_vars(pg, &vars, in->arena);
    for (size_t i = 0; i < nv; i++)
        tp_clone_variable(sb, vars[i], NULL);
    GPtrArray *ops = g_ptr_array_new();
    for (size_t k = 0; k < ob->n_ops; k++)
        if (plans[k].held || plans[k].needed)
            g_ptr_array_add(ops, copy_op(s, ob, ob->ops[k], &plans[k]));
    free(plans);
    if (in->o->dc_asgd)
        tp_dc_startup_assigns(pl, in, ep, ops, s);
    ir_block_set_ops(sb, (ir_op *const *)ops->pdata, ops->len);
    g_ptr_array_free(ops, TRUE);
    return s;
}

int pass_build_pserver_startup(pdt_ctx *ctx)
{
    tp_plan *st = tp_plan_need(ctx, "build_pserver_startup", TP_PLAN_SPLIT);
    if (!st)
        return PDT_EINTERNAL;
    const tp_placement *pl = st->pl;
    int rc = tp_plan_need_inputs(st, "build_pserver_startup");
    bool any = false;
    for (size_t e = 0; e < pl->n_eps; e++)
        any |= st->pserver_main[e] != NULL || st->pserver_written[e];
    if (!rc && !any && ctx->transpile.role != PDT_ROLE_TRAINER)
        rc = tp_order_bug("build_pserver_startup");
    ir_program **built = xcalloc(pl->n_eps + 1, sizeof(ir_program *));
    /* Each pserver's main and startup, complete: nothing later reads them. */
    ir_program **done = xcalloc(2 * pl->n_eps + 1, sizeof(ir_program *));
    for (size_t e = 0; e < pl->n_eps && !rc; e++)
        if (tp_pserver_wanted(st, e) && st->pserver_main[e] && !st->pserver_written[e] &&
            !(built[e] = tp_build_pserver_startup(pl, &st->in, e, st->pserver_main[e])))
            rc = PDT_EBADINPUT;     /* said */
    for (size_t e = 0; e < pl->n_eps; e++) {
        if (rc || !built[e]) {
            ir_program_free(built[e]);
            continue;
        }
        st->pserver_written[e] = true;
        st->pserver_startup[e] = built[e];
        pdt_ctx_stage_output(ctx, ir_internf("pserver_%zu.startup", e), built[e]);
        done[2 * e] = st->pserver_main[e];
        done[2 * e + 1] = built[e];
    }
    if (!rc) {
        tp_plan_outputs_changed(st, built, pl->n_eps);
        pdt_ctx_outputs_final(ctx, done, 2 * pl->n_eps);
    }
    free(done);
    free(built);
    return rc;
}
