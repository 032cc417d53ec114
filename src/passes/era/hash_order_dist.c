/* hash_order_dist.c - the attr order up to 2.3 of the ops the pserver
 * transpiler (distribute_transpiler.py) builds through Python's
 * Operator.__init__ (research-2x-3x.md 4q, 4w).
 *
 * Operator.__init__ (framework.py v1.4.1-v2.3.2: the same loop) puts the
 * caller's attrs and the framework ones in one dict (op_role unless given,
 * op_role_var unless empty - an empty one is deleted -, op_callstack,
 * op_namescope), sets those in the proto's order (the maker's attrs, then
 * op_role, op_role_var, op_namescope, op_callstack, op_device from 1.8,
 * with_quant_attr from 2.2), then check_attrs inserts the defaults of the
 * others in proto order.  py_order.def's PYOP_DIST rows give each op
 * type's proto order and what the transpiler passes; a pserver's copies of
 * the trainer's optimize and LR ops (_append_pserver_ops,
 * _append_pserver_non_opt_ops: attrs=opt_op.all_attrs()) are given every
 * attr their source has, so their order is the proto's (PYOP rows).
 * Rows for 1.4-1.8, and 2.0-2.3 for the ops pscore registers with the
 * same protos (barriers, listen_and_serv, fake_init) and sum/scale/concat,
 * and the copies by the 2.x PYOP rows (research 4z2).  PaddleFL's 1.8.4
 * server (sum, scale) and
 * trainer (concat) have exactly these orders. */
#include "era.h"
#include "hash_table.h"

#include <glib.h>
#include <string.h>

typedef struct {
    const char *type, *proto, *given;
    int from, until;
} dist_row;

static const dist_row dist_ops[] = {
#define PYOP(type, from, until, proto, given, source)
#define PYOP_DIST(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP_DIST
#undef PYOP
};

/* minimize's rows: the protos of the ops a pserver copies */
static const dist_row py_ops[] = {
#define PYOP(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP
};

/* A NAME? of a given list is passed only when the transpiler has a value
 * for it (listen_and_serv's checkpint_block_id with a distributed table,
 * dc_asgd when enabled, prefetch_var_name_to_block_id when not empty):
 * the op's value is then positive, true or not empty. */
static bool has_value(const ir_attr *a)
{
    switch (a ? a->type : IR_ATTR_FLOAT) {
    case IR_ATTR_INT: return a->i > 0;
    case IR_ATTR_LONG: return a->l > 0;
    case IR_ATTR_BOOLEAN: return a->b;
    case IR_ATTR_STRING: return a->s.len > 0;
    case IR_ATTR_STRINGS: return a->n_strings > 0;
    case IR_ATTR_INTS: return a->n_ints > 0;
    case IR_ATTR_BLOCKS: return a->n_blocks_idx > 0;
    default: return false;
    }
}

static bool given_here(const ir_op *op, const char *given, const char *name)
{
    /* A copy: all_attrs() of its source, which build_pserver.c noted (an
     * op not noted: every attr, as before the note). */
    if (!strcmp(given, "*"))
        return ht_copy_given(op, name, ir_op_copy_had(op, name) != 0);
    if (py_listed(given, name))
        return true;
    char *q = g_strconcat(name, "?", NULL);
    bool cond = py_listed(given, q);
    g_free(q);
    return cond && has_value(ir_op_attr(op, name));
}

/* Inserts the names of PROTO that OP's caller passes (or, given_in false,
 * does not pass).  A PYOP_DIST row's proto is one version's, so each name
 * is one of Paddle's op (pdtrans's may lack a default); a copy's PYOP row
 * spans versions (fill_constant's str_value from 1.7): only the names OP
 * has (PRESENT). */
