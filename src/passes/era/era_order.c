/* era_order.c - the order of a made op's attrs as the target Paddle's
 * OpDesc::Flush writes them (issue 30 point 2; research-2x-3x.md 4f, 4k).
 *
 * From 2.4 an OpDesc keeps two maps: attrs_ (the proto's attrs) and
 * runtime_attrs_ (the op type's "extra" attrs of op_compat.yaml:
 * OpDesc::SetAttr stores every name of ExtraInfoUtils' map of the op's
 * type there).  Flush sorts each map by name and writes them as two
 * groups: v2.4.0/v2.4.2 the ordinary attrs first, v2.5.0-v2.5.2 and
 * develop of 2024-10 (3.0) the runtime attrs first.  era.def's
 * ERA_RUNTIME_* rows name the runtime attrs per op type and version, with
 * their types and defaults (read through era_rows.h: era.c's table);
 * this file seeds the ones a grad op lacks (seed_rows), ranks them (+1
 * after, -1 before, 0 the others) and lets ir_op_settle_ranked write
 * each made op so.  Before 2.4 nothing is done
 * here (Flush wrote one hash-ordered map; see 4f).  An input op a pass
 * changed is ordered the same way (Paddle re-flushes it; 4q), and seeded
 * with its type's extras as Paddle's re-read op is (4t, 4z4).
 *
 * A grad op (TYPE_grad, TYPE_grad_grad ...) with no rows of its own takes
 * its forward type's: SingleGradOpMaker gives the grad OpDesc the forward
 * op's runtime_attrs_ (SetRuntimeAttrMap(this->RuntimeAttrs())) and its
 * attrs_ (SetAttrMap(this->Attrs())), and pdtrans's grad makers copy the
 * forward attrs verbatim (src/grad/README.md), so an attr that was the
 * forward op's runtime attr is the grad op's. */
#include "era.h"

#include "../../ir/env.h"

#include <glib.h>
#include <stdlib.h>
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
        /* a name no row has is not hashed: linear in the name's length */
        a = n <= ERA_TYPE_MAX ? g_hash_table_lookup(t, fwd) : NULL;
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

/* A's value is the default V of KIND (a runtime kind: the attr's type;
 * V NULL for a list's {}). */
static bool at_default(const ir_attr *a, era_kind kind, const char *v)
{
    float f = v ? strtof(v, NULL) : 0.0f;
    switch (kind) {
    case ERA_RUNTIME_BOOL:
        return a->type == IR_ATTR_BOOLEAN && a->b == !strcmp(v, "true");
    case ERA_RUNTIME_INT:
        return a->type == IR_ATTR_INT && a->i == (int32_t)strtol(v, NULL, 10);
    case ERA_RUNTIME_FLOAT:
        return a->type == IR_ATTR_FLOAT && a->f == f;
    case ERA_RUNTIME_STRING:
        return a->type == IR_ATTR_STRING && a->s.len == strlen(v) && !memcmp(a->s.data, v, a->s.len);
    case ERA_RUNTIME_INTS:
        return a->type == IR_ATTR_INTS && a->n_ints == 0;
    case ERA_RUNTIME_LONGS:
        return a->type == IR_ATTR_LONGS && a->n_longs == 0;
    case ERA_RUNTIME_FLOATS:
        return a->type == IR_ATTR_FLOATS && (v ? a->n_floats == 1 && a->floats[0] == f : a->n_floats == 0);
    case ERA_RUNTIME_STRINGS:
        return a->type == IR_ATTR_STRINGS && a->n_strings == 0;
    default:
        return false;
    }
}

/* The runtime kind of the value a check_attrs row (ERA_ADD_*) adds: era.def
 * models check_attrs, so that value is the attr's proto default; other
 * kinds add nothing a default could match. */
static era_kind added_kind(era_kind k)
{
    switch (k) {
    case ERA_ADD_BOOL:
        return ERA_RUNTIME_BOOL;
    case ERA_ADD_INT:
    case ERA_ADD_GEO_INT:
        return ERA_RUNTIME_INT;
    case ERA_ADD_FLOAT:
        return ERA_RUNTIME_FLOAT;
    case ERA_ADD_STRING:
        return ERA_RUNTIME_STRING;
    case ERA_ADD_EMPTY_STRINGS:
        return ERA_RUNTIME_STRINGS;
    case ERA_ADD_EMPTY_INTS:
        return ERA_RUNTIME_INTS;
    case ERA_ADD_EMPTY_LONGS:
        return ERA_RUNTIME_LONGS;
    default:
        return ERA_DROP_ATTR; /* no runtime kind: at_default is false */
    }
}

static void destroy_runtime_index(void *t)
{
    g_hash_table_destroy(t);
}

/* Every version's runtime rows by type, built once per env (the symbolic
 * verifiers ask per attr), in a pdt_env slot. */
static GHashTable *all_runtime_index(void)
{
    GHashTable *t = pdt_env_get(PDT_ENV_ERA_RUNTIME);
    if (!t)
        t = pdt_env_put(PDT_ENV_ERA_RUNTIME, era_index_new(ERA_ALL_VERSIONS, ERA_PICK_RUNTIME),
                        destroy_runtime_index);
    return t;
}

