/* hash_order_geo.c - the attr order up to 2.3 of the ops GeoSgdTranspiler
 * (geo_sgd_transpiler.py, v1.6.0-v2.4.2) builds through Python's
 * Operator.__init__ (research-2x-3x.md 4z3).
 *
 * GeoSgdTranspiler appends, each with the program's default role
 * (Forward) and no op_role_var: the trainer's `send` of the sparse ids
 * and the trainer startup's `send` of param_init ({send_varnames}), one
 * `sum` per optimize block of a pserver (no attrs) and the pserver's
 * listen_and_serv (its own dict: no pserver_id, no lr_decay_block_id,
 * 1.6 sync_mode False, 1.7 on distributed_mode GEO and the rpc thread
 * numbers).  Operator.__init__ (framework.py v1.6.0-v2.3.2) sets the
 * dict's attrs in proto order, op_role, op_namescope and op_callstack
 * with them (the framework attrs close the proto), then check_attrs
 * inserts the other attrs' defaults in proto order: the same history as
 * hash_order_dist.c's, with py_order.def's PYOP_GEO rows.  The trainer
 * startup's recv, fetch_barrier and concat come from DistributeTranspiler's
 * _get_trainer_startup_program, which GeoSgdTranspiler inherits:
 * hash_order_dist.c orders them.  A pserver's startup is its
 * get_startup_program's too: hash_order_pstart.c orders its copies, as
 * DistributeTranspiler's (research 4z6).  hash_order_dist.c also takes a GEO
 * pserver's `sum` for the gradient-merge one (use_mkldnn given): this
 * file runs after it and gives it GEO's history. */
#include "era.h"
#include "hash_table.h"

#include "../pass.h"

#include <glib.h>
#include <string.h>

typedef struct {
    const char *type, *proto, *given;
    int from, until;
} geo_row;

static const geo_row geo_ops[] = {
#define PYOP(type, from, until, proto, given, source)
#define PYOP_GEO(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP_GEO
#undef PYOP
};

/* Which call built the op at K of B ("send", "sum", "listen_and_serv":
 * the row type), or NULL for an op GeoSgdTranspiler did not build. */
static const char *geo_call(const ir_block *b, size_t k, bool pserver)
{
    const ir_op *op = b->ops[k];
    const ir_attr *rv = ir_op_attr(op, "op_role_var");
    if (!op->made || ir_op_role(op) != IR_ROLE_FORWARD ||
        (rv && rv->type == IR_ATTR_STRINGS && rv->n_strings > 0))
        return NULL;
    if (pserver && b->idx == 0 && !strcmp(op->type, "listen_and_serv"))
        return "listen_and_serv";
    if (pserver && b->idx > 0 && !strcmp(op->type, "sum"))
        return "sum";
    if (!pserver && b->idx == 0 && !strcmp(op->type, "send"))
        return "send";
    return NULL;
}

static const geo_row *row_of(const char *type, int era)
{
    for (size_t i = 0; i < sizeof geo_ops / sizeof *geo_ops; i++)
        if (era >= geo_ops[i].from && era < geo_ops[i].until && !strcmp(geo_ops[i].type, type))
            return &geo_ops[i];
    return NULL;
}

/* The framework attrs closing the proto at ERA (op_proto_maker.cc:
 * op_device from v1.8.0, with_quant_attr from v2.2.0), and those
 * Operator.__init__ puts in the dict here (op_role_var is empty). */
static const char *framework_attrs(int era)
{
    return era >= 202 ? "op_role op_role_var op_namescope op_callstack op_device with_quant_attr"
           : era >= 108 ? "op_role op_role_var op_namescope op_callstack op_device"
                        : "op_role op_role_var op_namescope op_callstack";
}
static const char *const fw_given = "op_role op_namescope op_callstack";

/* Inserts the names of LIST that are (GIVEN_IN) or are not in GIVEN.
 * A row's proto is one version's, so each name is one of Paddle's op,
 * whether or not pdtrans's op has it (pdtrans writes no epmap, sections
 * on the 1.x send, no table_id, is_sparse on the 2.x one). */
static void insert_part(ht *t, const char *list, const char *given, bool given_in)
{
    gchar **names = g_strsplit(list, " ", -1);
    for (gchar **n = names; *n; n++)
        if (**n && py_listed(given, *n) == given_in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(names);
}

/* The history of OP as ROW's call: false when OP has an attr it lacks. */
static bool geo_history(ht *t, const ir_op *op, const geo_row *r, int era)
{
    const char *fw = framework_attrs(era);
    ht_init(t);
    insert_part(t, r->proto, r->given, true);
    insert_part(t, fw, fw_given, true);
    insert_part(t, r->proto, r->given, false);
    insert_part(t, fw, fw_given, false);
    for (size_t i = 0; i < op->n_attrs; i++)
        if (ht_rank(&ir_op_attrs(op)[i], t) == (int)t->n)
            return false;
    return true;
}

/* P is a pserver's startup program of the run (staged as
 * pserver_N.startup). */
static bool pserver_startup(const pdt_ctx *ctx, const ir_program *p)
{
    for (size_t i = 0; i < ctx->n_staged; i++)
        if (ctx->staged[i].program == p)
            return g_str_has_prefix(ctx->staged[i].stem, "pserver_") &&
                   g_str_has_suffix(ctx->staged[i].stem, ".startup");
    return false;
}

/* CTX NULL: P is taken to be a GEO transpile's program. */
static bool geo_run(const pdt_ctx *ctx)
{
    return !ctx || (ctx->transpile.mode == PDT_MODE_PSERVER && ctx->transpile.geo_push_nums > 0);
}

void pdt_hash_order_geo(const pdt_ctx *ctx, ir_program *p, int era)
{
    if (!p || !p->n_blocks || era < 106 || era > 203 || !geo_run(ctx))
        return;
    if (ctx && pserver_startup(ctx, p))
        return; /* hash_order_pstart.c's, as DistributeTranspiler's */
    bool pserver = false;
    for (size_t k = 0; k < p->blocks[0]->n_ops && !pserver; k++)
        pserver = !strcmp(p->blocks[0]->ops[k]->type, "listen_and_serv");
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            const char *call = geo_call(p->blocks[bi], k, pserver);
            const geo_row *r = call ? row_of(call, era) : NULL;
            ir_op *op = p->blocks[bi]->ops[k];
            if (r && op->n_attrs + 8 < HT_MAX && geo_history(&t, op, r, era))
                ir_op_settle_ranked(op, ht_rank, &t);
        }
}
