/* hash_order.c - the attr order of the ops pdtrans made, as Paddle
 * <= 2.3 writes it (research-2x-3x.md 4o).  OpDesc::Flush of v1.5.2-v2.3.x
 * writes `for (auto &attr : attrs_)` over a std::unordered_map, so the
 * order is libstdc++'s list order for the map's insertion history.
 * hash_table.c emulates that table (gcc 4.8's libstdc++, which the real
 * 1.5-1.8 training programs match); this file gives the insertion
 * histories whose order the real programs confirm:
 *   - a grad op whose C++ maker copies the forward op's map
 *     (SetAttrMap(Attrs())): a copy keeps the source's order and bucket
 *     count, so the grad op lists the forward op's attrs in its order; the
 *     attrs the forward op lacks are inserted after, in name order;
 *   - a grad op whose maker sets no attr (mean_grad): backward.py inserts
 *     op_device, then op_role, into an empty map;
 *   - backward.py's _create_op_desc_ sum and loss fill_constant: its attrs
 *     dict's insertion order;
 *   - for 1.4-1.8 and 2.0-2.3, the ops minimize appends that Python's
 *     Operator.__init__ fills (py_order.def's rows): the optimizer's,
 *     regularization's and gradient clip's (Optimize role) and the
 *     learning-rate schedule's (LRSched role).
 * Any other made op keeps the name order pdtrans writes.  A grad op takes
 * the order its forward op has in the input: Paddle built both in one
 * process in the real programs (a forward op Paddle had read from a file
 * would have been re-inserted in file order, another order). */
#include "era.h"
#include "hash_table.h"

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The forward ops by (type, output var): a grad op names its forward op's
 * outputs (or their @GRAD) among its inputs. */
static char *fwd_key(const char *type, const char *arg, size_t arg_len)
{
    return g_strdup_printf("%s\x01%.*s", type, (int)arg_len, arg);
}

static GHashTable *forward_ops(const ir_program *p)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            int role = ir_op_role(op);
            if (op->made || (role >= 0 && (role & (IR_ROLE_BACKWARD | IR_ROLE_OPTIMIZE))))
                continue;
            for (size_t s = 0; s < op->n_outputs; s++)
                for (size_t a = 0; a < ir_op_outs(op)[s].n_args; a++) {
                    const char *arg = ir_op_outs(op)[s].args[a];
                    char *key = fwd_key(op->type, arg, strlen(arg));
                    if (g_hash_table_contains(h, key))
                        g_free(key);
                    else
                        g_hash_table_insert(h, key, op);
                }
        }
    return h;
}

