/* hash_order_pstart.c - the attr order up to 2.3 of a pserver's startup
 * program ops (distribute_transpiler.py get_startup_program, research
 * 4z2, 4z6): DistributeTranspiler's and GeoSgdTranspiler's (which
 * inherits get_startup_program) alike.
 *
 * get_startup_program copies each op of the origin startup that writes a
 * var the pserver holds by append_op(type=op.type, ..., attrs=
 * op.all_attrs()) after op._set_attr("shape", slice shape) on the
 * initializers (v1.4.1-v2.3.2: the same loop), and with DC-ASGD appends an
 * assign of each param to its backups without attrs.  Operator.__init__
 * (framework.py, the same loop in every tag) takes the dict: the source's
 * attrs, op_role kept, op_role_var deleted when empty, op_callstack and
 * op_namescope its own, op_device the source's when it had one (no
 * device_guard there); it sets the dict's names in the proto's AddAttr
 * order (the maker's attrs, then op_role op_role_var op_namescope
 * op_callstack, op_device from 1.8, with_quant_attr from 2.2), then
 * check_attrs inserts the defaults of the proto's others in that order.
 * So an attr the source lacked (an input written by an older Paddle:
 * era.def's rows add its default) goes in the second pass.  Which attrs
 * the source had is read off the source itself, found in the origin
 * startup through an index built once per program (by type, output slot
 * and first arg: the copy's, or the param a NAME.block<i> slice was cut
 * from).  py_order.def's PYOP_DIST rows TYPE@pstart give each type's
 * proto. */
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

/* A staged pserver_N.startup of the run (build_pserver_startup's stem). */
static bool is_pserver_startup(const pdt_ctx *ctx, const ir_program *p)
{
    for (size_t i = 0; ctx && i < ctx->n_staged; i++)
        if (ctx->staged[i].program == p)
            return g_str_has_prefix(ctx->staged[i].stem, "pserver_") &&
                   g_str_has_suffix(ctx->staged[i].stem, ".startup");
    return false;
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

static char *source_key(const char *type, const char *slot, const char *arg, int len)
{
    return g_strdup_printf("%s\x01%s\x01%.*s", type, slot, len, arg);
}

/* SRC's block 0 ops by type, output slot and its first arg (the first
 * such op), built once per program: a lookup per copy, not a scan. */
static GHashTable *sources_of(const ir_program *src)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    const ir_block *b = src && src->n_blocks ? src->blocks[0] : NULL;
    for (size_t k = 0; b && k < b->n_ops; k++)
        for (size_t s = 0; s < b->ops[k]->n_outputs; s++) {
            const ir_slot *so = &ir_op_outs(b->ops[k])[s];
            if (!so->n_args)
                continue;
            char *key = source_key(b->ops[k]->type, so->name, so->args[0], -1);
            if (g_hash_table_contains(h, key))
                g_free(key);
            else
                g_hash_table_insert(h, key, b->ops[k]);
        }
    return h;
}

/* The origin startup's op (SOURCES) the copy OP was made from: its type,
 * and an output slot's first arg the copy's, or the param a slice
 * NAME.block<i> of it was cut from (same_or_split_var). */
static const ir_op *source_of(const ir_op *op, GHashTable *sources)
{
    const ir_op *from = NULL;
    for (size_t s = 0; !from && s < op->n_outputs; s++) {
        const ir_slot *so = &ir_op_outs(op)[s];
        if (!so->n_args)
            continue;
        const char *name = so->args[0], *cut = g_strrstr(name, ".block");
        char *key = source_key(op->type, so->name, name, -1);
        from = g_hash_table_lookup(sources, key);
        g_free(key);
        if (!from && cut) {
            key = source_key(op->type, so->name, name, (int)(cut - name));
            from = g_hash_table_lookup(sources, key);
            g_free(key);
        }
    }
    return from;
}