/* Every version's check_attrs rows by type, built once per env. */
static GHashTable *all_defaults_index(void)
{
    GHashTable *t = pdt_env_get(PDT_ENV_ERA_DEFAULTS);
    if (!t)
        t = pdt_env_put(PDT_ENV_ERA_DEFAULTS, era_index_new(ERA_ALL_VERSIONS, ERA_PICK_CHANGES),
                        destroy_runtime_index);
    return t;
}

static bool rows_default(const GArray *rows, const ir_attr *a, bool runtime)
{
    for (size_t i = 0; rows && i < rows->len; i++) {
        const era_row *r = era_row_at(g_array_index(rows, size_t, i));
        if (!strcmp(r->name, a->name) &&
            at_default(a, runtime ? r->kind : added_kind(r->kind), r->value))
            return true;
    }
    return false;
}

bool pdt_era_extra_at_default(const char *type, const ir_attr *a)
{
    return rows_default(runtime_rows(all_runtime_index(), type), a, true) ||
           rows_default(g_hash_table_lookup(all_defaults_index(), type), a, false);
}

/* The runtime map a made op's OpDesc starts with (research-2x-3x.md 4s).
 * A grad op of a C++ grad maker (SingleGradOpMaker, op_desc.h/
 * grad_op_desc_maker.h 2.4 on) gets SetRuntimeAttrMap(RuntimeAttrs()):
 * the forward op's map, which holds every extra of the forward type
 * (OpDesc(proto) seeds it when the op is read from a file,
 * Operator.__init__ sets each get_op_extra_attrs name when Python builds
 * it).  So: a TYPE_grad op, and the makers pdtrans copies that emit their
 * forward type (ScaleGradMaker's scale, the one with bias_after_scale;
 * CastOpGradMaker's cast), take the forward type's rows.  The other
 * backward ops start empty: backward.py's _create_op_desc_ (the
 * accumulating sum, the loss grad's fill_constant) and SumGradDescMaker's
 * scales use OpDesc's default constructor, which seeds nothing, and
 * SplitGradMaker's concat takes split's map, which has no extras.
 * Forward-role ops Python builds get their type's extras from era.def's
 * check_attrs rows (ERA_NOT_BACKWARD), not here; NULL: nothing to seed. */
static const GArray *seed_rows(GHashTable *t, const ir_op *op)
{
    int role = ir_op_role(op);
    if (role < 0 || (role & ~IR_ROLE_LOSS) != IR_ROLE_BACKWARD)
        return NULL;
    size_t n = strlen(op->type);
    if (n > 5 && !strcmp(op->type + n - 5, "_grad"))
        return runtime_rows(t, op->type);
    if ((!strcmp(op->type, "scale") && ir_op_attr(op, "bias_after_scale")) ||
        !strcmp(op->type, "cast"))
        return g_hash_table_lookup(t, op->type);
    return NULL;
}

/* Sets R's attr at its default when OP lacks it (the row's kind is the
 * attr's type, as op_compat.yaml gives it). */
static void seed_one(ir_op *op, const era_row *r)
{
    if (ir_op_attr(op, r->name))
        return;
    float f = r->value ? strtof(r->value, NULL) : 0.0f;
    switch (r->kind) {
    case ERA_RUNTIME_BOOL:
        ir_op_set_bool(op, r->name, !strcmp(r->value, "true"));
        break;
    case ERA_RUNTIME_INT:
        ir_op_set_int(op, r->name, (int32_t)strtol(r->value, NULL, 10));
        break;
    case ERA_RUNTIME_FLOAT:
        ir_op_set_float(op, r->name, f);
        break;
    case ERA_RUNTIME_STRING:
        ir_op_set_string(op, r->name, r->value);
        break;
    case ERA_RUNTIME_INTS:
        ir_op_set_ints(op, r->name, NULL, 0);
        break;
    case ERA_RUNTIME_LONGS:
        ir_op_set_longs(op, r->name, NULL, 0);
        break;
    case ERA_RUNTIME_FLOATS: /* {} or one value ({1.0f}) */
        ir_op_set_floats(op, r->name, &f, r->value ? 1 : 0);
        break;
    default: /* ERA_RUNTIME_STRINGS: every such default is {} */
        ir_op_set_strings(op, r->name, NULL, 0);
        break;
    }
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
            /* and an input op a pass changed: OpDesc(proto) of v2.4.2
             * and v2.5.2 puts a file attr its type's extra map names in
             * runtime_attrs_, the others in attrs_, and Flush writes the
             * changed op as the made ones (research 4q) */
            if (!op->made && !ir_op_changed(op))
                continue;
            /* a changed input op is seeded with its type's extras:
             * OpDesc(proto, block) of v2.4.2 and v2.5.2 fills
             * runtime_attrs_ with the type's whole extra map before it
             * reads the file's attrs, and Flush writes both maps (research
             * 4t, 4z4); the verifiers take an extra at its default for an
             * absent one (pdt_era_extra_at_default) */
            const GArray *seed = op->made ? seed_rows(t, op) : runtime_rows(t, op->type);
            for (size_t i = 0; seed && i < seed->len; i++)
                seed_one(op, era_row_at(g_array_index(seed, size_t, i)));
            rt_rank_ctx c = {runtime_rows(t, op->type), rank};
            ir_op_settle_ranked(op, rt_rank, &c);
        }
    }
    g_hash_table_destroy(t);
}