static const ir_op *forward_of(GHashTable *fwd, const ir_op *g)
{
    /* X_grad of X, and X_grad2 of X2 (cross_entropy_grad2). */
    const char *gr = strstr(g->type, "_grad");
    if (!gr || gr == g->type)
        return NULL;
    char *ft = g_strdup_printf("%.*s%s", (int)(gr - g->type), g->type, gr + 5);
    const ir_op *f = NULL;
    for (size_t s = 0; !f && s < g->n_inputs; s++)
        for (size_t a = 0; !f && a < ir_op_ins(g)[s].n_args; a++) {
            const char *arg = ir_op_ins(g)[s].args[a], *at = strstr(arg, "@GRAD");
            char *key = fwd_key(ft, arg, at ? (size_t)(at - arg) : strlen(arg));
            f = g_hash_table_lookup(fwd, key);
            g_free(key);
        }
    g_free(ft);
    return f;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The attrs of G that F lacks, inserted after the copy in name order (the
 * makers' own SetAttr calls and backward.py's _set_attr; their order is
 * not modelled, one at most in the real programs). */
static bool copied_from(ht *t, const ir_op *g, const ir_op *f)
{
    /* first: the name lookups below are quadratic in the attrs */
    if (f->n_attrs + 1 >= HT_MAX || g->n_attrs + 1 >= HT_MAX)
        return false;
    const ir_attr *fa = ir_op_attrs(f), *ga = ir_op_attrs(g);
    for (size_t i = 0; i < f->n_attrs; i++)
        if (!ir_op_attr(g, fa[i].name))
            return false;
    if (!ht_copy_of(t, fa, f->n_attrs))
        return false;
    const char **extra = g_new(const char *, g->n_attrs + 1);
    size_t n = 0;
    for (size_t i = 0; i < g->n_attrs; i++)
        if (!ir_op_attr(f, ga[i].name))
            extra[n++] = ga[i].name;
    qsort(extra, n, sizeof *extra, by_name);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = ht_insert(t, extra[i]);
    g_free(extra);
    return ok;
}

/* An empty map filled in the order SEQ names (space-separated) when OP's
 * attrs are exactly among them (all of them when `all`). */
static bool inserted(ht *t, const ir_op *op, const char *seq, bool all)
{
    gchar **names = g_strsplit(seq, " ", -1);
    size_t found = 0, listed = 0;
    ht_init(t);
    for (gchar **n = names; *n; n++, listed++)
        if (ir_op_attr(op, *n)) {
            ht_insert(t, ir_intern(*n));
            found++;
        }
    g_strfreev(names);
    return found == op->n_attrs && (!all || found == listed);
}

/* An op backward.py's _create_op_desc_ built: the attrs dict DICT (its
 * insertion order; under Python 2 the dict's own order, py2_dict.c) set
 * one by one on an empty map, then AFTER's names by _set_attr.  Only the
 * names OP has are inserted; true when they are all of its attrs. */
static bool dict_built(ht *t, const ir_op *op, const char *dict, const char *after, bool py2)
{
    gchar **names = g_strsplit(dict, " ", -1);
    guint n = g_strv_length(names);
    const char **keys = g_new(const char *, n + 1), **order = g_new(const char *, n + 1);
    size_t m = 0;
    for (gchar **k = names; *k; k++)
        if (ir_op_attr(op, *k))
            keys[m++] = ir_intern(*k);
    size_t found = py2 ? pdt_py2_dict_order(keys, m, order) : m;
    ht_init(t);
    for (size_t i = 0; i < found; i++)
        ht_insert(t, py2 ? order[i] : keys[i]);
    g_free(keys);
    g_free(order);
    g_strfreev(names);
    names = g_strsplit(after, " ", -1);
    for (gchar **k = names; *k; k++)
        if (**k && ir_op_attr(op, *k)) {
            ht_insert(t, ir_intern(*k));
            found++;
        }
    g_strfreev(names);
    return found == op->n_attrs;
}

/* Ops optimizer.py, regularizer.py, clip.py and learning_rate_scheduler.py
 * build through Operator.__init__ (v1.7.2 = v1.8.5; v2.0.2-v2.3.2 the
 * same for these attrs): the proto's own attrs in AddAttr order, and
 * those the Python caller passes.  Operator.__init__ sets the given ones
 * in proto order, the framework attrs op_role, op_role_var (when not
 * empty), op_namescope and op_callstack after them (the proto's last
 * attrs), then check_attrs adds the defaults of the others in proto order,
 * op_device (1.8) and with_quant_attr (2.2: op_proto_maker.cc adds it
 * after op_device) last. */
static const struct {
    const char *type, *proto, *given;
    int from, until;
} py_ops[] = {
#define PYOP(type, from, until, proto, given, source) {type, proto, given, from, until},
#include "py_order.def"
#undef PYOP
};

/* Inserts the attrs of LIST (space-separated) that OP has and, when
 * `given` is not NULL, that it lists (or, given_in false, does not). */
static void insert_listed(ht *t, const ir_op *op, const char *list, const char *given,
                          bool given_in)
{
    gchar **names = g_strsplit(list, " ", -1);
    for (gchar **n = names; *n; n++)
        if (**n && ir_op_attr(op, *n) && py_listed(given, *n) == given_in)
            ht_insert(t, ir_intern(*n));
    g_strfreev(names);
}

/* A row's type is the op type, or TYPE@QUAL for one caller of several:
 * QUAL a number is the op_role the op has (16: a learning-rate schedule's
 * op, which math_op_patch's operators build, where clip.py calls
 * fluid.layers), a QUAL starting with '/' a part of its op_namescope
 * (clip.py's "gradient_clip" scope), "+NAME" an attr the op had when made
 * and an era.def ERA_DROP_ATTR row removed (DROPPED: the caller's dict held
 * it, the proto does not; 2.2's lars_momentum without weight decay).  The
 * first row that matches wins. */
static bool row_matches(const char *row, const ir_op *op, int era, int from, int until,
                        GHashTable *dropped)
{
    size_t n = strlen(op->type);
    if (era < from || era >= until || strncmp(row, op->type, n) ||
        (row[n] != '\0' && row[n] != '@'))
        return false;
    if (row[n] == '\0')
        return true;
    const char *q = row + n + 1;
    if (*q == '+') {
        const GString *d = dropped ? g_hash_table_lookup(dropped, op) : NULL;
        char *key = g_strdup_printf(" %s ", q + 1);
        bool had = d && strstr(d->str, key);
        g_free(key);
        return had;
    }
    if (*q != '/')
        return ir_op_role(op) == atoi(q);
    const ir_attr *ns = ir_op_attr(op, "op_namescope");
    return ns && ns->type == IR_ATTR_STRING &&
           g_strstr_len((const char *)ns->s.data, (gssize)ns->s.len, q);
}

/* The given attrs of OP's row: tensor.fill_constant (v1.7.2, v1.8.5)
 * always passes a str_value, str(value), never empty; math_op_patch's
 * create_tensor passes none, so an empty one is check_attrs's default. */
static const char *given_of(const ir_op *op, const char *given)
{
    const ir_attr *sv = ir_op_attr(op, "str_value");
    if (sv && sv->type == IR_ATTR_STRING && sv->s.len == 0 && py_listed(given, "str_value"))
        return "dtype shape value force_cpu";
    return given;
}

static bool python_built(ht *t, const ir_op *op, int era, GHashTable *dropped)
{
    size_t i = 0, n_rows = sizeof py_ops / sizeof *py_ops;
    while (i < n_rows &&
           !row_matches(py_ops[i].type, op, era, py_ops[i].from, py_ops[i].until, dropped))
        i++;
    if (i == n_rows)
        return false;
    const char *given = given_of(op, py_ops[i].given);
    const ir_attr *rv = ir_op_attr(op, "op_role_var");
    bool rv_given = rv && rv->type == IR_ATTR_STRINGS && rv->n_strings > 0;
    ht_init(t);
    insert_listed(t, op, py_ops[i].proto, given, true);
    insert_listed(t, op, "op_role", "op_role", true);
    if (rv_given)
        ht_insert(t, rv->name);
    /* Paddle's op has both even where pdtrans writes no op_callstack (a
     * traceback): they count for the table's growth. */
    ht_insert(t, ir_intern("op_namescope"));
    ht_insert(t, ir_intern("op_callstack"));
    insert_listed(t, op, py_ops[i].proto, given, false);
    if (rv && !rv_given)
        ht_insert(t, rv->name);
    insert_listed(t, op, "op_device with_quant_attr", "", false);
    size_t known = 0;
    for (size_t k = 0; k < op->n_attrs; k++)
        known += ht_rank(&ir_op_attrs(op)[k], t) < (int)t->n;
    return known == op->n_attrs;
}

bool pdt_hash_python_built(ht *t, const ir_op *op, int era)
{
    return python_built(t, op, era, NULL);
}

/* The insertion history of a made op, when a real program confirms it. */
static bool history(ht *t, const ir_op *op, GHashTable *fwd, int era, bool trainer,
                    GHashTable *dropped, bool py2)
{
    const ir_op *f = forward_of(fwd, op);
    if (f && copied_from(t, op, f))
        return true;
    /* mean_grad & co.: backward.py sets op_device on the maker's empty
     * map, copy_from copies it, _set_attr adds op_role. */
    if (f && inserted(t, op, "op_device op_role op_role_var", false))
        return true;
    int role = ir_op_role(op);
    /* Python-built optimize and LR-schedule ops: the table above holds
     * for 1.7 and 1.8 (the real programs: PaddleOCR's adam, and det_db's
     * cosine schedule, which PaddleOCR built from the same layers), the
     * optimize ops' rows from 1.4 (the same protos and callers), the LR
     * ones from 1.4 too (1.4-1.5's own math_op_patch rows: no scale, a
     * fill_constant and the elementwise op {axis}), and 2.0-2.3's rows
     * (the same callers, grown protos; research 4v).  Only where minimize
     * put them, after a backward: a pserver's copies are built from
     * all_attrs() (every attr given; PaddleFL's server shows yet another
     * history), not modelled, nor an LRSched|Optimize op (the per-param
     * learning rate's scale: math_op_patch's {scale, bias}). */
    if (trainer &&
        ((role >= 0 && (role & IR_ROLE_OPTIMIZE) &&
          !(role & (IR_ROLE_BACKWARD | IR_ROLE_LRSCHED))) ||
         (role == IR_ROLE_LRSCHED && era >= 104)))
        return python_built(t, op, era, dropped);
    if (role < 0 || !(role & IR_ROLE_BACKWARD))
        return false;
    /* ScaleGradMaker (scale_op.cc) sets scale, bias, bias_after_scale;
     * backward.py adds op_device, then op_role. */
    if (!strcmp(op->type, "scale"))
        return inserted(t, op, "scale bias bias_after_scale op_device op_role op_role_var", false);
    /* backward.py's _create_op_desc_: the attrs dict, with op_role and
     * op_device added when absent (1.8.5: {use_mkldnn}; v2.0.0-v2.3.x
     * _accumulate_gradients_by_sum_op_: {use_mkldnn, op_device};
     * _remove_no_grad_branch_'s fill_zeros_like: {}); op_role_var last,
     * when append_backward marks a param's grad; the loss grad's literal
     * (v1.5.2: shape value dtype force_cpu op_role; v1.8.5: op_device). */
    if (!strcmp(op->type, "sum"))
        return dict_built(t, op,
                          era >= 200 ? "use_mkldnn op_device op_role" : "use_mkldnn op_role op_device",
                          "op_role_var", py2);
    if (!strcmp(op->type, "fill_zeros_like"))
        return dict_built(t, op, "op_role op_device", "op_role_var", py2);
    if (!strcmp(op->type, "fill_constant"))
        return dict_built(t, op, "shape value dtype force_cpu op_role op_device", "", py2) &&
               op->n_attrs >= 5;
    return false;
}

void pdt_hash_order_program(ir_program *p, int era)
{
    pdt_hash_order_dropped(p, era, NULL);
}

void pdt_hash_order_dropped(ir_program *p, int era, GHashTable *dropped)
{
    if (!p || !p->n_blocks || era == PDT_ERA_NATIVE || era > 203)
        return;
    GHashTable *fwd = forward_ops(p);
    bool trainer = false;
    for (size_t k = 0; !trainer && k < p->blocks[0]->n_ops; k++) {
        int role = ir_op_role(p->blocks[0]->ops[k]);
        trainer = role >= 0 && (role & IR_ROLE_BACKWARD);
    }
    bool py2 = pdt_era_python2(p); /* the user's Python: dict orders */
    ht t;
    t.policy = ht_policy_of(era); /* kept by every ht_init of t */
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            if (op->made && history(&t, op, fwd, era, trainer, dropped, py2))
                ir_op_settle_ranked(op, ht_rank, &t);
        }
    pdt_hash_order_dist(p, era); /* the pserver transpiler's ops */
    /* After the made ops: a grad op copies its forward op's order as the
     * input has it (above), whether or not a pass changed that op. */
    for (size_t bi = 0; bi < p->n_blocks; bi++)
        for (size_t k = 0; k < p->blocks[bi]->n_ops; k++) {
            ir_op *op = p->blocks[bi]->ops[k];
            if (!op->made && ir_op_changed(op) && pdt_hash_reread(&t, op))
                ir_op_settle_ranked(op, ht_rank, &t);
        }
    g_hash_table_destroy(fwd);
}
