/* regen.c - strips Paddle's own backward ops from a real training program,
 * regenerates them with pdtrans's append_backward, and lists every
 * difference op by op (type, slots and arguments, attrs) and var by var
 * (type, dtype, shape, lod_level, persistable).  pdtrans writes the ops as
 * the Paddle version that wrote the file does (--paddle-version, auto by
 * default): nothing is excused but op_callstack (a Python traceback).  The
 * tool exits 1 when any var or block differs, or when fewer than
 * --min-identical percent (100 unless given) of the compared ops are
 * identical in type, slots and attrs.  With --optimizer=SPEC (and
 * --regularization, --learning-rate-var, --lr-schedule as minimize takes
 * them) it strips and regenerates the optimizer part instead: the ops with
 * an Optimize role, through lr_schedule, gradient_clip, regularization and
 * optimizer.  With --lr-schedule or --lr-warmup the learning-rate part
 * (op_role LRSched, in block 0 and in the conditional_block sub-blocks
 * its Switch cases fill) is stripped, rebuilt and compared as well: every
 * sub-block of the program must hold LRSched ops only; they are emptied
 * and the rebuilt ones, appended after them, are compared block by block
 * (a sub_block attr matches when it points at the rebuilt counterpart).
 *
 * With --min-ordered=PCT it also exits 1 when fewer than PCT percent of
 * the ops of the same type list the attrs both sides have in the same
 * order (Paddle <= 2.3 writes hash order: research 4o).
 *
 * usage: regen PROGRAM --min-ops=N [--min-identical=PCT] [--min-ordered=PCT] [--show]
 *              [--paddle-version=V] [MINIMIZE OPTIONS]
 *   exit 0 same, 1 differences, 2 failure
 *   The loss is the output of the op whose op_role is Forward|Loss; the
 *   parameters are the params of the backward ops' op_role_var pairs. */
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/pdio.h"
#include "ir/ir.h"
#include "diag.h"
#include "passes/pass.h"

/* Ops stripped and compared: Backward|Optimize for the backward part;
 * Optimize for the optimizer part (--optimizer=...). */
static int role_stripped = IR_ROLE_BACKWARD | IR_ROLE_OPTIMIZE;
static int role_compared = IR_ROLE_BACKWARD;
/* LR mode: block k of Paddle's file is block k + block_offset of the
 * rebuilt program (0 otherwise). */
static bool lr_mode;
static int32_t block_offset;

/* Whether an op of this role is stripped and compared. */
static bool compared(int role)
{
    if (role < 0)
        return false;
    return lr_mode ? (role & role_compared) != 0 : (role & role_stripped) == role_compared;
}

static int show;
/* Differences found: all of them, and those of vars and blocks (which
 * must be none; an op's are judged by the share of identical ops). */
static size_t n_diff, n_var_diff;
static const char *prog_name;

static void diff(const char *op, const char *kind, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#include <stdarg.h>
static void diff(const char *op, const char *kind, const char *what, const char *fmt, ...)
{
    n_diff++;
    if (!strcmp(op, "var") || !strcmp(op, "block"))
        n_var_diff++;
    if (show || n_diff <= 40) {
        va_list ap;
        va_start(ap, fmt);
        printf("%s: %s %s %s: ", prog_name, op, kind, what);
        vprintf(fmt, ap);
        putchar('\n');
        va_end(ap);
    }
}

static const ir_slot *find_slot(const ir_slot *s, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (s[i].name == name)
            return &s[i];
    return NULL;
}

static void slot_str(const ir_slot *s, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; s && i < s->n_args && o + 1 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? "," : "", s->args[i]);
}