bool ht_copy_given(const ir_op *op, const char *name, bool had)
{
    if (!strcmp(name, "op_role") || !strcmp(name, "op_namescope") ||
        !strcmp(name, "op_callstack"))
        return true;
    if (!strcmp(name, "op_role_var")) {
        const ir_attr *a = ir_op_attr(op, name);
        return a && a->type == IR_ATTR_STRINGS && a->n_strings > 0;
    }
    return had;
}

/* Whether Operator.__init__'s dict holds NAME for the copy OP of SRC
 * (NULL: DC-ASGD's assign, no attrs given): ht_copy_given, where the
 * source had NAME when SRC has it (a source pdtrans made in this run had
 * every attr of the proto, as Python built it: what the copy has). */
static bool in_dict(const ir_op *op, const ir_op *src, const char *name)
{
    return ht_copy_given(op, name, src && ir_op_attr(src->made ? op : src, name));
}

static void insert_part(ht *t, const ir_op *op, const ir_op *src, const char *proto, bool in)
{
    gchar **list = g_strsplit(proto, " ", -1);
    for (gchar **n = list; *n; n++)
        if (**n && in_dict(op, src, *n) == in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(list);
}

/* OP's history as a copy of SRC: false without a row, or when OP has an
 * attr the history lacks. */
static bool copy_history(ht *t, const ir_op *op, const ir_op *src, int era)
{
    const pstart_row *r = row_of(op, era);
    if (!r || op->n_attrs + 8 >= HT_MAX)
        return false;
    char *proto = g_strconcat(r->proto, " ", ht_framework_attrs(era), NULL);
    ht_init(t);
    insert_part(t, op, src, proto, true);
    insert_part(t, op, src, proto, false);
    g_free(proto);
    for (size_t i = 0; i < op->n_attrs; i++)
        if (ht_rank(&ir_op_attrs(op)[i], t) == (int)t->n)
            return false;
    return true;
}

/* all_attrs() gives a copy its source's str_value (ConstantInitializer's
 * str(float(value)) from 2.1, or "" from an older one); a source without
 * one leaves check_attrs's default "" (era.def's ERA_STR_VALUE row, which
 * models ConstantInitializer, ran on the copy too).  A source pdtrans made
 * in this run takes that row itself: the copy keeps its value. */
static void copy_str_value(ir_op *op, const ir_op *src)
{
    const ir_attr *mine = ir_op_attr(op, "str_value");
    if (src->made || strcmp(op->type, "fill_constant") || !mine || mine->type != IR_ATTR_STRING)
        return;
    const ir_attr *theirs = ir_op_attr(src, "str_value");
    if (!theirs)
        ir_op_set_string(op, "str_value", "");
    else if (theirs->type == IR_ATTR_STRING) {
        gchar *v = g_strndup((const char *)theirs->s.data, theirs->s.len);
        ir_op_set_string(op, "str_value", v);
        g_free(v);
    }
}

void pdt_hash_order_copies(ir_program *p, const ir_program *origin, int era)
{
    if (!p || !p->n_blocks || era < 104 || era > 203)
        return;
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    GHashTable *sources = sources_of(origin);
    ir_block *b = p->blocks[0];
    for (size_t k = 0; k < b->n_ops; k++) {
        ir_op *op = b->ops[k];
        if (!op->made)
            continue;
        bool dc = is_dc_assign(op);
        const ir_op *src = dc ? NULL : source_of(op, sources);
        if (!dc && !src)
            continue;
        if (src)
            copy_str_value(op, src);
        if (copy_history(&t, op, src, era))
            ir_op_settle_ranked(op, ht_rank, &t);
    }
    g_hash_table_destroy(sources);
}

void pdt_hash_order_pstart(const pdt_ctx *ctx, ir_program *p, int era)
{
    if (is_pserver_startup(ctx, p))
        pdt_hash_order_copies(p, ctx->startup, era);
}
