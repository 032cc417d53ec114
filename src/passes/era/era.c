/* era.c - the pipeline's last step: the ops pdtrans made (ir_op.made) are
 * rewritten as the target Paddle version writes them, row by row of
 * era.def.  The families write one era natively and never look at the
 * version; this step alone does, so that no family code changes with it
 * (issue 30 point 2).  The input's own ops are never touched. */
#include "era.h"

#include <glib.h>
#include <string.h>

#include "../pass.h"

typedef enum {
    ERA_DROP_ATTR, ERA_ADD_BOOL, ERA_BOOL_TO_INT, ERA_SET_BOOL, ERA_DROP_INPUT,
    ERA_SCOPE_PER_PARAM
} era_kind;

#define ERA_ANY_ROLE (-1)
#define ERA_ROLE_BACKWARD IR_ROLE_BACKWARD
#define ERA_ROLE_OPTIMIZE IR_ROLE_OPTIMIZE

typedef struct {
    era_kind kind;
    const char *op;
    int role;
    const char *name;
    int value;
    int from, until;
} era_row;

static const era_row rows[] = {
#define ERA(kind, op, role, name, value, from, until, source) \
    {kind, op, role, name, value, from, until},
#include "era.def"
#undef ERA
};
#define N_ROWS (sizeof rows / sizeof *rows)

/* The position of each parameter in the optimizer's params_grads order:
 * the order of the update ops (an input slot "Param") pdtrans made. */
static GHashTable *param_order(const ir_block *b)
{
    GHashTable *h = g_hash_table_new(g_direct_hash, g_direct_equal);
    const char *param = ir_intern("Param");
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        if (!op->made)
            continue;
        for (size_t s = 0; s < op->n_inputs; s++)
            if (op->inputs[s].name == param && op->inputs[s].n_args == 1 &&
                !g_hash_table_contains(h, op->inputs[s].args[0]))
                g_hash_table_insert(h, (void *)op->inputs[s].args[0],
                                    GSIZE_TO_POINTER(g_hash_table_size(h) + 1));
    }
    return h;
}

/* name_scope numbering: the K-th entry (from 0) of a repeated child
 * "name" is "/name/" for K = 0, "/name_K/" after. */
static void scope_per_param(ir_op *op, const era_row *r, GHashTable *order)
{
    const ir_attr *ns = ir_op_attr(op, "op_namescope");
    const ir_attr *rv = ir_op_attr(op, "op_role_var");
    char *want = g_strdup_printf("/%s/", r->name);
    if (ns && ns->type == IR_ATTR_STRING && rv && rv->type == IR_ATTR_STRINGS &&
        rv->n_strings >= 1 && ns->s.len == strlen(want) &&
        !memcmp(ns->s.data, want, ns->s.len)) {
        const char *p = ir_intern_n((const char *)rv->strings[0].data, rv->strings[0].len);
        size_t k = GPOINTER_TO_SIZE(g_hash_table_lookup(order, p));
        if (k > 1) {
            char *scope = g_strdup_printf("/%s_%zu/", r->name, k - 1);
            ir_op_set_string(op, "op_namescope", scope);
            g_free(scope);
        }
    }
    g_free(want);
}

static void apply_row(ir_op *op, const era_row *r, GHashTable *order)
{
    ir_attr *a;
    switch (r->kind) {
    case ERA_DROP_ATTR:
        if (ir_op_attr(op, r->name))
            ir_op_remove_attr(op, r->name);
        break;
    case ERA_ADD_BOOL:
        if (!ir_op_attr(op, r->name))
            ir_op_set_bool(op, r->name, r->value != 0);
        break;
    case ERA_BOOL_TO_INT:
        if ((a = ir_op_attr(op, r->name)) && a->type == IR_ATTR_BOOLEAN) {
            bool v = a->b;
            ir_op_remove_attr(op, r->name);
            ir_op_set_int(op, r->name, v ? 1 : 0);
        }
        break;
    case ERA_SET_BOOL:
        if ((a = ir_op_attr(op, r->name)) && a->type == IR_ATTR_BOOLEAN && a->b != (r->value != 0))
            ir_op_set_bool(op, r->name, r->value != 0);
        break;
    case ERA_DROP_INPUT:
        for (size_t s = 0; s < op->n_inputs; s++)
            if (!strcmp(op->inputs[s].name, r->name)) {
                ir_op_remove_input(op, r->name);
                break;
            }
        break;
    case ERA_SCOPE_PER_PARAM:
        scope_per_param(op, r, order);
        break;
    }
}

static bool row_matches(const era_row *r, const ir_op *op, int era)
{
    if (era < r->from || era >= r->until)
        return false;
    if (strcmp(r->op, "*") && strcmp(r->op, op->type))
        return false;
    if (r->role == ERA_ANY_ROLE)
        return true;
    int role = ir_op_role(op);
    return role >= 0 && (role & ~IR_ROLE_LOSS) == r->role;
}

void pdt_era_apply_program(ir_program *p, int era)
{
    if (!p || !p->n_blocks || era == PDT_ERA_NATIVE)
        return;
    GHashTable *order = param_order(p->blocks[0]);
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        ir_block *b = p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_op *op = b->ops[k];
            if (!op->made)
                continue;
            for (size_t i = 0; i < N_ROWS; i++)
                if (row_matches(&rows[i], op, era))
                    apply_row(op, &rows[i], order);
        }
    }
    g_hash_table_destroy(order);
}

void pdt_era_apply(pdt_ctx *ctx, int era)
{
    if (era == PDT_ERA_NATIVE)
        return;
    pdt_era_apply_program(ctx->main, era);
    pdt_era_apply_program(ctx->startup, era);
    for (size_t i = 0; i < ctx->n_staged; i++)
        pdt_era_apply_program(ctx->staged[i].program, era);
}