static void compare_slots(const ir_op *w, const ir_op *g, int out)
{
    const ir_slot *ws = out ? ir_op_outs(w) : ir_op_ins(w), *gs = out ? ir_op_outs(g) : ir_op_ins(g);
    size_t nw = out ? w->n_outputs : w->n_inputs, ng = out ? g->n_outputs : g->n_inputs;
    const char *dir = out ? "output" : "input";
    char kind[32], a[2048], b[2048];
    for (size_t i = 0; i < nw; i++) {
        const ir_slot *m = find_slot(gs, ng, ws[i].name);
        slot_str(&ws[i], a, sizeof a);
        if (!m) {
            snprintf(kind, sizeof kind, "%s-absent", dir);
            diff(w->type, kind, ws[i].name, "Paddle has %s=[%s], pdtrans has no slot", ws[i].name,
                 a);
            continue;
        }
        slot_str(m, b, sizeof b);
        if (strcmp(a, b)) {
            snprintf(kind, sizeof kind, "%s-args", dir);
            diff(w->type, kind, ws[i].name, "Paddle [%s], pdtrans [%s]", a, b);
        }
    }
    for (size_t i = 0; i < ng; i++)
        if (!find_slot(ws, nw, gs[i].name)) {
            slot_str(&gs[i], b, sizeof b);
            snprintf(kind, sizeof kind, "%s-extra", dir);
            diff(w->type, kind, gs[i].name, "pdtrans has %s=[%s], Paddle has no slot", gs[i].name,
                 b);
        }
}

static int bytes_eq(const ir_bytes *a, const ir_bytes *b)
{
    return a->len == b->len && (a->len == 0 || !memcmp(a->data, b->data, a->len));
}

/* Value equality of two attrs of the same name; type compared apart. */
static int attr_eq(const ir_attr *a, const ir_attr *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case IR_ATTR_INT: return a->i == b->i;
    case IR_ATTR_FLOAT: return a->f == b->f;
    case IR_ATTR_STRING: return bytes_eq(&a->s, &b->s);
    case IR_ATTR_BOOLEAN: return a->b == b->b;
    case IR_ATTR_BLOCK: return a->block_idx + block_offset == b->block_idx;
    case IR_ATTR_LONG: return a->l == b->l;
    case IR_ATTR_FLOAT64: return a->float64 == b->float64;
    default: break;
    }
#define LIST(n, p) if (a->n != b->n) return 0; \
    for (size_t i = 0; i < a->n; i++) if (a->p[i] != b->p[i]) return 0; \
    return 1;
    switch (a->type) {
    case IR_ATTR_INTS: LIST(n_ints, ints)
    case IR_ATTR_FLOATS: LIST(n_floats, floats)
    case IR_ATTR_BOOLEANS: LIST(n_bools, bools)
    case IR_ATTR_BLOCKS: LIST(n_blocks_idx, blocks_idx)
    case IR_ATTR_LONGS: LIST(n_longs, longs)
    case IR_ATTR_FLOAT64S: LIST(n_float64s, float64s)
    case IR_ATTR_VARS: LIST(n_vars_name, vars_name)
    case IR_ATTR_STRINGS:
        if (a->n_strings != b->n_strings)
            return 0;
        for (size_t i = 0; i < a->n_strings; i++)
            if (!bytes_eq(&a->strings[i], &b->strings[i]))
                return 0;
        return 1;
    default: return 1;
    }
#undef LIST
}