static void insert_part(ht *t, const ir_op *op, const char *proto, const char *given,
                        bool given_in, bool present)
{
    gchar **names = g_strsplit(proto, " ", -1);
    for (gchar **n = names; *n; n++)
        if (**n && (!present || ir_op_attr(op, *n)) && given_here(op, given, *n) == given_in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(names);
}

/* The trainer's ops of the distributed lookup table, other than its send
 * (transpile_table.c, delete_optimizer.c): _replace_lookup_table_op_with_
 * prefetch's split_ids, prefetch and merge_ids (the program's Forward
 * role), _split_table_grad_and_add_send_vars's split_ids (Dist), and the
 * startup's fake_init of the table (and of _fake_init_sparsetable's
 * tables), Forward; and _update_remote_sparse_update_op's
 * distributed_lookup_table (remote prefetch), Forward. */
static bool table_op(const char *type)
{
    return !strcmp(type, "split_ids") || !strcmp(type, "prefetch") || !strcmp(type, "merge_ids") ||
           !strcmp(type, "fake_init") || !strcmp(type, "distributed_lookup_table");
}

/* Which call of the transpiler built the op at K of B, as the row suffix
 * TYPE@VARIANT ("" for the type's plain row), or NULL for an op it did not
 * build or whose call is not modelled:
 *   pserver: listen_and_serv (not GeoSgdTranspiler's: distributed_mode 3,
 *   or 1.6's pserver_id -1), the gradient-merge sum and 1/trainers scale
 *   (the program's default role, Forward, no op_role_var), "copy" for an
 *   optimize block's op of the Optimize or LRSched role (all_attrs());
 *   trainer: send "grad" (op_role_var given), "counter" (the async LR
 *   counter's: merge_add true) or "table" (the distributed table's, after
 *   its split_ids: epmap and trainer_id given), the table's split_ids,
 *   prefetch, merge_ids and fake_init (table_op), recv of the main program
 *   (op_role_var) or "startup", the barriers (fetch_barrier "startup"
 *   without an input), split_byref and
 *   split_selected_rows (RPC/Dist role given), concat (Dist in the main
 *   program, the default role in the startup). */
static const char *dist_variant(const ir_block *b, size_t k, bool pserver)
{
    const ir_op *op = b->ops[k];
    int role = ir_op_role(op);
    const ir_attr *rv = ir_op_attr(op, "op_role_var");
    bool has_rv = rv && rv->type == IR_ATTR_STRINGS && rv->n_strings > 0;
    const char *t = op->type;
    if (pserver) {
        if (!strcmp(t, "listen_and_serv")) {
            const ir_attr *dm = ir_op_attr(op, "distributed_mode"), *id = ir_op_attr(op, "pserver_id");
            bool geo = (dm && dm->type == IR_ATTR_INT && dm->i == 3) ||
                       (id && id->type == IR_ATTR_INT && id->i < 0);
            return geo ? NULL : "";
        }
        if (b->idx == 0 || role < 0)
            return NULL;
        if (role & (IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED))
            return "copy";
        return role == IR_ROLE_FORWARD && !has_rv ? "" : NULL;
    }
    if (!strcmp(t, "send")) {
        const ir_attr *ma = ir_op_attr(op, "merge_add");
        if (role != IR_ROLE_RPC || !has_rv)
            return NULL;
        if (k && !strcmp(b->ops[k - 1]->type, "split_ids"))
            return "table";
        return ma && ma->type == IR_ATTR_BOOLEAN && ma->b ? "counter" : "grad";
    }
    if (table_op(t)) {
        bool dist_split = role == IR_ROLE_DIST && !strcmp(t, "split_ids");
        return (role == IR_ROLE_FORWARD || dist_split) && !has_rv ? "" : NULL;
    }
    if (!strcmp(t, "recv"))
        return role == IR_ROLE_RPC ? (has_rv ? "" : "startup") : NULL;
    if (!strcmp(t, "fetch_barrier") && role == IR_ROLE_RPC && !has_rv) {
        bool in = false; /* the startup's has no input */
        for (size_t s = 0; s < op->n_inputs; s++)
            in = in || ir_op_ins(op)[s].n_args > 0;
        return in ? "" : "startup";
    }
    if (!strcmp(t, "send_barrier"))
        return role == IR_ROLE_RPC && !has_rv ? "" : NULL;
    if (!strcmp(t, "split_byref") || !strcmp(t, "split_selected_rows"))
        return role == IR_ROLE_DIST && !has_rv ? "" : NULL;
    if (!strcmp(t, "concat"))
        return (role == IR_ROLE_DIST || role == IR_ROLE_FORWARD) && !has_rv ? "" : NULL;
    return NULL;
}

static bool row_is(const dist_row *r, const char *type, const char *variant, int era)
{
    size_t n = strlen(type);
    if (era < r->from || era >= r->until || strncmp(r->type, type, n))
        return false;
    return *variant ? r->type[n] == '@' && !strcmp(r->type + n + 1, variant) : !r->type[n];
}

/* The row of OP's call: a copy takes the first minimize row of its type
 * (the proto; every attr given), the others their PYOP_DIST row; a
 * startup call without a row of its own passes what the main program's
 * does (fetch_barrier from 1.5). */
static const dist_row *row_of(const ir_op *op, const char *variant, int era, dist_row *copy)
{
    bool is_copy = !strcmp(variant, "copy"); /* 2.x too: rows 200-203 (research 4z2) */
    const dist_row *rows = is_copy ? py_ops : dist_ops;
    size_t n = is_copy ? sizeof py_ops / sizeof *py_ops : sizeof dist_ops / sizeof *dist_ops;
    for (size_t i = 0; i < n; i++) {
        size_t tl = strlen(op->type);
        if (is_copy && era >= rows[i].from && era < rows[i].until &&
            !strncmp(rows[i].type, op->type, tl) && (!rows[i].type[tl] || rows[i].type[tl] == '@')) {
            *copy = rows[i];
            copy->given = "*";
            return copy;
        }
        if (!is_copy && row_is(&rows[i], op->type, variant, era))
            return &rows[i];
    }
    return !strcmp(variant, "startup") ? row_of(op, "", era, copy) : NULL;
}

/* The framework attrs of the proto at ERA, in its order (op_proto_maker.cc:
 * op_device from v1.8.0, with_quant_attr from v2.2.0). */
static const char *framework_attrs(int era)
{
    return era >= 202 ? "op_role op_role_var op_namescope op_callstack op_device with_quant_attr"
           : era >= 108 ? "op_role op_role_var op_namescope op_callstack op_device"
                        : "op_role op_role_var op_namescope op_callstack";
}

/* The history of the op at K of B when a row gives it: false otherwise,
 * or when the op has an attr the history lacks. */
static bool dist_history(ht *t, const ir_block *b, size_t k, bool pserver, int era)
{
    const ir_op *op = b->ops[k];
    const char *variant = dist_variant(b, k, pserver);
    dist_row copy;
    const dist_row *r = variant ? row_of(op, variant, era, &copy) : NULL;
    if (!r || op->n_attrs + 8 >= HT_MAX)
        return false;
    /* The dict's framework attrs: op_role (the caller's or the program's),
     * op_role_var when not empty, op_namescope, op_callstack (counted
     * though pdtrans writes none: a traceback), and for a copy every
     * other one its source had (ht_copy_given): op_device and
     * with_quant_attr of a source written before 1.8 or 2.2 are
     * check_attrs's defaults. */
    bool is_copy = !strcmp(r->given, "*");
    const char *fw = framework_attrs(era);
    const char *fw_given = is_copy ? "*" : "op_role op_role_var? op_namescope op_callstack";
    ht_init(t);
    insert_part(t, op, r->proto, r->given, true, is_copy);
    insert_part(t, op, fw, fw_given, true, false);
    insert_part(t, op, r->proto, r->given, false, is_copy);
    insert_part(t, op, fw, fw_given, false, false);
    for (size_t i = 0; i < op->n_attrs; i++)
        if (ht_rank(&ir_op_attrs(op)[i], t) == (int)t->n)
            return false;
    return true;
}

void pdt_hash_order_dist(ir_program *p, int era)
{
    if (era < 104 || era > 203)
        return;
    bool pserver = false;
    for (size_t k = 0; k < p->blocks[0]->n_ops && !pserver; k++)
        pserver = !strcmp(p->blocks[0]->ops[k]->type, "listen_and_serv");
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            if (op->made && dist_history(&t, p->blocks[bi], k, pserver, era))
                ir_op_settle_ranked(op, ht_rank, &t);
        }
}

const char *ht_framework_attrs(int era)
{
    return framework_attrs(era);
}
