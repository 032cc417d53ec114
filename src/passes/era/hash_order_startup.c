/* hash_order_startup.c - the attr order up to 2.3 of the startup-program
 * ops minimize creates (research-2x-3x.md 4x): the fill_constant of each
 * accumulator, of the learning_rate_N var, of a schedule's global vars
 * and of the @LR_DECAY_COUNTER@.
 *
 * Paddle builds each through LayerHelper.set_variable_initializer, which
 * creates the var in the startup program's global block with a
 * ConstantInitializer; its __call__ (initializer.py) appends (before
 * v2.1.0: prepends) a fill_constant through Operator.__init__ (framework.py
 * v1.4.1-v2.3.2): the caller's attrs and the framework ones (op_role, the
 * startup program's own Forward; op_role_var only when not empty, never
 * here; op_callstack; op_namescope; op_device under a device_guard: adam's
 * beta powers, device='cpu', from 1.8) are set in the proto's AddAttr
 * order, then check_attrs inserts the defaults of the others in that
 * order.  OpDesc::Flush then writes the unordered_map's list (hash_order.c,
 * research 4o).  py_order.def's PYOP_STARTUP rows give each version's
 * proto and the attrs ConstantInitializer passes; the real startup
 * programs rec_join_startup (<= 1.5) and FleetX's ResNet-50 (1.8-dev)
 * list every ConstantInitializer op in this order. */
#include "era.h"
#include "hash_table.h"

#include "../pass.h"

#include <glib.h>
#include <string.h>

static const struct {
    const char *type, *proto, *given;
    int from, until;
} startup_ops[] = {
#define PYOP(type, from, until, proto, given, source)
#define PYOP_STARTUP(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP_STARTUP
#undef PYOP
};

static bool empty_string(const ir_attr *a)
{
    return a->type == IR_ATTR_STRING && a->s.len == 0;
}

/* Whether Operator.__init__ sets NAME of OP from its dict (the caller's
 * attrs and the framework ones it adds) rather than check_attrs's default:
 * op_role, op_namescope and op_callstack always; op_role_var when not
 * empty; op_device when a device_guard gave one (pdtrans writes it
 * non-empty exactly then); a listed str_value when not empty (from v2.1.1
 * ConstantInitializer passes str(float(value)); pdtrans's empty one
 * before is check_attrs's default). */
static bool given(const ir_op *op, const char *name, const char *listed)
{
    const ir_attr *a = ir_op_attr(op, name);
    if (!strcmp(name, "op_role") || !strcmp(name, "op_namescope") ||
        !strcmp(name, "op_callstack"))
        return true;
    if (!strcmp(name, "op_role_var"))
        return a && a->type == IR_ATTR_STRINGS && a->n_strings > 0;
    if (!strcmp(name, "op_device") || !strcmp(name, "str_value"))
        return a && !empty_string(a) && (!strcmp(name, "op_device") || py_listed(listed, name));
    return py_listed(listed, name);
}

/* Inserts the names of PROTO that are (GIVEN_IN) or are not given. */
static void insert_part(ht *t, const ir_op *op, const char *proto, const char *listed,
                        bool given_in)
{
    gchar **names = g_strsplit(proto, " ", -1);
    for (gchar **n = names; *n; n++)
        if (**n && given(op, *n, listed) == given_in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(names);
}

/* The ops of this file: a made op of a row's type with no input slot (an
 * initializer's fill_constant; ValueTensor & co. are dispensable and
 * ConstantInitializer passes no inputs) and the startup program's role
 * Forward, with the op_callstack minimize's builder (opt_global_var)
 * writes: the transpiler's own startup fill_constants (the async
 * COUNTER.trainer_N inits) have none, and are left to its rows. */
static int row_of(const ir_op *op, int era)
{
    if (!op->made || op->n_inputs || ir_op_role(op) != IR_ROLE_FORWARD ||
        !ir_op_attr(op, "op_callstack") || op->n_attrs + 1 >= HT_MAX)
        return -1;
    for (size_t i = 0; i < sizeof startup_ops / sizeof *startup_ops; i++)
        if (!strcmp(startup_ops[i].type, op->type) && era >= startup_ops[i].from &&
            era < startup_ops[i].until)
            return (int)i;
    return -1;
}

/* OP's history by its row: false when OP has an attr the row lacks. */
static bool startup_history(ht *t, const ir_op *op, int row)
{
    const char *proto = startup_ops[row].proto, *listed = startup_ops[row].given;
    ht_init(t);
    insert_part(t, op, proto, listed, true);
    insert_part(t, op, proto, listed, false);
    for (size_t k = 0; k < op->n_attrs; k++)
        if (ht_rank(&ir_op_attrs(op)[k], t) == (int)t->n)
            return false;
    return true;
}

/* P is the run's startup program or a transpile's trainer_N.startup (the
 * origin startup with the transpiler's ops added; a pserver's startup
 * copies its ops by all_attrs(), another history: hash_order_dist.c). */
static bool is_startup(const pdt_ctx *ctx, const ir_program *p)
{
    if (!ctx || p == ctx->startup)
        return true;
    for (size_t i = 0; i < ctx->n_staged; i++)
        if (ctx->staged[i].program == p)
            return g_str_has_prefix(ctx->staged[i].stem, "trainer_") &&
                   g_str_has_suffix(ctx->staged[i].stem, ".startup");
    return false;
}

void pdt_hash_order_startup(const pdt_ctx *ctx, ir_program *p, int era)
{
    if (!p || !p->n_blocks || era == PDT_ERA_NATIVE || era > 203 || !is_startup(ctx, p))
        return;
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    ir_block *b = p->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        ir_op *op = b->ops[k];
        int row = row_of(op, era);
        if (row >= 0 && startup_history(&t, op, row))
            ir_op_settle_ranked(op, ht_rank, &t);
    }
}