static void compare_attrs(const ir_op *w, const ir_op *g)
{
    const char *cs = ir_intern("op_callstack");
    const ir_attr *w_attrs = ir_op_attrs(w), *g_attrs = ir_op_attrs(g);
    for (size_t i = 0; i < w->n_attrs; i++) {
        const ir_attr *a = &w_attrs[i];
        if (a->name == cs)
            continue;
        const ir_attr *m = ir_op_attr(g, a->name);
        if (!m)
            diff(w->type, "attr-absent", a->name, "Paddle has attr %s (type %d)", a->name, a->type);
        else if (m->type != a->type)
            diff(w->type, "attr-type", a->name, "Paddle type %d, pdtrans type %d", a->type,
                 m->type);
        else if (!attr_eq(a, m)) {
            char wa[1024] = "", ga[1024] = "";
            if (a->type == IR_ATTR_STRING) {
                snprintf(wa, sizeof wa, "%.*s", (int)a->s.len, (const char *)a->s.data);
                snprintf(ga, sizeof ga, "%.*s", (int)m->s.len, (const char *)m->s.data);
            }
            for (size_t i2 = 0, o = 0; a->type == IR_ATTR_STRINGS && i2 < a->n_strings &&
                                       o < sizeof wa; i2++)
                o += (size_t)snprintf(wa + o, sizeof wa - o, "%.*s ", (int)a->strings[i2].len,
                                      (const char *)a->strings[i2].data);
            for (size_t i2 = 0, o = 0; m->type == IR_ATTR_STRINGS && i2 < m->n_strings &&
                                       o < sizeof ga; i2++)
                o += (size_t)snprintf(ga + o, sizeof ga - o, "%.*s ", (int)m->strings[i2].len,
                                      (const char *)m->strings[i2].data);
            diff(w->type, "attr-value", a->name, "values differ: Paddle [%s] pdtrans [%s]", wa, ga);
        }
    }
    for (size_t i = 0; i < g->n_attrs; i++)
        if (g_attrs[i].name != cs && !ir_op_attr(w, g_attrs[i].name))
            diff(w->type, "attr-extra", g_attrs[i].name, "pdtrans has attr %s", g_attrs[i].name);
}

/* Whether compare_var looks at the presence of lod_level: not for a var
 * that Paddle's optimize ops rewrote after the backward, in backward mode
 * (their InferShape set the field; the optimizer mode compares those). */
static int check_lod_presence = 1;

/* Var descs compared, and how many of them are identical in every field
 * compare_var looks at (reported as the var-desc score). */
static size_t n_vars_compared, n_vars_same;

static void compare_var(const ir_var *w, const ir_var *g)
{
    size_t before = n_diff;
    n_vars_compared++;
    if (!g) {
        diff("var", "absent", w->name, "Paddle declares it, pdtrans does not");
        return;
    }
    /* persistable as the desc holds it: Python writes the field only when
     * the var's creator passed it (an absent field reads false). */
    if (g->has_persistable != w->has_persistable)
        diff("var", "persistable-presence", w->name, "Paddle %s, pdtrans %s",
             w->has_persistable ? "writes persistable" : "writes none",
             g->has_persistable ? "writes persistable" : "writes none");
    else if (g->persistable != w->persistable)
        diff("var", "persistable", w->name, "Paddle %d, pdtrans %d", (int)w->persistable,
             (int)g->persistable);
    if (g->type != w->type)
        diff("var", "type", w->name, "Paddle %d, pdtrans %d", w->type, g->type);
    if (g->dtype != w->dtype && w->tensor_slot != IR_TD_NONE)
        diff("var", "dtype", w->name, "Paddle %d, pdtrans %d", w->dtype, g->dtype);
    int same_dims = g->n_dims == w->n_dims;
    for (size_t d = 0; same_dims && d < w->n_dims; d++)
        same_dims = g->dims[d] == w->dims[d];
    if (!same_dims)
        diff("var", "shape", w->name, "shapes differ");
    if (check_lod_presence && g->has_lod_level != w->has_lod_level)
        diff("var", "lod_level-presence", w->name, "Paddle %s, pdtrans %s",
             w->has_lod_level ? "writes lod_level" : "writes none",
             g->has_lod_level ? "writes lod_level" : "writes none");
    else if (g->lod_level != w->lod_level)
        diff("var", "lod_level", w->name, "Paddle %d, pdtrans %d", (int)w->lod_level,
             (int)g->lod_level);
    if (n_diff == before)
        n_vars_same++;
}

/* Ops identical to Paddle's in slots and attrs (op_callstack aside). */
static size_t n_identical;
/* Ops of the same type whose attrs both sides have are written in the
 * same order (Paddle <= 2.3's hash order, research 4o). */
static size_t n_ordered;

