/* hash_order_dist.c - the attr order up to 2.3 of ops the pserver
 * transpiler builds through Python's Operator.__init__ (research-2x-3x.md
 * 4q), for the 1.7-1.8 targets whose histories a real program confirms.
 *
 * Operator.__init__ (framework.py v1.7.2, v1.8.5) puts the caller's attrs
 * and the framework ones (op_role unless given, op_role_var unless empty,
 * op_callstack, op_namescope, op_device under a device guard) in one dict,
 * sets those in the proto's order (its maker's attrs, then op_role,
 * op_role_var, op_namescope, op_callstack, op_device), then check_attrs
 * inserts the defaults of the others in proto order.  py_order.def's
 * PYOP_DIST rows give each op type's proto order and what
 * distribute_transpiler.py passes; PaddleFL's 1.8.4 server (sum, scale)
 * and trainer (concat) have exactly these orders. */
#include "era.h"
#include "hash_table.h"

#include <glib.h>
#include <string.h>

static const struct {
    const char *type, *proto, *given;
    int from, until;
} dist_ops[] = {
#define PYOP(type, from, until, proto, given, source)
#define PYOP_DIST(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP_DIST
#undef PYOP
};

/* Inserts the names of LIST that are (or, given_in false, are not) in GIVEN. */
static void insert_part(ht *t, const char *list, const char *given, bool given_in)
{
    gchar **names = g_strsplit(list, " ", -1);
    for (gchar **n = names; *n; n++)
        if (**n && py_listed(given, *n) == given_in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(names);
}

/* The op types and roles the rows are for: the pservers' gradient sum
 * and 1/trainers scale (_append_pserver_grad_merge_ops, the table's sum:
 * appended with the program's default role, Forward, no op_role_var) and
 * the trainer's concat of a sliced parameter (main program: op_role given
 * DIST_OP_ROLE_ATTR_VALUE; startup: the default role; either way op_role
 * is inserted right after axis). */
static bool dist_built(const ir_op *op, bool pserver)
{
    int role = ir_op_role(op);
    if (!strcmp(op->type, "concat"))
        return role == IR_ROLE_DIST || role == IR_ROLE_FORWARD;
    const ir_attr *rv = ir_op_attr(op, "op_role_var");
    return pserver && role == IR_ROLE_FORWARD &&
           (!rv || (rv->type == IR_ATTR_STRINGS && rv->n_strings == 0));
}

static int rank_in(const ir_attr *attr, void *ctx)
{
    const ht *t = ctx;
    for (size_t i = 0; i < t->n; i++)
        if (t->keys[i] == attr->name)
            return (int)i;
    return (int)t->n;
}

/* The history of OP when a row gives it: false otherwise, or when OP has
 * an attr the history lacks. */
static bool dist_history(ht *t, const ir_op *op, bool pserver, int era)
{
    size_t i = 0, n = sizeof dist_ops / sizeof *dist_ops;
    while (i < n && (strcmp(dist_ops[i].type, op->type) || era < dist_ops[i].from ||
                     era >= dist_ops[i].until))
        i++;
    if (i == n || op->n_attrs + 1 >= HT_MAX || !dist_built(op, pserver))
        return false;
    ht_init(t);
    insert_part(t, dist_ops[i].proto, dist_ops[i].given, true);
    /* the dict's framework attrs; op_callstack counts though pdtrans
     * writes none (a traceback) */
    insert_part(t, "op_role op_namescope op_callstack", "", false);
    insert_part(t, dist_ops[i].proto, dist_ops[i].given, false);
    insert_part(t, "op_role_var op_device", "", false);
    for (size_t k = 0; k < op->n_attrs; k++)
        if (rank_in(&ir_op_attrs(op)[k], t) == (int)t->n)
            return false;
    return true;
}

void pdt_hash_order_dist(ir_program *p, int era)
{
    if (era < 107 || era > 108)
        return;
    bool pserver = false;
    for (size_t k = 0; k < p->blocks[0]->n_ops && !pserver; k++)
        pserver = !strcmp(p->blocks[0]->ops[k]->type, "listen_and_serv");
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            if (op->made && dist_history(&t, op, pserver, era))
                ir_op_settle_ranked(op, rank_in, &t);
        }
}
