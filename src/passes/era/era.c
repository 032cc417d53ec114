/* era.c - the pipeline's last step: the ops pdtrans made (ir_op.made) are
 * rewritten as the target Paddle version writes them, row by row of
 * era.def.  The families write one era natively and never look at the
 * version; this step alone does, so that no family code changes with it
 * (issue 30 point 2).  The input's own ops are never touched. */
#include "era.h"

#include "../../ir/env.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pass.h"
#include "era_rows.h"

#define ERA_ANY_ROLE (-1)
/* Any role but backward: the ops Python builds through Operator.__init__,
 * whose check_attrs adds the proto's defaults; backward.py's
 * _create_op_desc_ ops and the C++ grad makers' ops skip it. */
#define ERA_NOT_BACKWARD (-2)
#define ERA_ROLE_BACKWARD IR_ROLE_BACKWARD
#define ERA_ROLE_OPTIMIZE IR_ROLE_OPTIMIZE

static const era_row rows[] = {
#define ERA(kind, op, role, name, value, from, until, source) \
    {kind, op, role, name, value, from, until},
#include "era.def"
#undef ERA
};
#define N_ROWS (sizeof rows / sizeof *rows)

/* What a row may read besides the op: the run's settings. */
typedef struct {
    GHashTable *order;  /* param_order of block 0 */
    bool async;         /* an asynchronous pserver transpile (--async, --half-async, --geo) */
    bool geo;           /* a GeoSgdTranspiler run (--geo) */
    GHashTable *dropped; /* ir_op * -> GString " a b ": the attrs its ERA_DROP_ATTR rows removed */
} era_run;

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
            if (ir_op_ins(op)[s].name == param && ir_op_ins(op)[s].n_args == 1 &&
                !g_hash_table_contains(h, ir_op_ins(op)[s].args[0]))
                g_hash_table_insert(h, (void *)ir_op_ins(op)[s].args[0],
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

static bool is_true(const char *v)
{
    return !strcmp(v, "true");
}

/* Python's str(float(v)) of the value the user passed, read back from
 * the FLOAT attr: the fewest digits that give the same float, then
 * repr's layout ("0.9", "300300.0", "5e-05", "1e+16"). */
static void python_float_str(float v, char *buf, size_t cap)
{
    char digits[32];
    int prec = 1;
    for (; prec < 9; prec++) {
        snprintf(digits, sizeof digits, "%.*e", prec - 1, (double)v);
        if (strtof(digits, NULL) == v)
            break;
    }
    snprintf(digits, sizeof digits, "%.*e", prec - 1, (double)v);
    char *e = strchr(digits, 'e');
    int exp = (int)strtol(e + 1, NULL, 10);
    if (exp < -4 || exp >= 16) {
        /* mantissa as printed, exponent with at least two digits */
        *e = '\0';
        snprintf(buf, cap, "%se%c%02d", digits, exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    int dec = prec - 1 - exp;
    snprintf(buf, cap, "%.*f", dec > 0 ? dec : 1, (double)v);
}

/* ConstantInitializer (initializer.py 2.2 on) passes str_value as
 * str(float(value)); its fill_constant ops are the ones with no input
 * slot and pdtrans writes them with the check_attrs default "". */
static void str_value(ir_op *op)
{
    const ir_attr *s = ir_op_attr(op, "str_value"), *v = ir_op_attr(op, "value");
    if (op->n_inputs || !s || s->type != IR_ATTR_STRING || s->s.len || !v ||
        v->type != IR_ATTR_FLOAT)
        return;
    char buf[48];
    python_float_str(v->f, buf, sizeof buf);
    ir_op_set_string(op, "str_value", buf);
}

/* The kinds that add: an attr of a type when absent, an empty input
 * slot when absent. */
static void add_row(ir_op *op, const era_row *r)
{
    if (r->kind == ERA_ADD_INPUT) {
        for (size_t s = 0; s < op->n_inputs; s++)
            if (!strcmp(ir_op_ins(op)[s].name, r->name))
                return;
        ir_op_set_input(op, r->name, NULL, 0);
        return;
    }
    if (ir_op_attr(op, r->name))
        return;
    if (r->kind == ERA_ADD_BOOL)
        ir_op_set_bool(op, r->name, is_true(r->value));
    else if (r->kind == ERA_ADD_INT || r->kind == ERA_ADD_GEO_INT)
        ir_op_set_int(op, r->name, (int32_t)strtol(r->value, NULL, 10));
    else if (r->kind == ERA_ADD_FLOAT)
        ir_op_set_float(op, r->name, strtof(r->value, NULL));
    else if (r->kind == ERA_ADD_EMPTY_STRINGS)
        ir_op_set_strings(op, r->name, NULL, 0);
    else if (r->kind == ERA_ADD_EMPTY_INTS)
        ir_op_set_ints(op, r->name, NULL, 0);
    else if (r->kind == ERA_ADD_EMPTY_LONGS)
        ir_op_set_longs(op, r->name, NULL, 0);
    else if (r->kind == ERA_ADD_STRINGS)
        ir_op_set_strings(op, r->name, &r->value, 1);
    else
        ir_op_set_string(op, r->name, r->value);
}

/* 1.4-1.6's listen_and_serv has BOOLEAN sync_mode (`value`) where 1.7
 * has INT distributed_mode: the transpiler passed its own sync_mode, true
 * exactly for DistributedMode.SYNC (0). */
static void dist_to_sync_mode(ir_op *op, const era_row *r)
{
    const ir_attr *a = ir_op_attr(op, r->name);
    if (!a || a->type != IR_ATTR_INT)
        return;
    bool sync = a->i == 0;
    ir_op_remove_attr(op, r->name);
    ir_op_set_bool(op, r->value, sync);
}

/* 1.4-1.5.1's transpiler passed "sync_mode": not self.sync_mode to the
 * sends and recvs it gave op_role_var (the grad and table sends, the
 * params' recvs); a Python bool stored as INT.  The others get the
 * proto default 0 from the next row. */
static void add_async_int(ir_op *op, const era_row *r, bool async)
{
    const ir_attr *rv = ir_op_attr(op, "op_role_var");
    if (ir_op_attr(op, r->name) || !rv || rv->type != IR_ATTR_STRINGS || !rv->n_strings)
        return;
    ir_op_set_int(op, r->name, async ? 1 : 0);
}

/* Which attrs a row dropped from which op: a caller's attrs dict that
 * Operator.__init__ filtered through the proto tells that caller's op
 * (hash_order.c's TYPE@+ATTR rows). */
static void free_gstring(void *s)
{
    g_string_free(s, TRUE);
}

static void dropped_note(GHashTable *dropped, const ir_op *op, const char *name)
{
    GString *s = g_hash_table_lookup(dropped, op);
    if (!s) {
        s = g_string_new(" ");
        g_hash_table_insert(dropped, (void *)op, s);
    }
    g_string_append_printf(s, "%s ", name);
}

static void apply_row(ir_op *op, const era_row *r, const era_run *run)
{
    ir_attr *a;
    switch (r->kind) {
    case ERA_DROP_ATTR:
        if (ir_op_attr(op, r->name)) {
            ir_op_remove_attr(op, r->name);
            dropped_note(run->dropped, op, r->name);
        }
        break;
    case ERA_ADD_BOOL:
    case ERA_ADD_INT:
    case ERA_ADD_FLOAT:
    case ERA_ADD_STRING:
    case ERA_ADD_EMPTY_STRINGS:
    case ERA_ADD_EMPTY_INTS:
    case ERA_ADD_EMPTY_LONGS:
    case ERA_ADD_STRINGS:
    case ERA_ADD_INPUT:
        add_row(op, r);
        break;
    case ERA_BOOL_TO_INT:
        if ((a = ir_op_attr(op, r->name)) && a->type == IR_ATTR_BOOLEAN) {
            bool v = a->b;
            ir_op_remove_attr(op, r->name);
            ir_op_set_int(op, r->name, v ? 1 : 0);
        }
        break;
    case ERA_SET_BOOL:
        if ((a = ir_op_attr(op, r->name)) && a->type == IR_ATTR_BOOLEAN && a->b != is_true(r->value))
            ir_op_set_bool(op, r->name, is_true(r->value));
        break;
    case ERA_DROP_INPUT:
        for (size_t s = 0; s < op->n_inputs; s++)
            if (!strcmp(ir_op_ins(op)[s].name, r->name)) {
                ir_op_remove_input(op, r->name);
                break;
            }
        break;
    case ERA_FLOAT_TO_FLOATS:
        /* a proto attr that became a list: Python passes [value] */
        if ((a = ir_op_attr(op, r->name)) && a->type == IR_ATTR_FLOAT) {
            float v = a->f;
            ir_op_remove_attr(op, r->name);
            ir_op_set_floats(op, r->name, &v, 1);
        }
        break;
    case ERA_SCOPE_PER_PARAM:
        scope_per_param(op, r, run->order);
        break;
    case ERA_STR_VALUE:
        str_value(op);
        break;
    case ERA_DIST_TO_SYNC_MODE:
        dist_to_sync_mode(op, r);
        break;
    case ERA_ADD_ASYNC_INT:
        add_async_int(op, r, run->async);
        break;
    case ERA_ADD_GEO_INT:
        if (run->geo)
            add_row(op, r);
        break;
    default: /* ERA_RUNTIME_*: era_order.c; ERA_UNREGISTERED: pdt_era_registered */
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
    if (r->role == ERA_NOT_BACKWARD)
        return !(role >= 0 && (role & ~IR_ROLE_LOSS) == IR_ROLE_BACKWARD);
    return role >= 0 && (role & ~IR_ROLE_LOSS) == r->role;
}

bool era_is_runtime_kind(era_kind k)
{
    return k >= ERA_RUNTIME_BOOL && k <= ERA_RUNTIME_STRINGS;
}

const era_row *era_row_at(size_t i)
{
    return &rows[i];
}

size_t era_n_rows(void)
{
    return N_ROWS;
}

static bool picked(const era_row *r, era_pick pick)
{
    if (pick == ERA_PICK_RUNTIME)
        return era_is_runtime_kind(r->kind);
    if (pick == ERA_PICK_UNREGISTERED)
        return r->kind == ERA_UNREGISTERED;
    return !era_is_runtime_kind(r->kind) && r->kind != ERA_UNREGISTERED;
}

/* One pass over the table: a program then costs a lookup per made op,
 * not a scan of the table (hundreds of rows). */
GHashTable *era_index_new(int era, era_pick pick)
{
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
    for (size_t i = 0; i < N_ROWS; i++) {
        const era_row *r = &rows[i];
        if (!picked(r, pick) ||
            (era != ERA_ALL_VERSIONS && (era < r->from || era >= r->until)))
            continue;
        GArray *a = g_hash_table_lookup(t, r->op);
        if (!a) {
            a = g_array_new(FALSE, FALSE, sizeof(size_t));
            g_hash_table_insert(t, (void *)r->op, a);
        }
        g_array_append_val(a, i);
    }
    return t;
}

/* The rows of the op's type and the "*" rows, merged: in table order. */
static void apply_rows(ir_op *op, const GArray *own, const GArray *any, int era, era_run *run)
{
    size_t i = 0, j = 0, n_own = own ? own->len : 0, n_any = any ? any->len : 0;
    while (i < n_own || j < n_any) {
        size_t a = i < n_own ? g_array_index(own, size_t, i) : N_ROWS;
        size_t b = j < n_any ? g_array_index(any, size_t, j) : N_ROWS;
        size_t r = a < b ? (i++, a) : (j++, b);
        if (row_matches(&rows[r], op, era))
            apply_row(op, &rows[r], run);
    }
}

/* True for an asynchronous parameter-server transpile: the settings the
 * 1.4-1.5 sync_mode rows read. */
static bool run_is_async(const pdt_ctx *ctx)
{
    if (!ctx || ctx->transpile.mode != PDT_MODE_PSERVER)
        return false;
    return ctx->transpile.sync_mode != PDT_SYNC || ctx->transpile.geo_push_nums > 0;
}

static bool run_is_geo(const pdt_ctx *ctx)
{
    return ctx && ctx->transpile.mode == PDT_MODE_PSERVER && ctx->transpile.geo_push_nums > 0;
}

void pdt_era_apply_program(const pdt_ctx *ctx, ir_program *p, int era)
{
    if (!p || !p->n_blocks || era == PDT_ERA_NATIVE)
        return;
    era_run run = {param_order(p->blocks[0]), run_is_async(ctx), run_is_geo(ctx),
                   g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_gstring)};
    GHashTable *by_type = era_index_new(era, ERA_PICK_CHANGES);
    const GArray *any = g_hash_table_lookup(by_type, "*");
    for (size_t bi = 0; bi < p->n_blocks; bi++) {
        ir_block *b = p->blocks[bi];
        for (size_t k = 0; k < b->n_ops; k++) {
            ir_op *op = b->ops[k];
            if (op->made)
                apply_rows(op, g_hash_table_lookup(by_type, op->type), any, era, &run);
        }
    }
    g_hash_table_destroy(by_type);
    g_hash_table_destroy(run.order);
    pdt_era_order_program(p, era);  /* 2.4 on */
    pdt_hash_export_loaded(ctx, p, era); /* an inference export's input ops, 2.3 and before */
    pdt_hash_order_dropped(p, era, run.dropped); /* 2.3 and before */
    pdt_hash_export_made(ctx, p, era);   /* its made ops, after their history */
    g_hash_table_destroy(run.dropped);
    pdt_hash_order_startup(ctx, p, era); /* minimize's initializers, 2.3 and before */
    pdt_hash_order_pstart(ctx, p, era);    /* a pserver's startup, 2.3 and before */
    pdt_hash_order_geo(ctx, p, era);       /* GeoSgdTranspiler's ops, 1.6-2.3 */
}

void pdt_era_apply(pdt_ctx *ctx, int era)
{
    if (era == PDT_ERA_NATIVE)
        return;
    pdt_era_apply_program(ctx, ctx->main, era);
    pdt_era_apply_program(ctx, ctx->startup, era);
    for (size_t i = 0; i < ctx->n_staged; i++)
        pdt_era_apply_program(ctx, ctx->staged[i].program, era);
}

static void destroy_index(void *t)
{
    g_hash_table_destroy(t);
}

/* The ERA_UNREGISTERED rows of every version, by op type: built once per
 * env (the transpiler asks per op type it makes), in a pdt_env slot. */
static GHashTable *unregistered_index(void)
{
    GHashTable *t = pdt_env_get(PDT_ENV_ERA_UNREGISTERED);
    if (!t)
        t = pdt_env_put(PDT_ENV_ERA_UNREGISTERED,
                        era_index_new(ERA_ALL_VERSIONS, ERA_PICK_UNREGISTERED), destroy_index);
    return t;
}

bool pdt_era_registered(const char *type, int era)
{
    if (era == PDT_ERA_NATIVE)
        return true;
    const GArray *a = g_hash_table_lookup(unregistered_index(), type);
    for (size_t i = 0; a && i < a->len; i++) {
        const era_row *r = &rows[g_array_index(a, size_t, i)];
        if (era >= r->from && era < r->until)
            return false;
    }
    return true;
}