static bool same_attr_order(const ir_op *w, const ir_op *g)
{
    const ir_attr *wa = ir_op_attrs(w), *ga = ir_op_attrs(g);
    size_t i = 0, j = 0;
    for (;;) {
        while (i < w->n_attrs && !ir_op_attr(g, wa[i].name))
            i++;
        while (j < g->n_attrs && !ir_op_attr(w, ga[j].name))
            j++;
        if (i == w->n_attrs || j == g->n_attrs)
            return i == w->n_attrs && j == g->n_attrs;
        if (wa[i++].name != ga[j++].name)
            return false;
    }
}

/* Paddle's compared ops of block ob, in order, against pdtrans's of gb
 * (every op of both when `all`: a sub-block). */
static void compare_ops(const ir_block *ob, const ir_block *gb, bool all, size_t *n_ops,
                        size_t *n_same_type)
{
    size_t gk = 0;
    for (size_t k = 0; k < ob->n_ops; k++) {
        const ir_op *w = ob->ops[k];
        if (!all && !compared(ir_op_role(w)))
            continue;
        (*n_ops)++;
        while (!all && gk < gb->n_ops && !compared(ir_op_role(gb->ops[gk])))
            gk++;
        if (gk >= gb->n_ops) {
            diff(w->type, "op-absent", "-", "op %d:%zu: pdtrans ended before it", ob->idx, k);
            continue;
        }
        const ir_op *g = gb->ops[gk++];
        if (g->type != w->type) {
            diff(w->type, "op-type", g->type, "op %d:%zu: Paddle %s, pdtrans %s", ob->idx, k,
                 w->type, g->type);
            continue;
        }
        (*n_same_type)++;
        size_t before = n_diff;
        compare_slots(w, g, 0);
        compare_slots(w, g, 1);
        compare_attrs(w, g);
        n_identical += n_diff == before;
        if (same_attr_order(w, g))
            n_ordered++;
        else if (show)
            printf("  order %s: op %d:%zu: attrs not in Paddle's order\n", w->type, ob->idx, k);
    }
    for (; gk < gb->n_ops; gk++)
        if (all || compared(ir_op_role(gb->ops[gk])))
            diff(gb->ops[gk]->type, "op-extra", "-", "pdtrans op %d:%zu not in Paddle", gb->idx,
                 gk);
}

static const char *rv_name(const ir_attr *rv, size_t i)
{
    return ir_intern_n((const char *)rv->strings[i].data, rv->strings[i].len);
}

/* The parameter list in the order Paddle processed it.  append_backward
 * prepends [p, g] to the op_role_var of the grad's last writer, so an op
 * holding several pairs lists them last-processed first: each op's pairs,
 * reversed.  (The optimize ops cannot tell: fluid 1.x apply_gradients
 * sorts the pairs by name.)  Order across ops does not change the output. */
static char *params_of(const ir_block *b)
{
    GString *s = g_string_new("");
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (int pass = 1; pass < 2; pass++)
        for (size_t k = 0; k < b->n_ops; k++) {
            const ir_attr *rv = ir_op_attr(b->ops[k], "op_role_var");
            int role = ir_op_role(b->ops[k]);
            if (!rv || role < 0 || !(role & (pass ? IR_ROLE_BACKWARD : IR_ROLE_OPTIMIZE)))
                continue;
            size_t n = rv->n_strings / 2;
            for (size_t j = 0; j < n; j++) {
                const char *p = rv_name(rv, 2 * (pass ? n - 1 - j : j));
                if (g_hash_table_add(seen, (void *)p))
                    g_string_append_printf(s, "%s%s", s->len ? "," : "", p);
            }
        }
    g_hash_table_destroy(seen);
    return g_string_free(s, FALSE);
}

/* Every var name Paddle's backward ops name. */
static GHashTable *grad_names_of(const ir_block *b)
{
    GHashTable *h = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t k = 0; k < b->n_ops; k++) {
        const ir_op *op = b->ops[k];
        int role = ir_op_role(op);
        if (role < 0 || !(role & IR_ROLE_BACKWARD))
            continue;
        for (size_t s = 0; s < op->n_outputs; s++)
            for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
                g_hash_table_add(h, (void *)ir_op_outs(op)[s].args[a]);
        for (size_t s = 0; s < op->n_inputs; s++)
            for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++)
                g_hash_table_add(h, (void *)ir_op_ins(op)[s].args[a]);
    }
    return h;
}

