/* hash_order_pstart.c - the attr order up to 2.3 of a pserver's startup
 * program ops (distribute_transpiler.py get_startup_program, research
 * 4z2).
 *
 * get_startup_program copies each op of the origin startup that writes a
 * var the pserver holds by append_op(type=op.type, ..., attrs=
 * op.all_attrs()) after op._set_attr("shape", slice shape) on the
 * initializers (v1.4.1-v2.3.2: the same loop), and with DC-ASGD appends an
 * assign of each param to its backups without attrs.  Operator.__init__
 * (framework.py, the same loop in every tag) takes the dict: the source's
 * attrs, op_role kept, op_role_var deleted when empty, op_callstack and
 * op_namescope its own, op_device the source's (no device_guard there);
 * it sets the dict's names in the proto's AddAttr order (the maker's
 * attrs, then op_role op_role_var op_namescope op_callstack, op_device
 * from 1.8, with_quant_attr from 2.2), then check_attrs inserts the
 * defaults of the proto's others in that order.  So an attr the source
 * lacked (an input written by an older Paddle, era.def's rows add its
 * default) goes in the second pass: which attrs a copy has before the era
 * rows is noted by pdt_pstart_snapshot, before era.c applies them.
 * py_order.def's PYOP_DIST rows TYPE@pstart give each type's proto. */
#include "era.h"
#include "hash_table.h"

#include "../pass.h"

#include <glib.h>
#include <string.h>

typedef struct {
    const char *type, *proto, *given;
    int from, until;
} pstart_row;

static const pstart_row pstart_rows[] = {
#define PYOP(type, from, until, proto, given, source)
#define PYOP_DIST(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP_DIST
#undef PYOP
};

/* The op's attr names before the era rows, by op. */
struct pdt_pstart {
    GHashTable *given; /* ir_op * -> GHashTable set of interned names */
};

/* A staged pserver_N.startup of the run (build_pserver_startup's stem). */
static bool is_pserver_startup(const pdt_ctx *ctx, const ir_program *p)
{
    for (size_t i = 0; ctx && i < ctx->n_staged; i++)
        if (ctx->staged[i].program == p)
            return g_str_has_prefix(ctx->staged[i].stem, "pserver_") &&
                   g_str_has_suffix(ctx->staged[i].stem, ".startup");
    return false;
}

pdt_pstart *pdt_pstart_snapshot(const pdt_ctx *ctx, const ir_program *p, int era)
{
    if (!p || !p->n_blocks || era < 104 || era > 203 || !is_pserver_startup(ctx, p))
        return NULL;
    pdt_pstart *s = g_new0(pdt_pstart, 1);
    s->given = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                     (GDestroyNotify)g_hash_table_destroy);
    const ir_block *b = p->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        if (!op->made)
            continue;
        GHashTable *names = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (size_t i = 0; i < op->n_attrs; i++)
            g_hash_table_add(names, (gpointer)ir_op_attrs(op)[i].name);
        g_hash_table_insert(s->given, (gpointer)op, names);
    }
    return s;
}

/* DC-ASGD's assign (transpile_dcasgd.c: SLICE.trainer_I_bak): a new op,
 * not a copy; Python passes no attrs. */
static bool is_dc_assign(const ir_op *op)
{
    if (strcmp(op->type, "assign") || op->n_outputs != 1 || ir_op_outs(op)[0].n_args != 1)
        return false;
    const char *out = ir_op_outs(op)[0].args[0];
    return strstr(out, ".trainer_") && g_str_has_suffix(out, "_bak");
}

static const pstart_row *row_of(const ir_op *op, int era)
{
    size_t n = strlen(op->type);
    for (size_t i = 0; i < sizeof pstart_rows / sizeof *pstart_rows; i++) {
        const pstart_row *r = &pstart_rows[i];
        if (era >= r->from && era < r->until && !strncmp(r->type, op->type, n) &&
            !strcmp(r->type + n, "@pstart"))
            return r;
    }
    return NULL;
}

/* Whether Operator.__init__'s dict holds NAME: a copy's every attr of the
 * source (NAMES), op_role_var only when not empty; op_role, op_namescope
 * and op_callstack always (pdtrans writes no op_callstack: a traceback). */
static bool in_dict(const ir_op *op, GHashTable *names, bool copy, const char *name)
{
    if (!strcmp(name, "op_role") || !strcmp(name, "op_namescope") ||
        !strcmp(name, "op_callstack"))
        return true;
    if (!strcmp(name, "op_role_var")) {
        const ir_attr *a = ir_op_attr(op, name);
        return a && a->type == IR_ATTR_STRINGS && a->n_strings > 0;
    }
    return copy && g_hash_table_contains(names, ir_intern(name));
}

static void insert_part(ht *t, const ir_op *op, GHashTable *names, bool copy, const char *proto,
                        bool in)
{
    gchar **list = g_strsplit(proto, " ", -1);
    for (gchar **n = list; *n; n++)
        if (**n && in_dict(op, names, copy, *n) == in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(list);
}

/* OP's history: false without a row, or when OP has an attr it lacks. */
static bool pstart_history(ht *t, const ir_op *op, GHashTable *names, int era)
{
    const pstart_row *r = row_of(op, era);
    if (!r || !names || op->n_attrs + 8 >= HT_MAX)
        return false;
    bool copy = !is_dc_assign(op);
    char *proto = g_strconcat(r->proto, " ", ht_framework_attrs(era), NULL);
    ht_init(t);
    insert_part(t, op, names, copy, proto, true);
    insert_part(t, op, names, copy, proto, false);
    g_free(proto);
    for (size_t i = 0; i < op->n_attrs; i++)
        if (ht_rank(&ir_op_attrs(op)[i], t) == (int)t->n)
            return false;
    return true;
}

void pdt_hash_order_pstart(pdt_pstart *s, ir_program *p, int era)
{
    if (!s)
        return;
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    ir_block *b = p->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        ir_op *op = b->ops[k];
        if (op->made && pstart_history(&t, op, g_hash_table_lookup(s->given, op), era))
            ir_op_settle_ranked(op, ht_rank, &t);
    }
    g_hash_table_destroy(s->given);
    g_free(s);
}
