/* era_order.c - the order of a made op's attrs as the target Paddle's
 * OpDesc::Flush writes them (issue 30 point 2; research-2x-3x.md 4f, 4k).
 *
 * From 2.4 an OpDesc keeps two maps: attrs_ (the proto's attrs) and
 * runtime_attrs_ (the op type's "extra" attrs of op_compat.yaml:
 * OpDesc::SetAttr stores every name of ExtraInfoUtils' map of the op's
 * type there).  Flush sorts each map by name and writes them as two
 * groups: v2.4.0/v2.4.2 the ordinary attrs first, v2.5.0-v2.5.2 and
 * develop of 2024-10 (3.0) the runtime attrs first.  era.def's
 * ERA_RUNTIME_ATTR rows name the runtime attrs per op type and version;
 * this file ranks them (+1 after, -1 before, 0 the others) and lets
 * ir_op_settle_ranked write each made op so.  Before 2.4 nothing is done
 * here (Flush wrote one hash-ordered map; see 4f).
 *
 * A grad op (TYPE_grad, TYPE_grad_grad ...) with no rows of its own takes
 * its forward type's: SingleGradOpMaker gives the grad OpDesc the forward
 * op's runtime_attrs_ (SetRuntimeAttrMap(this->RuntimeAttrs())) and its
 * attrs_ (SetAttrMap(this->Attrs())), and pdtrans's grad makers copy the
 * forward attrs verbatim (src/grad/README.md), so an attr that was the
 * forward op's runtime attr is the grad op's. */
#include "era.h"

#include <glib.h>
#include <string.h>

#include "era_rows.h"

typedef struct {
    const GArray *rows; /* the op type's runtime rows (era_row_at indices) */
    int rank;           /* of a runtime attr: +1 (2.4) or -1 (2.5 on) */
} rt_rank_ctx;

/* The runtime rows of TYPE, or of its forward type for a grad type
 * without rows of its own (TYPE_grad_grad: the nearest type with rows);
 * NULL when it has none.  T: era_index_new(era, ERA_PICK_RUNTIME).  A
 * loop: a type name is the input's. */
static const GArray *runtime_rows(GHashTable *t, const char *type)
{
    static const char suffix[] = "_grad";
    const size_t ls = sizeof suffix - 1;
    const GArray *a = g_hash_table_lookup(t, type);
    size_t n = strlen(type);
    if (a || n <= ls || strcmp(type + n - ls, suffix))
        return a;
    char *fwd = g_strdup(type);
    do {
        n -= ls;
        fwd[n] = '\0';
        a = g_hash_table_lookup(t, fwd);
    } while (!a && n > ls && !strcmp(fwd + n - ls, suffix));
    g_free(fwd);
    return a;
}

static bool rows_name(const GArray *a, const char *name)
{
    for (size_t i = 0; a && i < a->len; i++)
        if (!strcmp(name, era_row_at(g_array_index(a, size_t, i))->name))
            return true;
    return false;
}

static int rt_rank(const ir_attr *attr, void *ctx)
{
    const rt_rank_ctx *c = ctx;
    return rows_name(c->rows, attr->name) ? c->rank : 0;
}

int pdt_era_runtime_rank(int era)
{
    if (era == PDT_ERA_NATIVE || era < 204)
        return 0;
    return era < 205 ? 1 : -1;
}

bool pdt_era_is_runtime_attr(int era, const char *type, const char *attr)
{
    GHashTable *t = era_index_new(era, ERA_PICK_RUNTIME);
    bool hit = rows_name(runtime_rows(t, type), attr);
    g_hash_table_destroy(t);
    return hit;
}

void pdt_era_order_program(ir_program *p, int era)
{
    int rank = pdt_era_runtime_rank(era);
    if (!p || !rank)
        return;
    GHashTable *t = era_index_new(era, ERA_PICK_RUNTIME);
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        ir_block *b = p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_op *op = b->ops[k];
            if (!op->made)
                continue;
            rt_rank_ctx c = {runtime_rows(t, op->type), rank};
            ir_op_settle_ranked(op, rt_rank, &c);
        }
    }
    g_hash_table_destroy(t);
}