/* Removes ops with a Backward or Optimize role from block 0, then every var
 * of block 0 that no remaining op of any block names.  Returns the loss. */
static const char *strip(ir_program *p)
{
    ir_block *b = p->blocks[0];
    const char *loss = NULL;
    GHashTable *paddle_grads = grad_names_of(b);
    ir_op **keep = g_new(ir_op *, b->n_ops + 1);
    size_t n = 0;
    for (size_t k = 0; k < b->n_ops; k++) {
        int role = ir_op_role(b->ops[k]);
        if (role >= 0 && (role & role_stripped))
            continue;
        if (role == (IR_ROLE_FORWARD | IR_ROLE_LOSS) && b->ops[k]->n_outputs)
            loss = ir_op_outs(b->ops[k])[0].args[0];
        keep[n++] = b->ops[k];
    }
    ir_block_set_ops(b, keep, n);
    g_free(keep);
    for (size_t bi = 1; lr_mode && bi < p->n_blocks; bi++) {
        ir_block *sub = p->blocks[bi];
        for (size_t k = 0; k < sub->n_ops; k++)
            if (!compared(ir_op_role(sub->ops[k]))) {
                fprintf(stderr, "regen: block %zu op %zu '%s' is not a learning-rate op; "
                        "LR mode rebuilds every sub-block\n", bi, k, sub->ops[k]->type);
                exit(2);
            }
        ir_block_set_ops(sub, NULL, 0);
        for (size_t i = 0; i < sub->n_vars; i++)
            if (!sub->vars[i]->removed)
                ir_block_remove_var(sub, sub->vars[i]->name);
    }
    /* These files predate VarDesc.stop_gradient: the flag that data layers
     * and the user's detaches (DB loss's OHEM counts) set lived in Python
     * only.  It comes back from the one trace it left: a non-persistable
     * var whose grad Paddle's backward never names.  (Marking a var that
     * was merely off the gradient path changes nothing: Paddle names no
     * grad for it either way.)  The makers, renames, sums, pruning of
     * unused outputs and op order are still pdtrans's own. */
    for (size_t i = 0; i < b->n_vars; i++) {
        ir_var *v = b->vars[i];
        if (!v->removed && !v->persistable &&
            !g_hash_table_contains(paddle_grads, ir_internf("%s@GRAD", v->name)))
            v->stop_gradient = true;
    }
    g_hash_table_destroy(paddle_grads);
    GHashTable *used = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            const ir_op *op = p->blocks[bi]->ops[k];
            for (size_t s = 0; s < op->n_inputs; s++)
                for (size_t a = 0; a < ir_op_ins(op)[s].n_args; a++)
                    g_hash_table_add(used, (void *)ir_op_ins(op)[s].args[a]);
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++)
                    g_hash_table_add(used, (void *)ir_op_outs(op)[s].args[a]);
        }
    GPtrArray *dead = g_ptr_array_new();
    for (size_t i = 0; i < b->n_vars; i++)
        if (!b->vars[i]->removed && !g_hash_table_contains(used, b->vars[i]->name))
            g_ptr_array_add(dead, (void *)b->vars[i]->name);
    for (guint i = 0; i < dead->len; i++)
        ir_block_remove_var(b, dead->pdata[i]);
    g_ptr_array_free(dead, TRUE);
    g_hash_table_destroy(used);
    return loss;
}

int main(int argc, char **argv)
{
    long min_ops = -1;  /* the fewest ops to compare (tests/regen/min-ops.txt) */
    double min_identical = 100;     /* the least share of identical ops, in % */
    double min_ordered = 0;         /* the least share of ops in Paddle's attr order */
    if (argc < 2) {
        fprintf(stderr, "usage: regen PROGRAM --min-ops=N [--min-identical=PCT] [--show] "
                        "[--paddle-version=V] [minimize options]\n");
        return 2;
    }
    pdt_ctx ctx;
    pdt_ctx_init(&ctx);
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--show"))
            show = 1;
        else if (!strncmp(argv[i], "--min-identical=", 16))
            min_identical = strtod(argv[i] + 16, NULL);
        else if (!strncmp(argv[i], "--min-ordered=", 14))
            min_ordered = strtod(argv[i] + 14, NULL);
        else if (!strncmp(argv[i], "--paddle-version=", 17))
            ctx.settings.paddle_version = argv[i] + 17;
        else if (!strncmp(argv[i], "--min-ops=", 10))
            min_ops = strtol(argv[i] + 10, NULL, 10);
        else if (!strncmp(argv[i], "--optimizer=", 12))
            ctx.optim.optimizer = argv[i] + 12;
        else if (!strncmp(argv[i], "--regularization=", 17) && strchr(argv[i], '@'))
            pdt_list_append(&ctx.optim.param_regularizations, argv[i] + 17);
        else if (!strncmp(argv[i], "--regularization=", 17))
            ctx.optim.regularization = argv[i] + 17;
        else if (!strncmp(argv[i], "--learning-rate-var=", 20))
            ctx.optim.learning_rate_var = argv[i] + 20;
        else if (!strncmp(argv[i], "--lr-schedule=", 14))
            ctx.optim.lr_schedule = argv[i] + 14;
        else if (!strncmp(argv[i], "--lr-warmup=", 12))
            ctx.optim.lr_warmup = argv[i] + 12;
    }
    if (min_ops < 1) {
        fprintf(stderr, "regen: --min-ops=N (N >= 1) is required: a run that compares no op "
                        "must not pass\n");
        return 2;
    }
    if (ctx.optim.optimizer) {
        role_stripped = IR_ROLE_OPTIMIZE;
        role_compared = IR_ROLE_OPTIMIZE;
    }
    if (ctx.optim.lr_schedule || ctx.optim.lr_warmup) {
        lr_mode = true;
        role_stripped = role_compared = IR_ROLE_OPTIMIZE | IR_ROLE_LRSCHED;
    }
    const char *slash = strrchr(argv[1], '/');
    prog_name = slash ? slash + 1 : argv[1];
    ir_program *orig = pdio_read(argv[1]), *p = pdio_read(argv[1]);
    if (!orig || !p)
        return 2;
    if (lr_mode)
        block_offset = (int32_t)orig->n_blocks - 1;
    char *params = params_of(orig->blocks[0]);
    const char *loss = strip(p);
    /* Vars the stripped input has (a copy: the passes add to p). */
    ir_program *stripped = ir_program_clone(p);
    const ir_block *p0b = stripped->blocks[0];
    if (!loss) {
        fprintf(stderr, "regen: %s: no op has op_role Forward|Loss\n", prog_name);
        return 2;
    }
    ctx.main = p;
    ctx.main_path = prog_name;
    ctx.startup = ir_program_new();
    ir_program_add_block(ctx.startup, -1);
    ctx.backward.loss = loss;
    const char *bw[] = {"append_backward"};
    const char *opt[] = {"lr_schedule", "gradient_clip", "regularization", "optimizer"};
    if (!ctx.optim.optimizer)
        ctx.backward.params = pdt_list_split(params);
    if ((ctx.optim.optimizer ? pdt_run_pipeline(&ctx, opt, 4) : pdt_run_pipeline(&ctx, bw, 1)) !=
        PDT_OK)
        return 2;
    /* Ops: Paddle's backward ops in order against pdtrans's; in LR mode
     * also each sub-block against its rebuilt counterpart. */
    const ir_block *ob = orig->blocks[0], *gb = ctx.main->blocks[0];
    size_t n_ops = 0, n_same_type = 0;
    compare_ops(ob, gb, false, &n_ops, &n_same_type);
    for (size_t bi = 1; lr_mode && bi < orig->n_blocks; bi++) {
        const ir_block *gsub = ir_program_block(ctx.main, (int32_t)bi + block_offset);
        if (!gsub) {
            diff("block", "absent", "-", "block %zu: pdtrans rebuilt no counterpart", bi);
            continue;
        }
        compare_ops(orig->blocks[bi], gsub, true, &n_ops, &n_same_type);
        for (size_t i = 0; i < orig->blocks[bi]->n_vars; i++)
            if (!orig->blocks[bi]->vars[i]->removed)
                compare_var(orig->blocks[bi]->vars[i],
                            ir_block_find_var(gsub, orig->blocks[bi]->vars[i]->name));
    }
    for (size_t bi = orig->n_blocks + (size_t)block_offset; bi < ctx.main->n_blocks; bi++)
        diff("block", "extra", "-", "pdtrans block %zu not in Paddle", bi);
    GHashTable *opt_names = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *opt_written = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t k = 0; k < ob->n_ops; k++) {
        const ir_op *op = ob->ops[k];
        if (ir_op_role(op) < 0 || !(ir_op_role(op) & (lr_mode ? role_compared : IR_ROLE_OPTIMIZE)))
            continue;
        for (int io = 0; io < 2; io++)
            for (size_t s2 = 0; s2 < (io ? op->n_outputs : op->n_inputs); s2++) {
                const ir_slot *sl = io ? &ir_op_outs(op)[s2] : &ir_op_ins(op)[s2];
                for (size_t a = 0; a < sl->n_args; a++) {
                    g_hash_table_add(opt_names, (void *)sl->args[a]);
                    if (io)
                        g_hash_table_add(opt_written, (void *)sl->args[a]);
                }
            }
    }
    /* Vars the backward created in Paddle's file. */
    size_t n_vars = 0;
    for (size_t i = 0; i < ob->n_vars; i++) {
        const ir_var *w = ob->vars[i];
        /* The new vars: grads, or what the optimizer part adds (vars
         * the stripped input lacks that Paddle's optimize ops name). */
        bool opt_wrote = g_hash_table_contains(opt_written, w->name);
        if (w->removed || (ctx.optim.optimizer ? (ir_block_find_var(p0b, w->name) != NULL ||
                                            !g_hash_table_contains(opt_names, w->name)) &&
                                               !opt_wrote
                                         : !strstr(w->name, "@GRAD")))
            continue;
        n_vars++;
        check_lod_presence = ctx.optim.optimizer || !opt_wrote;
        compare_var(w, ir_block_find_var(gb, w->name));
    }
    double pct = n_ops ? 100.0 * (double)n_identical / (double)n_ops : 0;
    printf("%s: %zu %s ops (%zu of the same type in order, %zu identical: %.2f%%, at least "
           "%g%% wanted), %zu new vars; %zu differences (%zu of vars or blocks)\n",
           prog_name, n_ops,
           lr_mode ? "optimizer and LR" : ctx.optim.optimizer ? "optimizer" : "backward",
           n_same_type, n_identical, pct, min_identical, n_vars, n_diff, n_var_diff);
    double opct = n_same_type ? 100.0 * (double)n_ordered / (double)n_same_type : 100.0;
    printf("%s: %zu of %zu ops with Paddle's attr order (%.2f%%, at least %g%% wanted)\n",
           prog_name, n_ordered, n_same_type, opct, min_ordered);
    bool too_different = n_var_diff || pct < min_identical || opct < min_ordered;
    printf("%s: var descs identical (type, dtype, shape, lod_level, persistable): %zu of %zu "
           "(%.1f%%)\n", prog_name, n_vars_same, n_vars_compared,
           n_vars_compared ? 100.0 * (double)n_vars_same / (double)n_vars_compared : 100.0);
    bool too_few = n_same_type < (size_t)min_ops;
    if (too_few)
        printf("%s: only %zu ops compared, at least %ld expected (tests/regen/min-ops.txt)\n",
               prog_name, n_same_type, min_ops);
    g_free(params);
    pdt_ctx_free(&ctx);
    ir_program_free(orig);
    ir_program_free(stripped);
    g_hash_table_destroy(opt_names);
    g_hash_table_destroy(opt_written);
    return too_different || too_few ? 1 : 0;
}
